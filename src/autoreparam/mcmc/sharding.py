"""Spread chains across every JAX device, so a GPU/TPU host (or a multi-device CPU) scales unchanged.

Chains are independent, so their leading axis is split across devices. Programs whose chains run
loops of data-dependent length (NUTS's trajectories) must run each device's chains as a program of
its own (``shard_map``, ``run_sharded``): partitioned by XLA from the ``vmap`` instead, the batched
``while_loop`` asks every device at every iteration whether any chain anywhere is still running, so
all devices step in lockstep and pay a collective per leapfrog step (centred eight schools, NUTS at
acceptance 0.95, two host devices on two cores: 10x slower than one device;
``benchmarks/sharding.py``). The only communication left is NUTS's pooled adaptation, a mean over all
chains once per warm-up transition. On one device all of this is a no-op.
"""

from __future__ import annotations

from typing import Callable

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

# The mesh axis the chains are split along (a ``vmap`` inside names its own axis).
DEVICES = "devices"


def chain_mesh(num_chains: int) -> Mesh | None:
    """A mesh of all devices for ``num_chains`` chains, or ``None`` when there is one device or the
    chains do not divide evenly (then everything stays on the default device)."""
    devices = jax.devices()
    if len(devices) < 2 or num_chains % len(devices):
        return None
    return Mesh(np.array(devices), (DEVICES,))


def chain_sharding(num_chains: int):
    """The sharding of the chain axis over ``chain_mesh``, or ``None``."""
    mesh = chain_mesh(num_chains)
    return None if mesh is None else NamedSharding(mesh, PartitionSpec(DEVICES))


def shard_chains(tree, num_chains: int):
    """Place every leaf (leading axis = chains) across devices."""
    sharding = chain_sharding(num_chains)
    if sharding is None:
        return tree
    return jax.device_put(tree, sharding)


def num_shards(num_chains: int) -> int:
    mesh = chain_mesh(num_chains)
    return 1 if mesh is None else mesh.devices.size


def run_sharded(per_device: Callable, num_chains: int, shared: tuple, chained: tuple):
    """``per_device(shared, chained)`` on each device's slice of ``chained`` (leaves with a leading
    chain axis), with ``shared`` replicated; the outputs' leading axis is the chains'. Called inside
    a traced program, with ``num_chains`` static. Collectives over all chains name the axes
    ``chain_axes(inner, num_chains)``."""
    mesh = chain_mesh(num_chains)
    if mesh is None:
        return per_device(shared, chained)
    # check_vma=False: the per-device program reduces over a vmap axis and the mesh axis together
    # (``chain_axes``), which JAX's varying-manual-axes check does not follow.
    program = jax.shard_map(per_device, mesh=mesh, in_specs=(PartitionSpec(), PartitionSpec(DEVICES)),
                            out_specs=PartitionSpec(DEVICES), check_vma=False)
    return program(shared, chained)


def chain_axes(inner: str, num_chains: int):
    """The axis names a collective over every chain reduces over: the ``vmap`` axis ``inner`` alone,
    or with the device axis when ``run_sharded`` splits ``num_chains`` chains across devices."""
    return inner if chain_mesh(num_chains) is None else (inner, DEVICES)

"""Spread chains across every JAX device, so a GPU/TPU host (or a multi-device CPU) scales unchanged.

Chains are independent, so sharding their leading axis lets XLA partition the vmapped program; the
only communication is NUTS's pooled adaptation (a mean over chains at each warm-up transition). On
one device this is a no-op.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def chain_sharding(num_chains: int):
    """A sharding of the chain axis over all devices, or ``None`` when there is one device or the
    chains do not divide evenly (then everything stays on the default device)."""
    devices = jax.devices()
    if len(devices) < 2 or num_chains % len(devices):
        return None
    mesh = Mesh(np.array(devices), ("chains",))
    return NamedSharding(mesh, PartitionSpec("chains"))


def shard_chains(tree, num_chains: int):
    """Place every leaf (leading axis = chains) across devices."""
    sharding = chain_sharding(num_chains)
    if sharding is None:
        return tree
    return jax.device_put(tree, sharding)


def num_shards(num_chains: int) -> int:
    sharding = chain_sharding(num_chains)
    return 1 if sharding is None else len(sharding.mesh.devices.ravel())

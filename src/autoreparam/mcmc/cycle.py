"""HMC in one space, or interleaved HMC across several: one kernel, built on BlackJAX's HMC.

With one space this is plain HMC in that parameterisation. With spaces (CP, NCP) it is interleaved
HMC (paper 000 Section 5.1, Algorithm 1): each iteration takes one HMC step in the centred coordinates,
moves the state to the non-centred coordinates, takes one HMC step there and moves back. The move is
exact (``spaces.make_transport``), so the chain's target is unchanged and each half reuses BlackJAX's
kernel with its own step size, diagonal mass matrix and number of leapfrog steps (the composite-kernel
shape of NumPyro's ``HMCGibbs``). Any parameterisations the handlers accept can be interleaved, not
only CP and NCP. A half-step that is rejected leaves every other space's representation untouched
(``CycleState``), which keeps the chain exact in float32 deep in a funnel's neck.

Model gradient evaluations per iteration: exactly ``L_1 + ... + L_K`` (velocity Verlet evaluates one
gradient per leapfrog step; the state carries the gradient at its position).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import blackjax.mcmc.hmc as bj_hmc
import jax
import jax.numpy as jnp

from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.spaces import flat_log_density, make_transport
from autoreparam.reparam.parameterisation import Parameterisation


class CycleInfo(NamedTuple):
    acceptance_rate: jax.Array  # (num_spaces,)
    is_divergent: jax.Array  # (num_spaces,)
    positions: jax.Array  # (num_spaces, dim): each half-step's end point in its own space (for adaptation)


class CycleState(NamedTuple):
    """The chain's current point, held in every space's coordinates (one ``HMCState`` per space).

    Moving a point through the centred coordinates loses information in float32 where the centred
    form cannot represent it (eight schools with tau ~ 1e-7: theta - mu is below mu's resolution, so
    theta~ = (theta - mu) / tau comes back quantised). A rejected half-step leaves the point where it
    was, so every other space keeps its own, exact representation; only an accepted move is
    transported. The chain is the same Markov chain as Algorithm 1; only its numerics differ.
    """

    spaces: tuple  # (HMCState, ...) one per space

    @property
    def position(self):
        return self.spaces[0].position


def build_cycle_kernel(
    coords: Coordinates, params: Sequence[Parameterisation], divergence_threshold: float = 1000.0, jitter: float = 0.0
):
    """``(init, step)`` for a cycle over ``params``; draws are read in ``params[0]``'s coordinates.

    ``init(position in params[0]'s coordinates) -> CycleState``;
    ``step(key, state, log_step_sizes (K,), inverse_mass (K, dim), num_leapfrog (K,))``: each space
    has its own step size, mass matrix and number of leapfrog steps.
    """
    params = tuple(params)
    num_spaces = len(params)
    kernel = bj_hmc.build_kernel(divergence_threshold=divergence_threshold)
    densities = [flat_log_density(coords, p) for p in params]
    transports = {
        (i, j): make_transport(coords, params[i], params[j])
        for i in range(num_spaces)
        for j in range(num_spaces)
        if i != j
    }

    def init(position):
        first = bj_hmc.init(position, densities[0])
        return CycleState(tuple(first if j == 0 else transports[0, j](first) for j in range(num_spaces)))

    def step(key, state: CycleState, log_step_sizes, inverse_mass, num_leapfrog):
        keys = jax.random.split(key, num_spaces + 1)
        factors = 1.0 + jitter * jax.random.uniform(keys[-1], (num_spaces,), minval=-1.0, maxval=1.0)
        spaces = list(state.spaces)
        accepts, divergent, positions = [], [], []
        for k in range(num_spaces):
            moved, info = kernel(
                keys[k], spaces[k], densities[k], factors[k] * jnp.exp(log_step_sizes[k]), inverse_mass[k],
                num_leapfrog[k],
            )
            accepts.append(info.acceptance_rate)
            divergent.append(info.is_divergent)
            positions.append(moved.position)
            for j in range(num_spaces):
                if j != k:
                    spaces[j] = jax.lax.cond(
                        info.is_accepted, lambda m=moved, j=j: transports[k, j](m), lambda j=j: spaces[j]
                    )
            spaces[k] = moved
        return CycleState(tuple(spaces)), CycleInfo(jnp.stack(accepts), jnp.stack(divergent), jnp.stack(positions))

    return init, step

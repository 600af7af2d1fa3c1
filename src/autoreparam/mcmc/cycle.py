"""HMC in one space, or interleaved HMC across several: one kernel, built on BlackJAX's HMC.

With one space this is plain HMC in that parameterisation. With spaces (CP, NCP) it is interleaved
HMC (paper 000 Section 5.1, Algorithm 1): each iteration takes one HMC step in the centred coordinates,
moves the state to the non-centred coordinates, takes one HMC step there and moves back. The move is
exact (``spaces.make_transport``), so the chain's target is unchanged and each half reuses BlackJAX's
kernel with its own step size and diagonal mass matrix (the composite-kernel shape of NumPyro's
``HMCGibbs``). Any parameterisations the handlers accept can be interleaved, not only CP and NCP.

Model gradient evaluations per iteration: exactly ``len(spaces) * L`` (velocity Verlet evaluates one
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


def build_cycle_kernel(coords: Coordinates, params: Sequence[Parameterisation], divergence_threshold: float = 1000.0):
    """``(init, step)`` for a cycle over ``params``; the state lives in ``params[0]``'s coordinates.

    ``step(key, state, log_step_sizes (K,), inverse_mass (K, dim), num_leapfrog)``.
    """
    params = tuple(params)
    num_spaces = len(params)
    kernel = bj_hmc.build_kernel(divergence_threshold=divergence_threshold)
    densities = [flat_log_density(coords, p) for p in params]
    transports = (
        [make_transport(coords, params[k], params[(k + 1) % num_spaces]) for k in range(num_spaces)]
        if num_spaces > 1
        else []
    )

    def init(position):
        return bj_hmc.init(position, densities[0])

    def step(key, state, log_step_sizes, inverse_mass, num_leapfrog):
        keys = jax.random.split(key, num_spaces)
        accepts, divergent = [], []
        for k in range(num_spaces):
            state, info = kernel(
                keys[k], state, densities[k], jnp.exp(log_step_sizes[k]), inverse_mass[k], num_leapfrog
            )
            accepts.append(info.acceptance_rate)
            divergent.append(info.is_divergent)
            if transports:
                state = transports[k](state)
        return state, CycleInfo(jnp.stack(accepts), jnp.stack(divergent))

    return init, step

"""The spaces a sampler moves in, and exact moves of an HMC state between them.

A space is a parameterisation's flat unconstrained coordinates with its log density. HMC with a
diagonal inverse mass matrix ``diag(m)`` and scalar step ``eps`` is the same algorithm as the paper's
per-coordinate step sizes ``eps * sqrt(m)`` with unit mass (substitute ``p = p' / sqrt(m)``), so q's
variances go in the mass matrix and one scalar step size is adapted (per chain, or for all chains).

``make_transport`` moves a state (position, log density, gradient) from one space to another without
a new gradient evaluation of the model: the log density changes by a log-Jacobian and the gradient by
the chain rule through the coordinate maps, which touch only the priors' location and scale (the
likelihood drops out of the compiled map). This is what keeps iHMC at exactly 2L model gradients per
iteration (paper 000 Algorithm 1; REFERENCE.md).
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
from blackjax.mcmc.hmc import HMCState

from autoreparam.coordinates import Coordinates
from autoreparam.reparam.parameterisation import Parameterisation


def flat_log_density(coords: Coordinates, param: Parameterisation) -> Callable:
    """``x (dim,) -> log density`` of the rewritten program in ``param``'s coordinates."""

    def log_density(x):
        return coords.log_density(coords.unravel(x), param)

    return log_density


def position_map(coords: Coordinates, source: Parameterisation, target: Parameterisation) -> Callable:
    """``x_source -> (x_target, log|det dx_target/dx_source|)`` through the centred coordinates."""

    def move(x):
        v, _, to_cp_ldj = coords.to_cp(coords.unravel(x), source)
        u, _, from_cp_ldj = coords.from_cp(v, target)
        return coords.ravel(u), to_cp_ldj + from_cp_ldj

    return move


def make_transport(coords: Coordinates, source: Parameterisation, target: Parameterisation) -> Callable:
    """``HMCState`` in ``source`` coordinates -> the same point as an ``HMCState`` in ``target``'s.

    With ``phi`` the map target -> source: ``log p_t(x_t) = log p_s(phi(x_t)) + log|det J_phi(x_t)|`` and
    ``grad log p_t = J_phi^T grad log p_s + grad log|det J_phi|``: one VJP of ``phi``, no model gradient.
    """
    forward = position_map(coords, source, target)
    backward = position_map(coords, target, source)

    def transport(state: HMCState) -> HMCState:
        x_target, _ = forward(state.position)
        (_, log_det), vjp = jax.vjp(backward, x_target)
        (grad,) = vjp((state.logdensity_grad, jnp.ones_like(log_det)))
        return HMCState(x_target, state.logdensity + log_det, grad)

    return transport

"""The mean-field normal family q(u) = N(u | loc, diag(scale^2)) over flat unconstrained coordinates.

Paper 000 Section 5.2 (``q(zt; theta) = N(zt | mu, diag(sigma))``) and Appendix B.4, where the scale is
made positive by a softplus (the text's "softmax" is a slip, REFERENCE.md).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

_LOG_2PI = jnp.log(2.0 * jnp.pi)


class MeanField(NamedTuple):
    loc: jax.Array  # (dim,)
    raw_scale: jax.Array  # (dim,); scale = softplus(raw_scale)

    @property
    def scale(self) -> jax.Array:
        return jax.nn.softplus(self.raw_scale)


def inverse_softplus(x):
    """log(exp(x) - 1) written as x + log(1 - exp(-x)): the plain form overflows float32 above x = 88
    (an ``init_scale`` of 100 gave an infinite scale, and the fit failed with advice about learning
    rates; found in review)."""
    x = jnp.asarray(x)
    return x + jnp.log(-jnp.expm1(-x))


def init_meanfield(loc: jax.Array, init_scale: float) -> MeanField:
    return MeanField(jnp.asarray(loc), jnp.full(jnp.shape(loc), inverse_softplus(init_scale)))


def sample(key: jax.Array, q: MeanField, num_samples: int) -> jax.Array:
    eps = jax.random.normal(key, (num_samples,) + q.loc.shape, dtype=q.loc.dtype)
    return q.loc + q.scale * eps


def log_prob(q: MeanField, u: jax.Array, has_density: jax.Array | None = None) -> jax.Array:
    """``log q(u)``; with ``has_density`` (dim,) of 0/1, only the coordinates marked 1 count."""
    scale = q.scale
    z = (u - q.loc) / scale
    terms = -0.5 * z**2 - jnp.log(scale) - 0.5 * _LOG_2PI
    if has_density is not None:
        terms = terms * has_density
    return jnp.sum(terms, axis=-1)


def elbo_terms(log_density: Callable, q: MeanField, key: jax.Array, num_samples: int, stl: bool = True,
               has_density: jax.Array | None = None):
    """Per-sample ``log p(u_i) - log q(u_i)``, ``u_i ~ q`` by the reparameterisation trick.

    ``stl=True`` evaluates ``log q`` with its parameters held fixed ("sticking the landing", Roeder,
    Wu & Duvenaud 2017): the same expectation, but a gradient whose variance vanishes when q equals the
    posterior, which is where VIP wants to end up.

    ``has_density`` (dim,) of 0/1 marks the coordinates the model gives a density
    (`Coordinates.flat_has_density`); the others (obs_mask's observed positions) are left out of
    ``log q``. ``log p`` does not read them, so their entropy alone would drive the ELBO: their scales
    grew without bound (0.1 to 75 in 2,000 steps) and added about log(scale) + 1.4 each to the ELBO, which
    also decides the learning rate (found in review). Left out, they keep the loc and scale they start
    with, and the ELBO is that of the coordinates with a density.
    """
    u = sample(key, q, num_samples)
    q_for_density = jax.lax.stop_gradient(q) if stl else q
    return jax.vmap(log_density)(u) - log_prob(q_for_density, u, has_density)

"""Funnel-shaped toy models.

Neal (2003), "Slice sampling", Annals of Statistics 31(3), Section 8; the form used here,
z ~ N(0, 3), x ~ N(0, exp(z/2)), is the original autoreparam code's ``get_neals_funnel``
(REFERENCE.md lists the other forms in the paper texts). `funnel_with_observation` is the
training family of the meta-learning follow-up (papers/003, "Experiments").
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

from autoreparam.models.checks import check_count, check_interval

# Ranges of y and sigma the meta-learning paper draws its training models from.
FUNNEL_Y_RANGE = (-20.0, 20.0)
FUNNEL_SIGMA_RANGE = (0.1, 20.0)


def neals_funnel(dim: int = 1):
    """Neal's funnel: z ~ N(0, 3); x_i ~ N(0, exp(z / 2)) for i = 1..dim, no observation."""
    dim = check_count("dim", dim)
    z = numpyro.sample("z", dist.Normal(0.0, 3.0))
    with numpyro.plate("dim", dim):
        numpyro.sample("x", dist.Normal(0.0, jnp.exp(z / 2.0)))


def funnel_with_observation(y, sigma):
    """A funnel observed through noise: z ~ N(0, 1); x ~ N(0, exp(z)); y ~ N(x, sigma).

    ``y`` must lie in [-20, 20] and ``sigma`` in [0.1, 20], the range the paper trains on
    (`ArgumentError` otherwise); ``y=None`` samples y from the prior.
    """
    check_interval("y", y, *FUNNEL_Y_RANGE)
    check_interval("sigma", sigma, *FUNNEL_SIGMA_RANGE)
    z = numpyro.sample("z", dist.Normal(0.0, 1.0))
    x = numpyro.sample("x", dist.Normal(0.0, jnp.exp(z)))
    numpyro.sample("y", dist.Normal(x, sigma), obs=y)

"""Small centred models shared by the reparam tests; eight schools is the package's own (a plain NumPyro model)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from autoreparam.models import eight_schools  # noqa: F401  (re-exported for the reparam tests)

EIGHT_SCHOOLS_Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
EIGHT_SCHOOLS_SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def arithmetic(y):
    """Priors that depend on latents only through arithmetic, a deterministic site, a select or a scale."""
    a = numpyro.sample("a", dist.Normal(0.0, 1.0))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    m = numpyro.deterministic("m", 2.0 * a + 1.0)
    x = numpyro.sample("x", dist.Normal(m, 1.0))  # loc depends on a via a deterministic site
    g = numpyro.sample("g", dist.Gamma(2.0, 2.0))  # no location-scale form: left centred
    s = numpyro.sample("s", dist.HalfNormal(jnp.exp(b)))  # scale family, scale depends on b
    w = numpyro.sample("w", dist.Normal(jnp.where(a > 0, 1.0, 2.0), 1.0))  # through a comparison only
    numpyro.sample("y", dist.Normal(x + s + g + w, 1.0), obs=y)


def misleading_names(y):
    """Names suggest a hierarchy that the program does not have, and hide the one it has.

    ``theta``, ``loc_of_theta`` and ``tau_scale`` look like eight schools, but ``theta``'s prior is
    constant; the one latent-dependent prior is ``c``'s, whose scale is the innocently named ``weight``.
    """
    loc_of_theta = numpyro.sample("loc_of_theta", dist.Normal(0.0, 1.0))
    tau_scale = numpyro.sample("tau_scale", dist.Normal(0.0, 1.0))
    weight = numpyro.sample("weight", dist.Normal(0.0, 1.0))
    with numpyro.plate("groups", 4):
        theta = numpyro.sample("theta", dist.Normal(0.0, 5.0))  # constant prior, despite the names
        c = numpyro.sample("c", dist.Normal(0.0, jnp.exp(weight)))  # depends on weight
        numpyro.sample("y", dist.Normal(theta + c + loc_of_theta + tau_scale, 1.0), obs=y)


def indexed(idx, y):
    """A vector latent read through an integer index: m_i ~ N(alpha[idx_i], 1)."""
    alpha = numpyro.sample("alpha", dist.Normal(jnp.zeros(3), 1.0).to_event(1))
    with numpyro.plate("obs", idx.shape[0]):
        m = numpyro.sample("m", dist.Normal(alpha[idx], 1.0))
        numpyro.sample("y", dist.Normal(m, 1.0), obs=y)


def location_scale(make, size=2):
    """mu ~ N(1, 0.5); log_s ~ N(0, 0.5); x_i ~ make(mu, exp(log_s)) under a plate; no observation.

    The spread of log_s is wide enough that a wrong power of the scale (e.g. s^0.85 for s^0.7) changes
    the variance of x by several Monte Carlo standard errors at 10^4 draws, and narrow enough that the
    fourth moment, which sets that standard error, stays moderate.
    """

    def model():
        mu = numpyro.sample("mu", dist.Normal(1.0, 0.5))
        log_s = numpyro.sample("log_s", dist.Normal(0.0, 0.5))
        with numpyro.plate("items", size):
            numpyro.sample("x", make(mu, jnp.exp(log_s)))

    return model

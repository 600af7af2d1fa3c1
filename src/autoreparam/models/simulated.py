"""Two models users write often, on data simulated from them (no data file; seed in the name).

Both mix positive-support scale latents (HalfNormal, Gamma) with location-scale latents whose scale
is such a latent, the shape in which a default HMC can return chains that never mixed:

- ``hierarchical_linear``: varying intercepts with a common slope, half-normal scales (Gelman &
  Hill 2006, ch. 12, with half-normal priors as in Gelman 2006, "Prior distributions for variance
  parameters", Section 5).
- ``sparse_logistic``: a logistic regression whose coefficients have Gamma local scales and a
  half-normal global scale (a normal-gamma shrinkage prior, Griffin & Brown 2010, Bayesian
  Analysis 5(1)).

The data are simulated here, by a fixed seed, and say so in the problem's ``data_note``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist


def hierarchical_linear(group, x, num_groups, y=None):
    """mu ~ N(0, 5); tau, sigma ~ HalfNormal(2.5); beta ~ N(0, 2.5); a_j ~ N(mu, tau);
    y_i ~ N(a_{group_i} + beta x_i, sigma)."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    tau = numpyro.sample("tau", dist.HalfNormal(2.5))
    sigma = numpyro.sample("sigma", dist.HalfNormal(2.5))
    beta = numpyro.sample("beta", dist.Normal(0.0, 2.5))
    with numpyro.plate("groups", num_groups):
        a = numpyro.sample("a", dist.Normal(mu, tau))
    group, x = jnp.asarray(group), jnp.asarray(x)
    with numpyro.plate("data", group.shape[0]):
        numpyro.sample("y", dist.Normal(a[group] + beta * x, sigma), obs=y)


def hierarchical_linear_data(seed: int = 0, num_groups: int = 12):
    """Groups of 1 to 8 observations (most groups small: the data say little about each a_j)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, num_groups)
    group = np.repeat(np.arange(num_groups), sizes)
    x = rng.standard_normal(group.size)
    a = 1.0 + 0.5 * rng.standard_normal(num_groups)
    y = a[group] + 0.7 * x + 2.0 * rng.standard_normal(group.size)
    return group.astype(np.int32), x.astype(np.float32), num_groups, y.astype(np.float32)


def sparse_logistic(features, y=None):
    """tau ~ HalfNormal(1); lambda_d ~ Gamma(0.5, 0.5); beta_d ~ N(0, tau lambda_d);
    alpha ~ N(0, 2.5); y_n ~ Bernoulli(logit = alpha + x_n . beta)."""
    features = jnp.asarray(features)
    tau = numpyro.sample("tau", dist.HalfNormal(1.0))
    alpha = numpyro.sample("alpha", dist.Normal(0.0, 2.5))
    with numpyro.plate("coefficients", features.shape[1]):
        local = numpyro.sample("local_scale", dist.Gamma(0.5, 0.5))
        beta = numpyro.sample("beta", dist.Normal(0.0, tau * local))
    with numpyro.plate("data", features.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=alpha + features @ beta), obs=y)


def sparse_logistic_data(seed: int = 0, num_data: int = 150, num_features: int = 12):
    """Standardised features; three of the coefficients are non-zero."""
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((num_data, num_features))
    beta = np.zeros(num_features)
    beta[:3] = [1.5, -1.0, 0.8]
    logits = -0.3 + features @ beta
    y = rng.random(num_data) < 1.0 / (1.0 + np.exp(-logits))
    return features.astype(np.float32), y.astype(np.int32)

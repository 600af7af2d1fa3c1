"""Sparse logistic regression of German credit (the paper's Section 6; REFERENCE.md)."""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist


def german_credit(x, y=None):
    """Logistic regression with a hierarchical log scale per coefficient.

    log_tau0 ~ N(0, 10); log_tau_d ~ N(log_tau0, 1); beta_d ~ N(0, exp(log_tau_d));
    y_n ~ Bernoulli(logit = x_n . beta). With the 62-column design matrix of
    `autoreparam.models.data.load_german_credit` this has 1 + 62 + 62 = 125 latent dimensions.
    (The original code's ``get_german_credit_lognormalcentered``.)
    """
    x = jnp.asarray(x)
    num_data, num_features = x.shape
    log_tau0 = numpyro.sample("log_tau0", dist.Normal(0.0, 10.0))
    with numpyro.plate("features", num_features):
        log_tau = numpyro.sample("log_tau", dist.Normal(log_tau0, 1.0))
        beta = numpyro.sample("beta", dist.Normal(0.0, jnp.exp(log_tau)))
    with numpyro.plate("data", num_data):
        numpyro.sample("y", dist.Bernoulli(logits=x @ beta), obs=y)

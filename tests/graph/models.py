"""Models for the graph tests: hand-rewritten zoo models and small hierarchical models.

A "rewritten" model is the zoo model as another modeller would write it: other variable and plate
names, data passed another way (one dict, closed over, float64 numpy), commutative operands swapped,
independent statements reordered, ``jnp.take`` for indexing. Its graph must be the zoo model's.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist


def eight_schools_rewritten(data):
    """Eight schools with the two hyper-priors swapped, other names and the data in one dict."""
    log_spread = numpyro.sample("log_spread", dist.Normal(0.0, 5.0))
    grand_mean = numpyro.sample("grand_mean", dist.Normal(0.0, 5.0))
    stderr = np.asarray(data["stderr"], dtype=np.float64)
    with numpyro.plate("school", len(stderr)):
        effect = numpyro.sample("effect", dist.Normal(grand_mean, jnp.exp(log_spread)))
        numpyro.sample("score", dist.Normal(effect, stderr), obs=data["score"])


def radon_rewritten(data):
    """`radon` with commutative operands swapped and ``jnp.take`` for ``m[county]``."""
    slope_floor = numpyro.sample("slope_floor", dist.Normal(0.0, 1.0))  # b2, moved up: it is independent
    intercept = numpyro.sample("intercept", dist.Normal(0.0, 1.0))
    slope_uranium = numpyro.sample("slope_uranium", dist.Normal(0.0, 1.0))
    with numpyro.plate("county", data["n_county"]):
        county_mean = numpyro.sample("county_mean", dist.Normal(slope_uranium * data["u"] + intercept, 1.0))
    with numpyro.plate("house", len(data["county"])):
        loc = data["floor"] * slope_floor + jnp.take(county_mean, data["county"], axis=0)
        numpyro.sample("log_radon", dist.Normal(loc, 1.0), obs=data["y"])


def make_election88_rewritten(state, black, female, num_states):
    """`election88` with the data closed over, the fixed effects first and plain indexing."""

    def model(y):
        coef_black = numpyro.sample("coef_black", dist.Normal(0.0, 100.0))
        coef_female = numpyro.sample("coef_female", dist.Normal(0.0, 100.0))
        state_mean = numpyro.sample("state_mean", dist.Normal(0.0, 100.0))
        state_log_sd = numpyro.sample("state_log_sd", dist.Normal(0.0, 10.0))
        with numpyro.plate("state", num_states):
            effect = numpyro.sample("effect", dist.Normal(state_mean, jnp.exp(state_log_sd)))
        logit = effect[jnp.asarray(state)] + coef_black * black + coef_female * female
        with numpyro.plate("voter", len(state)):
            numpyro.sample("vote", dist.Bernoulli(logits=logit), obs=y)

    return model


def german_credit_rewritten(design, labels):
    """`german_credit` with keyword data and ``jnp.matmul``."""
    global_log_scale = numpyro.sample("global_log_scale", dist.Normal(0.0, 10.0))
    with numpyro.plate("coefficient", design.shape[1]):
        log_scale = numpyro.sample("log_scale", dist.Normal(global_log_scale, 1.0))
        weight = numpyro.sample("weight", dist.Normal(0.0, jnp.exp(log_scale)))
    with numpyro.plate("loan", design.shape[0]):
        numpyro.sample("good", dist.Bernoulli(logits=jnp.matmul(design, weight)), obs=labels)


def grouped(group, x, num_groups, y=None):
    """A radon-like varying-intercept model: a_g ~ N(mu, exp(log_s)); y_i ~ N(a[group_i] + b x_i, 1)."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    log_s = numpyro.sample("log_s", dist.Normal(0.0, 1.0))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    with numpyro.plate("groups", num_groups):
        a = numpyro.sample("a", dist.Normal(mu, jnp.exp(log_s)))
    with numpyro.plate("rows", group.shape[0]):
        numpyro.sample("y", dist.Normal(a[group] + b * x, 1.0), obs=y)


def grouped_data(num_rows=60, num_groups=5, seed=0):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, num_groups - 1, num_rows)  # the last group stays empty
    x = rng.normal(size=num_rows).astype(np.float32)
    y = rng.normal(size=num_rows).astype(np.float32)
    return group, x, y


def wide_schools(sigma, y=None):
    """Eight schools with as many schools as ``sigma`` has elements (the plate-size benchmark)."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    log_tau = numpyro.sample("log_tau", dist.Normal(0.0, 5.0))
    with numpyro.plate("schools", sigma.shape[0]):
        theta = numpyro.sample("theta", dist.Normal(mu, jnp.exp(log_tau)))
        numpyro.sample("y", dist.Normal(theta, sigma), obs=y)


@jax.jit
def _jitted_exp(x):
    return jnp.exp(x)


def eight_schools_jitted_helper(sigma, y=None):
    """Eight schools whose exp is computed inside a jitted helper (a pjit call to inline)."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    log_tau = numpyro.sample("log_tau", dist.Normal(0.0, 5.0))
    with numpyro.plate("schools", sigma.shape[0]):
        theta = numpyro.sample("theta", dist.Normal(mu, _jitted_exp(log_tau)))
        numpyro.sample("y", dist.Normal(theta, jnp.asarray(sigma)), obs=y)

"""Rewritten models compose with the caller's NumPyro handlers: the site analysis they run on each
call is invisible to handlers around them (a trace sees each site exactly once)."""

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro import handlers

import autoreparam as ar


def model(y):
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    with numpyro.plate("n", 3):
        x = numpyro.sample("x", dist.Normal(mu, 2.0))
        numpyro.sample("y", dist.Normal(x, 1.0), obs=y)


def test_noncentred_model_under_an_outer_trace_sees_each_site_once():
    y = jnp.array([0.5, -1.0, 2.0])
    trace = handlers.trace(handlers.seed(ar.noncentre(model), 0)).get_trace(y)
    samples = [n for n, s in trace.items() if s["type"] == "sample"]
    assert samples == ["mu", "x_decentered", "y"]
    assert trace["x"]["type"] == "deterministic"

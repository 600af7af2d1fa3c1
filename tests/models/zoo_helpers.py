"""Small helpers shared by the model tests."""

from __future__ import annotations

from jax import random
from numpyro import handlers
from numpyro.distributions import ExpandedDistribution
from numpyro.infer import init_to_mean


def latent_sites(model, args=(), kwargs=None, *, seed=0, observed=False):
    """Sample sites of one prior draw, name -> site: the latent ones (and observed ones if asked)."""
    trace = handlers.trace(handlers.seed(model, random.PRNGKey(seed))).get_trace(*args, **(kwargs or {}))
    return {
        name: site
        for name, site in trace.items()
        if site["type"] == "sample" and (observed or not site["is_observed"])
    }


def prior_mean_values(model, args=(), kwargs=None):
    """Each latent set to its prior mean given its parents' prior means (ancestral means)."""
    substituted = handlers.substitute(handlers.seed(model, random.PRNGKey(0)), substitute_fn=init_to_mean)
    trace = handlers.trace(substituted).get_trace(*args, **(kwargs or {}))
    return {
        name: site["value"]
        for name, site in trace.items()
        if site["type"] == "sample" and not site["is_observed"]
    }


def unwrap(fn):
    """The distribution inside the `ExpandedDistribution` a plate wraps around scalar parameters."""
    while isinstance(fn, ExpandedDistribution):
        fn = fn.base_dist
    return fn

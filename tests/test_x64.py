"""``infer`` in float64: the language's docs advise 64-bit JAX for large integers, and with it on
every method failed inside JAX ("cond branches must have equal output types": chains started in
float32 met a float64 log density; found in review)."""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest

import autoreparam as ar
from autoreparam.models import load
from tests.hostile_models import VI as TINY_FIT


@pytest.mark.parametrize("method, kernel",
                         [("auto", "nuts"), pytest.param("meta", "nuts", marks=pytest.mark.slow), ("ncp", "hmc")])
def test_infer_samples_in_float64_when_jax_is_in_64_bit_mode(method, kernel):
    problem = load("eight_schools")
    with jax.enable_x64(True), warnings.catch_warnings():
        warnings.simplefilter("ignore", ar.ConvergenceWarning)
        # A short fit for the fixed method: its float64 path is what is checked, not its quality (auto
        # and meta take no vi_config). HMC keeps its default, the leapfrog oracle's pilots.
        short_fit = {} if method in ("auto", "meta") else {"vi_config": TINY_FIT}
        result = ar.infer(problem.model, *problem.args, method=method, kernel=kernel, num_chains=2, num_warmup=100,
                          num_samples=100, seed=0, progress=False, **short_fit, **problem.kwargs)
    theta = result.samples["theta"]
    assert theta.dtype == np.float64 and theta.shape == (2, 100, 8) and np.all(np.isfinite(theta))

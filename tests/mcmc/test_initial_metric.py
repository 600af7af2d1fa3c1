"""The warm-up's first metric when no fit gives one: 1 / |gradient| at the start (nutpie's), the identity, or the
identity with only its stiff elements from the gradient."""

import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

import autoreparam as ar

from autoreparam.errors import ArgumentError
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.nuts import segment_length
from autoreparam.mcmc.segments import (CHAINS, GRADIENT_METRIC_BOUNDS, STIFF_INVERSE_MASS, SegmentSampler,
                                       gradient_inverse_mass, sample_codes)
from autoreparam.reparam.parameterisation import Parameterisation

from mcmc_helpers import SCALES, assert_matches


def test_the_gradient_metric_is_one_over_the_gradients_size_bounded_and_finite():
    low, high = GRADIENT_METRIC_BOUNDS
    gradient = jnp.array([-4.0, 0.5, 0.0, 1e12, jnp.nan])
    expected = [0.25, 2.0, 1.0 / low, 1.0 / high, 1.0]  # 0 and 1e12 at the bounds; NaN gives the identity
    np.testing.assert_allclose(gradient_inverse_mass(gradient, pooled=False), expected, rtol=1e-6)


def test_pooled_chains_share_one_metric_from_their_mean_gradient_size():
    gradients = jnp.array([[2.0, -1.0], [-6.0, 3.0]])
    pooled = jax.vmap(lambda g: gradient_inverse_mass(g, pooled=True), axis_name=CHAINS)(gradients)
    np.testing.assert_allclose(pooled, [[0.25, 0.5], [0.25, 0.5]], rtol=1e-6)


@pytest.mark.parametrize("initial_metric", ["gradient", "stiff", "unit"])
@pytest.mark.parametrize("adaptation", ["pooled", "per_chain"])
def test_a_segment_sets_the_metric_from_the_gradient_at_its_start_only_when_asked(gaussian_coords, adaptation,
                                                                                  initial_metric):
    # z ~ N(0, SCALES): the gradient at x is -x / SCALES^2. Draws (code -1) leave the adaptation alone,
    # so after one segment of draws the metric is what the start set. The first chain starts 400 from
    # the mean of the narrowest coordinate: 1 / |gradient| = 2.5e-5 there, below the "stiff" bound,
    # and no other element is.
    coords = gaussian_coords
    config = NUTSConfig(num_warmup=100, num_samples=100, adaptation=adaptation, initial_metric=initial_metric)
    sampler = SegmentSampler(coords, config, segment_length(config))
    start = np.array([[400.0, 2.0, -3.0], [0.5, -1.0, 6.0]], dtype=np.float32)
    size = np.abs(start / SCALES**2)
    from_gradient = np.broadcast_to(1.0 / (size.mean(axis=0, keepdims=True) if adaptation == "pooled" else size),
                                    start.shape)
    expected = {"gradient": from_gradient, "unit": np.ones_like(start),
                "stiff": np.where(from_gradient < STIFF_INVERSE_MASS, from_gradient, 1.0)}[initial_metric]
    assert initial_metric != "stiff" or 0 < np.sum(expected != 1.0) < expected.size  # the test can tell
    param = Parameterisation.centred(coords.plan)
    for asked, metric in ((True, expected), (False, np.ones_like(start))):
        chains = sampler.start(start, np.ones(3), 1.0, seed=0)
        chains, _, _ = sampler.run(param, chains, sample_codes(sampler.segment_length), metric_from_gradient=asked)
        np.testing.assert_allclose(np.asarray(chains.adapt.inverse_mass), metric, rtol=1e-5)


def test_an_unknown_initial_metric_is_refused_by_name():
    with pytest.raises(ArgumentError, match="initial_metric must be"):
        NUTSConfig(initial_metric="fisher")


# A posterior with one coordinate 500 times narrower than unit scale and 350 of its sds from the origin,
# where ``auto`` starts: 1 / |gradient| there is 0.002^2 / 0.7 = 5.7e-6, below the "stiff" bound.
STIFF_MEAN, STIFF_SD = np.array([0.7, -1.0, 2.0]), np.array([0.002, 1.0, 5.0])


def stiff_gaussian():
    numpyro.sample("z", dist.Normal(jnp.asarray(STIFF_MEAN), jnp.asarray(STIFF_SD)))


def test_auto_with_a_stiff_first_metric_is_exact_and_warms_up_on_fewer_gradients(monkeypatch):
    infer_module = sys.modules["autoreparam.infer"]  # the attribute ``autoreparam.infer`` is the function
    runs = {}
    for initial_metric in ("stiff", "unit"):
        monkeypatch.setattr(infer_module, "NUTSConfig", functools.partial(NUTSConfig, initial_metric=initial_metric))
        runs[initial_metric] = ar.infer(stiff_gaussian, method="auto", num_chains=4, num_warmup=400,
                                        num_samples=1000, seed=0, progress=False)
        assert_matches(runs[initial_metric].samples, {"z": (STIFF_MEAN, STIFF_SD)})
    warmup = {k: float(np.sum(r.chains.warmup_grad_evals)) for k, r in runs.items()}
    # With the identity the first window's step size is set by the 0.002 coordinate, and crossing the
    # unit-scale ones takes trajectories at the depth limit until the first mass-matrix update.
    assert warmup["stiff"] < 0.5 * warmup["unit"], warmup

"""The warm-up's first metric when no fit gives one: 1 / |gradient| at the start (nutpie's), or the identity."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from autoreparam.errors import ArgumentError
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.nuts import segment_length
from autoreparam.mcmc.segments import CHAINS, GRADIENT_METRIC_BOUNDS, SegmentSampler, gradient_inverse_mass, sample_codes
from autoreparam.reparam.parameterisation import Parameterisation

from mcmc_helpers import SCALES


def test_the_gradient_metric_is_one_over_the_gradients_size_bounded_and_finite():
    low, high = GRADIENT_METRIC_BOUNDS
    gradient = jnp.array([-4.0, 0.5, 0.0, 1e12, jnp.nan])
    expected = [0.25, 2.0, 1.0 / low, 1.0 / high, 1.0]  # 0 and 1e12 at the bounds; NaN gives the identity
    np.testing.assert_allclose(gradient_inverse_mass(gradient, pooled=False), expected, rtol=1e-6)


def test_pooled_chains_share_one_metric_from_their_mean_gradient_size():
    gradients = jnp.array([[2.0, -1.0], [-6.0, 3.0]])
    pooled = jax.vmap(lambda g: gradient_inverse_mass(g, pooled=True), axis_name=CHAINS)(gradients)
    np.testing.assert_allclose(pooled, [[0.25, 0.5], [0.25, 0.5]], rtol=1e-6)


@pytest.mark.parametrize("adaptation", ["pooled", "per_chain"])
def test_a_segment_sets_the_metric_from_the_gradient_at_its_start_only_when_asked(gaussian_coords, adaptation):
    # z ~ N(0, SCALES): the gradient at x is -x / SCALES^2. Draws (code -1) leave the adaptation alone,
    # so after one segment of draws the metric is what the start set.
    coords, config = gaussian_coords, NUTSConfig(num_warmup=100, num_samples=100, adaptation=adaptation)
    sampler = SegmentSampler(coords, config, segment_length(config))
    start = np.array([[1.0, 2.0, -3.0], [0.5, -1.0, 6.0]], dtype=np.float32)
    size = np.abs(start / SCALES**2)
    expected = 1.0 / (size.mean(axis=0, keepdims=True) if adaptation == "pooled" else size)
    param = Parameterisation.centred(coords.plan)
    for from_gradient, metric in ((True, np.broadcast_to(expected, start.shape)), (False, np.ones_like(start))):
        chains = sampler.start(start, np.ones(3), 1.0, seed=0)
        chains, _, _ = sampler.run(param, chains, sample_codes(sampler.segment_length),
                                   metric_from_gradient=from_gradient)
        np.testing.assert_allclose(np.asarray(chains.adapt.inverse_mass), metric, rtol=1e-5)


def test_an_unknown_initial_metric_is_refused_by_name():
    with pytest.raises(ArgumentError, match="initial_metric must be"):
        NUTSConfig(initial_metric="fisher")

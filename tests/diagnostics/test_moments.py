"""Appendix D: gold-standard moments and running single-chain moment errors."""

import numpy as np
import pytest

from autoreparam.diagnostics import (
    GoldStandard,
    gold_standard,
    log_checkpoints,
    moment_errors,
    pooled_moments,
)
from autoreparam.errors import ArgumentError

Z999 = 3.2905  # two-sided 99.9% normal quantile


def test_pooled_moments_pool_chains_and_draws():
    rng = np.random.default_rng(0)
    draws = {"a": rng.normal(size=(3, 40)), "b": rng.normal(size=(3, 40, 2)) * [1.0, 4.0]}
    moments = pooled_moments(draws, max_values=1)  # one element per chunk
    assert moments.mean["a"] == pytest.approx(draws["a"].mean())
    np.testing.assert_allclose(moments.sd["b"], draws["b"].reshape(120, 2).std(axis=0))


def test_gold_standard_is_the_mean_of_the_two_central_methods():
    # Four methods whose pooled means of x are 0, 1, 5, 100 (one badly off) and whose sds are
    # 2, 2, 3, 7: the medians are (1 + 5) / 2 = 3 and (2 + 3) / 2 = 2.5.
    base = np.array([[-1.0, 1.0], [1.0, -1.0]])  # mean 0, sd 1 pooled
    methods = [
        {"x": offset + scale * base, "y": np.zeros((2, 2, 3)) + k}
        for k, (offset, scale) in enumerate([(0, 2), (1, 2), (5, 3), (100, 7)])
    ]
    gold = gold_standard(methods)
    assert gold.mean["x"] == pytest.approx(3.0)
    assert gold.sd["x"] == pytest.approx(2.5)
    np.testing.assert_allclose(gold.mean["y"], np.full(3, 1.5))  # (1 + 2) / 2
    # Three methods: the median is the middle one.
    assert gold_standard(methods[:3]).mean["x"] == pytest.approx(1.0)


def test_gold_standard_refuses_mismatched_methods():
    with pytest.raises(ArgumentError):
        gold_standard([{"x": np.zeros((2, 3))}, {"x": np.zeros((2, 3, 2))}])
    with pytest.raises(ArgumentError):
        gold_standard({"x": np.zeros((2, 3))})


def brute_force_errors(draws, per_draw, gold, checkpoints):
    """Appendix D's r_bar and s_bar, with explicit loops over checkpoints, elements and chains."""
    columns = []
    for name, value in draws.items():
        flat = value.reshape(value.shape[0], value.shape[1], -1)
        for e in range(flat.shape[2]):
            mu, sd = np.ravel(gold.mean[name])[e], np.ravel(gold.sd[name])[e]
            columns.append((flat[:, :, e], mu, sd))
    r_bar, s_bar = [], []
    for g in checkpoints:
        t = int(np.floor(g / per_draw + 1e-9))
        r = [np.mean([abs(c[:t].mean() - mu) for c in x]) / sd for x, mu, sd in columns]
        s = [np.mean([abs(c[:t].std() - sd) for c in x]) / sd for x, mu, sd in columns]
        r_bar.append(np.mean(r))
        s_bar.append(np.mean(s))
    return np.array(r_bar), np.array(s_bar)


def test_running_errors_match_the_definition():
    rng = np.random.default_rng(1)
    draws = {"a": rng.normal(size=(3, 50)) + 2, "b": rng.normal(size=(3, 50, 2)) * 3}
    gold = GoldStandard(
        mean={"a": 2.1, "b": np.array([0.0, 0.5])}, sd={"a": 0.9, "b": np.array([3.0, 2.0])}
    )
    checkpoints = [3, 4, 5, 9, 12, 40, 41, 150]  # 3 gradients per draw: 1, 1, 1, 3, 4, 13, 13, 50
    result = moment_errors(draws, 3, gold, checkpoints, max_values=60)
    np.testing.assert_array_equal(result.num_draws, [1, 1, 1, 3, 4, 13, 13, 50])
    r_bar, s_bar = brute_force_errors(draws, 3, gold, checkpoints)
    np.testing.assert_allclose(result.mean_error, r_bar, rtol=1e-10)
    np.testing.assert_allclose(result.sd_error, s_bar, rtol=1e-10)
    assert result.mean_error_per_element.shape == (8, 3)
    # One draw has sd 0, so its sd error is sigma / sigma = 1 exactly, for every element.
    np.testing.assert_allclose(result.sd_error_per_element[0], 1.0)


def test_mean_error_of_independent_draws_follows_sqrt_two_over_pi_t():
    # For iid N(mu, sigma) draws, E|mean of t draws - mu| / sigma = sqrt(2 / (pi t)); averaging
    # |Z| / sqrt(t) over K chains has standard error sqrt((1 - 2/pi) / (t K)).
    rng = np.random.default_rng(2)
    chains, mu, sigma = 400, 1.5, 2.0
    draws = {"x": mu + sigma * rng.normal(size=(chains, 256))}
    gold = GoldStandard(mean={"x": mu}, sd={"x": sigma})
    t = np.array([1, 4, 16, 64, 256])
    result = moment_errors(draws, 1.0, gold, t)
    expected = np.sqrt(2 / (np.pi * t))
    se = np.sqrt((1 - 2 / np.pi) / (t * chains))
    assert np.all(np.abs(result.mean_error - expected) <= Z999 * se)
    assert np.all(np.diff(result.sd_error) < 0)  # more draws, better sd estimates


def test_log_checkpoints_span_one_draw_to_all():
    points = log_checkpoints(5000, 8.0, num=20)
    assert points[0] == 8.0 and points[-1] == 5000 * 8.0
    assert np.all(np.diff(points) > 0)
    result = moment_errors({"x": np.random.default_rng(3).normal(size=(2, 5000))}, 8.0,
                           GoldStandard({"x": 0.0}, {"x": 1.0}))
    assert result.num_draws[0] == 1 and result.num_draws[-1] == 5000


@pytest.mark.parametrize(
    "gold, checkpoints",
    [
        (GoldStandard({"x": 0.0}, {"x": 1.0}), [1.0]),  # buys 0 draws at 2 gradients per draw
        (GoldStandard({"x": 0.0}, {"x": 1.0}), [2.0 * 11]),  # more draws than there are
        (GoldStandard({"y": 0.0}, {"y": 1.0}), [2.0]),  # no gold for site x
        (GoldStandard({"x": 0.0}, {"x": 0.0}), [2.0]),  # zero gold sd
        (GoldStandard({"x": np.zeros(2)}, {"x": np.ones(2)}), [2.0]),  # wrong shape
    ],
)
def test_invalid_arguments_are_refused(gold, checkpoints):
    with pytest.raises(ArgumentError):
        moment_errors({"x": np.zeros((2, 10))}, 2.0, gold, checkpoints)

"""The paper's ESS metric (Appendix D; authors' tfp.mcmc.effective_sample_size defaults)."""

import numpy as np
import pytest
import scipy.signal

from autoreparam.diagnostics import (
    as_draws,
    ess_by_site,
    ess_of_series,
    ess_per_chain,
    paper_metric,
)
from autoreparam.errors import ArgumentError, DataError

Z999 = 3.2905  # two-sided 99.9% normal quantile


def tfp_style_ess(x):
    """ESS as tfp.mcmc.effective_sample_size computed it, written with loops: R_i normalised by
    N - i (tfp.stats.auto_correlation), weights (N - i) / N, mask from the first R_i < 0 on."""
    n = x.size
    c = x - x.mean()
    var = np.dot(c, c) / n
    r = np.array([np.dot(c[: n - i], c[i:]) / (n - i) / var for i in range(n)])
    mask = np.cumsum(r < 0) == 0
    weights = (n - np.arange(n)) / n
    return n / (-1.0 + 2.0 * np.sum((weights * r * mask)))


def ar1(rng, phi, chains, draws, burn=500):
    noise = rng.normal(size=(chains, burn + draws))
    return scipy.signal.lfilter([1.0], [1.0, -phi], noise, axis=1)[:, burn:]


def test_hand_computed_ess_truncates_at_the_first_negative_lag():
    # x = 0, 1, 2, 1, 2, 3: mean 3/2, centred -3/2, -1/2, 1/2, -1/2, 1/2, 3/2.
    # Lagged sums of products: lag 0: 9/4 + 1/4 + 1/4 + 1/4 + 1/4 + 9/4 = 11/2;
    #   lag 1: 3/4 - 1/4 - 1/4 - 1/4 + 3/4 = 3/4;  lag 2: -3/4 + 1/4 + 1/4 - 3/4 = -1 (negative);
    #   lag 3: 3/4 - 1/4 + 3/4 = 5/4 (positive again, but after the cut, so excluded).
    # TFP: R_1 = (3/4 / 5) / (11/2 / 6) = 9/55, weight (6 - 1)/6, so (5/6) R_1 = 3/22 = rho_1.
    # ESS = 6 / (1 + 2 * 3/22) = 6 / (28/22) = 33/7.
    x = np.array([0.0, 1.0, 2.0, 1.0, 2.0, 3.0])
    assert ess_of_series(x) == pytest.approx(33 / 7, rel=1e-12)
    assert tfp_style_ess(x) == pytest.approx(33 / 7, rel=1e-12)


def test_hand_computed_short_cases():
    # 1, 2, 3, 4: rho_1 = (5/4 / 4) / (5 / 4) = 1/4, rho_2 < 0: ESS = 4 / (1 + 1/2) = 8/3.
    assert ess_of_series(np.array([1.0, 2.0, 3.0, 4.0])) == pytest.approx(8 / 3, rel=1e-12)
    # Alternating: rho_1 < 0 already, the sum is empty and ESS = N (the estimator's ceiling).
    assert ess_of_series(np.array([1.0, -1.0] * 5)) == pytest.approx(10.0, rel=1e-12)
    # Constant: ESS 0, as the authors' np.nan_to_num made it.
    assert ess_of_series(np.full(7, 3.3)) == 0.0


@pytest.mark.parametrize("n", [2, 3, 50, 333])
def test_matches_tfp_formula_on_random_series(n):
    rng = np.random.default_rng(n)
    x = ar1(rng, 0.7, 4, n)
    np.testing.assert_allclose(ess_of_series(x), [tfp_style_ess(row) for row in x], rtol=1e-9)


def test_series_whose_first_negative_lag_is_far_are_recomputed_with_all_lags():
    # A slow random walk keeps positive autocorrelation well past the first-pass window (1024 lags).
    rng = np.random.default_rng(11)
    x = np.cumsum(rng.normal(size=(2, 8000)), axis=1)
    x[1] = np.sin(np.linspace(0, 2.5 * np.pi, 8000))
    c = x - x.mean(axis=1, keepdims=True)
    rho = np.array([[np.dot(r[: 8000 - i], r[i:]) for i in range(8000)] for r in c])
    assert np.all(np.argmax(rho < 0, axis=1) > 1024)  # the case this test is about
    np.testing.assert_allclose(ess_of_series(x), [tfp_style_ess(row) for row in x], rtol=1e-9)


def test_ar1_ess_ratio_approaches_its_asymptote():
    # For AR(1) with coefficient phi, ESS / N -> (1 - phi) / (1 + phi). Bound: Monte Carlo error
    # of the mean over chains (99.9% z) plus 1% of the truth for the estimator's own bias (the
    # noise lags kept before the first negative one; measured about 1% at this N, shrinking
    # as 1 / sqrt(N)).
    phi, chains, draws = 0.9, 100, 20000
    ratio = ess_of_series(ar1(np.random.default_rng(12), phi, chains, draws)) / draws
    truth = (1 - phi) / (1 + phi)
    se = ratio.std(ddof=1) / np.sqrt(chains)
    assert abs(ratio.mean() - truth) <= Z999 * se + 0.01 * truth


def test_per_chain_per_element_layout_and_chunking():
    rng = np.random.default_rng(13)
    draws = {"a": ar1(rng, 0.5, 3, 200), "b": ar1(rng, 0.8, 3 * 6, 200).reshape(3, 2, 3, 200)}
    draws["b"] = np.moveaxis(draws["b"], 3, 1)  # (chains, draws, 2, 3)
    ess = ess_per_chain(draws)
    assert ess.shape == (3, 7)
    assert as_draws(draws).element_names == (
        "a", "b[0,0]", "b[0,1]", "b[0,2]", "b[1,0]", "b[1,1]", "b[1,2]"
    )
    np.testing.assert_allclose(ess[2, 0], tfp_style_ess(draws["a"][2]), rtol=1e-9)
    np.testing.assert_allclose(ess[1, 6], tfp_style_ess(draws["b"][1, :, 1, 2]), rtol=1e-9)
    # Tiny chunks (one element at a time) give the same numbers.
    np.testing.assert_array_equal(ess_per_chain(draws, max_values=1), ess)
    by_site = ess_by_site(draws)
    assert by_site["b"].shape == (3, 2, 3)
    assert by_site["b"][1, 1, 2] == ess[1, 6]
    # float32 input is accepted and computed in float64.
    np.testing.assert_allclose(
        ess_per_chain({k: v.astype(np.float32) for k, v in draws.items()}), ess, rtol=1e-4
    )


def test_paper_metric_by_hand():
    # Three chains of 6 draws, L = 2 leapfrog steps: 12 gradient evaluations per chain.
    # chain 0: x = 0,1,2,1,2,3 (ESS 33/7, above) and an alternating y (ESS 6);
    # chain 1: x alternating (6), y = 1..6: rho_1 = 8.75/17.5 = 1/2, rho_2 = 1/17.5, rho_3 < 0,
    #          ESS = 6 / (1 + 2 (1/2 + 1/17.5)) = 105/37;
    # chain 2: x constant (ESS 0), y alternating (6).
    alt = [1.0, -1.0] * 3
    x = np.array([[0.0, 1, 2, 1, 2, 3], alt, [2.0] * 6])
    y = np.array([alt, [1.0, 2, 3, 4, 5, 6], alt])
    metric = paper_metric({"x": x, "y": y}, grad_evals_per_chain=12)
    per_chain = 1000 / 12 * np.array([33 / 7, 105 / 37, 0.0])
    np.testing.assert_allclose(metric.per_chain, per_chain, rtol=1e-12)
    assert metric.mean == pytest.approx(per_chain.mean(), rel=1e-12)
    assert metric.se == pytest.approx(per_chain.std(ddof=1) / np.sqrt(3), rel=1e-12)
    assert metric.per_chain_min_element == ("x", "y", "x")
    # Mean over chains: x (33/7 + 6 + 0)/3 = 3.57 < y (6 + 105/37 + 6)/3 = 4.95.
    assert metric.min_element_name == "x"
    assert paper_metric({"x": x, "y": y}, 12, ddof=0).se == pytest.approx(
        per_chain.std() / np.sqrt(3), rel=1e-12
    )
    # Per-chain gradient counts (e.g. chains with different L) divide chain by chain.
    per = paper_metric({"x": x, "y": y}, grad_evals_per_chain=[12, 24, 12]).per_chain
    np.testing.assert_allclose(per, per_chain * [1, 0.5, 1], rtol=1e-12)


def test_min_element_is_the_slowest_mixing_one():
    rng = np.random.default_rng(14)
    theta = ar1(rng, 0.2, 8 * 5, 2000).reshape(8, 5, 2000).transpose(0, 2, 1)
    theta[:, :, 3] = ar1(rng, 0.95, 8, 2000)
    metric = paper_metric({"theta": theta}, grad_evals_per_chain=2000 * 4)
    assert metric.min_element_name == "theta[3]"
    assert set(metric.per_chain_min_element) == {"theta[3]"}


def test_single_chain_has_no_standard_error():
    metric = paper_metric({"x": ar1(np.random.default_rng(15), 0.5, 1, 100)}, 100)
    assert np.isnan(metric.se) and np.isfinite(metric.mean)


@pytest.mark.parametrize(
    "draws, grads, error",
    [
        ({"x": np.zeros(10)}, 10, ArgumentError),  # no chain axis
        ({"x": np.zeros((2, 1))}, 10, ArgumentError),  # one draw
        ({"x": np.zeros((2, 10)), "y": np.zeros((3, 10))}, 10, ArgumentError),
        ({}, 10, ArgumentError),
        ({"x": np.ones((2, 10), dtype=bool)}, 10, ArgumentError),
        ({"x": np.full((2, 10), np.nan)}, 10, DataError),
        ({"x": np.random.default_rng(0).normal(size=(2, 10))}, 0, ArgumentError),
        ({"x": np.random.default_rng(0).normal(size=(2, 10))}, [1, 2, 3], ArgumentError),
    ],
)
def test_invalid_input_is_refused(draws, grads, error):
    with pytest.raises(error):
        paper_metric(draws, grads)


def test_empty_sites_are_skipped_and_input_is_not_modified():
    rng = np.random.default_rng(16)
    x = ar1(rng, 0.5, 2, 50)
    original = x.copy()
    ess = ess_per_chain({"empty": np.zeros((2, 50, 0)), "x": x})
    assert ess.shape == (2, 1)
    np.testing.assert_array_equal(x, original)


def test_ess_by_site_keeps_a_zero_size_site():
    """A site of shape (0,) beside others: ``reshape((-1,) + (0,))`` raised (found in review)."""
    from autoreparam.diagnostics.ess import ess_by_site

    rng = np.random.default_rng(0)
    out = ess_by_site({"a": rng.normal(size=(3, 100)), "c": np.zeros((3, 100, 0))})
    assert out["c"].shape == (3, 0) and out["a"].shape == (3,)

"""The MCSE z-tests of the fuzzer: quiet on draws of the right distribution, loud on wrong ones."""

from __future__ import annotations

import numpy as np
import pytest

from autoreparam.reliability.agreement import exact_pit_tests, moment_tests, pit_tests, quartile_agreement
from autoreparam.reliability.statistics import holm


def ar1_chains(rng, chains, draws, k, rho=0.5, loc=0.0, scale=1.0, tails="normal"):
    """Autocorrelated chains with N(loc, scale^2) (or scaled Cauchy) marginals, like MCMC output."""
    base = rng.standard_normal((chains, draws, k))
    x = np.empty_like(base)
    x[:, 0] = base[:, 0]
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + np.sqrt(1 - rho**2) * base[:, t]
    if tails == "cauchy":  # a monotone map keeps the autocorrelation structure, changes the marginal
        from scipy import stats

        x = stats.cauchy.ppf(stats.norm.cdf(x))
    return loc + scale * x


def reference(rng, n, k, tails="normal"):
    return rng.standard_cauchy((n, k)) if tails == "cauchy" else rng.standard_normal((n, k))


@pytest.mark.parametrize("tails", ["normal", "cauchy"])
def test_pit_tests_pass_the_right_distribution_and_reject_shift_and_spread(tails):
    rng = np.random.default_rng(0)
    ref = reference(rng, 4000, 3, tails)
    good = ar1_chains(rng, 4, 1000, 3, tails=tails)
    assert holm(pit_tests(good, ref)).min() > 0.01
    shifted = ar1_chains(rng, 4, 1000, 3, loc=0.3, tails=tails)
    assert holm(pit_tests(shifted, ref))[:3].max() < 1e-3  # PIT mean of every element
    narrow = ar1_chains(rng, 4, 1000, 3, scale=0.7, tails=tails)
    assert holm(pit_tests(narrow, ref))[3:].max() < 1e-3  # PIT spread of every element


def test_moment_tests_against_exact_values():
    rng = np.random.default_rng(1)
    draws = ar1_chains(rng, 4, 1000, 2, loc=2.0, scale=3.0)
    assert holm(moment_tests(draws, np.array([2.0, 2.0]), np.array([9.0, 9.0]))).min() > 0.01
    assert holm(moment_tests(draws, np.array([2.0, 2.5]), np.array([9.0, 9.0])))[1] < 1e-3
    assert holm(moment_tests(draws, np.array([2.0, 2.0]), np.array([9.0, 12.0])))[3] < 1e-3


def test_quartile_agreement_between_runs():
    rng = np.random.default_rng(2)
    a, b = ar1_chains(rng, 4, 1000, 2), ar1_chains(rng, 4, 1000, 2)
    assert holm(quartile_agreement(a, b)).min() > 0.01
    c = ar1_chains(rng, 4, 1000, 2, scale=1.5)
    p = holm(quartile_agreement(a, c))  # same median, different quartiles
    assert p[[0, 1, 4, 5]].max() < 1e-3


def test_a_stuck_chain_against_an_exact_value_is_rejected_not_nan():
    stuck = np.full((2, 100, 1), 0.5)
    p = moment_tests(stuck, np.array([0.0]), np.array([1.0]))
    assert np.all(np.isfinite(p)) and p.max() < 1e-6


def test_exact_pit_tests_hold_their_size_where_the_exact_variance_test_does_not():
    """4,000 half-normal 'sites' of 4 x 100 i.i.d. draws each (half-normal scales are common priors):
    at p < 0.01 the exact-variance z-test rejects about twice as often as promised, since a squared
    deviation is skewed (42 times at 3.3e-5, Holm's first step at 0.001 over 30 tests; found in
    review), while the test through the exact CDF stays near 1% in location and spread."""
    from scipy import stats

    rng = np.random.default_rng(0)
    k, alpha = 4000, 0.01
    x = np.abs(rng.standard_normal((4, 100, k)))
    pit = exact_pit_tests(stats.halfnorm.cdf(x))
    moments = moment_tests(x, np.full(k, np.sqrt(2 / np.pi)), np.full(k, 1 - 2 / np.pi))
    assert np.mean(pit[:k] < alpha) < 1.5 * alpha and np.mean(pit[k:] < alpha) < 1.5 * alpha
    assert np.mean(moments[k:] < alpha) > 1.5 * alpha  # the reason for the change: liberal
    # and it has power: a scale 20% too large is rejected in location and spread
    wide = exact_pit_tests(stats.halfnorm.cdf(1.2 * np.abs(rng.standard_normal((4, 1000, 3)))))
    assert holm(wide).max() < 1e-3


def test_quartile_agreement_is_nan_not_one_for_a_run_with_non_finite_draws():
    rng = np.random.default_rng(3)
    a, b = ar1_chains(rng, 2, 200, 2), ar1_chains(rng, 2, 200, 2)
    b[0, 5, 1] = np.nan
    p = quartile_agreement(a, b).reshape(3, 2)
    assert np.all(np.isfinite(p[:, 0])) and np.all(np.isnan(p[:, 1]))

"""The MCSE z-tests of the fuzzer: quiet on draws of the right distribution, loud on wrong ones."""

from __future__ import annotations

import numpy as np
import pytest

from autoreparam.reliability.agreement import moment_tests, pit_tests, quartile_agreement
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

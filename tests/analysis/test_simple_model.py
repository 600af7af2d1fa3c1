"""Section 3's model: REFERENCE.md's kappa table, Appendix A's closed forms, Figure 4's lambda."""

import numpy as np
import pytest

from autoreparam.analysis import (
    best_lambda,
    kappa_cp,
    kappa_ncp,
    kappa_of_lambda,
    kappa_table,
    simple_model_covariance,
)
from autoreparam.errors import ArgumentError

# REFERENCE.md, "Ground truth for the simple model of Section 3" (sigma_mu = 1).
TABLE = {
    0.01: dict(kappa_cp=5.748, kappa_ncp=1.020, best_lambda=0.01),
    1.0: dict(kappa_cp=3.000, kappa_ncp=3.000, best_lambda=0.50),
    100.0: dict(kappa_cp=1.151, kappa_ncp=201.0, best_lambda=0.99),
}


def test_kappa_table_reproduces_the_reference_to_three_digits():
    rows = kappa_table()
    assert [row.q for row in rows] == list(TABLE)
    for row in rows:
        truth = TABLE[row.q]
        assert float(f"{row.kappa_cp:.4g}") == truth["kappa_cp"]
        assert float(f"{row.kappa_ncp:.4g}") == truth["kappa_ncp"]
        assert round(row.best_lambda, 2) == truth["best_lambda"]
        assert 1.0 <= row.kappa_best < 1.0005


@pytest.mark.parametrize("q", [0.01, 0.3, 1.0, 7.0, 100.0])
def test_best_lambda_is_q_over_one_plus_q_when_sigma_mu_is_one(q):
    # With sigma_mu = 1, mu~ = mu - (1 - lambda) theta, so Cov(theta, mu~) = Cov(theta, mu) -
    # (1 - lambda) Var(theta) = [1 - (1 - lambda)(q + 1)] / (2q + 1) (eq. 1), zero at
    # lambda = q / (q + 1): the posterior is then uncorrelated and kappa = 1 exactly.
    lam = best_lambda(q, 1.0)
    assert lam == pytest.approx(q / (1 + q), abs=1e-6)
    assert kappa_of_lambda(q, 1.0, q / (1 + q)) == pytest.approx(1.0, abs=1e-12)
    cov = simple_model_covariance(q, 1.0, q / (1 + q))
    assert abs(cov[0, 1]) < 1e-12


@pytest.mark.parametrize("sigma_mu", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("q", [1e-3, 0.01, 0.5, 1.0, 20.0, 100.0, 1e3])
def test_closed_forms_equal_the_numerical_route(q, sigma_mu):
    assert kappa_cp(q, sigma_mu) == pytest.approx(kappa_of_lambda(q, sigma_mu, 1.0), rel=1e-9)
    assert kappa_ncp(q, sigma_mu) == pytest.approx(kappa_of_lambda(q, sigma_mu, 0.0), rel=1e-9)


def printed_eq6(q, sigma_mu):
    """Appendix A eq. (6) exactly as printed, with its sigma_mu^2 factor in the discriminant."""
    v = sigma_mu**2
    a = v * q + 1
    root = np.sqrt(a**2 - v * (v * q + q + 1) * a / (q + 1))
    return (a + root) / (a - root)


def test_printed_eq6_is_right_only_at_sigma_mu_one():
    # Documents the second slip in Appendix A that `kappa_ncp` corrects.
    assert printed_eq6(100.0, 1.0) == pytest.approx(kappa_of_lambda(100.0, 1.0, 0.0), rel=1e-9)
    assert printed_eq6(100.0, 2.5) != pytest.approx(kappa_of_lambda(100.0, 2.5, 0.0), rel=1e-2)


def test_best_lambda_beats_both_extremes_for_other_sigma_mu():
    q, sigma_mu = 1.0, 2.0
    lam = best_lambda(q, sigma_mu)
    best = kappa_of_lambda(q, sigma_mu, lam)
    grid = [kappa_of_lambda(q, sigma_mu, x) for x in np.linspace(0, 1, 201)]
    assert best <= min(grid) * (1 + 1e-9)
    assert 0.0 < lam < 1.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: kappa_cp(0.0),
        lambda: kappa_ncp(-1.0),
        lambda: kappa_cp(1.0, 0.0),
        lambda: best_lambda(np.inf),
        lambda: simple_model_covariance(1.0, 1.0, 1.2),
    ],
)
def test_out_of_range_arguments_are_refused(call):
    with pytest.raises(ArgumentError):
        call()

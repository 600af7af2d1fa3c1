"""Condition number under the best diagonal preconditioner (Appendix A.3), as a convex program."""

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize

from autoreparam.analysis import (
    best_diagonal_preconditioner,
    condition_number,
    condition_number_best_diagonal,
)
from autoreparam.errors import ArgumentError


def random_spd(rng, n):
    a = rng.normal(size=(n, n)) * np.exp(rng.normal(size=n))[None, :]
    return a @ a.T + 0.05 * np.eye(n)


def scaled_kappa(cov, log_d):
    d = np.exp(log_d)
    return condition_number(cov * d[:, None] * d[None, :])


def test_condition_number_of_a_known_matrix():
    assert condition_number(np.diag([4.0, 1.0, 2.0])) == pytest.approx(4.0)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_diagonal_matrices_are_perfectly_preconditioned(n):
    cov = np.diag(np.exp(np.random.default_rng(n).normal(size=n) * 3))
    assert condition_number_best_diagonal(cov) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("n, rho", [(3, 0.3), (4, 0.8), (6, 0.95), (5, -0.2)])
def test_equicorrelation_has_a_known_optimum(n, rho):
    # The problem is convex in P = D^-2 and invariant under permuting the coordinates, so for a
    # permutation-invariant matrix an optimum has D proportional to I: kappa* = kappa(R).
    corr = (1 - rho) * np.eye(n) + rho * np.ones((n, n))
    expected = max(1 + (n - 1) * rho, 1 - rho) / min(1 + (n - 1) * rho, 1 - rho)
    scales = np.exp(np.random.default_rng(0).normal(size=n))
    cov = corr * scales[:, None] * scales[None, :]
    assert condition_number_best_diagonal(cov) == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize("q", [0.01, 1.0, 100.0])
def test_barrier_solver_matches_the_two_by_two_closed_form(q):
    # The 2 x 2 case has a closed-form shortcut; embedding V in blockdiag(V, 1) sends it through
    # the general barrier solver instead (the extra coordinate's scale is free, so kappa* is V's).
    for v in (
        np.array([[2.0, 1.0], [1.0, q + 1]]) / (2 * q + 1),  # V_CP, eq. (1), sigma_mu = 1
        np.array([[q + 1, -q], [-q, q + 1]]) / (2 * q + 1),  # V_NCP, eq. (2), sigma_mu = 1
    ):
        r = abs(v[0, 1]) / np.sqrt(v[0, 0] * v[1, 1])
        closed_form = (1 + r) / (1 - r)
        assert condition_number_best_diagonal(v) == pytest.approx(closed_form, rel=1e-12)
        embedded = scipy.linalg.block_diag(v, [[7.0]])
        assert condition_number_best_diagonal(embedded) == pytest.approx(closed_form, rel=1e-8)


@pytest.mark.parametrize("n, seed", [(3, 0), (4, 1), (5, 2), (8, 3)])
def test_no_diagonal_scaling_does_better(n, seed):
    rng = np.random.default_rng(seed)
    cov = random_spd(rng, n)
    best = best_diagonal_preconditioner(cov)
    log_d = np.log(best.scales)
    # The reported kappa is achieved by the reported scales ...
    assert scaled_kappa(cov, log_d) == pytest.approx(best.kappa, rel=1e-9)
    # ... is no worse than the Jacobi (unit-diagonal) scaling ...
    assert best.kappa <= scaled_kappa(cov, -0.5 * np.log(np.diag(cov))) * (1 + 1e-9)
    # ... and neither random perturbations nor a local search from several starts improve it.
    perturbed = log_d + rng.normal(scale=0.3, size=(500, n))
    assert min(scaled_kappa(cov, x) for x in perturbed) >= best.kappa * (1 - 1e-9)
    for start in range(3):
        x0 = -0.5 * np.log(np.diag(cov)) + rng.normal(scale=1.0, size=n)
        local = scipy.optimize.minimize(
            lambda x: np.log(scaled_kappa(cov, x)),
            x0,
            method="Nelder-Mead",
            options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000, "maxfev": 20000},
        )
        assert np.exp(local.fun) >= best.kappa * (1 - 1e-7)


def test_invariant_to_diagonal_rescaling_and_permutation():
    rng = np.random.default_rng(9)
    cov = random_spd(rng, 5)
    e = np.exp(rng.normal(size=5) * 2)
    perm = rng.permutation(5)
    base = condition_number_best_diagonal(cov)
    assert condition_number_best_diagonal(cov * e[:, None] * e[None, :]) == pytest.approx(
        base, rel=1e-8
    )
    assert condition_number_best_diagonal(cov[np.ix_(perm, perm)]) == pytest.approx(base, rel=1e-8)
    # The covariance and its inverse (the precision) have the same optimum: kappa(D V D) equals
    # kappa(D^-1 V^-1 D^-1).
    assert condition_number_best_diagonal(np.linalg.inv(cov)) == pytest.approx(base, rel=1e-7)


@pytest.mark.parametrize(
    "matrix",
    [
        np.array([[1.0, 2.0], [0.0, 1.0]]),  # not symmetric
        np.array([[1.0, 2.0], [2.0, 1.0]]),  # indefinite
        np.ones((2, 3)),
        np.zeros((0, 0)),
        np.array([[np.inf]]),
    ],
)
def test_invalid_matrices_are_refused(matrix):
    with pytest.raises(ArgumentError):
        condition_number_best_diagonal(matrix)

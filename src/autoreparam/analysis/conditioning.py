"""Condition number of a covariance under the best diagonal preconditioner.

Section 3 and Appendix A.3 of the paper measure a parameterisation by

    kappa*(V) = min over diagonal D > 0 of kappa(D V D),

which models sampling with a fitted diagonal mass matrix. Appendix A.3 solves the 2 x 2 case by
hand; for n x n we solve it as a convex problem. With B = V^-1/2 and P = diag(p) = D^-2, the
eigenvalues of D V D are the reciprocals of those of M(p) = B P B = sum_i p_i b_i b_i^T, and kappa
is scale-free, so

    1 / kappa*(V) = max s   subject to   s I <= M(p) <= I,

a semidefinite program in (p, s): concave objective, linear matrix inequalities (P > 0 follows from
M(p) > 0). We solve it with a log-barrier interior-point method (Boyd and Vandenberghe, Convex
Optimization, section 11.3), so the answer is the global optimum, not a local one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autoreparam.errors import ArgumentError


@dataclass(frozen=True, eq=False)  # holds arrays: no element-wise ==
class BestDiagonal:
    """Result of `best_diagonal_preconditioner`.

    Attributes:
        kappa: min over diagonal D > 0 of the condition number of D V D.
        scales: the diagonal of an optimal D (defined up to a common factor; normalised so max = 1).
    """

    kappa: float
    scales: np.ndarray


def condition_number(matrix) -> float:
    """Ratio of the largest to the smallest eigenvalue of a symmetric positive-definite matrix."""
    eigenvalues = np.linalg.eigvalsh(_check_spd(matrix, "matrix"))
    return float(eigenvalues[-1] / eigenvalues[0])


def condition_number_best_diagonal(cov, *, rtol: float = 1e-10) -> float:
    """min over diagonal D > 0 of kappa(D cov D) (Appendix A.3), computed as a convex program."""
    return best_diagonal_preconditioner(cov, rtol=rtol).kappa


def best_diagonal_preconditioner(cov, *, rtol: float = 1e-10) -> BestDiagonal:
    """The optimal diagonal preconditioner of `cov` and the condition number it achieves.

    Args:
        cov: (n, n) symmetric positive-definite matrix (a covariance; its inverse, the precision,
            has the same kappa*).
        rtol: relative accuracy wanted on 1 / kappa (the barrier method's duality-gap bound).
    """
    cov = _check_spd(cov, "cov")
    n = cov.shape[0]
    # The problem is invariant to diagonal rescaling, so start from the correlation matrix: this
    # fixes the units and makes the barrier iterations well scaled.
    unit = 1.0 / np.sqrt(np.diag(cov))
    corr = cov * unit[:, None] * unit[None, :]
    eigenvalues, eigenvectors = np.linalg.eigh(corr)
    if eigenvalues[0] <= 0:
        raise ArgumentError("cov is numerically singular; its condition number is unbounded")
    if n == 1:
        return BestDiagonal(kappa=1.0, scales=np.ones(1))
    if n == 2:
        # Closed form (the case of Appendix A.3): D V D = [[a, c], [c, b]] keeps r^2 = c^2 / (ab),
        # and kappa = (T + sqrt(T^2 - 4 det)) / (T - sqrt(T^2 - 4 det)) grows with
        # T^2 / det = (a + b)^2 / (ab (1 - r^2)), smallest at a = b: the correlation matrix,
        # whose eigenvalues are 1 +- |r|.
        r = abs(corr[0, 1])
        return BestDiagonal(kappa=float((1.0 + r) / (1.0 - r)), scales=unit / unit.max())
    b = (eigenvectors / np.sqrt(eigenvalues)) @ eigenvectors.T  # corr^-1/2; column i is b_i
    p, _ = _maximise_smallest_eigenvalue(b, eigenvalues, rtol)
    # Report the condition number the found D achieves (eigenvalues of D V D are those of M(p)
    # inverted); it is at most 1 / s, the barrier iterate's bound.
    m_eigenvalues = np.linalg.eigvalsh((b * p[None, :]) @ b.T)
    scales = unit / np.sqrt(p)
    return BestDiagonal(
        kappa=float(m_eigenvalues[-1] / m_eigenvalues[0]), scales=scales / scales.max()
    )


def _maximise_smallest_eigenvalue(b: np.ndarray, corr_eigenvalues: np.ndarray, rtol: float):
    """Barrier method for max s s.t. s I <= sum_i p_i b_i b_i^T <= I; returns (p, s)."""
    n = b.shape[0]
    # A strictly feasible start: p = c 1 gives M = c corr^-1, whose eigenvalues lie in
    # [c / max(w), c / min(w)]; c = min(w) / 2 puts them below 1/2.
    c = 0.5 * corr_eigenvalues[0]
    x = np.append(np.full(n, c), 0.5 * c / corr_eigenvalues[-1])
    barrier_size = 2 * n  # each log det of an n x n matrix is an n-self-concordant barrier
    t = 1.0 / x[-1]
    while True:
        x = _centre(x, t, b)
        # The duality gap of the centred point is at most barrier_size / t (B&V eq. 11.11).
        if barrier_size / t <= rtol * x[-1]:
            return x[:-1], x[-1]
        t *= 50.0


def _centre(x: np.ndarray, t: float, b: np.ndarray, max_steps: int = 200) -> np.ndarray:
    """Damped Newton minimisation of F(p, s) = -t s - log det(M - s I) - log det(I - M)."""
    for _ in range(max_steps):
        value, grad, hess = _barrier_terms(x, t, b, derivatives=True)
        step = -np.linalg.solve(hess, grad)
        decrement_sq = -grad @ step
        if decrement_sq <= 1e-9:
            return x
        # Backtracking line search that also keeps the point strictly feasible (B&V alg. 9.2).
        size = 1.0
        while True:
            candidate = x + size * step
            new_value = _barrier_terms(candidate, t, b, derivatives=False)
            # The slack term forgives round-off: at large t the objective is large and a decrease
            # of 1e-9 in it is below its floating-point resolution.
            slack = 1e-13 * abs(value)
            if new_value is not None and new_value <= value - 0.25 * size * decrement_sq + slack:
                break
            size *= 0.5
            if size < 1e-10:
                return x  # no further progress is representable in floating point
        x = candidate
    return x


def _barrier_terms(x: np.ndarray, t: float, b: np.ndarray, derivatives: bool):
    """The barrier objective and, if asked, its gradient and Hessian; None outside the domain."""
    p, s = x[:-1], x[-1]
    n = b.shape[0]
    m = (b * p[None, :]) @ b.T
    lower, upper = m - s * np.eye(n), np.eye(n) - m
    try:
        chol_lower, chol_upper = np.linalg.cholesky(lower), np.linalg.cholesky(upper)
    except np.linalg.LinAlgError:
        return None
    value = -t * s - 2.0 * np.sum(np.log(np.diag(chol_lower))) - 2.0 * np.sum(
        np.log(np.diag(chol_upper))
    )
    if not derivatives:
        return value
    lower_inv, upper_inv = np.linalg.inv(lower), np.linalg.inv(upper)
    # With X1 = M - s I and X2 = I - M, and dM/dp_i = b_i b_i^T:
    #   dF/dp_i = -b_i^T X1^-1 b_i + b_i^T X2^-1 b_i,   dF/ds = -t + tr(X1^-1),
    #   d2F/dp_i dp_j = (b_i^T X1^-1 b_j)^2 + (b_i^T X2^-1 b_j)^2,
    #   d2F/dp_i ds = -b_i^T X1^-2 b_i,   d2F/ds2 = tr(X1^-2).
    k1, k2 = b.T @ lower_inv @ b, b.T @ upper_inv @ b
    lower_inv_b = lower_inv @ b
    grad = np.append(-np.diag(k1) + np.diag(k2), -t + np.trace(lower_inv))
    hess = np.empty((n + 1, n + 1))
    hess[:n, :n] = k1**2 + k2**2
    hess[:n, n] = hess[n, :n] = -np.sum(lower_inv_b**2, axis=0)
    hess[n, n] = np.sum(lower_inv**2)
    return value, grad, hess


def _check_spd(matrix, name: str) -> np.ndarray:
    array = np.asarray(matrix, dtype=float)
    if array.ndim != 2 or array.shape[0] != array.shape[1] or array.shape[0] == 0:
        raise ArgumentError(f"{name} must be a non-empty square matrix, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ArgumentError(f"{name} must be finite")
    if not np.allclose(array, array.T, rtol=1e-10, atol=1e-12 * np.abs(array).max()):
        raise ArgumentError(f"{name} must be symmetric")
    array = 0.5 * (array + array.T)
    if np.linalg.eigvalsh(array)[0] <= 0:
        raise ArgumentError(f"{name} must be positive definite")
    return array

"""The simple hierarchical model of Section 3, its closed forms (Appendix A) and its best lambda.

    theta ~ N(0, 1),   mu ~ N(theta, sigma_mu),   y_n ~ N(mu, sigma),  n = 1..N,   q = N / sigma^2.

The N observations enter the posterior only through q, so they are written here as one observation
of mu with variance 1 / q. Latents are ordered (theta, mu); Appendix A orders them (mu, theta).
Only mu is reparameterised (Section 5.2): mu = theta + sigma_mu^(1 - lambda) (mu~ - lambda theta).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize

from autoreparam.analysis.conditioning import condition_number_best_diagonal
from autoreparam.analysis.linear_gaussian import LinearGaussianModel
from autoreparam.analysis.partial_centring import reparameterised_posterior_covariance
from autoreparam.errors import ArgumentError

THETA, MU = 0, 1  # positions of the latents in `simple_model`


def simple_model(q: float, sigma_mu: float = 1.0) -> LinearGaussianModel:
    """The Section 3 model as a `LinearGaussianModel` over (theta, mu)."""
    q, sigma_mu = _check(q, sigma_mu)
    return LinearGaussianModel(
        weights=np.array([[0.0, 0.0], [1.0, 0.0]]),  # mu's prior mean is theta
        offsets=np.zeros(2),
        scales=np.array([1.0, sigma_mu]),
        obs_matrix=np.array([[0.0, 1.0]]),
        obs_cov=np.array([[1.0 / q]]),
    )


def simple_model_covariance(q: float, sigma_mu: float, lam: float) -> np.ndarray:
    """Posterior covariance of (theta, mu~) when only mu is partially centred with `lam`.

    lam = 1 gives V_CP (Appendix A eq. 1, reordered), lam = 0 gives V_NCP (eq. 2, reordered).
    """
    if not 0.0 <= lam <= 1.0:
        raise ArgumentError(f"lam must lie in [0, 1], got {lam}")
    # theta keeps power 1 (centred, z = zt), as in the paper, which reparameterises mu only.
    return reparameterised_posterior_covariance(simple_model(q, sigma_mu), np.array([1.0, lam]))


def kappa_of_lambda(q: float, sigma_mu: float, lam: float) -> float:
    """kappa(lambda) of Figure 4: condition number under the best diagonal preconditioner."""
    return condition_number_best_diagonal(simple_model_covariance(q, sigma_mu, lam))


def kappa_cp(q: float, sigma_mu: float = 1.0) -> float:
    """Closed form of kappa_CP, Appendix A eq. (5), reading its `(v + 1)` as (sigma_mu^2 + 1)."""
    q, sigma_mu = _check(q, sigma_mu)
    v = sigma_mu**2
    discriminant_term = v * (v * q + q + 1.0) * (v * q + 1.0) / (v + 1.0)
    return _kappa_from_eigen_equation(v * q + 1.0, discriminant_term)


def kappa_ncp(q: float, sigma_mu: float = 1.0) -> float:
    """Closed form of kappa_NCP, Appendix A eq. (6), corrected.

    Eq. (6) as printed has a factor sigma_mu^2 in its discriminant that does not belong there (it
    is harmless at sigma_mu = 1, the only case the paper plots). Substituting d*_NCP (eq. 4) into
    the eigenvalue equation of D V_NCP D gives the discriminant
    (v q + 1)^2 - (v q + q + 1)(v q + 1) / (q + 1), with v = sigma_mu^2,
    which is also what the authors' code (davmre/autoreparam util.condition_number_ncp) computes.
    """
    q, sigma_mu = _check(q, sigma_mu)
    v = sigma_mu**2
    return _kappa_from_eigen_equation(v * q + 1.0, (v * q + q + 1.0) * (v * q + 1.0) / (q + 1.0))


def _kappa_from_eigen_equation(half_trace: float, product: float) -> float:
    # Both closed forms share the shape (a + sqrt(a^2 - c)) / (a - sqrt(a^2 - c)), eqs. (5), (6).
    root = np.sqrt(half_trace**2 - product)
    return float((half_trace + root) / (half_trace - root))


def best_lambda(q: float, sigma_mu: float = 1.0, *, grid_size: int = 101) -> float:
    """The lambda in [0, 1] minimising kappa(lambda) (Figure 4), by a grid then Brent's method in the
    bracket of every local minimum of the grid, keeping the best.

    Refining only the grid's best point missed narrow valleys: at sigma_mu = 10 the minimum (kappa 1
    at lambda 0.135, where the Section 3 rule puts it) is about 0.002 wide, its grid neighbours read
    1.05, and lambda = 1 (kappa 1.02) won (found in review).
    """
    q, sigma_mu = _check(q, sigma_mu)
    grid = np.linspace(0.0, 1.0, grid_size)
    values = np.array([kappa_of_lambda(q, sigma_mu, lam) for lam in grid])
    padded = np.concatenate([[np.inf], values, [np.inf]])
    local = [i for i in range(grid_size) if padded[i + 1] <= padded[i] and padded[i + 1] <= padded[i + 2]]
    best_value, best = float(values.min()), float(grid[int(np.argmin(values))])
    for i in local:
        result = scipy.optimize.minimize_scalar(
            lambda lam: kappa_of_lambda(q, sigma_mu, lam),
            bounds=(grid[max(i - 1, 0)], grid[min(i + 1, grid_size - 1)]),
            method="bounded",
            options={"xatol": 1e-10},
        )
        if result.fun < best_value:
            best_value, best = float(result.fun), float(result.x)
    return best


@dataclass(frozen=True)
class KappaRow:
    """One row of the Section 3 table: condition numbers under the best diagonal preconditioner."""

    q: float
    sigma_mu: float
    kappa_cp: float
    kappa_ncp: float
    best_lambda: float
    kappa_best: float


def kappa_table(qs=(0.01, 1.0, 100.0), sigma_mu: float = 1.0) -> list[KappaRow]:
    """The ground-truth table of REFERENCE.md, computed live from the general machinery.

    kappa_cp and kappa_ncp come from the numerical route (lambda = 1 and 0); tests check them
    against the closed forms of Appendix A.
    """
    rows = []
    for q in qs:
        lam = best_lambda(q, sigma_mu)
        rows.append(
            KappaRow(
                q=float(q),
                sigma_mu=float(sigma_mu),
                kappa_cp=kappa_of_lambda(q, sigma_mu, 1.0),
                kappa_ncp=kappa_of_lambda(q, sigma_mu, 0.0),
                best_lambda=lam,
                kappa_best=kappa_of_lambda(q, sigma_mu, lam),
            )
        )
    return rows


def _check(q, sigma_mu) -> tuple[float, float]:
    q, sigma_mu = float(q), float(sigma_mu)
    if not (np.isfinite(q) and q > 0):
        raise ArgumentError(f"q = N / sigma^2 must be positive and finite, got {q}")
    if not (np.isfinite(sigma_mu) and sigma_mu > 0):
        raise ArgumentError(f"sigma_mu must be positive and finite, got {sigma_mu}")
    return q, sigma_mu

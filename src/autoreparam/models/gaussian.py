"""The simple Gaussian model of Section 3, whose posterior is known exactly.

Gorinova, Moore & Hoffman (2020), Section 3 and Appendix A (papers/000 and papers/002):
theta ~ N(0, 1); mu ~ N(theta, sigma_mu); y_n ~ N(mu, sigma), n = 1..N. The posterior depends on
the data only through q = N / sigma^2 (its shape) and sum(y) (its location).
"""

from __future__ import annotations

import numpy as np
import numpyro
import numpyro.distributions as dist

from autoreparam.errors import ArgumentError
from autoreparam.models.checks import check_count, check_positive, check_seed


def gaussian_section3(y, sigma, sigma_mu=1.0, *, n=None):
    """Centred model of Section 3; ``y=None`` with ``n`` observations samples them instead."""
    check_positive("sigma", sigma)
    check_positive("sigma_mu", sigma_mu)
    if y is None:
        size = check_count("n", n)
    else:
        size = int(np.shape(y)[0])
    theta = numpyro.sample("theta", dist.Normal(0.0, 1.0))
    mu = numpyro.sample("mu", dist.Normal(theta, sigma_mu))
    with numpyro.plate("data", size):
        numpyro.sample("y", dist.Normal(mu, sigma), obs=y)


def gaussian_section3_posterior(y, sigma, sigma_mu=1.0) -> tuple[np.ndarray, np.ndarray]:
    """Exact posterior mean (2,) and covariance (2, 2) of (mu, theta) in the centred model.

    The log joint is -1/2 [(mu, theta) A (mu, theta)^T - 2 b . (mu, theta)] + const with the
    precision matrix A = [[1/s^2 + q, -1/s^2], [-1/s^2, 1/s^2 + 1]] (s = sigma_mu, q = N/sigma^2)
    and b = (sum(y) / sigma^2, 0). Its inverse is Appendix A, eq. (1),
    V = [[1 + s^2, 1], [1, q s^2 + 1]] / (s^2 q + q + 1), and the mean is V b.
    """
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    check_positive("sigma", sigma)
    check_positive("sigma_mu", sigma_mu)
    if y.size == 0:
        raise ArgumentError("y must hold at least one observation")
    s2, q = float(sigma_mu) ** 2, y.size / float(sigma) ** 2
    cov = np.array([[1.0 + s2, 1.0], [1.0, q * s2 + 1.0]]) / (s2 * q + q + 1.0)
    mean = cov @ np.array([y.sum() / float(sigma) ** 2, 0.0])
    return mean, cov


def gaussian_section3_data(q: float, n: int = 10, *, sigma_mu: float = 1.0, seed: int = 0):
    """Data ``(y, sigma)`` for a given q = N / sigma^2: N = ``n`` points, sigma = sqrt(n / q).

    y is drawn from the model itself (theta, then mu, then y) with numpy's generator seeded by
    ``seed``, so the same arguments always give the same data.
    """
    check_positive("q", q)
    check_positive("sigma_mu", sigma_mu)
    n = check_count("n", n)
    sigma = float(np.sqrt(n / q))
    rng = np.random.default_rng(check_seed(seed))
    theta = rng.normal()
    mu = rng.normal(theta, sigma_mu)
    return rng.normal(mu, sigma, size=n), sigma

"""The Section 3 model: exact posterior against brute force, and the paper's condition numbers."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro.infer.util import log_density

import autoreparam.models as zoo
from autoreparam.errors import ArgumentError


def _posterior_by_conditioning(y, sigma, sigma_mu):
    """Brute force: condition the joint Gaussian of (mu, theta, y_1..y_N) on y.

    theta = e0, mu = theta + sigma_mu e1, y_n = mu + sigma e_{n+1}: the joint is A e with e ~ N(0, I).
    """
    n = len(y)
    A = np.zeros((n + 2, n + 2))
    A[1, 0] = 1.0  # theta (row 1)
    A[0, 0], A[0, 1] = 1.0, sigma_mu  # mu (row 0)
    A[2:, 0], A[2:, 1] = 1.0, sigma_mu
    A[2:, 2:] = sigma * np.eye(n)
    S = A @ A.T
    gain = S[:2, 2:] @ np.linalg.inv(S[2:, 2:])
    return gain @ y, S[:2, :2] - gain @ S[2:, :2]


@pytest.mark.parametrize(("q", "n", "sigma_mu"), [(0.01, 3, 1.0), (1.0, 10, 1.0), (100.0, 7, 1.0), (2.0, 5, 0.3)])
def test_posterior_matches_brute_force(q, n, sigma_mu):
    y, sigma = zoo.gaussian_section3_data(q, n, sigma_mu=sigma_mu, seed=3)
    mean, cov = zoo.gaussian_section3_posterior(y, sigma, sigma_mu)
    brute_mean, brute_cov = _posterior_by_conditioning(y, sigma, sigma_mu)
    np.testing.assert_allclose(mean, brute_mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cov, brute_cov, rtol=1e-10, atol=1e-12)


def test_posterior_matches_the_model_log_density():
    # The model's log density is quadratic in (mu, theta): its Hessian is minus the posterior
    # precision and its gradient vanishes at the posterior mean.
    y, sigma = zoo.gaussian_section3_data(4.0, 6, sigma_mu=0.7, seed=1)
    mean, cov = zoo.gaussian_section3_posterior(y, sigma, 0.7)

    def logp(v):
        return log_density(zoo.gaussian_section3, (y, sigma, 0.7), {}, {"mu": v[0], "theta": v[1]})[0]

    at = jnp.asarray(mean, dtype=jnp.float32)
    hessian, grad = jax.jit(lambda v: (jax.hessian(logp)(v), jax.grad(logp)(v)))(at)
    np.testing.assert_allclose(-np.asarray(hessian), np.linalg.inv(cov), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(grad), 0.0, atol=1e-3)


@pytest.mark.parametrize(("q", "kappa_cp"), [(0.01, 5.748), (1.0, 3.000), (100.0, 1.151)])
def test_condition_numbers_of_reference_table(q, kappa_cp):
    # For a 2x2 covariance the best diagonal preconditioner turns it into its correlation matrix,
    # whose condition number is (1 + |r|) / (1 - |r|).
    y, sigma = zoo.gaussian_section3_data(q, 4)
    _, cov = zoo.gaussian_section3_posterior(y, sigma, 1.0)
    r = abs(cov[0, 1]) / np.sqrt(cov[0, 0] * cov[1, 1])
    assert (1 + r) / (1 - r) == pytest.approx(kappa_cp, abs=1e-3)


def test_data_helper_is_deterministic_and_has_the_requested_q():
    y1, s1 = zoo.gaussian_section3_data(0.5, 8, seed=11)
    y2, s2 = zoo.gaussian_section3_data(0.5, 8, seed=11)
    np.testing.assert_array_equal(y1, y2)
    assert s1 == s2 and len(y1) / s1**2 == pytest.approx(0.5)
    assert not np.array_equal(y1, zoo.gaussian_section3_data(0.5, 8, seed=12)[0])
    problem = zoo.load("gaussian_section3", q=100.0, n=4, seed=11)
    assert len(problem.kwargs["y"]) / problem.kwargs["sigma"] ** 2 == pytest.approx(100.0)


def test_arguments_are_checked():
    with pytest.raises(ArgumentError):
        zoo.gaussian_section3_data(0.0)
    with pytest.raises(ArgumentError):
        zoo.gaussian_section3_data(1.0, n=0)
    with pytest.raises(ArgumentError):
        zoo.gaussian_section3_posterior([1.0], sigma=-1.0)
    with pytest.raises(ArgumentError):
        zoo.gaussian_section3_posterior([], sigma=1.0)

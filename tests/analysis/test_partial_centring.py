"""Partial centring of a linear-Gaussian model (Section 5.2; workshop version's a, b powers)."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal, norm

from autoreparam.analysis import (
    LinearGaussianModel,
    centring_jacobian,
    inverse_centring_jacobian,
    posterior_covariance,
    reparameterised_posterior_covariance,
    reparameterised_posterior_precision,
    simple_model_covariance,
    to_original,
    topological_order,
)
from autoreparam.errors import ArgumentError

from .test_linear_gaussian import random_dag_model


def reparameterised_log_joint(model, zt, a, b, y):
    """log p(zt, y) written site by site, as a VIP-transformed program would evaluate it.

    Visits the latents in topological order: zt_i ~ N(a_i mu_i, s_i^b_i), then
    z_i = mu_i + s_i^(1 - b_i) (zt_i - a_i mu_i), with mu_i computed from the parents' z.
    Independent of the matrix algebra under test.
    """
    n = model.num_latents
    z = np.zeros(n)
    total = 0.0
    for i in topological_order(model.weights):
        mu = model.weights[i] @ z + model.offsets[i]
        s = model.scales[i]
        total += norm.logpdf(zt[i], a[i] * mu, s ** b[i])
        z[i] = mu + s ** (1 - b[i]) * (zt[i] - a[i] * mu)
    return total + multivariate_normal.logpdf(y, model.obs_matrix @ z, model.obs_cov)


def hessian_by_differences(f, x, step=0.5):
    """Central second differences: exact (up to round-off) for a quadratic f."""
    n = x.size
    hess = np.empty((n, n))
    basis = np.eye(n) * step
    for i in range(n):
        for j in range(n):
            hess[i, j] = (
                f(x + basis[i] + basis[j])
                - f(x + basis[i] - basis[j])
                - f(x - basis[i] + basis[j])
                + f(x - basis[i] - basis[j])
            ) / (4 * step**2)
    return hess


@pytest.mark.parametrize(
    "a, b",
    [
        (np.full(5, 1.0), None),
        (np.full(5, 0.0), None),
        (np.array([0.2, 0.9, 0.5, 0.0, 1.0]), None),
        (np.array([0.2, 0.9, 0.5, 0.0, 1.0]), np.array([0.7, 0.1, 1.0, 0.3, 0.6])),
    ],
)
def test_precision_is_the_hessian_of_the_reparameterised_log_joint(a, b):
    rng = np.random.default_rng(3)
    model = random_dag_model(rng, order=[3, 0, 4, 1, 2])
    y = rng.normal(size=3)
    b_eff = a if b is None else b
    log_joint = lambda zt: reparameterised_log_joint(model, zt, a, b_eff, y)  # noqa: E731
    hessian = hessian_by_differences(log_joint, rng.normal(size=5))
    precision = reparameterised_posterior_precision(model, a, b)
    np.testing.assert_allclose(precision, -hessian, rtol=1e-6, atol=1e-6 * np.abs(precision).max())
    np.testing.assert_allclose(
        reparameterised_posterior_covariance(model, a, b) @ precision, np.eye(5), atol=1e-8
    )


def test_jacobian_is_the_derivative_of_the_map_and_inverts():
    rng = np.random.default_rng(4)
    model = random_dag_model(rng)
    a, b = rng.random(5), rng.random(5)
    zt = rng.normal(size=5)
    jac = centring_jacobian(model, a, b)
    # The map is affine, so a difference quotient is its exact derivative.
    differences = np.stack(
        [to_original(model, zt + e, a, b) - to_original(model, zt, a, b) for e in np.eye(5)], 1
    )
    np.testing.assert_allclose(jac, differences, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(inverse_centring_jacobian(model, a, b) @ jac, np.eye(5), atol=1e-10)
    # Lower triangular in a topological order (here the identity order).
    assert np.allclose(np.triu(jac, 1), 0.0)


def test_centred_is_the_identity_map():
    model = random_dag_model(np.random.default_rng(5))
    np.testing.assert_allclose(centring_jacobian(model, 1.0), np.eye(5))
    np.testing.assert_allclose(
        reparameterised_posterior_covariance(model, 1.0), posterior_covariance(model)
    )


def test_non_centring_whitens_the_prior():
    model = random_dag_model(np.random.default_rng(6))
    bare = LinearGaussianModel(
        model.weights, model.offsets, model.scales, np.zeros((0, 5)), np.zeros((0, 0))
    )
    whitened = reparameterised_posterior_covariance(bare, 0.0)
    np.testing.assert_allclose(whitened, np.eye(5), atol=1e-10)


@pytest.mark.parametrize("q", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("sigma_mu", [0.5, 1.0, 3.0])
def test_simple_model_non_centred_is_appendix_eq2(q, sigma_mu):
    v = sigma_mu**2
    # Appendix A eq. (2), ordered (mu~, theta).
    v_ncp = np.array([[q + 1, -sigma_mu * q], [-sigma_mu * q, v * q + 1]]) / (v * q + q + 1)
    ours = simple_model_covariance(q, sigma_mu, 0.0)
    np.testing.assert_allclose(ours[::-1, ::-1], v_ncp, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "a, b", [(1.5, None), (-0.1, None), (0.5, 2.0), (np.ones(3), None), (np.ones((5, 1)), None)]
)
def test_powers_must_lie_in_the_unit_interval_with_the_right_shape(a, b):
    model = random_dag_model(np.random.default_rng(7))
    with pytest.raises(ArgumentError):
        reparameterised_posterior_covariance(model, a, b)

"""Posterior of linear-Gaussian models given as a DAG (Section 3, Appendix A.1)."""

import numpy as np
import pytest

from autoreparam.analysis import (
    LinearGaussianModel,
    posterior_covariance,
    posterior_precision,
    prior_precision,
    simple_model,
    topological_order,
)
from autoreparam.errors import ArgumentError, ModelError


def random_dag_model(rng, n=5, m=3, order=None):
    """A random linear-Gaussian DAG; `order` permutes the latents so W is not triangular."""
    weights = np.tril(rng.normal(size=(n, n)), k=-1) * (rng.random((n, n)) < 0.7)
    order = np.arange(n) if order is None else np.asarray(order)
    perm = np.eye(n)[order]
    weights = perm @ weights @ perm.T
    a = rng.normal(size=(m, m))
    return LinearGaussianModel(
        weights=weights,
        offsets=rng.normal(size=n),
        scales=np.exp(rng.normal(size=n)),
        obs_matrix=rng.normal(size=(m, n)),
        obs_cov=a @ a.T + 0.5 * np.eye(m),
    )


def covariance_by_conditioning(model):
    """Independent route: joint Gaussian of (z, y), Sigma_zz - Sigma_zy Sigma_yy^-1 Sigma_yz."""
    n = model.num_latents
    a_inv = np.linalg.inv(np.eye(n) - model.weights)  # z = (I - W)^-1 (c + S eps)
    prior_cov = a_inv @ np.diag(model.scales**2) @ a_inv.T
    h = model.obs_matrix
    cov_zy = prior_cov @ h.T
    cov_yy = h @ prior_cov @ h.T + model.obs_cov
    return prior_cov - cov_zy @ np.linalg.solve(cov_yy, cov_zy.T)


@pytest.mark.parametrize("order", [None, [3, 0, 4, 1, 2]])
def test_posterior_covariance_matches_gaussian_conditioning(order):
    model = random_dag_model(np.random.default_rng(0), order=order)
    np.testing.assert_allclose(
        posterior_covariance(model), covariance_by_conditioning(model), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        posterior_precision(model) @ posterior_covariance(model), np.eye(5), atol=1e-9
    )


@pytest.mark.parametrize("q", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("sigma_mu", [0.5, 1.0, 3.0])
def test_simple_model_posterior_is_appendix_eq1(q, sigma_mu):
    v = sigma_mu**2
    # Appendix A eq. (1), ordered (mu, theta); our latents are ordered (theta, mu).
    v_cp = np.array([[1 + v, 1.0], [1.0, q * v + 1]]) / (v * q + q + 1)
    ours = posterior_covariance(simple_model(q, sigma_mu))
    np.testing.assert_allclose(ours[::-1, ::-1], v_cp, rtol=1e-12)


def test_without_observations_the_posterior_is_the_prior():
    rng = np.random.default_rng(1)
    model = random_dag_model(rng, m=3)
    bare = LinearGaussianModel(
        model.weights, model.offsets, model.scales, np.zeros((0, 5)), np.zeros((0, 0))
    )
    np.testing.assert_allclose(posterior_precision(bare), prior_precision(bare))
    # By hand for a chain z0 -> z1: Var z1 = w^2 s0^2 + s1^2 = 4 * 9 + 0.25, Cov = w s0^2 = 18.
    chain = LinearGaussianModel(
        [[0.0, 0.0], [2.0, 0.0]], [0.0, 0.0], [3.0, 0.5], np.zeros((0, 2)), np.zeros((0, 0))
    )
    np.testing.assert_allclose(
        posterior_covariance(chain), [[9.0, 18.0], [18.0, 36.25]], rtol=1e-12
    )


def test_topological_order_puts_parents_first():
    model = random_dag_model(np.random.default_rng(2), order=[3, 0, 4, 1, 2])
    order = topological_order(model.weights)
    position = np.empty(5, dtype=int)
    position[order] = np.arange(5)
    children, parents = np.nonzero(model.weights)
    assert children.size > 0
    assert np.all(position[parents] < position[children])


def test_model_is_immutable_and_copies_its_inputs():
    weights = np.array([[0.0, 0.0], [1.0, 0.0]])
    model = LinearGaussianModel(weights, [0.0, 0.0], [1.0, 1.0], [[0.0, 1.0]], [[1.0]])
    weights[1, 0] = 5.0
    assert model.weights[1, 0] == 1.0
    with pytest.raises(ValueError):
        model.weights[1, 0] = 2.0


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(weights=[[0.0, 1.0], [1.0, 0.0]]), ModelError),  # cycle
        (dict(weights=[[1.0, 0.0], [0.0, 0.0]]), ModelError),  # self-loop
        (dict(scales=[1.0, 0.0]), ArgumentError),
        (dict(offsets=[0.0]), ArgumentError),
        (dict(obs_cov=[[-1.0]]), ArgumentError),
        (dict(obs_matrix=[[0.0, 1.0, 2.0]]), ArgumentError),
        (dict(weights=[[0.0, np.nan], [0.0, 0.0]]), ArgumentError),
    ],
)
def test_invalid_models_are_refused(kwargs, error):
    base = dict(
        weights=[[0.0, 0.0], [1.0, 0.0]],
        offsets=[0.0, 0.0],
        scales=[1.0, 1.0],
        obs_matrix=[[0.0, 1.0]],
        obs_cov=[[1.0]],
    )
    base.update(kwargs)
    with pytest.raises(error):
        LinearGaussianModel(**base)

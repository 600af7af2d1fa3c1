"""Linear-Gaussian models given as a directed graph, and their exact posterior.

Section 3 of the paper studies a model whose posterior is Gaussian, so that the effect of a
parameterisation can be read off its covariance. This file holds the general form of such a model:

    z_i ~ N(sum_j W_ij z_j + c_i, s_i)        (a latent's prior mean is linear in its parents)
    y   ~ N(H z, R)                            (observations are a linear function of the latents)

Writing the prior as (I - W) z = c + diag(s) eps gives the prior precision (I - W)^T S^-2 (I - W),
and conjugacy adds the likelihood term H^T R^-1 H (Appendix A.1 does this by hand for two latents).
The posterior covariance does not depend on the observed values y, so none are needed here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from autoreparam.errors import ArgumentError, ModelError


# A frozen record so that a model, once validated, cannot drift out of its invariants.
@dataclass(frozen=True, eq=False)
class LinearGaussianModel:
    """z_i ~ N(sum_j weights[i, j] z_j + offsets[i], scales[i]); y ~ N(obs_matrix z, obs_cov).

    Attributes:
        weights: (n, n) matrix W; W[i, j] != 0 makes z_j a parent of z_i. The graph must be acyclic.
        offsets: (n,) constants c added to each latent's prior mean.
        scales: (n,) prior standard deviations s > 0.
        obs_matrix: (m, n) matrix H; m may be 0 (no data: the posterior is the prior).
        obs_cov: (m, m) symmetric positive-definite observation covariance R.
    """

    weights: np.ndarray
    offsets: np.ndarray
    scales: np.ndarray
    obs_matrix: np.ndarray
    obs_cov: np.ndarray

    def __post_init__(self):
        w = _as_float_array(self.weights, "weights", ndim=2)
        n = w.shape[0]
        if w.shape != (n, n):
            raise ArgumentError(f"weights must be square, got shape {w.shape}")
        c = _as_float_array(self.offsets, "offsets", ndim=1)
        s = _as_float_array(self.scales, "scales", ndim=1)
        h = _as_float_array(self.obs_matrix, "obs_matrix", ndim=2)
        r = _as_float_array(self.obs_cov, "obs_cov", ndim=2)
        if c.shape != (n,) or s.shape != (n,):
            raise ArgumentError(
                f"offsets and scales must have shape ({n},), got {c.shape} and {s.shape}"
            )
        if np.any(s <= 0):
            raise ArgumentError(f"scales must be positive, got {s}")
        m = h.shape[0]
        if h.shape != (m, n) or r.shape != (m, m):
            raise ArgumentError(
                f"obs_matrix must be (m, {n}) and obs_cov (m, m); got {h.shape} and {r.shape}"
            )
        if not np.allclose(r, r.T):
            raise ArgumentError("obs_cov must be symmetric")
        if m and np.any(np.linalg.eigvalsh(r) <= 0):
            raise ArgumentError("obs_cov must be positive definite")
        topological_order(w)  # raises ModelError on a cycle
        for name, value in zip(
            ("weights", "offsets", "scales", "obs_matrix", "obs_cov"), (w, c, s, h, r)
        ):
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def num_latents(self) -> int:
        return self.weights.shape[0]


def topological_order(weights: np.ndarray) -> np.ndarray:
    """An order in which every latent follows its parents; ModelError if the graph has a cycle."""
    parents = np.asarray(weights) != 0
    n = parents.shape[0]
    if np.any(np.diag(parents)):
        raise ModelError("a latent cannot be its own parent (weights has a non-zero diagonal)")
    order, placed = [], np.zeros(n, dtype=bool)
    # Kahn's algorithm: repeatedly place every latent whose parents are all placed.
    while len(order) < n:
        ready = np.flatnonzero(~placed & ~np.any(parents & ~placed[None, :], axis=1))
        if ready.size == 0:
            raise ModelError("the latent graph has a cycle; a linear-Gaussian model must be a DAG")
        placed[ready] = True
        order.extend(ready.tolist())
    return np.asarray(order)


def prior_precision(model: LinearGaussianModel) -> np.ndarray:
    """Prior precision of z: (I - W)^T diag(s)^-2 (I - W)."""
    a = np.eye(model.num_latents) - model.weights
    return a.T @ (a / model.scales[:, None] ** 2)


def posterior_precision(model: LinearGaussianModel) -> np.ndarray:
    """Posterior precision of z: prior precision + H^T R^-1 H (conjugacy, Appendix A.1)."""
    precision = prior_precision(model)
    if model.obs_matrix.shape[0]:
        precision = precision + model.obs_matrix.T @ np.linalg.solve(
            model.obs_cov, model.obs_matrix
        )
    return _symmetrise(precision)


def posterior_covariance(model: LinearGaussianModel) -> np.ndarray:
    """Posterior covariance of z, inverse of `posterior_precision` (Appendix A eq. 1 for n = 2)."""
    precision = posterior_precision(model)
    # Cholesky rather than inv: the precision is positive definite by construction.
    factor = scipy.linalg.cho_factor(precision)
    return _symmetrise(scipy.linalg.cho_solve(factor, np.eye(model.num_latents)))


def _symmetrise(matrix: np.ndarray) -> np.ndarray:
    # Round-off makes computed covariances slightly asymmetric; eigh and Cholesky expect symmetry.
    return 0.5 * (matrix + matrix.T)


def _as_float_array(value, name: str, ndim: int) -> np.ndarray:
    array = np.array(value, dtype=float)  # a copy, so the caller's array cannot change the model
    if array.ndim != ndim:
        raise ArgumentError(f"{name} must have {ndim} dimension(s), got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ArgumentError(f"{name} must be finite")
    return array

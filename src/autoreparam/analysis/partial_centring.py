"""The posterior of a linear-Gaussian model in any partially centred parameterisation.

Section 5.2 of the paper (and the workshop version's separate loc and scale powers) defines, for a
latent z_i ~ N(mu_i, s_i) with prior mean mu_i = sum_j W_ij z_j + c_i,

    zt_i ~ N(a_i mu_i, s_i^b_i),      z_i = mu_i + s_i^(1 - b_i) (zt_i - a_i mu_i).

a = b = 1 is the centred parameterisation (z = zt), a = b = 0 the non-centred one. With
g_i = s_i^(1 - b_i) and h_i = 1 - a_i g_i the map is z = diag(h) (W z + c) + diag(g) zt, so

    z = (I - diag(h) W)^-1 (diag(h) c + diag(g) zt),

an affine map whose Jacobian J = (I - diag(h) W)^-1 diag(g) is constant (and lower triangular in a
topological order). The posterior of zt is therefore Gaussian with covariance J^-1 Sigma_z J^-T and
precision J^T Lambda_z J, where Sigma_z and Lambda_z are the posterior moments of z.
"""

from __future__ import annotations

import numpy as np

from autoreparam.analysis.linear_gaussian import (
    LinearGaussianModel,
    _symmetrise,
    posterior_covariance,
    posterior_precision,
)
from autoreparam.errors import ArgumentError


def centring_jacobian(model: LinearGaussianModel, loc_power, scale_power=None) -> np.ndarray:
    """J = dz / dzt of the partial-centring map (constant, because the map is affine).

    Args:
        model: the linear-Gaussian model.
        loc_power: a in [0, 1], a scalar or one value per latent.
        scale_power: b in [0, 1], likewise; None ties it to `loc_power` (the paper's single lambda).
    """
    g, h = _map_coefficients(model, loc_power, scale_power)
    return np.linalg.solve(np.eye(model.num_latents) - h[:, None] * model.weights, np.diag(g))


def inverse_centring_jacobian(
    model: LinearGaussianModel, loc_power, scale_power=None
) -> np.ndarray:
    """J^-1 = diag(g)^-1 (I - diag(h) W), which needs no matrix inversion."""
    g, h = _map_coefficients(model, loc_power, scale_power)
    return (np.eye(model.num_latents) - h[:, None] * model.weights) / g[:, None]


def to_original(model: LinearGaussianModel, zt, loc_power, scale_power=None) -> np.ndarray:
    """Map reparameterised values zt (..., n) to the original latents z (the map defined above)."""
    g, h = _map_coefficients(model, loc_power, scale_power)
    zt = np.asarray(zt, dtype=float)
    a = np.eye(model.num_latents) - h[:, None] * model.weights
    rhs = h * model.offsets + g * zt
    return np.linalg.solve(a, rhs[..., None])[..., 0]


def reparameterised_posterior_covariance(
    model: LinearGaussianModel, loc_power, scale_power=None
) -> np.ndarray:
    """Posterior covariance of zt: J^-1 Sigma_z J^-T."""
    j_inv = inverse_centring_jacobian(model, loc_power, scale_power)
    return _symmetrise(j_inv @ posterior_covariance(model) @ j_inv.T)


def reparameterised_posterior_precision(
    model: LinearGaussianModel, loc_power, scale_power=None
) -> np.ndarray:
    """Posterior precision of zt: J^T Lambda_z J."""
    j = centring_jacobian(model, loc_power, scale_power)
    return _symmetrise(j.T @ posterior_precision(model) @ j)


def _map_coefficients(model: LinearGaussianModel, loc_power, scale_power):
    """g_i = s_i^(1 - b_i) and h_i = 1 - a_i g_i, the coefficients of the map z(zt)."""
    a = _power(loc_power, model.num_latents, "loc_power")
    b = a if scale_power is None else _power(scale_power, model.num_latents, "scale_power")
    g = model.scales ** (1.0 - b)
    return g, 1.0 - a * g


def _power(value, n: int, name: str) -> np.ndarray:
    power = np.asarray(value, dtype=float)
    if power.ndim > 1 or (power.ndim == 1 and power.shape != (n,)):
        raise ArgumentError(f"{name} must be a scalar or have shape ({n},), got {power.shape}")
    if not np.all((power >= 0) & (power <= 1)):
        raise ArgumentError(f"{name} must lie in [0, 1], got {value}")
    return np.broadcast_to(power, (n,))

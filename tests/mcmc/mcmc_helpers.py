"""Shared pieces of the sampler tests: small protocols and Monte Carlo z-scores against known answers."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from autoreparam.coordinates import Coordinates
from autoreparam.diagnostics.standard import bulk_ess
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model
from autoreparam.vi.protocol import VIConfig

# A Gaussian with scales 100x apart: the mass matrix an adaptation must learn is diag(SCALES^2).
SCALES = np.array([0.1, 1.0, 10.0])


def gaussian():
    numpyro.sample("z", dist.Normal(0.0, jnp.asarray(SCALES)))


def gaussian_coordinates() -> Coordinates:
    return Coordinates(gaussian, (), {}, select_sites(analyse_model(gaussian), "default"))


# 99.9% two-sided normal quantile: a correct sampler fails one element check in 1000 seeds.
Z_999 = 3.29
SMALL_VI = VIConfig(num_steps=600, num_samples=32, learning_rates=(0.05, 0.2), final_num_samples=256, progress=False)


def z_scores(samples: np.ndarray, mean: np.ndarray, sd: np.ndarray, ess: np.ndarray, ess_square=None):
    """|estimate - truth| in Monte Carlo standard errors, for the mean and for the variance.

    The s.e. of a mean is sd/sqrt(ESS); of a variance (Gaussian marginals) var*sqrt(2/ESS2), where
    ESS2 is the effective sample size of the squared deviations (``ess_square``; default ``ess``).
    The two differ for antithetic samplers: HMC with a well-tuned trajectory can have ESS > N for a
    mean and far less for a variance (Vehtari et al. 2021, Section 4.1: ESS depends on the quantity).
    """
    flat = samples.reshape(samples.shape[0] * samples.shape[1], -1)
    ess_square = ess if ess_square is None else ess_square
    mean, sd, ess, ess_square = (np.broadcast_to(np.asarray(a, float).ravel(), flat.shape[1:])
                                 for a in (mean, sd, ess, ess_square))
    z_mean = np.abs(flat.mean(0) - mean) / (sd / np.sqrt(ess))
    z_var = np.abs(flat.var(0) - sd**2) / (sd**2 * np.sqrt(2.0 / ess_square))
    return z_mean, z_var


def assert_matches(samples: dict, truth: dict, min_ess: float = 50.0):
    """Every element's mean and variance within Z_999 Monte Carlo standard errors of the truth."""
    ess = bulk_ess(samples)
    squares = bulk_ess({k: (v - v.mean(axis=(0, 1))) ** 2 for k, v in samples.items()})
    for name, (mean, sd) in truth.items():
        assert np.all(ess[name] >= min_ess), f"{name}: too few effective samples ({ess[name]}) to test"
        z_mean, z_var = z_scores(samples[name], mean, sd, ess[name], squares[name])
        assert np.all(z_mean < Z_999), f"{name}: mean off by {z_mean} s.e."
        assert np.all(z_var < Z_999), f"{name}: variance off by {z_var} s.e."

"""The mean-field normal family and a VI fit whose answer is known exactly (a Gaussian target)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from scipy.stats import norm

from autoreparam.coordinates import Coordinates
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model
from autoreparam.vi.fits import fit_parameterisations
from autoreparam.vi.meanfield import MeanField, elbo_terms, init_meanfield, inverse_softplus, log_prob, sample
from autoreparam.vi.protocol import VIConfig


def test_log_prob_and_sample():
    q = MeanField(jnp.array([0.5, -1.0]), inverse_softplus(jnp.array([0.3, 2.0])))
    np.testing.assert_allclose(q.scale, [0.3, 2.0], rtol=1e-6)
    u = jnp.array([[0.1, 0.2], [1.0, -3.0]])
    expected = norm.logpdf(np.asarray(u), [0.5, -1.0], [0.3, 2.0]).sum(-1)
    np.testing.assert_allclose(log_prob(q, u), expected, rtol=1e-5)
    draws = sample(jax.random.PRNGKey(0), q, 10_000)
    assert draws.shape == (10_000, 2)
    z = (np.asarray(draws.mean(0)) - [0.5, -1.0]) / (np.array([0.3, 2.0]) / 100)
    assert np.all(np.abs(z) < 3.29)
    q0 = init_meanfield(jnp.zeros(3), 0.1)
    np.testing.assert_allclose(q0.scale, 0.1, rtol=1e-6)


def test_elbo_terms_are_constant_when_q_is_the_target():
    """log p(u) - log q(u) = log Z for every u when q = p / Z: here p is normalised, so 0."""
    loc, scale = jnp.array([1.0, -2.0]), jnp.array([0.5, 3.0])
    q = MeanField(loc, inverse_softplus(scale))

    def target(u):
        return jnp.sum(dist.Normal(loc, scale).log_prob(u))

    for stl in (True, False):
        terms = elbo_terms(target, q, jax.random.PRNGKey(1), 64, stl=stl)
        assert terms.shape == (64,)
        np.testing.assert_allclose(terms, 0.0, atol=1e-5)
    # sticking the landing: the gradient with respect to q vanishes at the optimum, draw by draw
    grads = jax.grad(lambda q: jnp.mean(elbo_terms(target, q, jax.random.PRNGKey(2), 8, stl=True)))(q)
    np.testing.assert_allclose(grads.loc, 0.0, atol=1e-5)
    np.testing.assert_allclose(grads.raw_scale, 0.0, atol=1e-5)


LOCS, SCALES = jnp.array([1.0, -2.0, 0.5]), jnp.array([0.5, 2.0, 1.0])


def independent_normals():
    with numpyro.plate("items", 3):
        numpyro.sample("x", dist.Normal(LOCS, SCALES))
    numpyro.sample("w", dist.LogNormal(0.3, 0.7))  # Gaussian in its unconstrained coordinate log w


def test_vi_recovers_the_exact_mean_and_sd_of_a_gaussian_target():
    """Mean-field q contains the target, so the optimum is exact; with the STL gradient (zero variance
    at q = p) Adam converges to it up to float32 round-off: 1e-4 relative is a loose bound on that."""
    structure = analyse_model(independent_normals)
    plan = select_sites(structure, [])
    coords = Coordinates(independent_normals, (), {}, plan)
    config = VIConfig(num_steps=600, num_samples=32, learning_rates=(0.1,), final_num_samples=1024, progress=False)
    fits, _ = fit_parameterisations(
        coords, {"cp": Parameterisation.centred(plan)}, {"x": jnp.zeros(3), "w": jnp.asarray(1.0)}, config
    )
    fit = fits["cp"]
    loc, scale = fit.site_loc(coords), fit.site_scale(coords)
    np.testing.assert_allclose(loc["x"], LOCS, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(scale["x"], SCALES, rtol=1e-4)
    np.testing.assert_allclose(loc["w"], 0.3, rtol=1e-4)
    np.testing.assert_allclose(scale["w"], 0.7, rtol=1e-4)
    # the model is normalised, so log Z = 0 and the ELBO at the optimum is exactly 0
    assert abs(fit.elbo) < 1e-5 and fit.nonfinite_steps == 0
    assert fit.trace.shape == (600,) and fit.learning_rate == 0.1


def test_inverse_softplus_is_finite_for_large_scales():
    """An ``init_scale`` of 100 gave an infinite scale (log(expm1(100)) overflows float32)."""
    for x in (1e-3, 0.1, 1.0, 20.0, 100.0, 1e4):
        raw = inverse_softplus(jnp.float32(x))
        assert np.isfinite(raw)
        np.testing.assert_allclose(jax.nn.softplus(raw), x, rtol=1e-5)
    assert np.all(np.isfinite(init_meanfield(jnp.zeros(2), 100.0).scale))

"""Partial centring of sites sampled inside ``numpyro.contrib.control_flow.scan`` (``reparam.in_scan``).

A site in a scan body is one stacked site of shape ``(steps, *step_shape)`` with one centring per
element; the rewrite runs step by step, and the density and maps must agree with each other and with
a non-centred program written by hand.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from numpyro import handlers
from numpyro.contrib.control_flow import scan
from numpyro.infer.util import potential_energy

from autoreparam.coordinates import Coordinates
from autoreparam.reparam.handlers import noncentre
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model

STEPS = 12
Y = jnp.asarray(np.random.default_rng(0).normal(size=STEPS), jnp.float32)


def volatility(y):
    """Stochastic volatility: an AR(1) log variance, its path written with scan."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    phi = numpyro.sample("phi", dist.Uniform(-1.0, 1.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    start = numpyro.sample("h0", dist.Normal(mu, sigma))

    def step(h, y_t):
        h = numpyro.sample("h", dist.Normal(mu + phi * (h - mu), sigma))
        numpyro.sample("y", dist.Normal(0.0, jnp.exp(h / 2)), obs=y_t)
        return h, None

    scan(step, start, y)


def volatility_by_hand(y):
    """The same model with h0 and the path non-centred by hand."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    phi = numpyro.sample("phi", dist.Uniform(-1.0, 1.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    start = mu + sigma * numpyro.sample("h0_decentered", dist.Normal(0.0, 1.0))

    def step(h, y_t):
        h = mu + phi * (h - mu) + sigma * numpyro.sample("h_decentered", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(0.0, jnp.exp(h / 2)), obs=y_t)
        return h, None

    scan(step, start, y)


K = 3
Y_WIDE = jnp.asarray(np.random.default_rng(1).normal(size=(5, K)), jnp.float32)


def plate_in_body(y):
    s = numpyro.sample("s", dist.HalfNormal(1.0))

    def step(previous, y_t):
        with numpyro.plate("k", K):
            x = numpyro.sample("x", dist.Normal(previous, s))
            numpyro.sample("y", dist.Normal(x, 1.0), obs=y_t)
        return x, None

    scan(step, jnp.zeros(K), y)


def event_in_body(y):
    s = numpyro.sample("s", dist.HalfNormal(1.0))

    def step(previous, y_t):
        x = numpyro.sample("x", dist.Normal(previous, s).to_event(1))
        numpyro.sample("y", dist.Normal(x, 1.0).to_event(1), obs=y_t)
        return x, None

    scan(step, jnp.zeros(K), y)


def log_normal_without_inputs(y):
    s = numpyro.sample("s", dist.HalfNormal(1.0))

    def step(previous, _):
        return numpyro.sample("v", dist.LogNormal(jnp.log(previous), s)), None

    scan(step, 1.0, None, length=y.shape[0])


def two_scans(y):
    s = numpyro.sample("s", dist.HalfNormal(1.0))

    def walk(site):
        def step(previous, y_t):
            x = numpyro.sample(site, dist.Normal(previous, s))
            numpyro.sample(f"y_{site}", dist.Normal(x, 1.0), obs=y_t)
            return x, None

        return step

    scan(walk("a"), 0.0, y[:, 0])
    scan(walk("b"), 0.0, y[:, 1])


@pytest.mark.parametrize("model", [plate_in_body, event_in_body, log_normal_without_inputs, two_scans],
                         ids=lambda m: m.__name__)
def test_every_kind_of_scanned_site_keeps_density_and_maps_consistent(model):
    """A plate or an event inside the body, a log-normal series with no scanned inputs, two scans:
    with a random lambda per element, the density identity holds and the maps invert each other."""
    coords = Coordinates(model, (Y_WIDE,), {}, select_sites(analyse_model(model, Y_WIDE), "all"))
    scanned = [n for n in coords.plan.names if coords.structure[n].in_scan]
    assert scanned and all(coords.structure[n].shape[0] == 5 for n in scanned)
    rng = np.random.default_rng(2)
    param = Parameterisation.tied(coords.plan, {n: rng.uniform(size=coords.structure[n].shape)
                                                for n in coords.plan.names})
    u = _point(coords, seed=5)
    v, _, log_det = coords.to_cp(u, param)
    np.testing.assert_allclose(coords.log_density(u, param), coords.log_density_cp(v) + log_det, rtol=1e-5)
    back, _, _ = coords.from_cp(v, param)
    for name in u:
        np.testing.assert_allclose(back[name], u[name], rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def coords():
    plan = select_sites(analyse_model(volatility, Y), "default")
    return Coordinates(volatility, (Y,), {}, plan)


def _point(coords, seed=1):
    key = jax.random.PRNGKey(seed)
    return {name: 0.5 * jax.random.normal(jax.random.fold_in(key, i), coords.structure[name].unconstrained_shape)
            for i, name in enumerate(coords.names)}


def test_the_path_inside_scan_is_planned_with_one_centring_per_step(coords):
    decisions = {d.name: d for d in coords.plan.decisions}
    assert decisions["h"].reparameterise and decisions["h0"].reparameterise
    assert coords.structure["h"].in_scan and coords.structure["h"].shape == (STEPS,)
    assert Parameterisation.tied(coords.plan, 0.3).loc_centring["h"].shape == (STEPS,)


@pytest.mark.parametrize("lam", [0.0, 0.5, {"h0": 0.7, "h": np.linspace(0.0, 1.0, STEPS)}],
                         ids=["ncp", "half", "per_step"])
def test_density_is_the_centred_density_plus_the_log_jacobian(coords, lam):
    """log p_u(u) (the rewritten program's auxiliary densities) = log p_v(v(u)) + log|det dv/du|."""
    param = Parameterisation.tied(coords.plan, lam)
    u = _point(coords)
    v, _, log_det = coords.to_cp(u, param)
    np.testing.assert_allclose(coords.log_density(u, param), coords.log_density_cp(v) + log_det, rtol=1e-5)
    back, _, inverse_log_det = coords.from_cp(v, param)
    for name in u:
        np.testing.assert_allclose(back[name], u[name], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(log_det + inverse_log_det, 0.0, atol=1e-4)


def test_non_centred_density_equals_the_program_written_by_hand(coords):
    u = _point(coords, seed=2)
    ours = coords.log_density(u, Parameterisation.non_centred(coords.plan))
    params = {"mu": u["mu"], "phi": u["phi"], "sigma": u["sigma"], "h0_decentered": u["h0"],
              "h_decentered": u["h"]}
    by_hand = -potential_energy(volatility_by_hand, (Y,), {}, params)
    np.testing.assert_allclose(ours, by_hand, rtol=1e-6)


def test_non_centred_path_is_the_hand_recursion(coords):
    u = _point(coords, seed=3)
    z = coords.to_original(u, Parameterisation.non_centred(coords.plan))
    mu, sigma = float(z["mu"]), float(z["sigma"])
    phi = float(z["phi"])
    h, expected = float(z["h0"]), []
    for innovation in np.asarray(u["h"]):
        h = mu + phi * (h - mu) + sigma * innovation
        expected.append(h)
    np.testing.assert_allclose(z["h"], expected, rtol=1e-5, atol=1e-6)


def test_noncentre_rewrites_the_scan_body_into_a_stacked_auxiliary_and_a_deterministic_site():
    trace = handlers.trace(handlers.seed(noncentre(volatility), rng_seed=0)).get_trace(Y)
    assert trace["h_decentered"]["type"] == "sample" and trace["h_decentered"]["value"].shape == (STEPS,)
    assert trace["h"]["type"] == "deterministic" and trace["h"]["value"].shape == (STEPS,)
    assert isinstance(trace["h_decentered"]["fn"], dist.Normal)
    np.testing.assert_allclose(trace["h_decentered"]["fn"].scale, 1.0)


def test_the_density_is_differentiable_in_every_step_s_centring(coords):
    """VIP differentiates the density with respect to lambda; each step's lambda gets its own gradient."""
    u = _point(coords, seed=4)

    def density(lam_path):
        return coords.log_density(u, Parameterisation.tied(coords.plan, {"h0": jnp.asarray(0.5), "h": lam_path}))

    gradient = jax.jit(jax.grad(density))(jnp.full(STEPS, 0.5))
    assert gradient.shape == (STEPS,) and np.all(np.isfinite(gradient))
    assert np.unique(np.round(np.asarray(gradient), 6)).size > 1


# --- a sample_shape inside a scan body (found in review, 2026-11-29) -----------------------------------
def _shaped_in_scan():
    s = numpyro.sample("s", dist.HalfNormal(1.0))

    def body(carry, y):
        z = numpyro.sample("z", dist.Normal(carry, s), sample_shape=(2,))
        numpyro.sample("y", dist.Normal(z, 1.0), obs=jnp.array([y, y]))
        return z.mean(), None

    scan(body, 0.0, jnp.array([1.0, 2.0, 0.5]))


def test_a_sample_shape_inside_scan_is_left_centred_never_rewritten_into_another_model():
    """The rewrite drew one value per step where the model draws two (z of shape (3,) instead of (3, 2)),
    silently: NumPyro hands the reparameteriser the distribution without the sample_shape."""
    from autoreparam.errors import SiteError
    from autoreparam.reparam.handlers import partially_centre_sites

    trace = numpyro.handlers.trace(numpyro.handlers.seed(noncentre(_shaped_in_scan, "all"), 0)).get_trace()
    assert trace["z"]["type"] == "sample" and trace["z"]["value"].shape == (3, 2)
    plan = select_sites(analyse_model(_shaped_in_scan), "all")
    assert "sample_shape inside a scan body" in plan.report()
    with pytest.raises(SiteError, match="sample_shape inside a scan body"):
        select_sites(analyse_model(_shaped_in_scan), ["z"])
    with pytest.raises(SiteError, match="sample_shape inside a scan body"):
        numpyro.handlers.trace(numpyro.handlers.seed(partially_centre_sites(_shaped_in_scan, {"z": (0.3, 0.3)}),
                                                     0)).get_trace()

"""Hostile and unusual input: a correct result or a clear error, never a hang, a crash deep in JAX or a silent NaN.

Every case either checks the answer (a posterior mean within Monte Carlo error of a closed form, or
draws in the support with the expected shapes) or checks that the error is an autoreparam error that
names the site, argument or file and says what to do. Compiling is what costs here, so the supported
but unusual features share a few module-scoped runs: one model holding many of them at once, one
scan model, one pair of runs that differ only in how the data are passed. ``--durations`` shows the
module's cost (README, "Supported models", lists what is and is not supported). The table of bad
input and the errors it must raise is ``test_hostile_errors.py``.
"""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from numpyro.contrib.control_flow import scan
from numpyro.infer import Predictive

import autoreparam as ar
from autoreparam.benchmark.store import ResultStore
from autoreparam.diagnostics.standard import mean_and_mcse
from autoreparam.errors import SiteError
from autoreparam.mcmc.programs import ProgramCache
from autoreparam.reparam.handlers import partially_centre_sites
from hostile_models import TINY, VI, Y_WALK, clashing_names, hierarchy, random_walk

# Long enough for Monte Carlo standard errors to mean something; compilation still dominates, and
# fixed-length HMC compiles in about half the time NUTS takes.
LONG = dict(kernel="hmc", num_leapfrog=4, num_chains=2, num_warmup=150, num_samples=400, vi_config=VI, progress=False)
Z = 3.29  # two-sided 99.9% normal quantile


def assert_mean_within_mc_error(draws: np.ndarray, truth) -> None:
    """|posterior mean - truth| <= Z * MCSE, element by element (draws: chains, draws, *shape)."""
    mean, mcse = mean_and_mcse({"x": np.asarray(draws)})
    truth = np.ravel(np.broadcast_to(truth, np.shape(draws)[2:]))
    z = np.abs(mean - truth) / mcse
    assert np.all(z < Z), f"means {mean} vs truth {truth}: z = {z}"


# --- models ------------------------------------------------------------------------------------
SIGMA_Z = np.array([[1.0, 0.6], [0.6, 2.0]])
Y_Z = np.array([1.0, -2.0])
COUNTS = np.array([0, 1, 1, 2, 2, 2])  # categories observed under the Dirichlet
Y_MASKED = np.array([1.0, 3.0, 1.0e4])  # the last value is masked out


def kitchen_sink(y_masked, counts, zeros):
    """Many supported-but-unusual features at once, each with a known posterior."""
    # Dirichlet latent (simplex) observed through Categorical draws: posterior Dirichlet(1 + counts).
    p = numpyro.sample("p", dist.Dirichlet(jnp.ones(3)))
    numpyro.sample("c", dist.Categorical(p).expand([len(counts)]), obs=counts)
    # Multivariate normal latent with a Gaussian likelihood: a conjugate pair.
    z = numpyro.sample("z", dist.MultivariateNormal(jnp.zeros(2), jnp.asarray(SIGMA_Z)))
    numpyro.sample("y_z", dist.Normal(z, 1.0).to_event(1), obs=Y_Z)
    # Truncated normal prior only: a half-normal, mean sqrt(2 / pi).
    numpyro.sample("t", dist.TruncatedNormal(0.0, 1.0, low=0.0))
    # Improper flat prior with one observation: posterior N(1.5, 1).
    u = numpyro.sample("u", dist.ImproperUniform(dist.constraints.real, (), ()))
    numpyro.sample("y_u", dist.Normal(u, 1.0), obs=1.5)
    # Masked observations: only the first two count.
    m = numpyro.sample("m", dist.Normal(0.0, 10.0))
    with numpyro.plate("obs", len(y_masked)), numpyro.handlers.mask(mask=jnp.arange(len(y_masked)) < 2):
        numpyro.sample("y_m", dist.Normal(m, 1.0), obs=y_masked)
    # A factor that halves the prior's variance, and a deterministic site.
    x = numpyro.sample("x", dist.Normal(0.0, 1.0))
    numpyro.factor("x_factor", -0.5 * x**2)
    numpyro.deterministic("x_squared", x**2)
    # Poisson counts that are all zero (integer data): Gamma(2, 1) prior, posterior Gamma(2, 1 + n).
    r = numpyro.sample("r", dist.Gamma(2.0, 1.0))
    numpyro.sample("n_zero", dist.Poisson(r), obs=zeros)
    # LKJ Cholesky factor (prior only) and a latent with zero elements.
    numpyro.sample("L", dist.LKJCholesky(3, 2.0))
    numpyro.sample("empty", dist.Normal(jnp.zeros(0), 1.0))
    # A hierarchy, so that there is something to non-centre: theta's marginal is N(0, 2).
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    numpyro.sample("theta", dist.Normal(mu, 1.0))


def random_walk_posterior(y=Y_WALK, level_scale=1.0, step_scale=0.5):
    """Exact posterior means of (level, walk, after): all jointly Gaussian."""
    T = len(y)
    # Latents (level, walk_1..T, after) = A e with e iid N(0, 1).
    A = np.zeros((T + 2, T + 2))
    A[0, 0] = level_scale
    for t in range(1, T + 1):
        A[t] = A[t - 1]
        A[t, t] = step_scale
    A[T + 1] = A[T]
    A[T + 1, T + 1] = 1.0
    prior_cov = A @ A.T
    H = np.zeros((T, T + 2))
    H[np.arange(T), np.arange(1, T + 1)] = 1.0
    gain = prior_cov @ H.T @ np.linalg.inv(H @ prior_cov @ H.T + np.eye(T))
    mean = gain @ y
    return mean[0], mean[1 : T + 1], mean[T + 1]




# --- shared runs --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sink():
    zeros = np.zeros(5, dtype=np.int64)
    return ar.infer(kitchen_sink, Y_MASKED, COUNTS, zeros, method="ncp", seed=0, **{**LONG, "num_chains": np.int64(2)})


@pytest.fixture(scope="module")
def walk():
    return ar.infer(random_walk, Y_WALK, method="ncp", sites="all", seed=1, **LONG)


@pytest.fixture(scope="module")
def reference():
    """The hierarchy with every argument a float32 jax array, passed positionally."""
    y, scale = jnp.array([1.0, 2.0, 4.0]), jnp.array([1.0, 2.0, 1.0])
    return ar.infer(hierarchy, y, scale, jnp.float32(0.0), method="ncp", seed=3, **TINY)


# --- supported but unusual models: known answers -------------------------------------------------
def test_dirichlet_latent_matches_its_conjugate_posterior(sink):
    p = sink.samples["p"]
    assert p.shape == (2, 400, 3)
    np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-5)
    assert np.all(p > 0)
    alpha = 1.0 + np.bincount(COUNTS, minlength=3)
    assert_mean_within_mc_error(p, alpha / alpha.sum())


def test_multivariate_normal_latent_matches_its_conjugate_posterior(sink):
    precision = np.linalg.inv(SIGMA_Z) + np.eye(2)
    assert sink.samples["z"].shape == (2, 400, 2)
    assert_mean_within_mc_error(sink.samples["z"], np.linalg.solve(precision, Y_Z))


def test_truncated_normal_latent_stays_in_its_support_with_the_half_normal_mean(sink):
    t = sink.samples["t"]
    assert np.all(t >= 0)
    assert_mean_within_mc_error(t, np.sqrt(2 / np.pi))


def test_improper_flat_prior_gives_the_likelihood_as_posterior(sink):
    assert_mean_within_mc_error(sink.samples["u"], 1.5)


def test_masked_observations_are_ignored(sink):
    # With the 1e4 observation counted the mean would be near 3000.
    assert_mean_within_mc_error(sink.samples["m"], (1.0 + 3.0) / (2 + 1 / 100))


def test_factor_adds_to_the_log_density(sink):
    x = sink.samples["x"]
    assert_mean_within_mc_error(x**2, 0.5)  # N(0, 1) times exp(-x^2 / 2): variance 1/2


def test_deterministic_sites_are_recomputed_with_predictive_as_the_readme_says(sink):
    assert "x_squared" not in sink.samples  # samples hold latents only
    flat = {k: v.reshape((v.shape[0] * v.shape[1],) + v.shape[2:]) for k, v in sink.samples.items()}
    zeros = np.zeros(5, dtype=np.int64)
    predictive = Predictive(kitchen_sink, posterior_samples=flat, return_sites=["x_squared"])
    predicted = predictive(jax.random.PRNGKey(0), Y_MASKED, COUNTS, zeros)
    np.testing.assert_allclose(predicted["x_squared"], flat["x"] ** 2, rtol=1e-5)


def test_all_zero_integer_counts_match_the_gamma_poisson_posterior(sink):
    r = sink.samples["r"]
    assert np.all(r > 0)
    assert_mean_within_mc_error(r, 2.0 / (1.0 + 5))


def test_lkj_cholesky_draws_are_valid_cholesky_factors(sink):
    L = sink.samples["L"]
    assert L.shape == (2, 400, 3, 3)
    np.testing.assert_allclose(np.triu(L, 1), 0.0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(L, axis=-1), 1.0, atol=1e-4)  # unit-diagonal correlation
    assert np.all(np.diagonal(L, axis1=-2, axis2=-1) > 0)


def test_zero_size_latent_keeps_its_shape(sink):
    assert sink.samples["empty"].shape == (2, 400, 0)


def test_hierarchy_beside_them_is_non_centred_and_right(sink):
    np.testing.assert_array_equal(sink.parameterisation["theta"], 0.0)
    assert_mean_within_mc_error(sink.samples["theta"] ** 2, 2.0)
    assert all(np.all(np.isfinite(v)) for v in sink.samples.values())


def test_scan_time_series_matches_the_exact_gaussian_posterior(walk):
    level, walk_mean, after = random_walk_posterior()
    assert walk.samples["walk"].shape == (2, 400, len(Y_WALK))
    assert_mean_within_mc_error(walk.samples["level"], level)
    assert_mean_within_mc_error(walk.samples["walk"], walk_mean)
    # "after" is non-centred and its prior reads the scan's last state: the maps must see the set value.
    assert_mean_within_mc_error(walk.samples["after"], after)
    np.testing.assert_array_equal(walk.parameterisation["after"], 0.0)


def test_sites_inside_scan_are_reparameterised_step_by_step(walk):
    decisions = {d.name: d for d in walk.plan.decisions}
    assert all(decisions[name].reparameterise for name in ("level", "walk", "after"))
    np.testing.assert_array_equal(walk.parameterisation["walk"], 0.0)
    assert walk.parameterisation["walk"].shape == (len(Y_WALK),)


def test_fit_vip_takes_list_data_and_learns_lambda_inside_the_scan_too():
    result = ar.fit_vip(random_walk, Y_WALK.tolist(), sites="all", config=VI, discrete=False)
    assert set(result.lam) == {"level", "walk", "after"}
    assert result.lam["walk"].shape == (len(Y_WALK),)  # one lambda per step
    assert all(0.0 <= float(np.min(lam)) and float(np.max(lam)) <= 1.0 for lam in result.lam.values())
    assert all(np.isfinite(fit.elbo) for fit in result.fits.values())


def test_coordinate_maps_read_the_scan_values_they_set():
    """Non-centred inside the scan, each step adds its scaled innovation to the previous step's value as
    set; after the scan, a non-centred site's location is the walk's last value as set, not a fresh draw."""
    plan = ar.select_sites(ar.analyse_model(random_walk, Y_WALK), "all")
    coords = ar.Coordinates(random_walk, (Y_WALK,), {}, plan)
    param = ar.Parameterisation.non_centred(plan)
    u = {"level": jnp.asarray(0.3), "walk": jnp.asarray([1.0, -2.0, 0.5, 4.0]), "after": jnp.asarray(0.7)}
    v, z, log_det = coords.to_cp(u, param)
    walk = 0.3 + 0.5 * np.cumsum(u["walk"])  # step_scale 0.5
    np.testing.assert_allclose(z["walk"], walk, rtol=1e-6)
    np.testing.assert_allclose(z["after"], walk[-1] + u["after"], rtol=1e-6)
    # log|det dv/du|: level's scale 1, each step's 0.5, after's 1.
    np.testing.assert_allclose(log_det, len(Y_WALK) * np.log(0.5), rtol=1e-6)
    back, _, _ = coords.from_cp(v, param)
    for name in u:
        np.testing.assert_allclose(back[name], u[name], rtol=1e-6, atol=1e-6)


def test_a_site_named_like_another_sites_auxiliary_stays_centred_and_says_why():
    plan = ar.select_sites(ar.analyse_model(clashing_names), "all")
    decisions = {d.name: d for d in plan.decisions}
    assert not decisions["theta"].reparameterise
    assert "'theta_decentered', a name the model already uses" in decisions["theta"].reason
    assert decisions["mu"].reparameterise


def reversed_walk(y):
    def step(previous, y_t):
        current = numpyro.sample("walk", dist.Normal(previous, 0.5))
        numpyro.sample("y", dist.Normal(current, 1.0), obs=y_t)
        return current, None

    scan(step, numpyro.sample("level", dist.Normal(0.0, 1.0)), y, reverse=True)


def test_a_site_inside_a_reversed_scan_stays_centred_and_says_why():
    decisions = {d.name: d for d in ar.select_sites(ar.analyse_model(reversed_walk, Y_WALK), "all").decisions}
    assert decisions["level"].reparameterise
    assert not decisions["walk"].reparameterise and "reverse=True" in decisions["walk"].reason


def test_asking_to_reparameterise_a_site_inside_a_reversed_scan_is_an_error_naming_it():
    with pytest.raises(SiteError, match="site 'walk'.*reverse=True"):
        ar.infer(reversed_walk, Y_WALK, method="ncp", sites=["walk"], **TINY)


def scaled_schools(y, scale):
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    tau = numpyro.sample("tau", dist.HalfNormal(5.0))
    with numpyro.plate("J", len(y)):
        with numpyro.handlers.scale(scale=0.5):
            theta = numpyro.sample("theta", dist.Normal(mu, tau))
        numpyro.sample("y", dist.Normal(theta, scale), obs=y)


def test_a_site_under_handlers_scale_stays_centred_and_says_why():
    # Rewritten, its density p(theta)^0.5 would lose 0.5 (1 - lambda) log tau per element: eight schools'
    # tau came out with mean 2.9 instead of 8.0, with healthy diagnostics.
    y, scale = np.array([28.0, 8, -3, 7, -1, 1, 18, 12]), np.array([15.0, 10, 16, 11, 9, 11, 10, 18])
    decisions = {d.name: d for d in ar.select_sites(ar.analyse_model(scaled_schools, y, scale), "all").decisions}
    assert decisions["mu"].reparameterise and decisions["tau"].reparameterise
    assert not decisions["theta"].reparameterise and "handlers.scale" in decisions["theta"].reason
    with pytest.raises(SiteError, match="site 'theta': cannot reparameterise: its log density is scaled"):
        ar.infer(scaled_schools, y, scale, method="ncp", sites=["theta"], **TINY)


def test_the_rewrite_refuses_a_reversed_scan_site_it_is_handed_directly():
    """The handler's own check, for a caller that bypasses site selection."""
    rewritten = partially_centre_sites(reversed_walk, {"walk": (0.0, 0.0)})
    with pytest.raises(SiteError, match="site 'walk'.*reverse=True"):
        numpyro.handlers.trace(numpyro.handlers.seed(rewritten, rng_seed=0)).get_trace(Y_WALK)


@pytest.mark.parametrize("method", ["vip", "ihmc"])
def test_log_density_nan_in_a_region_is_never_entered(method):
    def model():
        x = numpyro.sample("x", dist.Normal(0.0, 1.0))
        numpyro.factor("nan_above_one", jnp.where(x > 1.0, jnp.nan, 0.0))

    result = ar.infer(model, method=method, seed=0, **TINY)
    x = result.samples["x"]
    assert np.all(np.isfinite(x)) and np.all(x <= 1.0)


def test_a_plate_of_a_hundred_thousand_observations():
    y = np.random.default_rng(0).normal(2.0, 1.0, size=100_000).astype(np.float32)

    def model(y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
        with numpyro.plate("data", y.shape[0]):
            numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)

    # auto samples with NUTS: with 20 warm-up steps fixed-length HMC cannot adapt to a posterior sd of 0.003.
    settings = {k: v for k, v in TINY.items() if k != "num_leapfrog"}
    result = ar.infer(model, y, method="auto", **{**settings, "num_samples": 100})
    posterior_sd = 1 / np.sqrt(y.size + 1e-2)
    assert abs(result.samples["mu"].mean() - y.sum() / (y.size + 1e-2)) < 6 * posterior_sd


# --- data in every form: lists, float64, int, jax vs numpy, keywords vs positions -----------------
def test_lists_int_float64_numpy_and_keywords_give_the_reference_result_exactly(reference):
    result = ar.infer(
        hierarchy, [1.0, 2.0, 4.0], scale=np.array([1, 2, 1]), offset=np.float64(0.0), method="ncp", seed=3, **TINY
    )
    for name in ("mu", "tau", "theta"):
        np.testing.assert_array_equal(result.samples[name], reference.samples[name])


def test_an_interrupted_run_leaves_no_state_behind(reference, monkeypatch):
    """KeyboardInterrupt as a compiled sampler program starts propagates as is; the next call is unaffected.

    Ctrl-C reaches Python when a compiled program hands control back, i.e. at a program call."""
    calls = {"n": 0}
    original = ProgramCache.__call__

    def interrupted(self, name, jitted, args):
        calls["n"] += 1
        if calls["n"] == 1:  # as the warm-up program starts
            raise KeyboardInterrupt
        return original(self, name, jitted, args)

    y, scale = jnp.array([1.0, 2.0, 4.0]), jnp.array([1.0, 2.0, 1.0])
    with monkeypatch.context() as patch:
        patch.setattr(ProgramCache, "__call__", interrupted)
        with pytest.raises(KeyboardInterrupt):
            ar.infer(hierarchy, y, scale, jnp.float32(0.0), method="ncp", seed=3, **TINY)
    assert calls["n"] == 1
    again = ar.infer(hierarchy, y, scale, jnp.float32(0.0), method="ncp", seed=3, **TINY)
    np.testing.assert_array_equal(again.samples["theta"], reference.samples["theta"])


def test_interrupted_benchmark_store_keeps_finished_cells(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    store.save("cell_a", {"ess": 1.0}, {"draws": np.arange(3.0)})
    store.save("cell_b", {"ess": 2.0})

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    for target in ("numpy.savez_compressed", "json.dumps"):
        with monkeypatch.context() as patch:
            patch.setattr(target, interrupt)
            with pytest.raises(KeyboardInterrupt):
                store.save("cell_c", {"ess": 3.0}, {"draws": np.ones(2)})
    assert not store.done("cell_c")
    assert [r["key"] for r in store.records()] == ["cell_a", "cell_b"]
    np.testing.assert_array_equal(store.arrays("cell_a")["draws"], np.arange(3.0))
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")], "a temporary file was left behind"
    store.save("cell_c", {"ess": 3.0})  # and the cell can be run again
    assert json.loads((tmp_path / "cells" / "cell_c.json").read_text())["ess"] == 3.0

"""Hostile and unusual input: a correct result or a clear error, never a hang, a crash deep in JAX or a silent NaN.

Every case either checks the answer (a posterior mean within Monte Carlo error of a closed form, or
draws in the support with the expected shapes) or checks that the error is an autoreparam error that
names the site, argument or file and says what to do. Compiling is what costs here, so the supported
but unusual features share a few module-scoped runs: one model holding many of them at once, one
scan model, one pair of runs that differ only in how the data are passed. ``--durations`` shows the
module's cost (README, "Supported models", lists what is and is not supported).
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
from numpyro.infer import Predictive, init_to_value

import autoreparam as ar
from autoreparam.benchmark.store import ResultStore
from autoreparam.diagnostics.standard import mean_and_mcse
from autoreparam.errors import ArgumentError, DataError, ModelError, SiteError
from autoreparam.mcmc.programs import ProgramCache
from autoreparam.reparam.handlers import partially_centre_sites

VI = ar.VIConfig(num_steps=20, num_samples=4, learning_rates=(0.1,), final_num_samples=16, progress=False)
TINY = dict(num_chains=2, num_warmup=20, num_samples=20, num_leapfrog=2, vi_config=VI, progress=False)
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


def random_walk(y, level_scale=1.0, step_scale=0.5):
    """A Gaussian random walk written with scan, an initial level outside it and a site after it."""
    level = numpyro.sample("level", dist.Normal(0.0, level_scale))

    def step(previous, y_t):
        current = numpyro.sample("walk", dist.Normal(previous, step_scale))
        numpyro.sample("y", dist.Normal(current, 1.0), obs=y_t)
        return current, current

    last, _ = scan(step, level, y)
    numpyro.sample("after", dist.Normal(last, 1.0))  # its prior depends on the scan's last value


Y_WALK = np.array([0.5, 1.5, 1.0, 2.5])


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


def hierarchy(y, scale, offset=0.0):
    mu = numpyro.sample("mu", dist.Normal(offset, 1.0))
    tau = numpyro.sample("tau", dist.HalfNormal(1.0))
    with numpyro.plate("group", len(y)):
        theta = numpyro.sample("theta", dist.Normal(mu, tau))
        numpyro.sample("y", dist.Normal(theta, scale), obs=y)


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


def _clashing_names():
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    numpyro.sample("theta_decentered", dist.Normal(0.0, 1.0))
    numpyro.sample("theta", dist.Normal(mu, 1.0))


def test_a_site_named_like_another_sites_auxiliary_stays_centred_and_says_why():
    plan = ar.select_sites(ar.analyse_model(_clashing_names), "all")
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


# --- errors that name the site, argument or file --------------------------------------------------
def _model_with(body):
    def model():
        body()

    return model


def _nan_factor():
    numpyro.sample("x", dist.Normal(0.0, 1.0))
    numpyro.factor("always_nan", jnp.nan)


def _raises():
    numpyro.sample("x", dist.Normal(0.0, 1.0))
    raise RuntimeError("the data base is down")


def _no_latent():
    numpyro.sample("y", dist.Normal(0.0, 1.0), obs=1.0)


def _discrete_latent():
    numpyro.sample("k", dist.Poisson(3.0))


def _duplicate_names():
    numpyro.sample("a", dist.Normal(0.0, 1.0))
    numpyro.sample("a", dist.Normal(0.0, 1.0))


def _three_groups(y):
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    with numpyro.plate("group", 3):
        numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)


def _subsampled(y):
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    with numpyro.plate("N", 10, subsample_size=4) as index:
        numpyro.sample("y", dist.Normal(mu, 1.0), obs=y[index])


def _scale_from_a_real_latent():
    s = numpyro.sample("s", dist.Normal(-3.0, 0.1))  # negative at every draw
    numpyro.sample("x", dist.Normal(0.0, s))


def _python_branch():
    x = numpyro.sample("x", dist.Normal(0.0, 1.0))
    if x > 0:  # fine on one concrete draw, impossible once compiled
        numpyro.factor("bonus", 1.0)


def _impossible_observation():  # support depends on a latent: the initial density decides
    scale = numpyro.sample("scale", dist.Uniform(0.0, 1.0))
    numpyro.sample("y", dist.Uniform(0.0, scale), obs=jnp.asarray(5.0))


def _numpy_observation_under_latent_bound():
    scale = numpyro.sample("scale", dist.Uniform(1.0, 2.0))
    numpyro.sample("y", dist.Uniform(0.0, scale), obs=np.float32(0.5))


ERROR_CASES = {
    "nan log density everywhere names the factor": (
        lambda: ar.infer(_model_with(_nan_factor), **TINY), SiteError, r"site 'always_nan'.*factor.*NaN or -inf"),
    "model that raises is named with its error": (
        lambda: ar.infer(_raises, **TINY), ModelError, r"_raises\(\) raised RuntimeError after its site 'x': the data base is down"),
    "model without latents": (lambda: ar.infer(_no_latent, **TINY), ModelError, "no latent sample site"),
    "discrete latent": (lambda: ar.infer(_discrete_latent, **TINY), SiteError, r"site 'k': discrete latent.*marginalise"),
    "observation impossible for every latent value": (
        lambda: ar.infer(_impossible_observation, **TINY), SiteError,
        r"site 'y': observed site with log density -inf.*check the data.*random starting points"),
    "NumPy observation under a latent bound": (
        lambda: ar.infer(_numpy_observation_under_latent_bound, **TINY), ModelError, r"obs=jnp.asarray"),
    "negative counts": (
        lambda: ar.infer(lambda c: numpyro.sample("c", dist.Poisson(numpyro.sample("r", dist.Gamma(2.0, 1.0))), obs=c),
                         np.array([3, -1]), **TINY),
        DataError, r"observed site 'c'.*outside the support of Poisson"),
    "non-integer counts": (
        lambda: ar.infer(lambda c: numpyro.sample("c", dist.Poisson(numpyro.sample("r", dist.Gamma(2.0, 1.0))), obs=c),
                         [1.0, 2.5], **TINY),
        DataError, r"observed site 'c'.*outside the support"),
    "observed site of the wrong shape": (
        lambda: ar.infer(_three_groups, jnp.ones(4), **TINY), SiteError,
        r"site 'y': the observed value has shape \(4,\).*\(3,\).*plates"),
    "data arrays of different lengths": (
        lambda: ar.infer(hierarchy, jnp.ones(4), jnp.ones(3), **TINY), ModelError,
        r"hierarchy\(\) raised ValueError after its site 'theta': Incompatible shapes"),
    "Python control flow on a latent": (
        lambda: ar.infer(_python_branch, **TINY), ModelError, r"TracerBoolConversionError.*jax.lax.cond"),
    "empty plate": (
        lambda: ar.infer(hierarchy, jnp.zeros(0), jnp.ones(0), **TINY), ModelError, "plate of size 0.*at least one"),
    "NaN in list data": (
        lambda: ar.infer(hierarchy, [1.0, float("nan")], [1.0, 1.0], **TINY), DataError, "positional argument 0"),
    "missing model argument": (lambda: ar.infer(hierarchy, jnp.ones(3), **TINY), ModelError, "scale.*signature"),
    "unknown keyword argument": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), bogus=1, **TINY), ModelError, "'bogus'.*signature"),
    "site named like another site's auxiliary, requested by name": (
        lambda: ar.infer(_clashing_names, sites=["theta"], **TINY), SiteError,
        r"site 'theta': cannot reparameterise: its auxiliary site would be called 'theta_decentered'.*rename"),
    "two sites with one name": (
        lambda: ar.infer(_duplicate_names, **TINY), ModelError, r"after its site 'a'.*unique names.*`a` duplicated"),
    "unknown site name": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), sites=["thetaa"], **TINY), SiteError,
        r"site 'thetaa': is not a latent site.*mu, tau, theta"),
    "observed site named as a site to rewrite": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), sites=["y"], **TINY), SiteError, "site 'y': is observed"),
    "model that is not callable": (lambda: ar.infer("hierarchy", **TINY), ArgumentError, "model must be a NumPyro model.*str"),
    "fit_vip with a model that is not callable": (
        lambda: ar.fit_vip(None, config=VI), ArgumentError, "model must be a NumPyro model.*NoneType"),
    "num_chains as a float": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), **{**TINY, "num_chains": 2.0}), ArgumentError,
        "num_chains must be a positive integer, got 2.0"),
    "num_chains as a string": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), **{**TINY, "num_chains": "4"}), ArgumentError,
        "num_chains must be a positive integer, got '4'"),
    "num_chains as a bool": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), **{**TINY, "num_chains": True}), ArgumentError,
        "num_chains must be a positive integer, got True"),
    "seed as a string": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), seed="0", **TINY), ArgumentError,
        "seed must be a non-negative integer"),
    "negative seed, before anything compiles": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), seed=-1, **TINY), ArgumentError,
        "seed must be a non-negative integer, got -1"),
    "given parameterisation as a method's name": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), method="given", parameterisation="ncp", **TINY),
        ArgumentError, r"not the string 'ncp'.*method='ncp'"),
    "given parameterisation of a site as a string": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), method="given", parameterisation={"theta": "half"},
                         **TINY), SiteError, r"site 'theta': .*not the string 'half'"),
    "observations given as a dict": (
        lambda: ar.infer(hierarchy, {"y": np.ones(3)}, jnp.ones(3), **TINY), DataError,
        r"observed site 'y' was given a dict, not numbers"),
    "observations given as strings": (
        lambda: ar.infer(_three_groups, np.array(["1", "2", "3"]), **TINY), DataError,
        r"observed site 'y' was given a ndarray of <U1, not numbers"),
    "ragged observations": (
        lambda: ar.infer(_three_groups, [1.0, 2.0, [3.0]], **TINY), DataError, r"observed site 'y' was given a ragged list"),
    "a scale that a latent can make negative": (
        lambda: ar.infer(_scale_from_a_real_latent, **TINY), ModelError,
        r"_scale_from_a_real_latent\(\) raised ValueError.*invalid scale parameter.*give it a prior on its domain"),
    "variational fits that all diverge": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), method="vip", kernel="nuts",
                         **{**TINY, "vi_config": ar.VIConfig(num_steps=20, num_samples=4, learning_rates=(1e6,),
                                                             final_num_samples=16, progress=False)}),
        ModelError, r"fits cp, ncp, vip ended with a non-finite ELBO.*lower VIConfig.learning_rates"),
    "VIConfig with a number where a tuple belongs": (
        lambda: ar.VIConfig(learning_rates=0.05), ArgumentError, r"VIConfig.learning_rates must be a tuple of numbers, e.g. \(0.05,\)"),
    "VIConfig with a string step count": (
        lambda: ar.VIConfig(num_steps="10"), ArgumentError, "VIConfig.num_steps must be a positive integer, got '10'"),
    "VIConfig with a fractional step count": (
        lambda: ar.VIConfig(num_steps=2.5), ArgumentError, "VIConfig.num_steps must be a positive integer, got 2.5"),
    "fit_vip with a dict as config": (
        lambda: ar.fit_vip(hierarchy, jnp.ones(3), jnp.ones(3), config={"num_steps": 10}), ArgumentError,
        "config must be an autoreparam.VIConfig"),
    "fit_vip with an init_strategy that is not one": (
        lambda: ar.fit_vip(hierarchy, jnp.ones(3), jnp.ones(3), config=VI, init_strategy=42), ArgumentError,
        "init_strategy must be a NumPyro init strategy"),
    "a subsampled plate": (
        lambda: ar.infer(_subsampled, jnp.ones(10), **TINY), ModelError,
        r"plate 'N' subsamples 4 of its 10 elements \(subsample_size\).*drop subsample_size"),
    "init_strategy that is not a strategy": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), init_strategy={"theta": 0.0}, **TINY), ArgumentError,
        "init_strategy must be a NumPyro init strategy.*not dict"),
    "init value for a misspelt site": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), init_strategy=init_to_value(values={"thetaa": 0.0}),
                         **TINY), SiteError, r"site 'thetaa': init_to_value .* not a latent site .*mu, tau, theta"),
    "init value of the wrong shape": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), init_strategy=init_to_value(values={"theta": np.zeros(2)}),
                         **TINY), SiteError, r"site 'theta': init_to_value's value has shape \(2,\), but the site has shape \(3,\)"),
    "init value outside the support": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), method="cp", init_strategy=init_to_value(values={"tau": -1.0}),
                         **TINY), ModelError, r"invalid scale.*at the values of the init_to_value given"),
    "predict_parameterisation with a model that is not callable": (
        lambda: ar.predict_parameterisation(None), ArgumentError, "model must be a NumPyro model.*NoneType"),
    "unknown method for fit_vip's form": (
        lambda: ar.fit_vip(hierarchy, jnp.ones(3), jnp.ones(3), form="loose", config=VI), ArgumentError,
        "form must be 'tied' or 'separate'"),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_bad_input_gives_a_clear_error(case):
    call, error, pattern = ERROR_CASES[case]
    with pytest.raises(error, match=pattern) as info:
        call()
    # The error is ours, at the boundary: no bare JAX or NumPyro error surfaces.
    assert type(info.value).__module__ == "autoreparam.errors"

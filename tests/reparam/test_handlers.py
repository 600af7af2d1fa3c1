"""The rewriting handlers are NumPyro programs in, NumPyro programs out.

``reparameterise`` (a fixed ``Parameterisation``) and ``LearnableCentringReparam`` used through
``numpyro.handlers.reparam`` work. The convenience wrappers ``noncentre``, ``partially_centre`` and
``learnable_centring`` choose their sites by running ``analyse_model`` on every call, inside whatever
handlers (and jit) the caller has around them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import optax
import pytest
from numpyro import handlers
from numpyro.infer import MCMC, NUTS, SVI, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal
from numpyro.infer.util import log_density

from autoreparam.coordinates import Coordinates
from autoreparam.reparam.handlers import (
    LearnableCentringReparam,
    centre,
    learnable_centring,
    noncentre,
    partially_centre,
    reparameterise,
)
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model

from .zoo import EIGHT_SCHOOLS_SIGMA, EIGHT_SCHOOLS_Y, arithmetic, eight_schools

ARGS = (EIGHT_SCHOOLS_SIGMA,)
KWARGS = {"y": EIGHT_SCHOOLS_Y}
POINT = {"mu": 1.5, "log_tau": 0.4, "theta_decentered": jnp.linspace(-1.0, 1.0, 8)}


def trace_of(model, *args, **kwargs):
    return handlers.trace(handlers.seed(model, rng_seed=0)).get_trace(*args, **kwargs)


@pytest.fixture(scope="module")
def plan():
    return select_sites(analyse_model(eight_schools, *ARGS, **KWARGS), "default")


def grid_model():
    """A 2-D plate pair, for the shape of per-element centring params."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    with numpyro.plate("rows", 2, dim=-2), numpyro.plate("cols", 3, dim=-1):
        x = numpyro.sample("x", dist.Normal(mu, 2.0))
        numpyro.sample("y", dist.Normal(x, 1.0), obs=jnp.zeros((2, 3)))


# --- reparameterise -------------------------------------------------------------------------------------
def test_reparameterise_rewrites_latents_and_leaves_observed_alone(plan):
    param = Parameterisation.tied(plan, 0.3)
    original, rewritten = trace_of(eight_schools, *ARGS, **KWARGS), trace_of(reparameterise(eight_schools, param), *ARGS, **KWARGS)
    assert rewritten["theta_decentered"]["type"] == "sample" and not rewritten["theta_decentered"]["is_observed"]
    assert rewritten["theta"]["type"] == "deterministic"
    for name in ("mu", "log_tau"):  # not in the plan: as written
        assert rewritten[name]["type"] == "sample" and name + "_decentered" not in rewritten
    obs = rewritten["y"]
    assert obs["is_observed"] and obs["type"] == "sample" and "y_decentered" not in rewritten
    np.testing.assert_array_equal(obs["value"], original["y"]["value"])
    assert type(obs["fn"]) is type(original["y"]["fn"])
    # z = mu + s^(1 - lam) (zt - lam mu), and y's likelihood reads z
    mu, tau = rewritten["mu"]["value"], jnp.exp(rewritten["log_tau"]["value"])
    zt = rewritten["theta_decentered"]["value"]
    np.testing.assert_allclose(rewritten["theta"]["value"], mu + tau**0.7 * (zt - 0.3 * mu), rtol=1e-5)
    np.testing.assert_allclose(obs["fn"].loc, rewritten["theta"]["value"], rtol=1e-6)


def test_reparameterise_log_density_is_the_coordinates_density(plan):
    with jax.enable_x64(True):
        coords = Coordinates(eight_schools, ARGS, KWARGS, plan)
        for lam in (0.0, 0.3, 1.0):
            param = Parameterisation.tied(plan, lam)
            ours, _ = log_density(reparameterise(eight_schools, param), ARGS, KWARGS, POINT)
            # log_density takes constrained values; all three sites are real, so u == value here
            u = {"mu": POINT["mu"], "log_tau": POINT["log_tau"], "theta": POINT["theta_decentered"]}
            assert abs(float(ours - coords.log_density(u, param))) < 1e-9


def test_centre_is_the_identity():
    assert centre(eight_schools) is eight_schools


# --- LearnableCentringReparam used directly with handlers.reparam -------------------------------------------
def test_learnable_centring_params_have_the_full_site_shape():
    tied = handlers.reparam(eight_schools, config={"theta": LearnableCentringReparam()})
    tr = trace_of(tied, *ARGS, **KWARGS)
    assert tr["theta_centring"]["type"] == "param" and tr["theta_centring"]["value"].shape == (8,)
    np.testing.assert_array_equal(tr["theta_centring"]["value"], 0.5)
    grid = trace_of(handlers.reparam(grid_model, config={"x": LearnableCentringReparam("separate", init=0.2)}))
    for name in ("x_loc_centring", "x_scale_centring"):
        assert grid[name]["value"].shape == (2, 3)
    assert "x_centring" not in grid
    with pytest.raises(ValueError, match="tied"):
        LearnableCentringReparam("bogus")


@pytest.mark.parametrize("init", [0.0, 1.0, -0.5, "0.5", True])
def test_a_learnable_centring_must_start_where_it_can_move(init):
    """From init=0 the centring stayed exactly 0 under SVI although its gradient was -48 (found in review)."""
    from autoreparam.errors import ArgumentError

    with pytest.raises(ArgumentError, match="strictly between 0 and 1"):
        LearnableCentringReparam(init=init)


def test_learnable_centring_density_equals_fixed_partial_centring(plan):
    lam = jnp.linspace(0.05, 0.95, 8)
    learnable = handlers.reparam(eight_schools, config={"theta": LearnableCentringReparam()})
    got, _ = log_density(learnable, ARGS, KWARGS, {**POINT, "theta_centring": lam})
    fixed = reparameterise(eight_schools, Parameterisation.tied(plan, {"theta": lam}))
    want, _ = log_density(fixed, ARGS, KWARGS, POINT)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_learnable_centring_trains_with_numpyro_svi():
    model = handlers.reparam(eight_schools, config={"theta": LearnableCentringReparam()})
    guide = AutoNormal(model)
    svi = SVI(model, guide, optax.adam(0.05), Trace_ELBO(num_particles=4))
    state = svi.init(jax.random.PRNGKey(0), *ARGS, **KWARGS)
    before = svi.get_params(state)["theta_centring"]
    # Jitted, as users run SVI: op by op, each of the three steps took seconds of dispatch.
    update = jax.jit(svi.update)
    for _ in range(3):
        state, loss = update(state, *ARGS, **KWARGS)
    after = svi.get_params(state)["theta_centring"]
    assert np.isfinite(float(loss)) and after.shape == (8,)
    assert np.all((after > 0) & (after < 1)) and not np.allclose(after, before)


def test_fixed_rewrite_exposes_the_auxiliary_latents(plan):
    """What NUTS or SVI would see: the untouched latents and the auxiliary site, nothing else."""
    model = reparameterise(eight_schools, Parameterisation.non_centred(plan))
    tr = trace_of(model, *ARGS, **KWARGS)
    latents = sorted(n for n, m in tr.items() if m["type"] == "sample" and not m["is_observed"])
    assert latents == ["log_tau", "mu", "theta_decentered"]


def test_partially_centre_argument_checks():
    with pytest.raises(ValueError, match="either lam"):
        partially_centre(eight_schools, 0.3, loc_centring=0.1, scale_centring=0.2)
    with pytest.raises(ValueError, match="needs lam"):
        partially_centre(eight_schools, loc_centring=0.1)


# --- the convenience wrappers as NumPyro programs -------------------------------------------------------
# Their site analysis runs inside the caller's handlers (trace, substitute, SVI, MCMC); it must be blocked
# from them, or the outer trace sees every site twice (fixed in 7fa8075; these tests guard it).
def test_noncentre_under_trace_and_log_density(plan):
    model = noncentre(eight_schools)
    tr = trace_of(model, *ARGS, **KWARGS)
    assert tr["theta"]["type"] == "deterministic" and "mu_decentered" not in tr
    got, _ = log_density(model, ARGS, KWARGS, POINT)
    want, _ = log_density(reparameterise(eight_schools, Parameterisation.non_centred(plan)), ARGS, KWARGS, POINT)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_partially_centre_with_all_sites_and_a_dict():
    lam = {"mu": 0.2, "log_tau": 0.9, "theta": jnp.linspace(0.0, 1.0, 8)}
    tr = trace_of(partially_centre(eight_schools, lam, sites="all"), *ARGS, **KWARGS)
    assert {"mu_decentered", "log_tau_decentered", "theta_decentered"} <= set(tr)
    assert tr["y"]["is_observed"] and "y_decentered" not in tr


def test_noncentre_explicit_list_and_observed_untouched():
    tr = trace_of(noncentre(arithmetic, sites=["a", "x"]), jnp.asarray(1.0))
    assert {"a_decentered", "x_decentered"} <= set(tr) and "w_decentered" not in tr
    assert tr["y"]["is_observed"] and tr["g"]["type"] == "sample"


def test_learnable_centring_wrapper_param_shape_and_svi_step():
    model = learnable_centring(eight_schools)
    tr = trace_of(model, *ARGS, **KWARGS)
    assert tr["theta_centring"]["value"].shape == (8,)
    svi = SVI(model, AutoNormal(model), optax.adam(0.05), Trace_ELBO())
    state = svi.init(jax.random.PRNGKey(0), *ARGS, **KWARGS)
    state, loss = svi.update(state, *ARGS, **KWARGS)
    assert np.isfinite(float(loss))


def test_analyse_model_runs_inside_jit():
    @jax.jit
    def count():
        structure = analyse_model(eight_schools, *ARGS, **KWARGS)
        return jnp.asarray(structure.num_latent_dims)

    assert int(count()) == 10


def test_noncentre_runs_under_numpyro_nuts():
    mcmc = MCMC(NUTS(noncentre(eight_schools)), num_warmup=30, num_samples=30, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(0), *ARGS, **KWARGS)
    samples = mcmc.get_samples()
    assert samples["theta"].shape == (30, 8) and samples["theta_decentered"].shape == (30, 8)


def test_a_site_with_a_sample_shape_keeps_its_elements():
    """NumPyro hands a reparameteriser the distribution without the site's sample_shape: the rewrite
    drew one value where the model drew three (a different posterior), and infer refused the model
    (found in review). Now the site is the expanded distribution's, draw for draw."""
    import autoreparam as ar

    def with_sample_shape():
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        tau = numpyro.sample("tau", dist.HalfNormal(1.0))
        theta = numpyro.sample("theta", dist.Normal(mu, tau), sample_shape=(3,))
        numpyro.sample("y", dist.Normal(theta, 1.0), obs=jnp.array([1.0, 2.0, 3.0]))

    def expanded():
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        tau = numpyro.sample("tau", dist.HalfNormal(1.0))
        theta = numpyro.sample("theta", dist.Normal(mu, tau).expand([3]))
        numpyro.sample("y", dist.Normal(theta, 1.0), obs=jnp.array([1.0, 2.0, 3.0]))

    trace = handlers.trace(handlers.seed(ar.noncentre(with_sample_shape), 0)).get_trace()
    assert trace["theta"]["value"].shape == trace["theta_decentered"]["value"].shape == (3,)
    settings = dict(method="auto", num_chains=2, num_warmup=200, num_samples=200, progress=False, seed=1)
    draws = [ar.infer(m, **settings).samples["theta"] for m in (with_sample_shape, expanded)]
    np.testing.assert_array_equal(draws[0], draws[1])

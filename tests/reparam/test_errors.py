"""Bad input raises a clear error that names the site, argument or observed site at fault."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from numpyro import handlers

from autoreparam.errors import ArgumentError, DataError, ModelError, SiteError
from autoreparam.reparam.handlers import PartialCentringReparam, decentre_site, noncentre, partially_centre, reparameterise
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model
from autoreparam.vi.protocol import VIConfig
from autoreparam.vi.vip import fit_vip

from .zoo import EIGHT_SCHOOLS_SIGMA, EIGHT_SCHOOLS_Y, arithmetic, eight_schools


def discrete_latent():
    k = numpyro.sample("k", dist.Poisson(3.0))
    numpyro.sample("y", dist.Normal(k, 1.0), obs=1.0)


def no_latent(y):
    numpyro.sample("y", dist.Normal(0.0, 1.0), obs=y)


def nan_observed_inside():
    a = numpyro.sample("a", dist.Normal(0.0, 1.0))
    numpyro.sample("counts", dist.Normal(a, 1.0), obs=jnp.array([1.0, jnp.inf]))


def support_moves_with_a_latent(y):
    s = numpyro.sample("s", dist.HalfNormal(1.0))
    numpyro.sample("x", dist.Uniform(0.0, s))
    numpyro.sample("y", dist.Normal(s, 1.0), obs=y)


def supports_fixed_by_constants_and_data(y):
    numpyro.sample("c", dist.Uniform(0.0, 10.0))
    numpyro.sample("d", dist.Uniform(0.0, jnp.max(y)))  # computed from the data: a tracer during analysis
    numpyro.sample("t", dist.TruncatedNormal(0.0, 1.0, low=jnp.min(y), high=jnp.max(y) + 1.0))
    with numpyro.plate("k", 2):
        numpyro.sample("v", dist.Uniform(y - 1.0, y + 1.0))
    numpyro.sample("y", dist.Normal(0.0, 1.0), obs=y)


def plate_after_site_of_its_name(y):
    mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
    with numpyro.plate("mu", y.shape[0]):
        numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)


def plate_around_site_of_its_name(y):
    with numpyro.plate("mu", y.shape[0]):
        mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
        numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)


@pytest.fixture(scope="module")
def plan():
    return select_sites(analyse_model(eight_schools, EIGHT_SCHOOLS_SIGMA, y=EIGHT_SCHOOLS_Y), "all")


def test_discrete_latent_is_a_site_error_naming_it():
    with pytest.raises(SiteError, match="'k'.*discrete") as info:
        analyse_model(discrete_latent)
    assert info.value.site == "k"
    # and through the top-level API, before any compilation
    with pytest.raises(SiteError, match="'k'"):
        fit_vip(discrete_latent, config=VIConfig(num_steps=2, progress=False))


def test_support_depending_on_a_latent_is_a_site_error_naming_both():
    """Found in review: a bare UnexpectedTracerError from biject_to on the analysis trace's tracers."""
    with pytest.raises(SiteError, match=r"'x'.*support \(Uniform\) depend on the latent\(s\) s.*"
                                        r"numpyro.deterministic\('x', s \* u\)") as info:
        analyse_model(support_moves_with_a_latent, jnp.array([0.5]))
    assert info.value.site == "x"


def test_supports_bounded_by_constants_or_data_are_analysed():
    structure = analyse_model(supports_fixed_by_constants_and_data, jnp.array([0.5, 2.0]))
    assert structure.names == ("c", "d", "t", "v")
    assert [s.unconstrained_shape for s in structure.latents] == [(), (), (), (2,)]


@pytest.mark.parametrize("model", [plate_after_site_of_its_name, plate_around_site_of_its_name])
def test_plate_named_like_a_site_is_a_model_error_naming_both(model):
    """Found in review: a bare AssertionError from a sampler, or a false "no latent sample site"."""
    with pytest.raises(ModelError, match="plate 'mu' has the name of the sample site 'mu'.*rename the plate or the site"):
        analyse_model(model, jnp.array([5.0, 5.2]))


def test_delta_latent_is_a_site_error_suggesting_deterministic():
    """Found in review: accepted, and auto returned draws with log density -inf."""
    def delta_latent():
        x = numpyro.sample("x", dist.Normal(0.0, 1.0))
        with numpyro.plate("k", 2):  # wrapped (expanded) by the plate: still a point mass
            numpyro.sample("d", dist.Delta(x))

    with pytest.raises(SiteError, match=r"'d': Delta latent.*numpyro.deterministic\('d', value\)") as info:
        analyse_model(delta_latent)
    assert info.value.site == "d"

    def delta_observed():
        x = numpyro.sample("x", dist.Normal(0.0, 1.0))
        numpyro.sample("d", dist.Delta(x), obs=0.3)

    assert analyse_model(delta_observed).names == ("x",)  # only latents are refused


def _rewritten_trace(model):
    return handlers.trace(handlers.seed(model, rng_seed=0)).get_trace(EIGHT_SCHOOLS_SIGMA, EIGHT_SCHOOLS_Y)


def test_partially_centre_names_a_misspelt_or_missing_site_in_lam():
    """Found in review: a bare KeyError naming the site lam lacked, not the one misspelt."""
    with pytest.raises(SiteError, match=r"site 'thetaa': lam names it, but it is not a latent site of the model "
                                        r"\(latents: mu, log_tau, theta\)") as info:
        _rewritten_trace(partially_centre(eight_schools, lam={"thetaa": 0.5}))
    assert info.value.site == "thetaa"
    with pytest.raises(SiteError, match="site 'theta': loc_centring gives no value for it.*chose theta"):
        _rewritten_trace(partially_centre(eight_schools, loc_centring={"mu": 0.5}, scale_centring=0.5))
    # A latent the default plan leaves centred: its value was dropped without a word.
    with pytest.raises(SiteError, match=r"site 'mu': lam gives it a value, but sites='default' does not "
                                        r"reparameterise it \(left centred: .*\): name it in sites="):
        _rewritten_trace(partially_centre(eight_schools, lam={"theta": 0.5, "mu": 0.5}))
    _rewritten_trace(partially_centre(eight_schools, lam={"theta": 0.5, "mu": 0.5}, sites=["theta", "mu"]))


@pytest.mark.parametrize("kwargs, says", [
    ({"lam": "half"}, "lam must be a number in \\[0, 1\\].*got str 'half'"),
    ({"lam": {"theta": "half"}}, "lam\\['theta'\\] must be a number"),
    ({"loc_centring": 0.5, "scale_centring": [0.5, None]}, "scale_centring must be a number"),
    ({}, "needs lam, or both loc_centring and scale_centring"),
])
def test_partially_centre_refuses_centring_that_is_not_numbers_by_argument(kwargs, says):
    """Found in review: lam='half' was a bare ValueError from float(), no lam a plain ValueError."""
    with pytest.raises(ArgumentError, match=says):
        partially_centre(eight_schools, **kwargs)


@pytest.mark.parametrize("sites", [5, [0], None])
def test_sites_that_are_not_names_is_an_argument_error_listing_the_latents(plan, sites):
    """Found in review: sites=5 was a bare "TypeError: 'int' object is not iterable"."""
    says = r"sites must be 'default', 'all' or a list of site names \(latents: mu, log_tau, theta\), got"
    with pytest.raises(ArgumentError, match=says):
        select_sites(plan.structure, sites)
    with pytest.raises(ArgumentError, match=says):
        _rewritten_trace(noncentre(eight_schools, sites=sites))


def test_site_without_loc_scale_requested_by_name():
    structure = analyse_model(arithmetic, jnp.asarray(1.0))
    with pytest.raises(SiteError, match="site 'g'.*Gamma has no location-scale form") as info:
        select_sites(structure, ["g"])
    assert info.value.site == "g"
    fn = dist.Gamma(2.0, 2.0)
    with pytest.raises(SiteError, match="site 'g'.*Gamma"):
        decentre_site("g", fn, 0.0, 0.0)
    for policy in ("default", "all"):  # not an error: a recorded decision
        reason = {d.name: d for d in select_sites(structure, policy).decisions}["g"]
        assert not reason.reparameterise and reason.reason.startswith("left centred")


@pytest.mark.parametrize("lam", [1.5, -0.1, float("nan"), float("inf")])
def test_lambda_outside_unit_interval_names_the_site(plan, lam):
    with pytest.raises(SiteError) as info:
        Parameterisation.tied(plan, {"mu": 0.5, "log_tau": 0.5, "theta": jnp.full(8, lam)})
    assert info.value.site == "theta" and "'theta'" in str(info.value)
    with pytest.raises(SiteError, match="'theta'"):
        Parameterisation.separate(plan, 0.5, {"mu": 0.5, "log_tau": 0.5, "theta": lam})
    # the handler checks too, when used directly with NumPyro
    model = handlers.reparam(eight_schools, config={"theta": PartialCentringReparam(lam)})
    with pytest.raises(SiteError, match="'theta'"):
        handlers.trace(handlers.seed(model, rng_seed=0)).get_trace(EIGHT_SCHOOLS_SIGMA, EIGHT_SCHOOLS_Y)


def test_one_bad_element_is_enough(plan):
    lam = np.full(8, 0.5)
    lam[5] = 1.0001
    with pytest.raises(SiteError, match="'theta'.*\\[0, 1\\]"):
        Parameterisation.tied(plan, {"mu": 0.5, "log_tau": 0.5, "theta": lam})


@pytest.mark.parametrize("shape", [(3,), (1,), (8, 1), (2, 8)])
def test_lambda_shape_mismatch_names_the_site(plan, shape):
    with pytest.raises(SiteError, match="'theta'.*shape") as info:
        Parameterisation.tied(plan, {"mu": 0.0, "log_tau": 0.0, "theta": jnp.zeros(shape)})
    assert info.value.site == "theta"
    model = handlers.reparam(eight_schools, config={"theta": PartialCentringReparam(jnp.zeros(shape))})
    with pytest.raises(SiteError, match="'theta'.*shape"):
        handlers.trace(handlers.seed(model, rng_seed=0)).get_trace(EIGHT_SCHOOLS_SIGMA, EIGHT_SCHOOLS_Y)


def test_lambda_for_unknown_or_missing_site_names_it(plan):
    with pytest.raises(SiteError, match="'tau'"):
        Parameterisation.tied(plan, {"mu": 0.0, "log_tau": 0.0, "theta": 0.0, "tau": 0.0})
    with pytest.raises(SiteError, match="'log_tau'"):
        Parameterisation.tied(plan, {"mu": 0.0, "theta": 0.0})
    with pytest.raises(ArgumentError):  # a bare array is ambiguous: which site?
        Parameterisation.tied(plan, jnp.zeros(8))


def test_nan_positional_argument_is_a_data_error_naming_it():
    sigma = EIGHT_SCHOOLS_SIGMA.copy()
    sigma[2] = np.nan
    with pytest.raises(DataError, match="positional argument 0.*1 NaN"):
        analyse_model(eight_schools, sigma, y=EIGHT_SCHOOLS_Y)


def test_infinite_keyword_argument_is_a_data_error_naming_it():
    y = EIGHT_SCHOOLS_Y.copy()
    y[[0, 7]] = [np.inf, -np.inf]
    with pytest.raises(DataError, match="keyword argument 'y'.*2 NaN or infinite"):
        analyse_model(eight_schools, EIGHT_SCHOOLS_SIGMA, y=y)


def normal_mean(y):
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)


def observed_constant_beyond_float32():
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    numpyro.sample("y", dist.Normal(mu, 1.0), obs=np.array([1.0, -2e40]))


@pytest.mark.skipif(jnp.result_type(float) != jnp.float32, reason="float64 holds 1e39")
def test_data_beyond_float32_is_a_data_error_naming_the_argument():
    """Found in review: finite in float64, inf in JAX's float32 behind NumPy's overflow warnings,
    then blamed on the likelihood."""
    y = np.array([1e39, 1.0])
    with pytest.raises(DataError, match=r"positional argument 0 of the model holds 1e\+39, beyond the numbers .*"
                                        r"float32.*jax_enable_x64"):
        analyse_model(normal_mean, y)
    with pytest.raises(DataError, match="keyword argument 'y' of the model holds 1e\\+39"):
        analyse_model(normal_mean, y=y)
    with pytest.raises(DataError, match="observed site 'y' holds -2e\\+40"):
        analyse_model(observed_constant_beyond_float32)
    with jax.enable_x64(True):  # float64 holds them: the check follows JAX's float type
        assert analyse_model(normal_mean, y).names == ("mu",)


def test_non_finite_observed_site_is_a_data_error_naming_it():
    with pytest.raises(DataError, match="observed site 'counts'"):
        analyse_model(nan_observed_inside)


def test_nan_data_through_the_top_level_api():
    y = EIGHT_SCHOOLS_Y.copy()
    y[1] = np.nan
    with pytest.raises(DataError, match="'y'"):
        fit_vip(eight_schools, EIGHT_SCHOOLS_SIGMA, y=y, config=VIConfig(num_steps=2, progress=False))


def test_model_without_latent_is_a_model_error():
    with pytest.raises(ModelError, match="no latent"):
        analyse_model(no_latent, 1.0)


def test_observed_site_is_never_reparameterised_by_the_handler():
    model = handlers.reparam(eight_schools, config={"y": PartialCentringReparam(0.0)})
    with pytest.raises(SiteError, match="'y'.*observed"):
        handlers.trace(handlers.seed(model, rng_seed=0)).get_trace(EIGHT_SCHOOLS_SIGMA, EIGHT_SCHOOLS_Y)


def test_parameterisation_naming_an_observed_site_leaves_it_alone():
    """``reparameterise`` skips observed sites even when the parameterisation names one."""
    lam = {"y": jnp.zeros(8), "theta": jnp.zeros(8)}
    param = Parameterisation(lam, lam)
    trace = handlers.trace(handlers.seed(reparameterise(eight_schools, param), rng_seed=0)).get_trace(
        EIGHT_SCHOOLS_SIGMA, EIGHT_SCHOOLS_Y
    )
    assert "y_decentered" not in trace and trace["y"]["is_observed"]
    np.testing.assert_array_equal(trace["y"]["value"], EIGHT_SCHOOLS_Y)


@pytest.mark.skipif(jnp.result_type(int) != jnp.int32, reason="int64 holds 2**31")
def test_integer_data_beyond_int32_is_a_data_error_naming_the_argument():
    """Found in review: int64 data beyond int32 wrapped around in JAX (2**31 + 5 became -2**31 + 5)."""
    def counts(n, k):
        p = numpyro.sample("p", dist.Beta(1.0, 1.0))
        numpyro.sample("k", dist.Binomial(n, p), obs=k)

    n = np.array([10, 2**31 + 5], dtype=np.int64)
    k = np.array([3, 4], dtype=np.int64)
    with pytest.raises(DataError, match=r"positional argument 0 of the model holds 2147483653, beyond the integers "
                                        r".*int32: -2,147,483,648 to 2,147,483,647.*jax_enable_x64"):
        analyse_model(counts, n, k)
    with pytest.raises(DataError, match="observed site 'k' holds -2147483650"):
        analyse_model(lambda: counts(np.array([10]), np.array([-2**31 - 2], dtype=np.int64)))
    assert analyse_model(counts, np.array([10, 2**31 - 1], dtype=np.int64), k).names == ("p",)  # int32's largest
    with jax.enable_x64(True):  # int64 holds them: the check follows JAX's integer type
        assert analyse_model(counts, n, k).names == ("p",)

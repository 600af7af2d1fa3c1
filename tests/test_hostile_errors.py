"""Bad input gets a clear error: an autoreparam error that names the site, argument, line or file and
says what to do, never a bare error from deep inside JAX or NumPyro (split from
``test_hostile_input.py``, which checks the supported but unusual input)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from numpyro.infer import init_to_value

import autoreparam as ar
from autoreparam.errors import ArgumentError, DataError, ModelError, SiteError
from hostile_models import TINY, VI, clashing_names, hierarchy

# --- errors that name the site, argument or file --------------------------------------------------
def _model_with(body):
    def model():
        body()

    return model


def _nan_factor():
    numpyro.sample("x", dist.Normal(0.0, 1.0))
    numpyro.factor("always_nan", jnp.nan)


def _infinite_factor():
    numpyro.sample("x", dist.Normal(0.0, 1.0))
    numpyro.factor("always_inf", jnp.inf)


def _improper():
    numpyro.sample("s", dist.ImproperUniform(dist.constraints.positive, (), ()))


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
    "+inf log density everywhere is said as +inf, not as NaN or -inf": (
        lambda: ar.infer(_model_with(_infinite_factor), **TINY), SiteError, r"site 'always_inf'.*log density \+inf.*unbounded"),
    "an improper posterior's draws that reach infinity name the site and the flat prior": (
        lambda: ar.infer(_improper, **TINY), SiteError, r"site 's'.*NaN or infinite.*improper \(s: a flat ImproperUniform"),
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
        lambda: ar.infer(clashing_names, sites=["theta"], **TINY), SiteError,
        r"site 'theta': cannot reparameterise: its auxiliary site would be called 'theta_decentered'.*rename"),
    "two sites with one name": (
        lambda: ar.infer(_duplicate_names, **TINY), ModelError, r"after its site 'a'.*unique names.*`a` duplicated"),
    "unknown site name": (
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), sites=["thetaa"], **TINY), SiteError,
        r"site 'thetaa': is not a latent site.*mu, tau, theta"),
    "sites as a number": (  # a bare "'int' object is not iterable" (found in review)
        lambda: ar.infer(hierarchy, jnp.ones(3), jnp.ones(3), sites=3, **TINY), ArgumentError,
        r"sites must be 'default', 'all' or a list of site names \(latents: mu, tau, theta\), got int 3"),
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

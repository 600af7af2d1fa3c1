"""Distributional equivalence: the rewritten program draws the original latents from the same law.

10^4 prior draws of the rewritten program (``reparameterise`` under ``numpyro.infer.Predictive``)
against 10^4 of the original program: the mean and variance of the ORIGINAL site values must agree
within Monte Carlo standard error, |difference| / s.e. < 3.29 (the 99.9% normal quantile), with
fixed seeds (STYLE.md habits 3 and 5). A differential test against NumPyro's ``LocScaleReparam``
checks the log density of our partial centring at matched values.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from numpyro import handlers
from numpyro.infer import Predictive
from numpyro.infer.reparam import LocScaleReparam
from numpyro.infer.util import log_density

from autoreparam.reparam.families import find_family
from autoreparam.reparam.handlers import reparameterise
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model

from .zoo import location_scale

NUM_DRAWS = 10_000
Z_999 = 3.29  # two-sided 99.9% normal quantile

# family -> builder; Normal, a heavier-tailed one (Logistic: excess kurtosis 1.2) and a scale family
FAMILIES = {
    "Normal": lambda m, s: dist.Normal(m, s),
    "Logistic": lambda m, s: dist.Logistic(m, s),
    "HalfNormal": lambda m, s: dist.HalfNormal(s),
}
CENTRINGS = {
    "ncp": lambda plan: Parameterisation.tied(plan, 0.0),
    "lambda=0.3": lambda plan: Parameterisation.tied(plan, 0.3),
    "cp": lambda plan: Parameterisation.tied(plan, 1.0),
    "a=0.2,b=0.7": lambda plan: Parameterisation.separate(plan, 0.2, 0.7),
    "per-element": lambda plan: Parameterisation.tied(plan, {"x": jnp.array([0.1, 0.8])}),
}


def moment_z_scores(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two-sample z-scores of the mean and of the variance, per element (axis 0 = draws).

    The variance's standard error uses the sample fourth central moment: Var(s^2) ~ (m4 - s^4) / n.
    """

    def stats(x):
        x = np.asarray(x, dtype=np.float64)
        n = x.shape[0]
        mean, var = x.mean(0), x.var(0, ddof=1)
        m4 = ((x - mean) ** 4).mean(0)
        return mean, var, var / n, (m4 - var**2) / n

    ma, va, se2_mean_a, se2_var_a = stats(a)
    mb, vb, se2_mean_b, se2_var_b = stats(b)
    return (ma - mb) / np.sqrt(se2_mean_a + se2_mean_b), (va - vb) / np.sqrt(se2_var_a + se2_var_b)


@functools.lru_cache(maxsize=None)
def original_draws(family: str) -> np.ndarray:
    model = location_scale(FAMILIES[family])
    return np.asarray(Predictive(model, num_samples=NUM_DRAWS, parallel=True)(jax.random.PRNGKey(11))["x"])


@pytest.mark.parametrize("centring", list(CENTRINGS))
@pytest.mark.parametrize("family", list(FAMILIES))
def test_rewritten_program_draws_the_original_law(family, centring):
    model = location_scale(FAMILIES[family])
    structure = analyse_model(model)
    assert structure["x"].family.name == family
    plan = select_sites(structure, "default")
    assert plan.names == ("x",)
    rewritten = reparameterise(model, CENTRINGS[centring](plan))
    out = Predictive(rewritten, num_samples=NUM_DRAWS, parallel=True)(jax.random.PRNGKey(23))
    assert "x_decentered" in out and out["x"].shape == (NUM_DRAWS, 2)
    z_mean, z_var = moment_z_scores(np.asarray(out["x"]), original_draws(family))
    assert np.all(np.abs(z_mean) < Z_999), z_mean
    assert np.all(np.abs(z_var) < Z_999), z_var
    if family == "HalfNormal":
        assert np.all(np.asarray(out["x"]) > 0)


def test_moment_check_detects_small_errors():
    """The check above can fail: a 10% larger scale or a shift of 0.1 sd is caught at these sizes."""
    reference = original_draws("Normal")
    fresh = np.asarray(
        Predictive(location_scale(FAMILIES["Normal"]), num_samples=NUM_DRAWS, parallel=True)(jax.random.PRNGKey(5))["x"]
    )
    z_mean, z_var = moment_z_scores(fresh, reference)
    assert np.all(np.abs(z_mean) < Z_999) and np.all(np.abs(z_var) < Z_999)
    centre = reference.mean(0)
    _, z_var = moment_z_scores(centre + 1.1 * (fresh - centre), reference)
    assert np.all(np.abs(z_var) > Z_999)
    z_mean, _ = moment_z_scores(fresh + 0.1 * reference.std(0), reference)
    assert np.all(np.abs(z_mean) > Z_999)


# --- differential test: our partial centring against NumPyro's LocScaleReparam --------------------------
# real-support location-scale families LocScaleReparam handles; extra parameters it must copy
ORACLE_FAMILIES = {
    "Normal": (lambda m, s: dist.Normal(m, s), ()),
    "StudentT": (lambda m, s: dist.StudentT(4.0, m, s), ("df",)),
    "Cauchy": (lambda m, s: dist.Cauchy(m, s), ()),
    "Laplace": (lambda m, s: dist.Laplace(m, s), ()),
    "Logistic": (lambda m, s: dist.Logistic(m, s), ()),
    "Gumbel": (lambda m, s: dist.Gumbel(m, s), ()),
    "SoftLaplace": (lambda m, s: dist.SoftLaplace(m, s), ()),
}


def observed_model(make):
    def model(y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        log_s = numpyro.sample("log_s", dist.Normal(0.0, 1.0))
        with numpyro.plate("items", 3):
            x = numpyro.sample("x", make(mu, jnp.exp(log_s)))
            numpyro.sample("y", dist.Normal(x, 0.5), obs=y)

    return model


@pytest.mark.parametrize("family", list(ORACLE_FAMILIES))
def test_partial_centring_matches_numpyro_loc_scale_reparam(family):
    make, shape_params = ORACLE_FAMILIES[family]
    with jax.enable_x64(True):
        model = observed_model(make)
        y = jnp.array([0.4, -1.1, 2.3])
        structure = analyse_model(model, y)
        assert structure["x"].family.name == family
        plan = select_sites(structure, "default")
        values = {"mu": jnp.asarray(0.3), "log_s": jnp.asarray(-0.7), "x_decentered": jnp.array([-0.9, 0.2, 1.6])}
        per_element = jnp.array([0.0, 0.45, 0.9])
        for label, centred in {"ncp": 0.0, "lambda=0.3": 0.3, "per-element": per_element}.items():
            lam = {"x": jnp.broadcast_to(jnp.asarray(centred), (3,))}
            ours = reparameterise(model, Parameterisation.tied(plan, lam))
            oracle = handlers.reparam(model, config={"x": LocScaleReparam(centred, shape_params=shape_params)})
            got, got_trace = log_density(ours, (y,), {}, values)
            want, want_trace = log_density(oracle, (y,), {}, values)
            assert find_family(got_trace["x_decentered"]["fn"]).name == family
            assert abs(float(got - want)) < 1e-9, (label, float(got), float(want))
            np.testing.assert_allclose(got_trace["x"]["value"], want_trace["x"]["value"], rtol=1e-12)
        # lambda = 1: NumPyro leaves the site as written; ours keeps an auxiliary site with the same law
        ours = reparameterise(model, Parameterisation.centred(plan))
        got, _ = log_density(ours, (y,), {}, values)
        want, _ = log_density(model, (y,), {}, {"mu": 0.3, "log_s": -0.7, "x": values["x_decentered"]})
        assert abs(float(got - want)) < 1e-9

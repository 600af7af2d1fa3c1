"""The negative control's reparameterisation is wrong by exactly the term it claims, and only by it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer.util import log_density

from autoreparam.reliability.negative_control import WRONG_FACTOR_SUFFIX, original_values, wrong_jacobian_model
from autoreparam.reparam.handlers import noncentre


def model(y=None):
    mu = numpyro.sample("mu", dist.Normal(0.0, 2.0))
    log_s = numpyro.sample("log_s", dist.Normal(0.0, 1.0))
    with numpyro.plate("groups", 3):
        x = numpyro.sample("x", dist.Normal(mu, jnp.exp(log_s)))
        numpyro.sample("y", dist.Normal(x, 1.0), obs=y)


def test_wrong_model_is_the_correct_non_centring_plus_the_log_jacobian_once_more():
    y = jnp.array([0.5, -1.0, 2.0])
    wrong, names = wrong_jacobian_model(model, (), {"y": y})
    assert names == ("x",)
    with jax.enable_x64(True):
        point = {"mu": 0.3, "log_s": -0.4, "x_decentered": jnp.array([0.2, -1.1, 0.7])}
        wrong_lp, trace = log_density(wrong, (), {"y": y}, point)
        right_lp, _ = log_density(noncentre(model), (), {"y": y}, point)
        assert "x" + WRONG_FACTOR_SUFFIX in trace
        # the doubled term: log|dx/dx~| = 3 log s
        np.testing.assert_allclose(float(wrong_lp - right_lp), 3 * -0.4, rtol=1e-12)


def test_original_values_are_recomputed_from_the_auxiliary_draws():
    y = jnp.array([0.5, -1.0, 2.0])
    wrong, _ = wrong_jacobian_model(model, (), {"y": y})
    rng = np.random.default_rng(0)
    samples = {"mu": rng.normal(size=(2, 5)), "log_s": rng.normal(size=(2, 5)), "x_decentered": rng.normal(size=(2, 5, 3))}
    out = original_values(wrong, samples, ["mu", "log_s", "x"], (), {"y": y})
    expected = samples["mu"][..., None] + np.exp(samples["log_s"])[..., None] * samples["x_decentered"]
    np.testing.assert_allclose(out["x"], expected, rtol=1e-5)
    np.testing.assert_array_equal(out["mu"], samples["mu"])


def test_the_wrong_rewrite_reaches_sites_inside_scan():
    """Inside a scan body, too, the control is the correct non-centring plus the log-Jacobian again."""
    from autoreparam.reliability.models import RANDOM_WALK_STEPS, random_walk_scan

    y = jnp.linspace(-1.0, 1.0, RANDOM_WALK_STEPS)
    wrong, names = wrong_jacobian_model(random_walk_scan, (RANDOM_WALK_STEPS,), {"y": y})
    assert names == ("level",)
    with jax.enable_x64(True):
        point = {"tau": 0.7, "level_decentered": jnp.linspace(-0.5, 0.5, RANDOM_WALK_STEPS)}
        wrong_lp, trace = log_density(wrong, (RANDOM_WALK_STEPS,), {"y": y}, point)
        right_lp, _ = log_density(noncentre(random_walk_scan), (RANDOM_WALK_STEPS,), {"y": y}, point)
        factor = trace["level" + WRONG_FACTOR_SUFFIX]  # one factor per step, stacked by scan
        assert factor["fn"].log_prob(factor["value"]).shape == (RANDOM_WALK_STEPS,)
        np.testing.assert_allclose(float(wrong_lp - right_lp), RANDOM_WALK_STEPS * np.log(0.7), rtol=1e-10)


def test_the_same_model_gets_the_same_rewritten_model_so_its_programs_compile_once():
    """Compiled programs are keyed by the model function: a new wrapper per SBC replication compiled
    the control's sampler again every time (4 s per replication of the funnel)."""
    import autoreparam as ar
    from autoreparam.mcmc.programs import PROGRAMS
    from tests.hostile_models import VI as TINY_FIT

    y = jnp.array([0.5, -1.0, 2.0])
    first, _ = wrong_jacobian_model(model, (), {"y": y})
    again, _ = wrong_jacobian_model(model, (), {"y": -y})
    assert again is first
    # One fixed L and a short fit: the leapfrog oracle's pilots and the full fit compiled nothing more.
    run = dict(method="cp", num_chains=1, num_warmup=20, num_samples=20, num_leapfrog=2, progress=False, y=y,
               vi_config=TINY_FIT)
    ar.infer(first, seed=0, **run)
    compiled = PROGRAMS.num_compilations
    ar.infer(again, seed=1, **run)
    assert PROGRAMS.num_compilations == compiled

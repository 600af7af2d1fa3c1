"""method="auto": NUTS in the Section 3 rule's partial centring learnt at warm-up draws, with evidence."""

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

import autoreparam as ar
from autoreparam.auto import E_MAX, pilot_length
from autoreparam.auto.pilot import PilotScore
from autoreparam.models import eight_schools

SIGMA = jnp.array([15, 10, 16, 11, 9, 11, 10, 18.0])
Y = jnp.array([28, 8, -3, 7, -1, 1, 18, 12.0])


def _auto(model, *args, **kwargs):
    settings = dict(method="auto", num_chains=4, num_warmup=300, num_samples=400, progress=False, seed=0)
    settings.update({k: kwargs.pop(k) for k in list(kwargs) if k in settings})
    return ar.infer(model, *args, **settings, **kwargs)


def groups(y, n_per_group, noise):
    """Normal hierarchy with known noise: the rule's lambda is exact (linear-Gaussian, constant curvature)."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    with numpyro.plate("groups", n_per_group.shape[0]):
        theta = numpyro.sample("theta", dist.Normal(mu, 2.0))
    index = np.repeat(np.arange(n_per_group.shape[0]), n_per_group)
    numpyro.sample("y", dist.Normal(theta[index], noise), obs=y)


def test_auto_learns_the_rules_lambda_per_element():
    n_per_group = np.array([0, 1, 4, 20, 100])
    rng = np.random.default_rng(0)
    y = jnp.asarray(rng.normal(1.0, 1.0, n_per_group.sum()), dtype=jnp.float32)
    result = _auto(groups, y, n_per_group, 1.0)
    lam = np.asarray(result.parameterisation["theta"])
    weight = 4.0 * n_per_group / (1.0 + 4.0 * n_per_group)  # s^2 q / (1 + s^2 q), s = 2
    np.testing.assert_allclose(lam * 2.0 ** (1 - lam), weight, atol=1e-3)
    assert result.method == "auto -> rule" and result.trustworthy
    assert {"analysis", "compile", "lambda", "warmup", "pilots", "sampling", "total"} <= set(result.timing)


def test_auto_on_eight_schools_is_non_centred_and_retries_divergences_at_a_higher_acceptance():
    result = _auto(eight_schools, SIGMA, y=Y, num_warmup=500, num_samples=500)
    assert np.all(np.asarray(result.parameterisation["theta"]) < 0.1)
    if "diverged" in result.decision:  # the funnel's neck: the step size adapts again
        assert "acceptance 0.95" in result.decision
    assert result.diagnostics.standard.max_r_hat < 1.02


def test_a_pilot_that_does_not_mix_makes_auto_try_cp_and_ncp(monkeypatch):
    from autoreparam.auto import rule_lambda
    from autoreparam.reparam.parameterisation import Parameterisation

    # Force the rule to the worst choice on eight schools (centred): the pilot cannot mix in the funnel.
    monkeypatch.setattr(rule_lambda.RuleLambda, "lambda_at",
                        lambda self, points: Parameterisation.centred(self.coords.plan))
    result = _auto(eight_schools, SIGMA, y=Y, num_warmup=300, num_samples=400)
    assert "CP and NCP tried too" in result.decision
    assert result.method == "auto -> ncp"
    assert np.all(np.asarray(result.parameterisation["theta"]) == 0.0)


def test_the_bound_abandons_only_candidates_that_cannot_win():
    best = PilotScore("rule", 40.0, 0.4, 10.0, 1.0, 0.0, 1e4, 1.0)
    # 1000 * E_MAX / g: at 100 gradients per transition at most 30 per 1000 gradients < 40: hopeless.
    assert 1000.0 * E_MAX / 100.0 < best.ess_per_1000_grads
    assert 1000.0 * E_MAX / 50.0 > best.ess_per_1000_grads  # at 50 it could still win
    assert pilot_length(1000, 50) == 100 and pilot_length(100, 50) == 50

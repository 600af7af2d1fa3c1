"""The Section 3 rule lambda = s^2 c / (1 + s^2 c) (reparam/rule.py) against the model's exact best lambda."""

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

from autoreparam.analysis.simple_model import best_lambda
from autoreparam.models import gaussian_section3, gaussian_section3_data
from autoreparam.reparam import analyse_model, select_sites
from autoreparam.reparam.rule import EXACT_LIMIT, rule_function, section3_lambda


# (1, 10) and (100, 10): kappa's minimum is about 0.002 wide there, and best_lambda's grid stepped over
# it and returned 1 (found in review).
@pytest.mark.parametrize("q,sigma_mu", [(0.01, 1.0), (1.0, 1.0), (100.0, 1.0), (4.0, 0.5), (0.3, 3.0), (1.0, 10.0),
                                        (100.0, 10.0)])
def test_the_rule_is_the_best_lambda_of_the_section3_model(q, sigma_mu):
    y, sigma = gaussian_section3_data(q=q, n=10, sigma_mu=sigma_mu, seed=0)
    plan = select_sites(analyse_model(gaussian_section3, y, sigma, sigma_mu), "default")
    assert plan.names == ("mu",)
    rule = rule_function(gaussian_section3, (y, sigma, sigma_mu), {}, plan)
    # Linear-Gaussian: the curvature is the same everywhere, so any point gives the same lambda.
    for point in ({"theta": 0.3, "mu": -1.0}, {"theta": -2.0, "mu": 4.0}):
        lam = float(jax.jit(rule)({k: jnp.asarray(v) for k, v in point.items()})["mu"])
        assert lam == pytest.approx(best_lambda(q, sigma_mu), abs=2e-3)


def _plate_model(n_obs):
    # Group sizes 0 .. 4 per element: lambda_j = 4 n_j / (1 + 4 n_j) at unit noise and scale 2.
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    with numpyro.plate("groups", n_obs.shape[0]):
        theta = numpyro.sample("theta", dist.Normal(mu, 2.0))
    index = np.repeat(np.arange(n_obs.shape[0]), n_obs)
    numpyro.sample("y", dist.Normal(theta[index], 1.0), obs=jnp.zeros(index.size))


@pytest.mark.parametrize("groups", [8, EXACT_LIMIT + 36])  # exact diagonal, and Hutchinson's estimate
def test_per_element_lambda_follows_each_elements_evidence(groups):
    n_obs = np.arange(groups) % 5
    plan = select_sites(analyse_model(_plate_model, n_obs), "all")
    values = {"mu": jnp.asarray(0.5), "theta": jnp.zeros(groups)}
    lam = np.asarray(jax.jit(rule_function(_plate_model, (n_obs,), {}, plan))(values)["theta"])
    weight = 4.0 * n_obs / (1.0 + 4.0 * n_obs)
    np.testing.assert_allclose(lam * 2.0 ** (1 - lam), weight, atol=1e-4)  # conditionally independent: Hutchinson is exact


def test_negative_curvature_is_no_evidence_and_unit_scale_gives_the_weight():
    assert float(section3_lambda(2.0, -5.0)) == pytest.approx(0.0, abs=1e-6)
    assert float(section3_lambda(1.0, 1.0)) == pytest.approx(0.5, abs=1e-6)
    # Large scales (s > e) make lambda s^(1 - lambda) non-monotone: the smallest root is taken.
    lam = float(section3_lambda(30.0, 1.0))
    assert lam * 30.0 ** (1 - lam) == pytest.approx(900.0 / 901.0, rel=1e-4)


def _random_walk(y, calls):
    """A latent AR(1) path written as a Python loop: one sample site per step (a user's natural form)."""
    calls.append(1)
    h = numpyro.sample("h_0", dist.Normal(0.0, 1.0))
    numpyro.sample("y_0", dist.Normal(h, 1.0), obs=y[0])
    for t in range(1, y.shape[0]):
        h = numpyro.sample(f"h_{t}", dist.Normal(0.9 * h, 0.5))
        numpyro.sample(f"y_{t}", dist.Normal(h, 1.0), obs=y[t])


def _rule_traces(steps: int) -> tuple[int, dict]:
    y, calls = jnp.linspace(-1.0, 1.0, steps), []
    plan = select_sites(analyse_model(_random_walk, y, []), "default")
    rule = rule_function(_random_walk, (y, calls), {}, plan)
    lam = jax.jit(rule)({f"h_{t}": jnp.asarray(0.1 * t) for t in range(steps)})
    return len(calls), lam


def test_the_rule_traces_the_model_a_fixed_number_of_times_however_many_sites_it_has():
    # Tracing the model once per site made the rule's program grow with the square of the number of
    # sites (69 s to compile for a 100-step loop); every site's curvature now comes from one trace.
    (few, _), (many, lam) = _rule_traces(3), _rule_traces(12)
    assert few == many
    # Each h_t (0 < t < 11) has the data point and its child h_{t+1} as evidence: curvature
    # 1 + 0.9^2 / 0.5^2 at prior scale 0.5, whatever the point (linear-Gaussian).
    curvature = 1.0 + 0.81 / 0.25
    for t in range(1, 11):
        assert float(lam[f"h_{t}"]) == pytest.approx(float(section3_lambda(0.5, curvature)), abs=1e-5)
    assert float(lam["h_11"]) == pytest.approx(float(section3_lambda(0.5, 1.0)), abs=1e-5)  # no child

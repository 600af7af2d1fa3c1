"""Every registered problem: latent dimensions, finite log density, prior predictive, errors."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
import pytest
from jax import random
from numpyro import handlers
from numpyro.infer import Predictive
from numpyro.infer.util import log_density
from .zoo_helpers import latent_sites, prior_mean_values, unwrap

import autoreparam.models as zoo
from autoreparam.errors import ArgumentError

_RADON_J = {"az": 15, "in": 91, "ma": 13, "mn": 85, "mo": 115, "nd": 53, "pa": 67}
# Expected latent sites and their total dimension, by problem name. Dispatching through this
# dict (and asserting the name is in it) means a new problem cannot slip through untested.
EXPECTED = {
    "eight_schools": ({"mu", "log_tau", "theta"}, 10),
    "german_credit": ({"log_tau0", "log_tau", "beta"}, 125),
    "election88": ({"mu_a", "log_sigma_a", "a", "b1", "b2"}, 2 + 51 + 2),
    "electric": ({"mu", "log_sigma_y", "a", "b"}, 4 + 4 + 96 + 4),
    "neals_funnel": ({"z", "x"}, 2),
    "funnel_with_observation": ({"z", "x"}, 2),
    "gaussian_section3": ({"theta", "mu"}, 2),
    "hierarchical_linear": ({"mu", "tau", "sigma", "beta", "a"}, 4 + 12),
    "sparse_logistic": ({"tau", "alpha", "local_scale", "beta"}, 2 + 2 * 12),
    **{f"radon_{s}": ({"mu_a", "b1", "b2", "m"}, j + 3) for s, j in _RADON_J.items()},
    **{f"radon_stddvs_{s}": ({"mu_a", "b1", "b2", "m", "log_m_sd"}, 2 * j + 3) for s, j in _RADON_J.items()},
}
_SIMULATED = {"hierarchical_linear", "sparse_logistic"}
_NEEDS_DATA = {"german_credit", "election88", "electric"} | {n for n in EXPECTED if n.startswith("radon")}


def _load(name, request):
    data_dir = request.getfixturevalue("data_dir") if name in _NEEDS_DATA else None
    return zoo.load(name, data_dir=data_dir)


def test_registry_lists_exactly_the_expected_problems():
    assert sorted(zoo.available()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_problem(name, request):
    problem = _load(name, request)
    sites, dims = EXPECTED[name]
    assert problem.name == name and problem.description and problem.data_note
    # Structure from an abstract trace (jax.eval_shape): nothing is compiled.
    trace = _structure(problem)
    latent = {n: s for n, s in trace.items() if not s["observed"]}
    assert set(latent) == sites and sum(int(np.prod(s["shape"])) for s in latent.values()) == dims
    observed = [n for n, s in trace.items() if s["observed"]]
    assert observed == (["y"] if "y" in problem.kwargs else [])
    # Every latent of the paper's models is a Normal, written centred: what the reparameterisers
    # act on. The simulated models add positive scale latents (HalfNormal, Gamma) on purpose.
    positive = {"tau", "sigma", "local_scale"} if name in _SIMULATED else set()
    assert all(s["normal"] for n, s in latent.items() if n not in positive), latent
    # The log density at the prior mean, compiled once per problem (eager ops would compile
    # once per operation and shape, which is slower).
    logp = jax.jit(lambda: log_density(problem.model, problem.args, problem.kwargs,
                                       prior_mean_values(problem.model, problem.args, problem.kwargs))[0])()
    assert np.isfinite(float(logp))


def _structure(problem):
    """Sample sites of the model, name -> observed / shape / is Normal, traced abstractly."""
    found = {}

    def record():
        for name, site in latent_sites(problem.model, problem.args, problem.kwargs, observed=True).items():
            found[name] = {
                "observed": site["is_observed"],
                "shape": tuple(jnp.shape(site["value"])),
                "normal": isinstance(unwrap(site["fn"]), dist.Normal),
            }

    jax.eval_shape(record)
    return found


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_prior_predictive(name, request):
    problem = _load(name, request)
    if "y" not in problem.kwargs:
        pytest.skip(f"{name} has no observation")
    kwargs = {**problem.kwargs, "y": None}
    if name == "gaussian_section3":
        kwargs["n"] = len(problem.kwargs["y"])

    def draw(key):
        return handlers.trace(handlers.seed(problem.model, key)).get_trace(*problem.args, **kwargs)["y"]["value"]

    # Shapes only (abstract evaluation); one model is sampled for real below.
    assert jax.eval_shape(draw, random.PRNGKey(1)).shape == np.shape(problem.kwargs["y"])


def test_prior_predictive_draws_eight_schools():
    problem = zoo.load("eight_schools")
    draws = Predictive(problem.model, num_samples=3)(random.PRNGKey(1), *problem.args, y=None)
    assert draws["y"].shape == (3, 8) and np.all(np.isfinite(draws["y"]))
    assert not np.allclose(draws["y"][0], draws["y"][1])


def test_load_rejects_unknown_names_and_options():
    with pytest.raises(ArgumentError) as info:
        zoo.load("radon_ca")
    assert "radon_mn" in str(info.value) and "german_credit" in str(info.value)
    with pytest.raises(ArgumentError, match="dim"):
        zoo.load("neals_funnel", size=3)


def test_problem_is_frozen():
    problem = zoo.load("eight_schools")
    with pytest.raises(dataclasses.FrozenInstanceError):
        problem.name = "other"


def test_options_reach_the_model(data_dir):
    assert zoo.load("neals_funnel", dim=5).kwargs == {"dim": 5}
    funnel = zoo.load("neals_funnel", dim=5)
    values = prior_mean_values(funnel.model, funnel.args, funnel.kwargs)
    assert values["x"].shape == (5,)
    problem = zoo.load("funnel_with_observation", y=-20.0, sigma=0.1)
    assert problem.kwargs == {"y": -20.0, "sigma": 0.1}
    dropped = zoo.load("radon_az", data_dir=data_dir, missing_floor="drop")
    assert dropped.kwargs["y"].shape == (1408,) and "dropped" in dropped.data_note


@pytest.mark.parametrize(("y", "sigma"), [(20.5, 1.0), (-21.0, 1.0), (0.0, 0.05), (0.0, 25.0), (float("nan"), 1.0)])
def test_funnel_with_observation_validates(y, sigma):
    with pytest.raises(ArgumentError):
        zoo.load("funnel_with_observation", y=y, sigma=sigma)
    with pytest.raises(ArgumentError):
        zoo.funnel_with_observation(y, sigma)


def test_neals_funnel_validates_dim():
    for bad in (0, 2.5, True):
        with pytest.raises(ArgumentError):
            zoo.load("neals_funnel", dim=bad)()


def test_models_are_callable_directly():
    logp, _ = log_density(zoo.eight_schools, (jnp.ones(8),), {"y": jnp.zeros(8)},
                          {"mu": 0.0, "log_tau": 0.0, "theta": jnp.zeros(8)})
    # 2 N(0,5) at 0, 8 N(0,1) at 0, 8 N(0,1) at 0.
    expected = 2 * (-np.log(5.0) - 0.5 * np.log(2 * np.pi)) + 16 * (-0.5 * np.log(2 * np.pi))
    np.testing.assert_allclose(float(logp), expected, rtol=1e-6)


def test_data_notes_describe_differences(data_dir):
    assert "75 of 85" in zoo.load("radon_mn", data_dir=data_dir).data_note
    assert "67 counties, not 68" in zoo.load("radon_pa", data_dir=data_dir).data_note
    assert zoo.load("radon_nd", data_dir=data_dir).data_note.startswith("Same data")
    assert "Reproduces" in zoo.load("radon_mn", data_dir=data_dir, quirks=True).data_note
    assert "0-based" in zoo.load("electric", data_dir=data_dir).data_note


@pytest.mark.parametrize("name, options, says", [
    ("hierarchical_linear", {"seed": "abc"}, "seed must be a non-negative integer"),
    ("hierarchical_linear", {"seed": -1}, "seed must be a non-negative integer"),
    ("sparse_logistic", {"seed": 1.7}, "seed must be a non-negative integer"),  # was silently seed 1
    ("gaussian_section3", {"seed": -1}, "seed must be a non-negative integer"),
    ("neals_funnel", {"dim": 0}, "dim must be a positive integer"),  # failed only when the model ran
])
def test_model_options_are_checked_at_load(name, options, says):
    from autoreparam.errors import ArgumentError
    from autoreparam.models import load

    with pytest.raises(ArgumentError, match=says):
        load(name, **options)

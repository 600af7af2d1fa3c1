"""The PyMC ports behind the nutpie peer are the zoo's centred models, on the zoo's real data.

Differential test (STYLE.md habit 6): the PyMC port's log joint density equals NumPyro's
``log_density`` of our model at random points, in float64, for every ported problem (all radon
states). Needs the optional peers extra (``make peers``); skipped with that advice without it.
"""

from __future__ import annotations

import os
from pathlib import Path

import jax
import numpy as np
import pytest
from numpyro import handlers
from numpyro.infer.util import log_density

from autoreparam.benchmark import pymc_ports
from autoreparam.models import load
from autoreparam.models.data.radon import STATES

NO_EXTRA = "PyMC / nutpie not installed: the optional peers extra (`make peers`) is needed for this test"
PROBLEMS = ("eight_schools", "german_credit", "election88", "electric") + tuple(f"radon_{s.lower()}" for s in STATES)


def _data_dir() -> Path:
    return Path(os.environ.get("AUTOREPARAM_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")


def _problem(name: str):
    pytest.importorskip("pymc", reason=NO_EXTRA)
    if not (_data_dir() / "radon" / "srrs2.dat").exists():
        pytest.skip(f"real data not found under {_data_dir()} (set AUTOREPARAM_DATA)")
    return load(name, data_dir=_data_dir())


@pytest.mark.parametrize("name", PROBLEMS)
def test_port_has_the_same_sites_and_log_density_as_our_model(name):
    problem = _problem(name)
    model = pymc_ports.build(problem)
    trace = handlers.trace(handlers.seed(problem.model, 0)).get_trace(*problem.args, **problem.kwargs)
    latents = {n: s["value"].shape for n, s in trace.items() if s["type"] == "sample" and not s["is_observed"]}
    assert [v.name for v in model.observed_RVs] == ["y"]
    shapes = {v.name: model.initial_point()[v.name].shape for v in model.value_vars}
    assert shapes == latents  # the same site names and shapes
    # All latents are Normal, so PyMC's value variables are the sites themselves (no transform).
    log_p = model.compile_logp(mode="FAST_COMPILE")
    rng = np.random.default_rng(sum(map(ord, name)))
    with jax.enable_x64(True):
        ours_at = jax.jit(lambda point: log_density(problem.model, problem.args, problem.kwargs, point)[0])
        for _ in range(3):
            point = {n: rng.normal(0.0, 1.0, size=shape) for n, shape in shapes.items()}
            ours = float(ours_at(point))
            # Agreement to float64 rounding; NumPyro's Normal keeps its log(2 pi) constant in float32
            # (about 3e-9 per term), hence the absolute slack.
            assert float(log_p(point)) == pytest.approx(ours, rel=1e-10, abs=1e-6)


def test_quirks_indices_past_the_end_get_no_effect_in_the_port_too():
    """quirks=True keeps the original 1-based indices: the last state gets no effect (take_or_zero)."""
    pytest.importorskip("pymc", reason=NO_EXTRA)
    if not (_data_dir() / "election88").exists():
        pytest.skip(f"real data not found under {_data_dir()}")
    problem = load("election88", data_dir=_data_dir(), quirks=True)
    assert np.max(problem.args[0]) == problem.args[3]  # an index one past the end is really there
    model = pymc_ports.build(problem)
    rng = np.random.default_rng(3)
    point = {v.name: rng.normal(size=model.initial_point()[v.name].shape) for v in model.value_vars}
    with jax.enable_x64(True):
        ours = float(log_density(problem.model, problem.args, problem.kwargs, point)[0])
    assert float(model.compile_logp(mode="FAST_COMPILE")(point)) == pytest.approx(ours, rel=1e-10, abs=1e-6)


def test_nutpie_run_reports_draws_gradients_and_phases():
    """A short nutpie run (tiny tuning: plumbing, not statistics) gives our ChainResult layout."""
    problem = _problem("eight_schools")
    pytest.importorskip("nutpie", reason=NO_EXTRA)
    from autoreparam.benchmark.nutpie_peer import sample_nutpie

    chains, samples, info = sample_nutpie(problem, chains=2, tune=30, draws=20, seed=1)
    assert sorted(samples) == ["log_tau", "mu", "theta"]
    assert samples["theta"].shape == (2, 20, 8) and samples["mu"].shape == (2, 20)
    # Sorted sites, flattened: log_tau, mu, theta[0..7] (Coordinates.ravel_original's layout).
    np.testing.assert_array_equal(chains.draws[..., 2:], samples["theta"])
    np.testing.assert_array_equal(chains.draws[..., 0], samples["log_tau"])
    assert chains.grad_evals.shape == (2,) and np.all(chains.grad_evals >= 20)  # at least a step per draw
    assert np.all(chains.warmup_grad_evals >= 30)
    assert set(chains.seconds) == {"compile", "warmup", "sampling"}
    assert chains.seconds["compile"] > 0 and info["backend"] == "numba"
    share = chains.seconds["warmup"] / (chains.seconds["warmup"] + chains.seconds["sampling"])
    grads = chains.warmup_grad_evals.sum() / (chains.warmup_grad_evals.sum() + chains.grad_evals.sum())
    assert share == pytest.approx(grads)

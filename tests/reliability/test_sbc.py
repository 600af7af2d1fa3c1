"""SBC's plan, its models' prior draws, one replication end to end, and resuming a run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autoreparam.errors import ArgumentError
from autoreparam.reliability import methods as methods_module
from autoreparam.reliability.methods import RunSettings, method_specs
from autoreparam.reliability.models import MODEL_NAMES, sbc_models
from autoreparam.reliability.ranks import NUM_THINNED
from autoreparam.reliability.sbc import cell_ranks, plan_tasks, run_sbc, stable_seed, summarise
from autoreparam.reliability.statistics import calibration
from tests.conftest import XlaCompilations

TINY = RunSettings(num_chains=2, num_warmup=100, num_samples=100)


def test_every_method_and_kernel_infer_offers_is_a_cell_and_meta_joins_when_it_exists(monkeypatch):
    without_meta = tuple(m for m in methods_module.INFER_METHODS if m != "meta")
    monkeypatch.setattr(methods_module, "INFER_METHODS", without_meta)
    labels = [s.label for s in method_specs()]
    assert labels == ["cp/hmc", "cp/nuts", "ncp/hmc", "ncp/nuts", "vip/hmc", "vip/nuts", "given_0.3/hmc",
                      "given_0.3/nuts", "ihmc/hmc", "auto/nuts", "wrong_jacobian/nuts"]
    monkeypatch.setattr(methods_module, "INFER_METHODS", without_meta + ("meta",))
    assert {"meta/hmc", "meta/nuts"} <= {s.label for s in method_specs()}


def test_plan_interleaves_replications_and_limits_the_control():
    tasks = plan_tasks(3, control_replications=1)
    per_cell = len(MODEL_NAMES) * (len(method_specs()) - 1)
    assert len(tasks) == 3 * per_cell + len(MODEL_NAMES)
    first_round = tasks[: per_cell + len(MODEL_NAMES)]
    assert {t["replication"] for t in first_round} == {0}
    assert len({t["key"] for t in tasks}) == len(tasks)
    with pytest.raises(ArgumentError, match="unknown method/kernel"):
        plan_tasks(1, labels=["ncp/gibbs"])
    with pytest.raises(ArgumentError, match="unknown SBC model"):
        plan_tasks(1, models=["radon"])


def test_prior_draws_are_reproducible_and_respect_the_data_range():
    assert stable_seed("a", 1) == stable_seed("a", 1) != stable_seed("a", 2)
    models = sbc_models()
    for name in MODEL_NAMES:
        truth, data = models[name].prior_draw(7)
        again, data_again = models[name].prior_draw(7)
        for site in truth:
            np.testing.assert_array_equal(truth[site], again[site])
        assert (models[name].observed is None) == (not data)
    low, high = models["funnel_observed"].data_range
    ys = [float(models["funnel_observed"].prior_draw(s)[1]["y"]) for s in range(30)]
    assert all(low <= y <= high for y in ys) and np.std(ys) > 0.5


def test_random_walk_prior_draws_compile_once_and_have_the_exact_prior_moments():
    """The scan model's draws are compiled once (tracing it per draw leaked about 5 MB of compiled
    code per draw, and LLVM ran out of memory near 1,000), and they follow the prior: with tau ~
    HalfNormal(1), E level_t = 0, E level_t^2 = E tau^2 (t + 1) = t + 1, E y_t^2 = t + 2."""
    model = sbc_models()["random_walk_scan"]
    num_draws = 2000
    first = model.prior_draw(0)
    # Counted as XLA compilations, not as entries of the jitted function's fast-path cache: that count
    # read 0 once in a full suite run, though nothing was compiled again.
    with XlaCompilations() as compilations:
        draws = [first] + [model.prior_draw(seed) for seed in range(1, num_draws)]
    assert compilations.messages == []
    levels = np.array([truth["level"] for truth, _ in draws], float)
    ys = np.array([data["y"] for _, data in draws], float)
    steps = np.arange(1, levels.shape[1] + 1)
    # sd of a mean square: level_t^2 has variance 3 E tau^4 t^2 - t^2 = 8 t^2; 4 standard errors
    bound = 4 * np.sqrt(8.0 / num_draws) * steps
    assert np.all(np.abs((levels**2).mean(0) - steps) < bound)
    assert np.all(np.abs((ys**2).mean(0) - (steps + 1)) < bound + 4 * np.sqrt(2.0 / num_draws))
    assert np.all(np.abs(levels.mean(0)) < 4 * np.sqrt(steps / num_draws))


def test_a_failing_run_is_recorded_with_its_error(tmp_path, monkeypatch):
    from autoreparam.reliability import sbc as sbc_module

    def broken(*args, **kwargs):
        raise RuntimeError("sampler exploded")

    monkeypatch.setattr(sbc_module, "run_spec", broken)
    store = run_sbc(tmp_path, 1, models=["funnel"], labels=["cp/nuts"], settings=TINY, serial=True, progress=False)
    (record,) = store.records()
    assert record["status"] == "error" and "sampler exploded" in record["error"]
    assert cell_ranks(store.records())[("funnel", "cp/nuts")]["errors"] == ["RuntimeError: sampler exploded"]


def test_small_sbc_calibrates_ncp_and_rejects_the_wrong_jacobian_on_the_funnel(tmp_path):
    """The check in small, in the default suite: 12 replications of NCP-NUTS on the funnel without
    data (whose posterior NCP samples as independent normals) pass; the doubled Jacobian, which moves
    z by about three prior sds, fails."""
    settings = RunSettings(num_chains=2, num_warmup=200, num_samples=200)
    arguments = dict(models=["funnel"], labels=["ncp/nuts", "wrong_jacobian/nuts"], settings=settings,
                     control_replications=4, serial=True, progress=False)
    store = run_sbc(tmp_path, 12, **arguments)
    records = store.records()
    assert len(records) == 16 and all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    rec = records[0]
    assert rec["labels"] == ["x[0]", "x[1]", "z"] and len(rec["thinned"]) == NUM_THINNED
    # the rank is the rank of the saved truth among the saved draws
    assert rec["rank"] == list(np.sum(np.array(rec["thinned"]) < np.array(rec["truth"]), axis=0))
    saved = json.loads((tmp_path / "cells" / f"{rec['key']}.json").read_text())
    assert saved["model"] == "funnel" and isinstance(saved["trustworthy"], bool)
    run_sbc(tmp_path, 12, **arguments)
    assert (tmp_path / "wall_seconds.txt").read_text().split()[-1] == "0"  # the rerun ran nothing
    assert set(summarise(records)) == {("funnel", "ncp/nuts")}  # the control's 4 replications: no verdict
    cells = cell_ranks(records)
    ncp, control = cells[("funnel", "ncp/nuts")], cells[("funnel", "wrong_jacobian/nuts")]
    assert len(ncp["rank"]) == 12 and len(control["rank"]) == 4
    verdict = calibration(ncp["rank"], ncp["labels"], NUM_THINNED)
    assert verdict.passed, verdict
    assert calibration(control["rank"], control["labels"], NUM_THINNED).min_adjusted_p < 1e-3


@pytest.mark.slow
def test_sbc_passes_ncp_and_fails_the_wrong_jacobian_on_the_funnel_and_the_logistic_regression(tmp_path):
    """The full check in small: 30 replications of NCP-NUTS must be calibrated, the control must not."""
    settings = RunSettings(num_chains=4, num_warmup=300, num_samples=300)
    models = ["funnel", "hierarchical_logistic"]
    store = run_sbc(tmp_path, 30, models=models, labels=["ncp/nuts", "wrong_jacobian/nuts"],
                    settings=settings, serial=True, progress=False)
    verdicts = summarise(store.records())
    for model in models:
        assert verdicts[(model, "ncp/nuts")].passed
        assert not verdicts[(model, "wrong_jacobian/nuts")].passed

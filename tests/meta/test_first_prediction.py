"""Time to lambda on a first call, measured in a fresh process (`meta_eval.first_prediction`)."""

from __future__ import annotations

import pytest

from autoreparam.errors import AutoreparamError
from autoreparam.meta_eval.first_prediction import first_prediction
from autoreparam.meta_eval.report import _timing


def test_a_fresh_process_reports_each_phase_and_fills_the_persistent_cache(tmp_path):
    spec = {"kind": "funnel", "y": 0.0, "sigma": 5.0}
    cold = first_prediction(spec, tmp_path)
    assert set(cold) == {"load", "fit", "graph", "network", "first_total", "again"}
    assert cold["first_total"] == pytest.approx(cold["load"] + cold["fit"] + cold["graph"] + cold["network"])
    assert all(value > 0 for value in cold.values())  # the default network reads its probes at a fit
    assert cold["again"] < cold["first_total"]  # the repeat call compiles nothing
    assert any(tmp_path.rglob("*")), "the child wrote no compiled program to its persistent cache"


def test_a_failing_child_names_the_spec(tmp_path):
    with pytest.raises(AutoreparamError, match="no_such_model"):
        first_prediction({"kind": "zoo", "name": "no_such_model"}, tmp_path)


def _timing_result(warm):
    record = {"name": "m", "predict_first_seconds": 2.0, "predict_again_seconds": 0.03, "vip_time_to_lambda": 100.0,
              "meta": {"time_to_1000_ess": 5.0, "ess_per_1000_grads": 10.0},
              "vip": {"time_to_1000_ess": 105.0, "ess_per_1000_grads": 11.0}}
    if warm is not None:
        record["predict_first_warm_cache_seconds"] = warm
    return type("Results", (), {"timing": [record]})()


def test_the_timing_table_shows_the_warm_cache_first_call_where_it_was_measured():
    assert "| m | 2.00 | 1.25 | 0.03 |" in "\n".join(_timing(_timing_result(1.25)))
    assert "| m | 2.00 | n/a | 0.03 |" in "\n".join(_timing(_timing_result(None)))

"""META.md says where the evaluation ran: one machine in one line, or each part's machines when they differ
(model tasks on a lent machine's cores, timing on a quiet one)."""

from __future__ import annotations

import json

from autoreparam.meta_eval.collect import Results
from autoreparam.meta_eval.report import _runs_section

PROTOCOL = {"protocol": {"name": "tiny"}, "machine": "planner (x86_64, cpu, 2 CPUs, jax 0.10.2)"}


def _results(tmp_path, rows: dict) -> Results:
    (tmp_path / "protocol.json").write_text(json.dumps(PROTOCOL))
    for part, machines in rows.items():
        (tmp_path / part).mkdir(parents=True)
        for i, machine in enumerate(machines):
            row = {"name": f"model_{i}", **({} if machine is None else {"ran_on": machine})}
            (tmp_path / part / f"model_{i}.json").write_text(json.dumps(row))
    return Results.load(tmp_path)


def test_one_machine_is_named_once(tmp_path):
    results = _results(tmp_path, {"funnel": ["a (16 CPUs)"] * 2, "held_out": ["a (16 CPUs)"]})
    text = "\n".join(_runs_section([], results))
    assert "Evaluation on `a (16 CPUs)`, protocol `tiny`" in text and "Where the tasks ran" not in text


def test_parts_on_different_machines_are_each_named_with_their_counts(tmp_path):
    # Rows written before tasks recorded their machine count under protocol.json's machine.
    results = _results(tmp_path, {"funnel": ["a (16 CPUs)"] * 3, "timing": ["b (2 CPUs)", None]})
    assert results.machines() == {"funnel": {"a (16 CPUs)": 3},
                                  "timing": {"b (2 CPUs)": 1, PROTOCOL["machine"]: 1}}
    text = "\n".join(_runs_section([], results))
    assert "Where the tasks ran" in text and "Evaluation on" not in text
    assert "- funnel: 3 on `a (16 CPUs)`" in text
    assert f"- timing: 1 on `b (2 CPUs)`; 1 on `{PROTOCOL['machine']}`" in text

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


def test_the_report_links_only_the_figures_it_drew_and_refuses_runs_that_are_not_runs(tmp_path):
    # Found in review: an empty evaluation linked four figures it never drew (a stale one from a reused
    # --out showed as current), appended the reading of the shipped network's evaluation to another's,
    # and a --runs folder without a run was skipped without a word.
    import pytest

    from autoreparam.errors import ArgumentError
    from autoreparam.meta_eval.report import write_report

    (tmp_path / "results").mkdir()
    _results(tmp_path / "results", {})
    (tmp_path / "out" / "figures" / "meta").mkdir(parents=True)
    (tmp_path / "out" / "figures" / "meta" / "ess_ratio.png").write_bytes(b"stale")
    text = write_report(tmp_path / "results", tmp_path / "out").read_text()
    assert "figures/meta/" not in text and not (tmp_path / "out" / "figures" / "meta" / "ess_ratio.png").exists()
    assert "Reading these numbers" not in text  # the shipped evaluation's reading
    (tmp_path / "train" / "seed_0").mkdir(parents=True)
    (tmp_path / "train" / "seed_0" / "meta_gnn.json").write_text("{}")
    with pytest.raises(ArgumentError, match="no trained run there .*it holds the runs seed_0"):
        write_report(tmp_path / "results", tmp_path / "out", runs=[tmp_path / "train"])

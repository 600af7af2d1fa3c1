"""The per-second report: every phase's seconds per workflow, ratios to NumPyro's better NUTS, the plot.

Hand-made cells with known numbers (test fixtures, not benchmark results), a nutpie cell among them.
"""

from __future__ import annotations

import numpy as np
import pytest

from autoreparam.benchmark.report import write_report
from autoreparam.benchmark.report.collect import collect
from autoreparam.benchmark.report.phases import best_numpyro, phase_rows, phases_table, versus_best_numpyro
from autoreparam.benchmark.store import ResultStore

PROTOCOL = {"name": "synthetic", "models": ["toy"], "seeds": [0, 1]}

# workflow -> (kind, seconds per phase, ESS per second per seed); total = the sum unless given.
CELLS = {
    # "variational_compile" is a part of "compile", as infer.py records it: never summed nor shown.
    "auto": ("auto", {"compile": 1.0, "variational": 2.0, "pilots": 3.0, "sampling": 5.0, "variational_compile": 0.5,
                      "total": 10.0}, (20, 20)),
    "vip_nuts": ("vip_nuts", {"compile": 1.5, "variational": 6.0, "sampling": 4.0, "total": 12.0}, (10, 10)),
    "numpyro_nuts_cp": ("peer", {"compile": 2.0, "warmup": 3.0, "sampling": 3.0}, (5, 5)),
    "numpyro_nuts_ncp": ("peer", {"compile": 2.0, "warmup": 2.0, "sampling": 2.0}, (8, 12)),
    "numpyro_vip": ("peer", {"compile": 3.0, "variational": 4.0, "warmup": 2.0, "sampling": 1.0}, (6, 6)),
    "nutpie_cp": ("peer", {"compile": 9.0, "warmup": 0.25, "sampling": 0.25}, (40, 40)),
}


def _save(store: ResultStore, model: str, workflow: str, seed: int, seconds: dict, rate: float, **extra) -> None:
    kind = CELLS[workflow][0]
    total = seconds.get("total", sum(seconds.values()))
    key = f"{kind}__{model}__{workflow}__s{seed}"
    record = {"kind": kind, "model": model, "method": workflow, "seed": seed, "protocol": PROTOCOL,
              "seconds": {**seconds, "total": total}, "min_ess_bulk": rate * total, "ess_bulk_per_second": rate,
              "ess_per_1000_grads": {"mean": 6.0, "se": 1.0, "per_chain": [5.0, 7.0]}, **extra}
    store.save(key, record)


def _toy(store: ResultStore, workflows=tuple(CELLS)) -> None:
    for workflow in workflows:
        _, seconds, rates = CELLS[workflow]
        for seed, rate in enumerate(rates):
            extra = {"chosen": "auto -> vip"} if workflow == "auto" else {}
            if workflow == "nutpie_cp":
                extra["backend"] = "numba"
            # A phase only seed 1 of auto records (as a later library version might): shown, mean 0.25.
            phases = {**seconds, "gnn": 0.5} if workflow == "auto" and seed == 1 else seconds
            _save(store, "toy", workflow, seed, phases, rate, **extra)


def test_phase_rows_average_seeds_and_keep_unknown_phases(tmp_path):
    _toy(ResultStore(tmp_path))
    rows = phase_rows(collect(tmp_path), "toy")
    assert list(rows) == list(CELLS)  # ours first, then the peers, nutpie last
    auto = rows["auto"]
    assert auto.num_cells == 2
    assert auto.seconds == pytest.approx({"compile": 1.0, "variational": 2.0, "pilots": 3.0, "sampling": 5.0,
                                          "gnn": 0.25})
    assert auto.unattributed == pytest.approx(10.0 - 11.25)  # negative: the recorded phases overlap
    nutpie = rows["nutpie_cp"]
    assert nutpie.total == pytest.approx(9.5) and nutpie.unattributed == pytest.approx(0.0)
    assert nutpie.note == "numba backend" and nutpie.min_ess_bulk == pytest.approx(380.0)
    best = best_numpyro(rows)
    assert best.workflow == "numpyro_nuts_ncp" and best.per_second.mean == pytest.approx(10.0)
    assert best.per_second.se == pytest.approx(2.0)  # sd of (8, 12) over sqrt(2)
    r = versus_best_numpyro(nutpie, rows)
    assert r.mean == pytest.approx(4.0) and r.se == pytest.approx(4.0 * 0.2)  # delta method, nutpie's se 0


def test_phases_table_has_every_phase_column_and_the_ratio(tmp_path):
    _toy(ResultStore(tmp_path))
    text = phases_table(phase_rows(collect(tmp_path), "toy"))
    header = text.splitlines()[0]
    assert header == ("| Workflow | compile s | variational fit s | warm-up s | pilots s | sampling s | gnn s | "
                      "unattributed s | total s | min bulk ESS | ESS / s | ESS/s ÷ NumPyro NUTS NCP | note |")
    assert "| ours: auto | 1 | 2 | — | 3 | 5 | 0.25 | -1.25 | 10 | 200 | 20 ± 0 | 2 ± 0.4 | chose auto -> vip |" in text
    assert ("| nutpie, centred (PyMC port) | 9 | — | 0.25 | — | 0.25 | — | 0 | 9.5 | 380 | 40 ± 0 | 4 ± 0.8 | "
            "numba backend |") in text
    assert "| NumPyro NUTS, non-centred | 2 | — | 2 | — | 2 | — | 0 | 6 | 60 | 10 ± 2 | 1 ± 0.28 |" in text


def test_a_legacy_phase_name_is_shown_as_recorded_and_missing_numpyro_gives_no_ratio(tmp_path):
    store = ResultStore(tmp_path)
    _save(store, "toy", "numpyro_nuts_ncp", 0, {"warmup_with_compile": 7.0, "sampling": 1.0}, 5.0)
    _save(store, "toy", "nutpie_cp", 0, {"compile": 9.0, "warmup": 0.5, "sampling": 0.5}, 40.0)
    text = phases_table(phase_rows(collect(tmp_path), "toy"))
    assert "warmup_with_compile s" in text.splitlines()[0]
    assert "| NumPyro NUTS, non-centred | — | — | — | — | 1 | 7 | 0 | 8 | 40 | 5 | 1 |" in text
    only_nutpie = tmp_path / "nutpie_only"
    _save(ResultStore(only_nutpie), "toy", "nutpie_cp", 0, {"compile": 9.0, "sampling": 1.0}, 40.0)
    lone = phases_table(phase_rows(collect(only_nutpie), "toy"))
    assert "ESS/s ÷ best NumPyro NUTS" in lone and lone.splitlines()[-1].endswith("| 40 | n/a |  |")


def test_report_has_the_per_second_section_the_nutpie_peer_and_the_time_plot(tmp_path):
    _toy(ResultStore(tmp_path / "results"))
    reading = tmp_path / "reading.md"
    reading.write_text("reading\n")
    text = write_report(tmp_path / "results", tmp_path / "out", reading_path=reading).read_text()
    section = text.split("## Per second: where the time goes")[1].split("## Published numbers")[0]
    assert "### `toy`" in section and "| ours: auto | 1 | 2 |" in section
    assert "| nutpie NUTS, centred (PyMC port) | 6 ± 0.58 | 40 ± 0 | 9.5 |" in text  # the peers table
    figure = tmp_path / "out" / "figures" / "bench" / "time_phases.png"
    assert figure.stat().st_size > 1000
    assert "figures/bench/time_phases.png" in text


def test_time_plot_is_not_drawn_without_timed_cells_and_a_missing_nutpie_reads_not_run(tmp_path):
    from autoreparam.benchmark.report.time_figure import fig_time_phases

    store = ResultStore(tmp_path / "results")
    assert fig_time_phases(collect(tmp_path / "results"), tmp_path / "none.png") is None
    _toy(store, workflows=("auto", "numpyro_nuts_cp", "numpyro_nuts_ncp"))
    text = write_report(tmp_path / "results", tmp_path / "out", reading_path=tmp_path / "none.md").read_text()
    assert "| nutpie NUTS, centred (PyMC port) | not run |" in text
    rows = phase_rows(collect(tmp_path / "results"), "toy")
    assert list(rows) == ["auto", "numpyro_nuts_cp", "numpyro_nuts_ncp"]
    assert np.isclose(versus_best_numpyro(rows["auto"], rows).mean, 2.0)


def test_bench_skips_a_peer_whose_extra_is_missing_without_saving_a_cell(tmp_path, monkeypatch):
    from autoreparam.benchmark import runner
    from autoreparam.benchmark.protocol import PEERS, get_protocol

    seen = {}
    monkeypatch.setattr(runner, "missing_requirement", lambda p: "needs the extra" if p == "nutpie_cp" else None)
    monkeypatch.setattr(runner, "_run_all", lambda *args: seen.setdefault("peers", args[5]))
    store = runner.run_benchmark(get_protocol("tiny"), tmp_path, progress=False)
    assert "nutpie_cp" in PEERS and seen["peers"] == tuple(p for p in PEERS if p != "nutpie_cp")
    assert store.records() == []


def test_pilots_is_one_known_column_and_the_vi_compile_is_not_counted_twice(tmp_path):
    from autoreparam.benchmark.report.time_figure import COLOURS, SPARE, _colour

    store = ResultStore(tmp_path)
    # As infer records a VIP run: the VI compile inside "compile" and again as "variational_compile".
    seconds = {"compile": 3.0, "variational_compile": 2.0, "variational": 1.0, "pilots": 1.5, "sampling": 2.0,
               "total": 8.0}
    _save(store, "toy", "vip_nuts", 0, seconds, 10.0)
    row = phase_rows(collect(tmp_path), "toy")["vip_nuts"]
    assert "variational_compile" not in row.seconds
    assert row.unattributed == pytest.approx(0.5)  # 8 - (3 + 1 + 1.5 + 2); was -1.5 with the part summed
    header = phases_table({"vip_nuts": row}).splitlines()[0]
    assert header.count("pilots s") == 1 and "variational_compile" not in header
    assert _colour("pilots", []) == COLOURS["pilots"] and COLOURS["pilots"] not in SPARE

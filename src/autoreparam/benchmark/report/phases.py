"""Where the time goes: every phase's seconds per workflow and model, and ESS per second against NumPyro.

Issue 9's question: does choosing the parameterisation cost less time than it saves? Each timed
workflow's cells record ``seconds = {phase: s, ..., "total": s}``; this module reads whatever phases
are there. The known ones come first in a fixed order (``PHASES``); any other key (a phase the
library adds later, or an old cell's ``warmup_with_compile``) is shown under its own name, never
dropped; keys that time part of a phase (``PARTS``: the variational compile, inside "compile") are
not phases and are left out. ``unattributed`` is the measured total less the phases: time no phase claims (model
analysis, set-up, diagnostics), negative where recorded phases overlap (one includes another).
Everything is a mean over seeds; ESS per second is the smallest bulk ESS (ArviZ) over the total.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from autoreparam.benchmark.report.collect import Collected, number, seconds_total
from autoreparam.benchmark.report.oracle import MISSING, Estimate, pooled, ratio

# "pilots" as ``infer`` and ``auto`` record it (a "pilot" key here showed an empty column beside theirs).
PHASES = {"compile": "compile", "variational": "variational fit", "warmup": "warm-up", "pilots": "pilots",
          "sampling": "sampling"}
# Keys that time a part of another phase, not a phase: infer.py records the variational fits' compile
# time as "variational_compile" AND adds it into "compile", so summing both counted it twice (too
# small an unattributed rest, a stacked bar past the measured total). Never summed nor shown.
PARTS = frozenset({"variational_compile"})
UNATTRIBUTED = "unattributed"
# (workflow, kind of cell, method of cell): ours, then the peers.
TIMED = (
    ("auto", "auto", "auto"),
    ("vip_nuts", "vip_nuts", "vip_nuts"),
    ("numpyro_nuts_cp", "peer", "numpyro_nuts_cp"),
    ("numpyro_nuts_ncp", "peer", "numpyro_nuts_ncp"),
    ("numpyro_vip", "peer", "numpyro_vip"),
    ("nutpie_cp", "peer", "nutpie_cp"),
)
NUMPYRO_NUTS = ("numpyro_nuts_cp", "numpyro_nuts_ncp")
LABELS = {
    "auto": "ours: auto",
    "vip_nuts": "ours: VIP, then NUTS",
    "numpyro_nuts_cp": "NumPyro NUTS, centred",
    "numpyro_nuts_ncp": "NumPyro NUTS, non-centred",
    "numpyro_vip": "NumPyro VIP (SVI), then NUTS",
    "nutpie_cp": "nutpie, centred (PyMC port)",
}


@dataclass(frozen=True)
class PhaseRow:
    """One workflow on one model: mean seconds per phase over its cells (seeds), and its ESS per second."""

    workflow: str
    num_cells: int
    seconds: dict  # phase -> mean seconds over cells (a phase a cell lacks counts 0 for it)
    total: float
    min_ess_bulk: float
    per_second: Estimate
    note: str = ""

    @property
    def unattributed(self) -> float:
        rest = self.total - float(sum(self.seconds.values()))
        return 0.0 if abs(rest) < 1e-9 * max(1.0, abs(self.total)) else rest  # rounding, not time


def _phases(record: dict) -> dict:
    seconds = record.get("seconds") or {}
    return {k: number(v) for k, v in seconds.items() if k != "total" and k not in PARTS and not isinstance(v, dict)}


def ordered_phases(rows) -> list[str]:
    """Known phases in ``PHASES`` order, then every other phase any row records, sorted."""
    seen = {k for row in rows for k in row.seconds}
    return list(PHASES) + sorted(seen - set(PHASES))


def phase_rows(collected: Collected, model: str) -> dict[str, PhaseRow]:
    """Every timed workflow that has at least one finished cell on ``model``."""
    rows = {}
    for workflow, kind, method in TIMED:
        cells = collected.cells(kind, model, method)
        if not cells:
            continue
        per_cell = [_phases(r) for r in cells]
        keys = sorted({k for p in per_cell for k in p})
        seconds = {k: float(np.nanmean([p.get(k, 0.0) for p in per_cell])) for k in keys}
        rates = []
        for r in cells:
            rate = number(r.get("ess_bulk_per_second"))
            if math.isnan(rate):  # a cell that stored no rate: bulk ESS over its total
                total = seconds_total(r)
                rate = number(r.get("min_ess_bulk")) / total if total > 0 else math.nan
            rates.append(rate)
        backends = sorted({str(r["backend"]) for r in cells if r.get("backend")})
        note = f"{backends[0]} backend" if len(backends) == 1 else ""
        if kind == "auto":
            note = "chose " + ", ".join(sorted({str(r.get("chosen", "?")) for r in cells}))
        rows[workflow] = PhaseRow(
            workflow, len(cells), seconds, float(np.nanmean([seconds_total(r) for r in cells])),
            float(np.nanmean([number(r.get("min_ess_bulk")) for r in cells])), pooled(rates), note,
        )
    return rows


def best_numpyro(rows: dict[str, PhaseRow]) -> PhaseRow | None:
    """NumPyro's NUTS on the centred or the non-centred model, whichever has more ESS per second."""
    measured = [rows[w] for w in NUMPYRO_NUTS if w in rows and rows[w].per_second.ok]
    return max(measured, key=lambda row: row.per_second.mean) if measured else None


def versus_best_numpyro(row: PhaseRow, rows: dict[str, PhaseRow]) -> Estimate:
    best = best_numpyro(rows)
    return MISSING if best is None else ratio(row.per_second, best.per_second)


def _seconds(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3g}"


def phases_table(rows: dict[str, PhaseRow]) -> str:
    """One model's workflows: seconds per phase ("—": the workflow has no such phase), then ESS per second."""
    from autoreparam.benchmark.report.targets import fmt

    if not rows:
        return "No timed workflow on this model."
    phases = ordered_phases(rows.values())
    best = best_numpyro(rows)
    which = best.workflow.removeprefix("numpyro_nuts_").upper() if best else "best"
    versus = f"ESS/s ÷ {which} NumPyro NUTS" if not best else f"ESS/s ÷ NumPyro NUTS {which}"
    names = ["Workflow"] + [f"{PHASES.get(p, p)} s" for p in phases] + [
        f"{UNATTRIBUTED} s", "total s", "min bulk ESS", "ESS / s", versus, "note"]
    lines = ["| " + " | ".join(names) + " |", "|" + " --- |" * len(names)]
    for row in rows.values():
        cells = [LABELS.get(row.workflow, row.workflow)]
        cells += [_seconds(row.seconds[p]) if p in row.seconds else "—" for p in phases]
        cells += [_seconds(row.unattributed), _seconds(row.total), _seconds(row.min_ess_bulk),
                  fmt(row.per_second), fmt(versus_best_numpyro(row, rows)), row.note]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)

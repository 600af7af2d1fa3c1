"""RELIABILITY.md's fuzzing tables: the summary of the saved checks (`fuzz_section`) and its text (`fuzz_lines`).

Split from ``report.py``, which assembles the whole document (SBC, fuzzing, notes); every number here
is computed from the fuzzing records (`fuzz.summarise_fuzz`), several folders read as one by
`stores.read_fuzz_records`.
"""

from __future__ import annotations

from autoreparam.reliability.fuzz import invariance_check_name, summarise_fuzz
from autoreparam.reliability.prior import INVARIANCE_RUNS, pairs_of

# The order of the fuzzing checks in the text. ``invariance_own_seeds``: the invariance check with each
# run at a seed of its own (planned since 2026-12-02), counted apart from the runs at one seed.
INVARIANTS = ("identity", "scan_twin", "prior", "invariance", "invariance_own_seeds")
INVARIANCE_CHECKS = ("invariance", "invariance_own_seeds")


def invariance_tables(check: str) -> tuple[str, str]:
    """The summary's per-run and per-pair tables of one invariance check."""
    return f"{check}_runs", f"{check}_pairs"


def fmt_p(p: float | None) -> str:
    """A p-value as the tables print it (None: a non-finite value, which the summary's JSON stores as null)."""
    if p is None:
        return "n/a"
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.0e}"


def fuzz_section(records: list[dict]) -> dict:
    """The fuzzing part of the summary (counts, failures, errors, largest identity errors), from the
    saved checks; the text is `fuzz_lines`."""
    summary = summarise_fuzz(records)
    worst = {}
    for rec in records:
        for r in rec.get("results", []):
            for check, err in (r.get("max_relative_error") or {}).items():
                if err is not None:
                    worst[check] = max(worst.get(check, 0.0), err)
    # In program order within each invariant (several folders are read one after another).
    failures = [(kind, r) for kind in INVARIANTS if kind in summary
                for r in sorted(summary[kind]["failures"], key=lambda r: (r.get("program", -1), r.get("method") or ""))]
    counts = {k: {"programs": v["programs"], "checks": v["runs"], "failed": len(v["failures"]),
                  "silent": len(v.get("silent_failures", v["failures"])), "errors": len(v["errors"]),
                  "families": v["families"]}
              for k, v in summary.items()}
    return {"counts": counts, "max_relative_error": worst, **_per_cell(records),
            "failures": [{"invariant": k, **{f: r.get(f) for f in ("program", "family", "method", "failed",
                                                                   "worst", "min_adjusted_p", "trustworthy")}}
                         for k, r in failures],
            "errors": [{"invariant": kind, "program": r.get("program"), "family": r.get("family"),
                        "error": r["error"][:200]} for kind in summary for r in summary[kind]["errors"]]}


def _per_cell(records: list[dict]) -> dict:
    """The prior check per method/kernel and the invariance check per run and per pair of runs: how
    many checks, how many failed, and how many of those no diagnostic flagged (a pair is silent when
    both its runs were trusted)."""
    cells, tables = {}, {name: {} for check in INVARIANCE_CHECKS for name in invariance_tables(check)}
    for r in records:
        if r.get("kind") == "prior":
            c = cells.setdefault(r["method"], {"programs": 0, "failed": 0, "silent": 0, "errors": 0, "flagged_runs": 0})
            c["programs"] += 1
            if r["status"] != "ok":
                c["errors"] += 1
                continue
            c["failed"] += bool(r["failed"])
            c["silent"] += bool(r["failed"] and r["trustworthy"])
            c["flagged_runs"] += not r["trustworthy"]
        elif r.get("kind") == "invariance" and r["status"] == "ok":
            runs, pairs = (tables[name] for name in invariance_tables(invariance_check_name(r)))
            for label, run in r["runs"].items():
                row = runs.setdefault(label, {"runs": 0, "trusted": 0})
                row["runs"] += 1
                row["trusted"] += bool(run["trustworthy"])
            for name, pair in r.get("pairs", {}).items():
                row = pairs.setdefault(name, {"checks": 0, "failed": 0, "both_trusted": 0, "failed_both_trusted": 0})
                row["checks"] += 1
                row["failed"] += pair["failed"]
                row["both_trusted"] += pair["both_trustworthy"]
                row["failed_both_trusted"] += pair["failed"] and pair["both_trustworthy"]
    # The own-seeds tables only where such checks ran (summaries written before it have none).
    return {"prior_cells": cells, **{k: v for k, v in tables.items() if v or not k.startswith("invariance_own")}}


def _per_cell_lines(fuzz_json: dict) -> list[str]:
    """The per-method and per-pair tables (summaries written before they existed have none)."""
    lines = []
    if fuzz_json.get("prior_cells"):
        lines += ["", "Prior check per method and kernel ('flagged': runs `infer` itself flagged, failed or not):", "",
                  "| method/kernel | programs | failed | of which silent | runs flagged | errors |", "|---|---|---|---|---|---|"]
        lines += [f"| {m} | {c['programs']} | {c['failed']} | {c['silent']} | {c['flagged_runs']} | {c['errors']} |"
                  for m, c in sorted(fuzz_json["prior_cells"].items())]
    for check, seeds in zip(INVARIANCE_CHECKS, ("every run at the program's seed", "each run at a seed of its own")):
        run_table, pair_table = invariance_tables(check)
        if not fuzz_json.get(pair_table):
            continue
        # In the check's order (a summary read back from JSON has its keys sorted).
        runs = _ordered(fuzz_json.get(run_table, {}), INVARIANCE_RUNS)
        pair_rows = _ordered(fuzz_json[pair_table], [f"{a} vs {b}" for a, b in pairs_of(INVARIANCE_RUNS)])
        lines += ["", f"Check `{check}` ({seeds}) per pair of runs ('both trusted': neither run flagged by `infer`; "
                  "a pair that fails with both trusted is a silent failure). Runs trusted: " +
                  ", ".join(f"{k} {v['trusted']} of {v['runs']}" for k, v in runs.items()) + ".", "",
                  "| pair | checks | failed | both trusted | failed with both trusted |", "|---|---|---|---|---|"]
        lines += [f"| {name} | {p['checks']} | {p['failed']} | {p['both_trusted']} | {p['failed_both_trusted']} |"
                  for name, p in pair_rows.items()]
    return lines


def _ordered(mapping: dict, order) -> dict:
    return {**{k: mapping[k] for k in order if k in mapping}, **{k: v for k, v in mapping.items() if k not in order}}


def in_order(counts: dict) -> list[tuple[str, dict]]:
    """The invariants' counts in the text's order (a summary read back from JSON has its keys sorted)."""
    return [(k, counts[k]) for k in INVARIANTS if k in counts] + [(k, v) for k, v in counts.items() if k not in INVARIANTS]


def fuzz_lines(fuzz_json: dict) -> list[str]:
    """The fuzzing tables, from the summary alone."""
    lines = ["", "| invariant | programs | checks | failed | of which silent | errors | families |",
             "|---|---|---|---|---|---|---|"]
    for name, part in in_order(fuzz_json["counts"]):
        lines.append(f"| {name} | {part['programs']} | {part['checks']} | {part['failed']} | {part['silent']} | "
                     f"{part['errors']} | {', '.join(part.get('families', []))} |")
    lines += ["", "Largest relative error of each identity over all programs and points (float64): " +
              ", ".join(f"{k} {v:.1e}" for k, v in sorted(fuzz_json["max_relative_error"].items())) +
              ". `round_trip_u` (u -> v -> u) is "
              "recorded, not tested: along a chain the paper's map multiplies earlier terms by 1 - a s^(1-b) per step, "
              "so recovering u cancels digits when that factor is far from 1 (`identity.py`); the tested round trip "
              "is v -> u -> v."]
    lines += _per_cell_lines(fuzz_json)
    if fuzz_json["failures"]:
        lines += ["", "| invariant | program | family | method | what failed | trustworthy by its diagnostics |",
                  "|---|---|---|---|---|---|"]
        for r in fuzz_json["failures"]:
            what = (", ".join(r["failed"]) if r["invariant"] in ("identity", "scan_twin")
                    else f"{r['worst']} (Holm p {fmt_p(r['min_adjusted_p'])})")
            trusted = "" if r.get("trustworthy") is None else r["trustworthy"]
            lines.append(f"| {r['invariant']} | {r['program']} | {r['family']} | {r.get('method') or ''} | {what} | "
                         f"{trusted} |")
    if fuzz_json.get("errors"):
        lines += ["", "Errors (program rejected or a run raised):", ""]
        lines += [f"- {r['invariant']} program {r['program']} ({r['family']}): {r['error']}" for r in fuzz_json["errors"]]
    return lines

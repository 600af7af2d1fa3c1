"""The invariance check at seeds of its own runs against the committed check at one seed, program by program.

    python benchmarks/invariance_own_seeds_compare.py --records results/inv_own_seeds \
        --out benchmarks/results/invariance_own_seeds_compare.json

The committed summary (`benchmarks/results/reliability_summary.json`) keeps the 810-program invariance
check whose four runs (CP, NCP, a random centring, `auto`) shared the program's seed, as counts and
its list of failed programs; its per-program records are not committed. A pass planned since
2026-12-02 (`autoreparam fuzz`, ``run_seeds: own``) gives each run a seed of its own, CP keeping the
program's, so CP's run is the same run as before. Its programs are the first programs of the same
corpus order (`reliability.fuzz.mcmc_programs`), all inside the old check's 810, so each program
has both verdicts: this counts the four combinations of failed / passed, the failures that no run's
diagnostics flagged (silent), and names the programs whose verdict changed. Writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from autoreparam.benchmark.store import ResultStore
from autoreparam.reliability.fuzz import OWN_SEEDS

SUMMARY = Path("benchmarks/results/reliability_summary.json")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", required=True, help="the --out folder of the own-seeds invariance pass")
    parser.add_argument("--out", default="benchmarks/results/invariance_own_seeds_compare.json")
    args = parser.parse_args(argv)
    summary = json.loads(SUMMARY.read_text())["fuzz"]
    old_programs = summary["counts"]["invariance"]["programs"]
    old_failed = {r["program"] for r in summary["failures"] if r["invariant"] == "invariance"}
    records = [r for r in ResultStore(args.records).records() if r.get("kind") == "invariance"]
    if any(r.get("run_seeds") != OWN_SEEDS for r in records):
        raise SystemExit(f"{args.records} holds invariance checks whose runs shared a seed: not this comparison's")
    ok = sorted((r for r in records if r["status"] == "ok"), key=lambda r: r["program"])
    cells = {"failed before, failed now": [], "failed before, passed now": [], "passed before, failed now": [],
             "passed before, passed now": []}
    for r in ok:
        key = f"{'failed' if r['program'] in old_failed else 'passed'} before, {'failed' if r['failed'] else 'passed'} now"
        cells[key].append(r["program"])
    changed = [{"program": r["program"], "family": r["family"], "failed_now": r["failed"], "worst_now": r["worst"],
                "min_adjusted_p_now": r["min_adjusted_p"], "silent_now": bool(r["failed"] and r["trustworthy"]),
                "runs_trusted_now": {k: v["trustworthy"] for k, v in r["runs"].items()}}
               for r in ok if (r["program"] in old_failed) != bool(r["failed"])]
    out = {
        "command": " ".join(["python benchmarks/invariance_own_seeds_compare.py", *(argv or sys.argv[1:])]),
        "old_check": {"programs": old_programs, "failed": len(old_failed)},
        "programs": len(ok), "errors": len(records) - len(ok),
        "program_range": [ok[0]["program"], ok[-1]["program"]] if ok else None,
        "failed_now": sum(bool(r["failed"]) for r in ok),
        "silent_now": [r["program"] for r in ok if r["failed"] and r["trustworthy"]],
        "failed_before_among_these": sum(r["program"] in old_failed for r in ok),
        "counts": {k: len(v) for k, v in cells.items()}, "programs_by_cell": cells, "changed": changed,
    }
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: out[k] for k in ("programs", "failed_now", "failed_before_among_these", "silent_now", "counts")},
                     indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

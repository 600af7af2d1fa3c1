"""A prior-check store beside the failures the committed reliability summary lists, on the same cells.

    python benchmarks/fuzz_prior_compare.py results/fuzz_meta_fit \
        --out benchmarks/results/fuzz_meta_fit_summary.json

The full fuzzing store (`results/fuzz`) is not in every checkout, but its failures are in
`benchmarks/results/reliability_summary.json`. A rerun of some method/kernel cells on the same
programs (same seeds: a check's seed depends on its kind, program and method only) is compared with
them here: per cell, the programs run, the failures (and silent ones) now, and the failures the
summary lists for those programs and that cell.
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

from autoreparam.benchmark.store import ResultStore
from autoreparam.reliability.stores import commands_of

SUMMARY = Path("benchmarks/results/reliability_summary.json")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--summary", default=str(SUMMARY))
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    records = [r for r in ResultStore(args.store).records() if r.get("kind") == "prior"]
    before = [f for f in json.loads(Path(args.summary).read_text())["fuzz"]["failures"] if f["invariant"] == "prior"]
    cells = collections.defaultdict(list)
    for r in records:
        cells[r["method"]].append(r)
    out = {"store": args.store, "commands": commands_of(Path(args.store)), "cells": {}}
    for method, rows in sorted(cells.items()):
        programs = {r["program"] for r in rows}
        ok = [r for r in rows if r["status"] == "ok"]
        failed = [r for r in ok if r["failed"]]
        earlier = [f for f in before if f["method"] == method and f["program"] in programs]
        out["cells"][method] = {
            "programs": len(programs), "errors": len(rows) - len(ok), "flagged_by_infer": sum(not r["trustworthy"]
                                                                                              for r in ok),
            "failed": len(failed), "silent": sum(r["trustworthy"] for r in failed),
            "failed_programs": sorted(r["program"] for r in failed),
            "summary_failed": len(earlier), "summary_silent": sum(f["trustworthy"] for f in earlier),
            "summary_failed_programs": sorted(f["program"] for f in earlier),
        }
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out["cells"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

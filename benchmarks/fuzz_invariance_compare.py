"""Two invariance-check stores side by side on the programs both ran (two target acceptances; three
runs against four, with `auto`).

    python benchmarks/fuzz_invariance_compare.py results/fuzz_invariance results/fuzz_invariance_ta95 \
        --out benchmarks/results/fuzz_invariance_ta95_summary.json
    python benchmarks/fuzz_invariance_compare.py results/fuzz_invariance_final \
        --out benchmarks/results/fuzz_invariance_final_summary.json

Per store, over the shared programs: failures and silent ones, runs `infer` trusted, runs without a
divergence, pairs of runs both trusted (of every pair, and of the three fixed centrings' pairs
alone) and how many of those disagreed, programs whose runs were all trusted, and the failing pairs. A check's seed depends only on the program, so the two
stores ran the same chains' seeds in each parameterisation; only their settings differ (recorded).
Given one store, its own counts. With `auto` among the runs: the programs where `auto` was flagged
while a fixed centring's run was trusted.
Records written before the per-pair verdicts existed (ab78106) get their pairs' trust from their
runs; a disagreement is then known only for the check as a whole.
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

from autoreparam.benchmark.store import ResultStore
from autoreparam.reliability.prior import INVARIANCE_PAIRS
from autoreparam.reliability.stores import commands_of

FIXED = ("cp", "ncp", "random")


def _stats(records: list[dict]) -> dict:
    c = collections.Counter()
    failing_pairs = collections.Counter()
    auto_flagged_fixed_trusted = []  # programs where auto was flagged and a fixed centring's run trusted
    for r in records:
        if r["status"] != "ok":
            c["errors"] += 1
            continue
        runs = r["runs"]
        c["programs"] += 1
        c["failed"] += r["failed"]
        c["silent"] += bool(r["failed"] and r["trustworthy"])
        c["runs"] += len(runs)
        c["runs_trusted"] += sum(v["trustworthy"] for v in runs.values())
        c["runs_without_divergence"] += sum(v["divergences"] == 0 for v in runs.values())
        # Every pair the check compared (three before `auto` joined, six since), and the fixed
        # centrings' three alone, so that stores of three and of four runs compare like with like.
        every = [(a, b) for a in runs for b in runs if a < b] if "pairs" not in r else \
            [tuple(name.split(" vs ")) for name in r["pairs"]]
        for prefix, pairs in (("", every), ("fixed_", INVARIANCE_PAIRS)):
            trusted = [runs[a]["trustworthy"] and runs[b]["trustworthy"] for a, b in pairs]
            c[f"{prefix}pairs_both_trusted"] += sum(trusted)
            c[f"programs_with_a_trusted_{prefix}pair"] += any(trusted)
        c["programs_all_runs_trusted"] += all(v["trustworthy"] for v in runs.values())
        if "auto" in runs and not runs["auto"]["trustworthy"] and any(runs[k]["trustworthy"] for k in FIXED):
            auto_flagged_fixed_trusted.append(r["program"])
        for name, pair in r.get("pairs", {}).items():
            failing_pairs[name] += pair["failed"]
            c["pairs_both_trusted_failed"] += pair["failed"] and pair["both_trustworthy"]
    return {**dict(c), "failing_pairs": dict(failing_pairs),
            "auto_flagged_fixed_trusted": len(auto_flagged_fixed_trusted),
            "auto_flagged_fixed_trusted_programs": auto_flagged_fixed_trusted}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", help="one store (its own counts) or two (on the programs both ran)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    by_store = [{r["program"]: r for r in ResultStore(s).records() if r.get("kind") == "invariance"}
                for s in args.stores]
    shared = sorted(set.intersection(*(set(records) for records in by_store)))
    out = {"programs": len(shared), "program_range": [shared[0], shared[-1]] if shared else [],
           "families": dict(collections.Counter(by_store[-1][i]["family"] for i in shared)), "stores": {}}
    for store, records in zip(args.stores, by_store):
        chosen = [records[i] for i in shared]
        out["stores"][store] = {"settings": chosen[0].get("settings") if chosen else None,
                                "commands": commands_of(Path(store)),
                                **_stats(chosen)}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

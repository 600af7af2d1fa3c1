"""Do SBC replications run on another machine agree with this one's? Rerun some here and compare ranks.

    python benchmarks/sbc_machine_check.py --store results/sbc --model eight_schools \
        --methods ncp/nuts,auto/nuts --first 67 --count 15 > benchmarks/results/sbc_machine_check.json

Each replication's (theta, y) is fixed by its seed, so a rerun here must have the same truth, and its
rank of every element should differ from the stored one by Monte Carlo noise only. Prints JSON: per
replication and method the element ranks here and there, and over all of them the correlation and
mean absolute difference of ranks (out of 99), and where the stored results ran (`ran_on`).
"""

from __future__ import annotations

import argparse
import json
import platform

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="results/sbc")
    parser.add_argument("--model", default="eight_schools")
    parser.add_argument("--methods", default="ncp/nuts,auto/nuts")
    parser.add_argument("--first", type=int, default=67)
    parser.add_argument("--count", type=int, default=15)
    args = parser.parse_args(argv)

    import jax

    from autoreparam.benchmark.store import ResultStore
    from autoreparam.reliability.sbc import plan_tasks, run_replication

    store = ResultStore(args.store)
    tasks = [t for t in plan_tasks(args.first + args.count, models=[args.model], labels=args.methods.split(","))
             if t["replication"] >= args.first and store.done(t["key"])]
    rows, here, there = [], [], []
    for task in tasks:
        stored = json.loads((store.root / "cells" / f"{task['key']}.json").read_text())
        rerun = run_replication(task)
        if not np.allclose(rerun["truth"], stored["truth"]):
            raise SystemExit(f"{task['key']}: the rerun drew another (theta, y); the seeds are not reproducible")
        rows.append({"key": task["key"], "labels": rerun["labels"], "rank_here": list(map(int, rerun["rank"])),
                     "rank_stored": list(map(int, stored["rank"])), "stored_ran_on": stored.get("ran_on", "this store's machine")})
        here += rows[-1]["rank_here"]
        there += rows[-1]["rank_stored"]
    here, there = np.asarray(here, float), np.asarray(there, float)
    print(json.dumps({"here": f"{platform.node()}, Python {platform.python_version()}, jax {jax.__version__}",
                      "replications": len(rows), "elements": int(here.size),
                      "rank_correlation": float(np.corrcoef(here, there)[0, 1]),
                      "mean_abs_rank_difference": float(np.mean(np.abs(here - there))), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

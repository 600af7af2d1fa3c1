"""Rerun a prior-check store's cells of one family with the code checked out now, beside the stored ones.

    python benchmarks/fuzz_prior_rerun.py results/prior_auto_1200 --family funnel \
        --rerun results/prior_auto_1200_funnel_rerun --num-cpus 2 \
        --out benchmarks/results/prior_auto_funnel_rerun.json

Each stored task (program, method, settings) runs again under its own key, at the seed the store's
run had (a check's seed depends on its kind, program and method only), into a store of its own;
so the difference is the code, not the draw. Resumable: a second call runs only what is missing.
The JSON lists, per program and in total, the divergent transitions and the failed and flagged
checks before (the stored cell) and after (the rerun).

Other methods on the same programs: ``--methods ncp/nuts,ihmc/hmc`` plans those cells for every
selected program (``--min-divergences N``: only programs whose stored cell diverged at least N
times) at the seeds `autoreparam fuzz` would give them. They have no stored cell to compare with, so
run the command twice, once under the old code (a ``git worktree`` of the older commit on
``PYTHONPATH``) and once under the new, and pass the old rerun store as ``--compare``; without it
the JSON reports the reruns alone (``before`` is null).

Without a store (a fresh checkout has none): ``--generate 1500 --methods ihmc/hmc`` plans the cells
for the family's programs among the first 1500 sampled programs of the corpus (`fuzz.mcmc_programs`,
corpus ``--seed``), exactly the tasks `autoreparam fuzz --mcmc-n 1500` would plan for them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from autoreparam.benchmark.store import ResultStore
from autoreparam.corpus import generate_program
from autoreparam.reliability.fuzz import MCMC_SETTINGS, plan_fuzz, run_fuzz_task
from autoreparam.reliability.methods import find_spec
from autoreparam.reliability.runner import run_tasks, worker_environment

TASK_FIELDS = ("key", "kind", "seed", "program", "method", "settings")


def _outcome(record: dict) -> dict:
    if record["status"] != "ok":
        return {"status": record["status"], "error": record.get("error")}
    return {"status": "ok", "divergences": record["divergences"], "failed": record["failed"],
            "flagged": not record["trustworthy"], "min_adjusted_p": record["min_adjusted_p"],
            "worst": record["worst"], "ran_as": record.get("ran_as")}


def _totals(outcomes: list[dict]) -> dict:
    ok = [o for o in outcomes if o["status"] == "ok"]
    return {"programs": len(outcomes), "errors": len(outcomes) - len(ok),
            "divergences": sum(o["divergences"] for o in ok),
            "with_divergences": sum(o["divergences"] > 0 for o in ok),
            "failed": sum(o["failed"] for o in ok), "flagged": sum(o["flagged"] for o in ok),
            "silent_failures": sum(o["failed"] and not o["flagged"] for o in ok)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", nargs="?", help="the prior-check store to rerun (or --generate)")
    parser.add_argument("--generate", type=int, help="plan from the first N sampled corpus programs instead of a store")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed, with --generate")
    parser.add_argument("--family", required=True, help="rerun the cells of this generated family")
    parser.add_argument("--rerun", required=True, help="store the reruns here (resumable)")
    parser.add_argument("--methods", help="comma-separated method/kernel cells to plan instead of the stored ones")
    parser.add_argument("--min-divergences", type=int, default=0,
                        help="only programs whose stored cell had at least this many divergent transitions")
    parser.add_argument("--compare", help="compare with this rerun store instead of the stored cells")
    parser.add_argument("--num-cpus", type=int, default=1)
    parser.add_argument("--out", required=True, help="JSON report")
    args = parser.parse_args(argv)
    if (args.store is None) == (args.generate is None):
        parser.error("give exactly one of a store and --generate N")
    if args.generate is not None and not args.methods:
        parser.error("--generate plans new cells: name them with --methods")
    if args.generate is not None and args.min_divergences:
        parser.error("--min-divergences selects by a stored cell's divergences: it needs a store, not --generate")
    if args.generate is not None:
        chosen = [task for task in plan_fuzz(0, args.seed, args.generate, chunk=1, settings=MCMC_SETTINGS,
                                             methods=args.methods.split(",")[:1], invariance=False)
                  if generate_program(task["program"], args.seed)[1].family == args.family]
    else:
        before = {r["key"]: r for r in ResultStore(args.store).records()
                  if r.get("kind") == "prior" and r.get("family") == args.family}
        chosen = [before[key] for key in sorted(before) if before[key].get("divergences", 0) >= args.min_divergences]
    tasks = [{field: record[field] for field in TASK_FIELDS} for record in chosen]
    if args.methods:
        labels = [find_spec(label).label for label in args.methods.split(",")]
        tasks = [{**task, "method": label, "key": f"prior__{task['seed']}__{task['program']:06d}__{label.replace('/', '-')}"}
                 for task in tasks for label in labels]
    if args.compare:
        before = {r["key"]: r for r in ResultStore(args.compare).records()}
    elif args.methods:  # planned cells have no stored one: report the reruns alone
        before = {}
    else:
        before = {record["key"]: record for record in chosen}
    rerun = ResultStore(args.rerun)
    run_tasks(tasks, run_fuzz_task, rerun, num_cpus=args.num_cpus, env=worker_environment(Path(args.rerun) / "jax_cache"),
              desc=f"rerun: {args.family}", max_calls=10)
    planned = {task["key"] for task in tasks}
    after = {r["key"]: r for r in rerun.records() if r["key"] in planned}
    keys = [key for key in sorted(after) if key in before or not before]
    rows = [{"program": after[k]["program"], "method": after[k]["method"],
             "before": _outcome(before[k]) if before else None, "after": _outcome(after[k])} for k in keys]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    report = {"store": args.store, "generate": args.generate, "seed": args.seed if args.generate is not None else None, "rerun": args.rerun, "family": args.family, "rerun_at_commit": commit,
              "methods": args.methods, "min_divergences": args.min_divergences, "compare": args.compare,
              "before": _totals([r["before"] for r in rows]) if before else None,
              "after": _totals([r["after"] for r in rows]),
              "changed_outcome": [r for r in rows if before and r["before"].get("failed") != r["after"].get("failed")],
              "programs": rows}
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({"before": report["before"], "after": report["after"]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

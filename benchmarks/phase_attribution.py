"""Where `auto`'s seconds go that no phase claims: first and repeat calls, per zoo model.

    python benchmarks/phase_attribution.py --out benchmarks/results/phase_attribution/LABEL.jsonl \
        [--models eight_schools,radon_mn] [--seeds 0,1]

Issue 9 asks that every phase be reported. ``result.timing`` splits a call into phases; what the
wall clock around ``ar.infer`` measures beyond their sum is "unattributed" (BENCHMARKS.md's column of
that name). Each model runs in a fresh process (``--one`` below), with the persistent compilation
cache off, calling ``infer(method="auto")`` once per seed: the first seed's call compiles everything,
the next ones compile nothing. One JSON line per call: the wall seconds, every phase, their sum and
the rest, and the smallest bulk ESS (so that a change of speed is not a change of draws).

To compare two checkouts, run the script from each (``PYTHONPATH=<checkout>/src``) into two files
and read them with ``--compare BEFORE.jsonl AFTER.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

MODELS = ("eight_schools", "radon_mn", "radon_pa", "radon_az", "radon_in", "radon_ma", "radon_mo", "radon_nd",
          "german_credit", "electric", "election88")
NOT_PHASES = ("total", "variational_compile")  # the call's own measure, and a part of "compile"


def one(model: str, seeds: list[int]) -> None:
    """Run ``auto`` on one model for each seed in this process; print one JSON line per call."""
    os.environ["AUTOREPARAM_COMPILATION_CACHE"] = "0"
    warnings.filterwarnings("ignore")
    import autoreparam as ar
    from autoreparam.models import load

    problem = load(model)
    for call, seed in enumerate(seeds):
        started = time.perf_counter()
        result = ar.infer(problem.model, *problem.args, method="auto", num_chains=4, num_warmup=1000,
                          num_samples=1000, seed=seed, progress=False, **problem.kwargs)
        wall = time.perf_counter() - started
        phases = {k: v for k, v in result.timing.items() if k not in NOT_PHASES}
        print(json.dumps({"model": model, "seed": seed, "call": call + 1, "wall": wall, "phases": phases,
                          "phase_sum": sum(phases.values()), "unattributed": wall - sum(phases.values()),
                          "min_ess_bulk": float(result.diagnostics.standard.min_ess_bulk)}), flush=True)


def compare(before: str, after: str) -> str:
    """A Markdown table of two runs' calls side by side: wall seconds and unattributed seconds."""
    def read(path):
        with open(path) as f:
            return {(r["model"], r["seed"]): r for r in map(json.loads, f) if r}

    a, b = read(before), read(after)
    lines = ["| model | call | wall s before | wall s after | after / before | unattributed s before | "
             "unattributed s after | min bulk ESS before | after |", "|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        lines.append(f"| {key[0]} | {x['call']} | {x['wall']:.2f} | {y['wall']:.2f} | {y['wall'] / x['wall']:.2f} | "
                     f"{x['unattributed']:.2f} | {y['unattributed']:.2f} | {x['min_ess_bulk']:.0f} | "
                     f"{y['min_ess_bulk']:.0f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--out", default=None, help="JSON lines, appended")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # the per-model child process
    parser.add_argument("--compare", nargs=2, default=None, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.compare:
        print(compare(*args.compare))
        return 0
    if args.one:
        one(args.one, seeds)
        return 0
    if args.out is None:
        parser.error("--out is required")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    for model in args.models.split(","):
        done = subprocess.run([sys.executable, __file__, "--one", model, "--seeds", args.seeds],
                              capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"{model} failed:\n{done.stderr[-2000:]}")
        with open(args.out, "a") as f:
            f.write(done.stdout)
        print(done.stdout, end="", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

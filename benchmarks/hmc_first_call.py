"""A fresh process's first and second ``infer`` call with fixed-L HMC: compilation by program.

    python benchmarks/hmc_first_call.py --label after --out benchmarks/results/hmc_first_call/after.json
    python benchmarks/hmc_first_call.py --src /tmp/before/src --label before --out .../before.json

``method="ncp"`` and ``"ihmc"`` (HMC, the oracle's pilots over the paper's L grid, then the final
run) and ``"vip"`` on eight schools and radon MN, 4 chains x 1000 warm-up + 1000 draws, seed 0 then
seed 1, in one fresh process per cell (persistent compilation cache off). Every compiled program is
timed where ``mcmc.programs.PROGRAMS`` compiles it, so the JSON says which programs a call compiled
and for how long, beside the call's phases (``result.timing``) and its wall seconds. ``--src`` runs
another checkout's code (a worktree's ``src``) under the same interpreter. Writes JSON and markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

CHILD = r"""
import json, sys, time, warnings
import jax
import autoreparam as ar
from autoreparam.mcmc import programs
from autoreparam.models import load
compiled = []
original = programs.ProgramCache.__call__
def timed(self, key, build, args):
    out, compile_seconds, run_seconds = original(self, key, build, args)
    if compile_seconds > 0:
        compiled.append([str(key[0]), round(compile_seconds, 3)])
    return out, compile_seconds, run_seconds
programs.ProgramCache.__call__ = timed
problem = load(sys.argv[1])
jax.jit(lambda x: x + 1)(1.0)  # JAX's backend is up, as after any earlier JAX work
calls = []
for seed in (0, 1):
    compiled.clear()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = ar.infer(problem.model, *problem.args, method=sys.argv[2], num_chains=4, num_warmup=1000,
                          num_samples=1000, seed=seed, progress=False, **problem.kwargs)
    calls.append({"seed": seed, "seconds": time.perf_counter() - start, "programs": list(compiled),
                  "phases": result.timing, "num_leapfrog": str(result.diagnostics.num_leapfrog)
                  if hasattr(result.diagnostics, "num_leapfrog") else None,
                  "draws_checksum": float(sum(float(abs(v).sum()) for v in result.samples.values()))})
print(json.dumps(calls))
"""


def run(src: str | None, model: str, method: str) -> list[dict]:
    env = {**os.environ, "AUTOREPARAM_COMPILATION_CACHE": "0", "JAX_PLATFORMS": "cpu"}
    if src:
        env["PYTHONPATH"] = str(Path(src).resolve())
    out = subprocess.run([sys.executable, "-c", CHILD, model, method], env=env, check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(cells: list[dict]) -> list[str]:
    lines = ["| model | method | first call s | sampler programs compiled (s) | second call s |", "|---|---|---|---|---|"]
    for model in dict.fromkeys(c["model"] for c in cells):
        for method in dict.fromkeys(c["method"] for c in cells):
            mine = [c for c in cells if c["model"] == model and c["method"] == method]
            first = np.median([c["calls"][0]["seconds"] for c in mine])
            second = np.median([c["calls"][1]["seconds"] for c in mine])
            sampler = [[p for p in c["calls"][0]["programs"] if p[0].startswith("hmc_")] for c in mine]
            count = int(np.median([len(s) for s in sampler]))
            seconds = np.median([sum(p[1] for p in s) for s in sampler])
            lines.append(f"| {model} | {method} | {first:.1f} | {count} ({seconds:.1f}) | {second:.1f} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="eight_schools,radon_mn")
    parser.add_argument("--methods", default="ncp,ihmc,vip")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--src", default=None, help="another checkout's src folder to run instead of this one")
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--out", default="benchmarks/results/hmc_first_call/after.json")
    args = parser.parse_args(argv)
    cells = []
    for repeat in range(args.repeats):
        for model in args.models.split(","):
            for method in args.methods.split(","):
                calls = run(args.src, model, method)
                cells.append({"model": model, "method": method, "repeat": repeat, "calls": calls})
                print(model, method, repeat, " ".join(f"{c['seconds']:.1f} s" for c in calls), flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"label": args.label, "command": " ".join(sys.argv), "cells": cells}, indent=1) + "\n")
    out.with_suffix(".md").write_text(f"{args.label}: medians of {args.repeats} fresh processes "
                                      f"(`{' '.join(sys.argv)}`).\n\n" + "\n".join(table(cells)) + "\n")
    print("\n".join(table(cells)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

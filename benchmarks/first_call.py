"""A fresh process's first ``infer`` call: how much of ArviZ's import the background load hides.

    python benchmarks/first_call.py --out benchmarks/results/first_call.json

ArviZ's import (numba compiles its ECDF helpers, matplotlib loads: about 1.5 s) used to run after
sampling, inside the first ``infer`` of every process, for the diagnostics. From 2026-11-27 09:00
``infer`` started it on a thread before compiling; since the diagnostics became
``diagnostics.rank_normalised`` (ArviZ's functions, vectorised), ``infer`` does not import ArviZ at
all, and "overlapped" below measures a call without it. For each model and
repeat, alternating, two fresh processes (persistent compilation cache off) run
``ar.infer(method="auto")`` (4 chains x 1000 + 1000, seed 0):

- ``overlapped``: as a user does; the import runs beside compilation;
- ``serial``: ``import arviz`` first, timed, then the call, as if the import were not overlapped.

Saving = (serial import + serial call) - overlapped call. Writes JSON and a markdown table.
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
import json, os, sys, time, warnings
os.environ["AUTOREPARAM_COMPILATION_CACHE"] = "0"
import jax
import autoreparam as ar
from autoreparam.models import load
problem = load(sys.argv[1])
jax.jit(lambda x: x + 1)(1.0)  # JAX's backend is up, as after any earlier JAX work
import_seconds = 0.0
if sys.argv[2] == "serial":
    start = time.perf_counter()
    from autoreparam.diagnostics.standard import _arviz
    _arviz()
    import_seconds = time.perf_counter() - start
start = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    result = ar.infer(problem.model, *problem.args, method="auto", num_chains=4, num_warmup=1000,
                      num_samples=1000, seed=0, progress=False, **problem.kwargs)
print(json.dumps({"import_seconds": import_seconds, "call_seconds": time.perf_counter() - start,
                  "phases": result.timing, "min_ess_bulk": float(result.diagnostics.standard.min_ess_bulk)}))
"""


def run(model: str, mode: str) -> dict:
    env = {**os.environ, "AUTOREPARAM_COMPILATION_CACHE": "0"}
    out = subprocess.run([sys.executable, "-c", CHILD, model, mode], env=env, check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="eight_schools,radon_mn,german_credit")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default="benchmarks/results/first_call.json")
    args = parser.parse_args(argv)
    cells = []
    for model in args.models.split(","):
        for repeat in range(args.repeats):
            for mode in ("overlapped", "serial") if repeat % 2 == 0 else ("serial", "overlapped"):
                cell = {"model": model, "repeat": repeat, "mode": mode, **run(model, mode)}
                cells.append(cell)
                print(model, repeat, mode, f"import {cell['import_seconds']:.2f} s, call {cell['call_seconds']:.2f} s",
                      flush=True)
    lines = ["| model | overlapped call s | serial: import s + call s | saving s |", "|---|---|---|---|"]
    for model in args.models.split(","):
        over = np.median([c["call_seconds"] for c in cells if c["model"] == model and c["mode"] == "overlapped"])
        imp = np.median([c["import_seconds"] for c in cells if c["model"] == model and c["mode"] == "serial"])
        call = np.median([c["call_seconds"] for c in cells if c["model"] == model and c["mode"] == "serial"])
        lines.append(f"| {model} | {over:.2f} | {imp:.2f} + {call:.2f} | {imp + call - over:.2f} |")
    table = "\n".join(lines) + "\n"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"cells": cells, "repeats": args.repeats}, indent=1))
    out.with_suffix(".md").write_text(f"Medians over {args.repeats} repeats (`benchmarks/first_call.py`).\n\n" + table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

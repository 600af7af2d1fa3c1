"""The starts of a first call's variational fits: mapped op by op, or in one compiled program.

    python benchmarks/start_vector.py --repeats 3 --out benchmarks/results/start_vector.json

Each fit of ``vi.fits.fit_targets`` starts from the initial values mapped into its parameterisation
(CP, NCP, the learned centring's start). Run op by op, the first such map of a process compiled every
primitive it met separately; `Coordinates.start_vector` runs it as one compiled program. Every cell is a
fresh process that does what ``infer`` does before it (the site analysis and the initial values, which
warm the same eager caches), then times the three maps, ``eager`` or ``compiled``, alternating by
repeat. The persistent compilation cache is off in the children. Writes JSON and a markdown table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fresh_process import run_fresh, write_report  # noqa: E402

CHILD = """
import json, sys, time, jax
import autoreparam as ar
from autoreparam.initial import initial_values
from autoreparam.models import load
from autoreparam.reparam.parameterisation import Parameterisation
name, mode = sys.argv[1], sys.argv[2]
p = load(name)
plan = ar.select_sites(ar.analyse_model(p.model, *p.args, **p.kwargs))
coords = ar.Coordinates(p.model, p.args, p.kwargs, plan)
init = initial_values(p.model, p.args, p.kwargs, coords.names)
targets = [Parameterisation.centred(plan), Parameterisation.non_centred(plan), Parameterisation.tied(plan, 0.5)]
start = time.perf_counter()
if mode == "eager":
    flats = [coords.ravel(coords.from_original(init, t)) for t in targets]
else:
    flats = [coords.start_vector(init, t) for t in targets]
jax.block_until_ready(flats)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""

MODELS = ("eight_schools", "radon_mn", "radon_pa", "german_credit", "electric", "election88")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    models = args.models.split(",")
    started = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())
    cells = []
    for repeat in range(args.repeats):
        for model in models:
            modes = ("eager", "compiled") if repeat % 2 == 0 else ("compiled", "eager")
            for mode in modes:
                seconds = run_fresh(CHILD, model, mode)["seconds"]
                cells.append({"model": model, "mode": mode, "repeat": repeat, "seconds": seconds})
                print(f"{model} {mode} {seconds:.3f} s", flush=True)
    lines = ["| model | op by op (s) | compiled (s) | saved (s) |", "|---|---|---|---|"]
    for model in models:
        med = {m: float(np.median([c["seconds"] for c in cells if c["model"] == model and c["mode"] == m]))
               for m in ("eager", "compiled")}
        lines.append(f"| {model} | {med['eager']:.2f} | {med['compiled']:.2f} | {med['eager'] - med['compiled']:.2f} |")
    write_report(args.out, started, args.repeats, cells, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

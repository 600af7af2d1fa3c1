"""Seconds of a prediction with the probes at the prior points and at a short fit, first and repeat call.

For each zoo model, in one process: ``predict(..., probes=p)`` twice for p in ("prior", "fit") with the
network trained at prior points (``meta_gnn``), passed explicitly (without a network,
``predict`` picks the network trained where it reads); the first call of each includes its compilation (the network's only on the very first
model), the repeat call runs compiled programs (`graph/probes.py`, `meta/fit_points.py` keep them).

    python benchmarks/meta_fit_timing.py --out benchmarks/results/meta_fit_points/timing.json

A measurement on whatever machine runs it; the JSON names it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path

import jax

from autoreparam.meta.predict import SHIPPED_PRIOR, default_network, predict
from autoreparam.meta_eval.protocol import ZOO
from autoreparam.models import load


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/meta_fit_points/timing.json")
    args = parser.parse_args(argv)
    rows = []
    for name in ZOO:
        problem = load(name)
        row = {"model": name}
        for probes in ("prior", "fit"):
            calls = [predict(problem.model, *problem.args, network=default_network(SHIPPED_PRIOR), probes=probes,
                             **problem.kwargs).seconds for _ in range(2)]
            row[probes] = {"first": calls[0], "repeat": calls[1]}
        rows.append(row)
        print(name, {p: (round(row[p]["first"]["total"], 3), round(row[p]["repeat"]["total"], 3)) for p in ("prior", "fit")},
              flush=True)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"machine": f"{platform.node()} ({platform.machine()}, {cpus} CPUs)",
                                          "jax": jax.__version__, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A fresh process's first ``predict_parameterisation``: the meta network's time to lambda as a user meets it.

    python benchmarks/predict_first_call.py --out benchmarks/results/predict_first_call.json
    python benchmarks/predict_first_call.py --src ../before/src --label before --out ...  # another checkout

Issue 11 asks for time to lambda <= 1% of per-model VIP's. A repeat call meets it; the first call of a
process pays the weights' loading, the graph's tracing and probes, and the network's compilation. For
each zoo model and repeat, fresh processes (JAX's backend already up, as after any JAX work) time:

- ``load``: reading the shipped weights (`meta.predict.default_network`);
- ``fit``, ``graph`` and ``network``: `meta.predict.predict`'s own split, compilation included (``fit``:
  the short fit the default network reads its probes at, 0 for a network read at the prior points);
- ``again``: a second prediction in the same process

(`autoreparam.meta_eval.first_prediction`, which the evaluation's timing tasks use too).

Two cache states per repeat, in this order: ``cold`` (an empty persistent compilation cache directory)
and ``warm`` (the same directory, now holding what the cold process wrote: the next session of a
user). ``--src`` runs the children on another checkout's ``src`` (PYTHONPATH), for a before/after
measurement in one run; ``--label`` names it in the JSON. Writes JSON and a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from autoreparam.meta_eval.first_prediction import first_prediction

ZOO = ("eight_schools", "radon_az", "radon_in", "radon_ma", "radon_mn", "radon_mo", "radon_nd", "radon_pa",
       "german_credit", "electric", "election88")


def run_child(model: str, cache_dir: str, src: str | None) -> dict:
    return first_prediction({"kind": "zoo", "name": model}, cache_dir, src=src)


def table(cells: list[dict], models: list[str]) -> str:
    lines = ["| model | cache | load s | fit s | graph s | network s | first call total s | again s |",
             "|---|---|---|---|---|---|---|---|"]
    for model in models:
        for cache in ("cold", "warm"):
            rows = [c for c in cells if c["model"] == model and c["cache"] == cache]
            if not rows:
                continue
            med = {k: float(np.median([r.get(k, 0.0) for r in rows]))
                   for k in ("load", "fit", "graph", "network", "first_total", "again")}
            lines.append(f"| {model} | {cache} | {med['load']:.2f} | {med['fit']:.2f} | {med['graph']:.2f} | "
                         f"{med['network']:.2f} | {med['first_total']:.2f} | {med['again']:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(ZOO))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--src", default=None, help="run the children on this checkout's src folder")
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--out", default="benchmarks/results/predict_first_call.json")
    args = parser.parse_args(argv)
    models = args.models.split(",")
    out = Path(args.out)
    cells = []
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    for repeat in range(args.repeats):
        for model in models:
            with tempfile.TemporaryDirectory(prefix="autoreparam-cache-") as cache_dir:
                for cache in ("cold", "warm"):
                    cell = {"model": model, "repeat": repeat, "cache": cache, **run_child(model, cache_dir, args.src)}
                    cells.append(cell)
                    print(f"{model} {repeat} {cache}: load {cell['load']:.2f} s, fit {cell.get('fit', 0.0):.2f} s, "
                          f"graph {cell['graph']:.2f} s, "
                          f"network {cell['network']:.2f} s, again {cell['again']:.3f} s", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"label": args.label, "src": args.src, "started": started, "machine": platform.platform(),
               "cpus": os.cpu_count(), "repeats": args.repeats, "cells": cells, "table": table(cells, models)}
    out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(f"# {args.label}: first prediction in a fresh process (medians of "
                                      f"{args.repeats})\n\n" + payload["table"], encoding="utf-8")
    print(payload["table"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

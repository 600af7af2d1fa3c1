"""Shared by the benchmarks that time a first call: run a snippet in a fresh process, write the report.

A first call's seconds (compilation included) are only honest in a process that has compiled nothing:
each cell runs ``python -c CHILD args...`` with the persistent compilation cache off and reads the JSON
its last line prints.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path


# The start of a child that times something on a zoo model: argv[1] names the model, argv[2] the variant.
ZOO_MODEL = """
import json, sys, time, jax, jax.numpy as jnp
import autoreparam as ar
from autoreparam.models import load
from autoreparam.reparam.parameterisation import Parameterisation
name, variant = sys.argv[1], sys.argv[2]
p = load(name)
plan = ar.select_sites(ar.analyse_model(p.model, *p.args, **p.kwargs))
coords = ar.Coordinates(p.model, p.args, p.kwargs, plan)
"""


def run_fresh(child: str, *argv: str, timeout: float = 600) -> dict:
    """The JSON object the last stdout line of ``python -c child argv...`` holds (persistent cache off)."""
    env = dict(os.environ, AUTOREPARAM_COMPILATION_CACHE="0", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", child, *argv], capture_output=True, text=True, env=env,
                         timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def write_report(path: Path, started: str, repeats: int, cells: list[dict], table: str) -> None:
    """The cells, the machine and the rendered table as JSON at ``path``; the table is printed too."""
    report = {"started": started, "machine": platform.platform(), "cpus": os.cpu_count(), "repeats": repeats,
              "cells": cells, "table": table}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    print(table)


def parse_args(doc: str, models: tuple, argv=None) -> argparse.Namespace:
    """``--models`` (comma-separated), ``--repeats`` and ``--out``, the options every such script takes."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--models", default=",".join(models))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.models = args.models.split(",")
    return args


def alternating_cells(child: str, models: list, variants: tuple, repeats: int) -> list[dict]:
    """One fresh process per (repeat, model, variant), the variants' order reversed every other repeat
    so that drift in the machine's load hits each alike; each cell is the child's JSON plus its names."""
    cells = []
    for repeat in range(repeats):
        for model in models:
            for variant in (variants if repeat % 2 == 0 else variants[::-1]):
                cell = {"model": model, "variant": variant, "repeat": repeat, **run_fresh(child, model, variant)}
                cells.append(cell)
                print(json.dumps(cell), flush=True)
    return cells

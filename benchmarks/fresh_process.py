"""Shared by the benchmarks that time a first call: run a snippet in a fresh process, write the report.

A first call's seconds (compilation included) are only honest in a process that has compiled nothing:
each cell runs ``python -c CHILD args...`` with the persistent compilation cache off and reads the JSON
its last line prints.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path


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

"""Does a cheaper XLA CPU backend compile pay on `auto`'s first call? Compile seconds against run seconds.

    python benchmarks/xla_opt_level.py --out benchmarks/results/xla_opt_level.json

On small models `auto`'s first call is mostly XLA compilation (radon MN: 3.0 s of 4.8 s; nutpie's
whole first call is 1.4 s). For each setting of ``XLA_FLAGS`` and each model, a fresh process runs
``benchmarks/wall_clock.py --workflows auto`` (first call cold, persistent cache off, then a second
call that compiles nothing), settings alternating per model so that drift in the machine's speed
hits both. Recorded per cell: the first and second calls' phases, smallest bulk ESS and the ESS per
second of the first call. Writes JSON, and a markdown table next to it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SETTINGS = {
    "default": "",
    "O0": "--xla_backend_optimization_level=0",
    "no_expensive_llvm": "--xla_llvm_disable_expensive_passes=true",
}


def run_cell(model: str, flags: str, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "XLA_FLAGS": flags, "AUTOREPARAM_COMPILATION_CACHE": "0"}
        subprocess.run([sys.executable, str(Path(__file__).with_name("wall_clock.py")), "--models", model,
                        "--seeds", str(seed), "--workflows", "auto", "--out", out],
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        first = json.loads((Path(out) / f"{model}__auto__s{seed}__call1.json").read_text())
        second = json.loads((Path(out) / f"{model}__auto__s{seed}__call2.json").read_text())
    return {"first": first["seconds"], "second": second["seconds"], "min_ess_bulk": first["min_ess_bulk"],
            "ess_per_second_first": first["min_ess_bulk"] / first["seconds"]["total"],
            "max_r_hat": first["max_r_hat"], "chosen": first["chosen"]}


def report(cells: list[dict]) -> str:
    lines = ["| model | setting | 1st call s | of which compile | 2nd call s | min bulk ESS | ESS/s (1st) | "
             "ESS/s ratio to default |", "|" + "---|" * 8]
    by_model = {}
    for c in cells:
        by_model.setdefault(c["model"], {})[c["setting"]] = c
    for model, settings in by_model.items():
        base = settings.get("default")
        for name in SETTINGS:
            if name not in settings:
                continue
            c = settings[name]
            ratio = c["ess_per_second_first"] / base["ess_per_second_first"] if base else float("nan")
            lines.append(f"| {model} | {name} | {c['first']['total']:.1f} | {c['first'].get('compile', 0):.1f} | "
                         f"{c['second']['total']:.1f} | {c['min_ess_bulk']:.0f} | {c['ess_per_second_first']:.0f} | "
                         f"{ratio:.2f}x |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="eight_schools,radon_az,radon_mn,electric,election88,german_credit")
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/xla_opt_level.json")
    args = parser.parse_args(argv)
    out = Path(args.out)
    cells = json.loads(out.read_text())["cells"] if out.exists() else []
    done = {(c["model"], c["setting"]) for c in cells}
    names = args.settings.split(",")
    for i, model in enumerate(args.models.split(",")):
        for name in names if i % 2 == 0 else names[::-1]:
            if (model, name) in done:
                continue
            cell = {"model": model, "setting": name, "xla_flags": SETTINGS[name], "seed": args.seed,
                    **run_cell(model, SETTINGS[name], args.seed)}
            cells.append(cell)
            print(model, name, f"first {cell['first']['total']:.1f} s (compile {cell['first'].get('compile', 0):.1f}),",
                  f"second {cell['second']['total']:.1f} s, ESS/s {cell['ess_per_second_first']:.0f}", flush=True)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"cells": cells}, indent=1))
    table = report(cells)
    out.with_suffix(".md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

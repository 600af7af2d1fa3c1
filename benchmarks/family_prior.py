"""Every family the rewriter centres, under every method: does each reproduce its prior?

    python benchmarks/family_prior.py --out results/family_prior --num-cpus 2 \
        --report benchmarks/results/family_prior.json

The generated corpus (`autoreparam.corpus`) writes normal, Student-t, half-normal and half-Cauchy
latents only, so the fuzzer's prior check never samples a rewritten Cauchy, Laplace, logistic,
Gumbel, log-normal or exponential latent. Here each of the ten families of `reparam.families` gets
one small program with no data, its location and log scale latent (as in a funnel,
``z ~ D(m, exp(s))``; scale families ``z ~ D(exp(s))``, the exponential by its rate ``exp(-s)``), and
`reliability.prior.check_prior` (Holm-corrected PIT tests against prior draws, family-wise alpha
0.001; 4 chains x 500 warm-up + 1000 draws) runs it under every method and kernel. A failure `infer` did not
flag is a silent one. Resumable: each cell is written to the store as it finishes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from dataclasses import asdict
from pathlib import Path

from autoreparam.benchmark.store import ResultStore
from autoreparam.reliability.fuzz import MCMC_SETTINGS, _guarded
from autoreparam.reliability.methods import RunSettings, find_spec, method_specs
from autoreparam.reliability.prior import check_prior
from autoreparam.reliability.runner import run_tasks, worker_environment
from autoreparam.reliability.sbc import stable_seed

LOCATED = {"normal": "normal(m, exp(s))", "student_t": "student_t(4, m, exp(s))", "cauchy": "cauchy(m, exp(s))",
           "laplace": "laplace(m, exp(s))", "logistic": "logistic(m, exp(s))", "gumbel": "gumbel(m, exp(s))",
           "lognormal": "lognormal(m, exp(s))"}
SCALED = {"half_normal": "half_normal(exp(s))", "half_cauchy": "half_cauchy(exp(s))",
          "exponential": "exponential(exp(-s))"}
FAMILIES = list(LOCATED) + list(SCALED)  # the plan's order: a cell's seed is drawn from its family's index here


def program_text(family: str) -> str:
    """Two draws of ``family`` whose scale (and location, if it has one) are latents."""
    located = family in LOCATED
    statement = LOCATED.get(family) or SCALED[family]
    lines = [f"# every-family prior check: {family}"] + (["m ~ normal(0, 1)"] if located else [])
    lines += ["s ~ normal(0, 1)", f"z1 ~ {statement}", f"z2 ~ {statement}"]
    return "\n".join(lines) + "\n"


def plan(methods) -> list[dict]:
    return [{"key": f"family__{family}__{label.replace('/', '-')}", "family": family, "method": label,
             "seed": stable_seed("family_prior", 0, index, label), "settings": asdict(MCMC_SETTINGS)}
            for index, family in enumerate(FAMILIES) for label in methods]


def run_cell(task: dict) -> dict:
    text = program_text(task["family"])
    check = lambda: check_prior(text, {}, find_spec(task["method"]), task["seed"], RunSettings(**task["settings"]))  # noqa: E731
    return {**task, "text": text, **_guarded(check)}


def _totals(records: list[dict]) -> dict:
    ok = [r for r in records if r["status"] == "ok"]
    return {"cells": len(records), "errors": len(records) - len(ok), "failed": sum(r["failed"] for r in ok),
            "flagged": sum(not r["trustworthy"] for r in ok),
            "silent_failures": sum(r["failed"] and r["trustworthy"] for r in ok),
            "divergences": sum(r["divergences"] for r in ok)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="store of the cells (resumable)")
    parser.add_argument("--methods", default=",".join(s.label for s in method_specs(include_control=False)),
                        help="comma-separated method/kernel labels (default: every method and kernel)")
    parser.add_argument("--num-cpus", type=int, default=1)
    parser.add_argument("--report", required=True, help="JSON report")
    args = parser.parse_args(argv)
    methods = [find_spec(label).label for label in args.methods.split(",")]  # an unknown label fails here
    tasks = plan(methods)
    store = ResultStore(args.out)
    run_tasks(tasks, run_cell, store, num_cpus=args.num_cpus, env=worker_environment(Path(args.out) / "jax_cache"),
              desc="every-family prior", max_calls=10)
    keys = {task["key"] for task in tasks}
    records = sorted((r for r in store.records() if r["key"] in keys), key=lambda r: r["key"])
    fields = ("status", "error", "failed", "trustworthy", "min_adjusted_p", "worst", "divergences", "max_r_hat",
              "min_ess_bulk", "ran_as", "seconds", "warnings")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    report = {"commit": commit, "settings": asdict(MCMC_SETTINGS), "methods": methods, "total": _totals(records),
              "programs": {family: program_text(family) for family in FAMILIES},
              "cells": [{"family": r["family"], "method": r["method"], **{f: r[f] for f in fields if f in r}}
                        for r in records]}
    Path(args.report).write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["total"], indent=1))
    for r in report["cells"]:
        if r["status"] != "ok" or r["failed"]:
            print(r["family"], r["method"], r.get("error") or (r["worst"], r["min_adjusted_p"], r["trustworthy"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

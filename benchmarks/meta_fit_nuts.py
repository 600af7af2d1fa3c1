"""NUTS in the two shipped networks' centrings, side by side: the default one and the opt-in fit-probed one.

    python benchmarks/meta_fit_nuts.py --out benchmarks/results/meta_fit_nuts

`benchmarks/meta_fit_points.py` compared the networks by lambda and ELBO only. This runs what a
user runs, ``infer(model, method="meta", meta_probes=...)`` with NUTS (4 chains x 1000 warm-up +
1000 draws by default), for both networks on the zoo models and seeds, and records the min bulk ESS
over every latent element per 1000 gradients (warm-up included, as META.md counts them), R-hat,
divergences, whether ``infer`` trusts the run, and the seconds of every phase (the fit-probed
network's prediction includes its 4,000-gradient fit). Before a model's timed runs, each network runs
it once briefly (50 + 50 transitions, not recorded), so that neither pays the compilation the other
would find cached: the seconds are repeat calls'. One JSON per run in ``--out`` (a finished run is
skipped on a rerun), then ``summary.json`` with the per-model medians and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np

import autoreparam as ar
from autoreparam.meta.files import write_json
from autoreparam.meta_eval.protocol import ZOO
from autoreparam.models import load

NETWORKS = ("prior", "fit")  # meta_probes: the default network, the opt-in network


def run_one(name: str, probes: str, seed: int, chains: int, warmup: int, samples: int) -> dict:
    problem = load(name)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ar.ConvergenceWarning)
        result = ar.infer(problem.model, *problem.args, method="meta", meta_probes=probes, num_chains=chains,
                          num_warmup=warmup, num_samples=samples, seed=seed, progress=False, **problem.kwargs)
    seconds = time.perf_counter() - start
    d = result.diagnostics
    gradients = float(np.sum(result.chains.grad_evals) + np.sum(result.chains.warmup_grad_evals))
    return {"model": name, "network": probes, "seed": seed, "min_ess_bulk": float(d.standard.min_ess_bulk),
            "ess_per_1000_gradients": 1000.0 * float(d.standard.min_ess_bulk) / gradients,
            "max_r_hat": float(d.standard.max_r_hat), "divergences": int(d.divergences),
            "trustworthy": bool(result.trustworthy), "gradients": gradients,
            "seconds": {**result.timing, "call": seconds},
            "mean_lambda": {k: float(np.mean(v)) for k, v in (result.parameterisation or {}).items()}}


def summarise(rows: list[dict]) -> dict:
    out = {}
    for name in sorted({r["model"] for r in rows}):
        per = {}
        for probes in NETWORKS:
            mine = [r for r in rows if r["model"] == name and r["network"] == probes]
            if mine:
                per[probes] = {"seeds": len(mine),
                               "median_ess_per_1000_gradients": float(np.median([r["ess_per_1000_gradients"]
                                                                                 for r in mine])),
                               "median_ess_per_second": float(np.median([r["min_ess_bulk"] / r["seconds"]["call"]
                                                                         for r in mine])),
                               "trusted": sum(r["trustworthy"] for r in mine)}
        if len(per) == 2:
            per["fit_over_prior_per_gradient"] = (per["fit"]["median_ess_per_1000_gradients"]
                                                  / per["prior"]["median_ess_per_1000_gradients"])
            per["fit_over_prior_per_second"] = (per["fit"]["median_ess_per_second"]
                                                / per["prior"]["median_ess_per_second"])
        out[name] = per
    ratios = [v["fit_over_prior_per_gradient"] for v in out.values() if "fit_over_prior_per_gradient" in v]
    return {"models": out, "geometric_mean_fit_over_prior_per_gradient":
            float(np.exp(np.mean(np.log(ratios)))) if ratios else None}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(ZOO))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--out", default="results/meta_fit_nuts")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.models.split(","):
        if not all((out / f"{name}__{p}__s{s}.json").exists() for p in NETWORKS for s in args.seeds.split(",")):
            for probes in NETWORKS:  # compile both, untimed (module docstring)
                run_one(name, probes, 0, args.chains, 50, 50)
        for seed in (int(s) for s in args.seeds.split(",")):
            for probes in NETWORKS:
                path = out / f"{name}__{probes}__s{seed}.json"
                if path.exists():
                    rows.append(json.loads(path.read_text()))
                    continue
                row = run_one(name, probes, seed, args.chains, args.warmup, args.samples)
                write_json(path, row)
                rows.append(row)
                print(f"{name} {probes} seed {seed}: {row['ess_per_1000_gradients']:.2f} ESS per 1000 gradients, "
                      f"{row['seconds']['call']:.1f} s, trusted {row['trustworthy']}", flush=True)
    write_json(out / "summary.json", {"summary": summarise(rows), "argv": vars(args),
                                      "machine": f"{platform.machine()}, {os.cpu_count()} CPUs"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

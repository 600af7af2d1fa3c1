"""Per-chain against pooled NUTS adaptation, side by side: does one shared step size and mass matrix
remove the straggler chain that idles the other lanes of our vmapped NUTS?

    python benchmarks/pooled_adaptation.py --out benchmarks/results/pooled_adaptation/cells.jsonl
    python benchmarks/pooled_adaptation.py --out benchmarks/results/pooled_adaptation/cells.jsonl \
        --report benchmarks/results/pooled_adaptation/summary.md      # the table only, from the lines

For each model, number of chains and seed, in one process, alternating: ``ar.infer(method="auto")``
with ``NUTSConfig.adaptation="per_chain"`` (Stan's and NumPyro's) and ``"pooled"`` (``mcmc.segments``).
Each configuration runs once untimed first, so the timed calls compile nothing and the seconds are
warm-up, pilots and sampling only. Recorded: smallest bulk ESS over every latent element, max R-hat,
divergences, gradients of the whole call and of the draws, the draws' seconds, and the spread of the
chains' gradients per draw (max / mean: the straggler). One JSON line per call, appended as it
finishes; a rerun skips lines already written.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
import warnings

os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")

import numpy as np  # noqa: E402

import autoreparam as ar  # noqa: E402
from autoreparam.errors import ConvergenceWarning  # noqa: E402
from autoreparam.mcmc.config import NUTSConfig  # noqa: E402
from autoreparam.models import load  # noqa: E402

INFER_MODULE = sys.modules["autoreparam.infer"]  # the attribute ``autoreparam.infer`` is the function
# The baseline first; every other mode is compared with it.
MODES = {"per_chain": {"adaptation": "per_chain"}, "pooled": {"adaptation": "pooled"},
         "pooled_jitter": {"adaptation": "pooled", "step_jitter": 0.2}, "pooled_step": {"adaptation": "pooled_step"},
         # The first metric of a warm-up without a fit (NUTSConfig.initial_metric): the identity, 1 / |gradient|
         # at the start, or the identity but for stiff elements. "pooled" runs whatever the default is then.
         "pooled_unit_metric": {"adaptation": "pooled", "initial_metric": "unit"},
         "pooled_gradient_metric": {"adaptation": "pooled", "initial_metric": "gradient"},
         "pooled_stiff_metric": {"adaptation": "pooled", "initial_metric": "stiff"},
         # The mean acceptance the step size adapts to (``infer``'s ``target_accept``, default 0.8).
         "pooled_accept_0.85": {"adaptation": "pooled", "target_accept": 0.85},
         "pooled_accept_0.9": {"adaptation": "pooled", "target_accept": 0.9}}
INFER_SETTINGS = ("target_accept",)  # keys of a mode passed to ``infer``, not to NUTSConfig
BASELINE = "per_chain"  # ``--baseline`` changes it


def call(problem, mode: str, chains: int, seed: int, warmup: int, samples: int) -> dict:
    settings = {k: v for k, v in MODES[mode].items() if k in INFER_SETTINGS}
    INFER_MODULE.NUTSConfig = functools.partial(
        NUTSConfig, **{k: v for k, v in MODES[mode].items() if k not in INFER_SETTINGS})
    try:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = ar.infer(problem.model, *problem.args, method="auto", num_chains=chains, num_warmup=warmup,
                              num_samples=samples, seed=seed, progress=False, **settings, **problem.kwargs)
        total = time.perf_counter() - start
    finally:
        INFER_MODULE.NUTSConfig = NUTSConfig
    d, c = result.diagnostics, result.chains
    per_chain = np.asarray(c.grad_evals, float)
    return {"seconds": {**result.timing, "total": total}, "min_ess_bulk": float(d.standard.min_ess_bulk),
            "max_r_hat": float(d.standard.max_r_hat), "divergences": int(d.divergences),
            "gradients_total": float(per_chain.sum() + np.sum(c.warmup_grad_evals)),
            "gradients_draws": float(per_chain.sum()), "straggler": float(per_chain.max() / per_chain.mean()),
            "step_sizes": np.asarray(c.step_size, float).ravel().tolist(), "decision": result.decision}


def _geomean(values) -> float:
    return float(np.exp(np.mean(np.log(values))))


def summarise(rows: list[dict], baseline: str = BASELINE) -> str:
    """Per model, number of chains and mode: geometric means over seeds, and the ratio to the baseline."""
    lines = ["| model | chains | mode | seeds | ESS/s | ESS/s ratio | ESS per 1000 gradients (whole call) | "
             "its ratio | draws' gradients/s ratio | straggler | divergences | max R-hat |", "|" + "---|" * 12]
    ratios = {}
    groups = {}
    for r in rows:
        groups.setdefault((r["model"], r["chains"]), {}).setdefault(r["mode"], {})[r["seed"]] = r
    for (model, chains), by_mode in groups.items():
        for mode in (m for m in MODES if m in by_mode):
            # Seeds run in both this mode and the baseline; seconds less compilation (there is none:
            # every mode ran once before the timed calls).
            seeds = sorted(set(by_mode[mode]) & set(by_mode.get(baseline, {})))
            if not seeds:
                continue
            pick, base = [by_mode[mode][s] for s in seeds], [by_mode[baseline][s] for s in seeds]

            def ess_s(cells):
                return _geomean([c["min_ess_bulk"] / (c["seconds"]["total"] - c["seconds"].get("compile", 0.0))
                                 for c in cells])

            def rate(cells):
                return _geomean([c["gradients_draws"] / c["seconds"]["sampling"] for c in cells])

            def ess_g(cells):
                return _geomean([1000.0 * c["min_ess_bulk"] / c["gradients_total"] for c in cells])

            ratio = ess_s(pick) / ess_s(base)
            if mode != baseline:
                ratios.setdefault(mode, []).append(ratio)
            lines.append(f"| {model} | {chains} | {mode} | {len(seeds)} | {ess_s(pick):.0f} | {ratio:.2f}x | "
                         f"{ess_g(pick):.2f} | {ess_g(pick) / ess_g(base):.2f}x | {rate(pick) / rate(base):.2f}x | "
                         f"{np.mean([c['straggler'] for c in pick]):.2f} | "
                         f"{'/'.join(str(c['divergences']) for c in pick)} | "
                         f"{max(c['max_r_hat'] for c in pick):.3f} |")
    lines.append("")
    for mode, values in ratios.items():
        lines.append(f"- {mode} / {baseline}, ESS per second: geometric mean {_geomean(values):.2f}x over "
                     f"{len(values)} rows, range {min(values):.2f}x to {max(values):.2f}x.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="eight_schools,radon_mn,radon_pa,german_credit,election88,electric")
    parser.add_argument("--chains", default="4,16")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--out", default="benchmarks/results/pooled_adaptation/cells.jsonl")
    parser.add_argument("--report", help="write the summary table of --out's lines here, and run nothing")
    parser.add_argument("--baseline", default=BASELINE, help="the mode every other is compared with")
    args = parser.parse_args(argv)
    if args.report:
        with open(args.out) as f:
            table = summarise([json.loads(line) for line in f], args.baseline)
        with open(args.report, "w") as f:
            f.write(table)
        print(table)
        return 0
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    done = set()
    if os.path.exists(args.out):
        with open(args.out) as f:
            done = {(r["model"], r["chains"], r["seed"], r["mode"]) for r in map(json.loads, f)}
    for name in args.models.split(","):
        problem = load(name)
        for chains in (int(c) for c in args.chains.split(",")):
            compiled = False
            modes = args.modes.split(",")
            for seed in (int(s) for s in args.seeds.split(",")):
                for mode in modes if seed % 2 == 0 else modes[::-1]:  # alternate which runs first
                    if (name, chains, seed, mode) in done:
                        continue
                    if not compiled:  # compile both programs outside the timed calls
                        for m in modes:
                            call(problem, m, chains, 99, args.warmup, min(args.samples, 100))
                        compiled = True
                    row = {"model": name, "chains": chains, "seed": seed, "mode": mode,
                           **call(problem, mode, chains, seed, args.warmup, args.samples)}
                    with open(args.out, "a") as f:
                        f.write(json.dumps(row) + "\n")
                    s = row["seconds"]
                    print(f"{name} chains={chains} seed={seed} {mode}: ESS {row['min_ess_bulk']:.0f} in "
                          f"{s['total']:.2f} s (draws {s['sampling']:.2f} s), R-hat {row['max_r_hat']:.3f}, "
                          f"div {row['divergences']}, straggler {row['straggler']:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

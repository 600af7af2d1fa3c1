"""Are ``infer``'s defaults safe? Every method as a new user calls it, against a reference posterior.

    python benchmarks/safe_defaults.py --out results/safe_defaults            # resumable, one JSON per cell
    python benchmarks/safe_defaults.py --out results/safe_defaults --report benchmarks/results/safe_defaults.md

For each model and seed, ``ar.infer(model, method=m)`` with every default (4 chains, 1000 warm-up, 2000
draws; fixed-L HMC with L by oracle) for m in cp, ncp, ihmc, vip, auto, and the same call with the
paper's protocol (``step_size_rule="sign", oracle_metric="paper"``, the library's defaults before
issue 8) for ihmc and vip. Each cell records ESS per 1000 gradients (pooled bulk ESS, and the paper's
per-chain metric), max R-hat, divergences, the L chosen, whether the result calls itself trustworthy,
and how far its posterior means and sds are from a reference: NumPyro's NUTS on the non-centred model,
8 chains x 5000 draws, |mean - ref| in combined Monte Carlo standard errors and sd / ref sd - 1.

A method is *safe* on a model when it is either right (means within 4 combined s.e., sds within 10%)
or says it is not trustworthy. iHMC's efficiency is its pooled ESS per gradient over the better of
CP's and NCP's, each at its own oracle L (mean over seeds).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import jax
import numpy as np
import numpyro
from numpyro.infer import MCMC, NUTS
from numpyro.infer.reparam import LocScaleReparam

import autoreparam as ar
from autoreparam.diagnostics.standard import mean_and_mcse
from autoreparam.errors import ConvergenceWarning
from autoreparam.models import load
from autoreparam.reparam import analyse_model, select_sites

MODELS = ("eight_schools", "hierarchical_linear", "sparse_logistic", "radon_mn", "radon_az", "radon_ma", "german_credit")
METHODS = ("cp", "ncp", "ihmc", "vip", "auto")
PAPER_PROTOCOL = ("ihmc", "vip")
Z_OK, SD_OK = 4.0, 0.10


def reference(problem, out: Path) -> dict:
    """Posterior means, their Monte Carlo s.e. and sds from NumPyro NUTS on the non-centred model."""
    path = out / f"reference__{problem.name}.json"
    if path.exists():
        return json.loads(path.read_text())
    plan = select_sites(analyse_model(problem.model, *problem.args, **problem.kwargs), "default")
    model = numpyro.handlers.reparam(problem.model, config={n: LocScaleReparam(0.0) for n in plan.names})
    mcmc = MCMC(NUTS(model, target_accept_prob=0.95), num_warmup=2000, num_samples=5000, num_chains=8,
                chain_method="vectorized", progress_bar=False)
    mcmc.run(jax.random.PRNGKey(12345), *problem.args, **problem.kwargs)
    names = [s.name for s in analyse_model(problem.model, *problem.args, **problem.kwargs).latents]
    samples = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items() if k in names}
    mean, mcse = mean_and_mcse(samples)
    flat = np.concatenate([v.reshape(-1, int(np.prod(v.shape[2:], dtype=int))) for _, v in sorted(samples.items())], axis=1)
    ref = {"mean": mean.tolist(), "mcse": mcse.tolist(), "sd": flat.std(0).tolist()}
    path.write_text(json.dumps(ref))
    return ref


def run_cell(problem, method: str, protocol: str, seed: int, ref: dict) -> dict:
    options = {"step_size_rule": "sign", "oracle_metric": "paper"} if protocol == "paper" else {}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = ar.infer(problem.model, *problem.args, method=method, seed=seed, progress=False, **options,
                          **problem.kwargs)
    seconds = time.perf_counter() - start
    d = result.diagnostics
    mean, mcse = mean_and_mcse(result.samples)
    flat = np.concatenate([v.reshape(-1, int(np.prod(v.shape[2:], dtype=int))) for _, v in sorted(result.samples.items())], axis=1)
    z = np.abs(mean - np.asarray(ref["mean"])) / np.hypot(mcse, np.asarray(ref["mcse"]))
    sd_error = np.abs(flat.std(0) / np.asarray(ref["sd"]) - 1.0)
    right = bool(np.max(z) < Z_OK and np.max(sd_error) < SD_OK)
    L = d.num_leapfrog
    return {
        "model": problem.name, "method": method, "protocol": protocol, "seed": seed, "chosen": result.method,
        "pooled_ess_per_1000_grads": d.pooled_ess_per_1000_grads,
        "paper_ess_per_1000_grads": d.ess_per_1000_grads[0],
        "max_r_hat": d.standard.max_r_hat, "min_ess_bulk": d.standard.min_ess_bulk,
        "divergences": d.divergences,
        "space_divergences": None if d.space_divergences is None else [int(n) for n in d.space_divergences],
        "num_leapfrog": list(L) if isinstance(L, tuple) else L,
        "trustworthy": result.trustworthy, "warnings": list(d.health.warnings),
        "max_mean_z": float(np.max(z)), "max_sd_error": float(np.max(sd_error)), "right": right,
        "safe": right or not result.trustworthy, "seconds": seconds,
    }


def report(cells: list[dict]) -> str:
    lines = [
        "| model | method | protocol | seeds | pooled ESS/1000 grads | paper metric | max R-hat | L | "
        "trustworthy | max mean z | max sd error | safe |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups = {}
    for c in cells:
        groups.setdefault((c["model"], c["method"], c["protocol"]), []).append(c)
    for (model, method, protocol), cs in groups.items():
        cs = sorted(cs, key=lambda c: c["seed"])
        def col(key, fmt):
            return " / ".join(format(c[key], fmt) for c in cs)
        lines.append(
            f"| {model} | {method} | {protocol} | {len(cs)} | {col('pooled_ess_per_1000_grads', '.2f')} | "
            f"{col('paper_ess_per_1000_grads', '.2f')} | {col('max_r_hat', '.3f')} | "
            f"{' / '.join(str(c['num_leapfrog']) for c in cs)} | {' / '.join('yes' if c['trustworthy'] else 'no' for c in cs)} | "
            f"{col('max_mean_z', '.1f')} | {col('max_sd_error', '.2f')} | "
            f"{'yes' if all(c['safe'] for c in cs) else '**no**'} |"
        )
    lines += ["", "iHMC and auto against the better fixed parameterisation (pooled ESS per gradient, mean over seeds, "
              "defaults):", "",
              "| model | CP | NCP | iHMC | auto | iHMC / better fixed | auto / better fixed |", "|---|---|---|---|---|---|---|"]
    for model in dict.fromkeys(c["model"] for c in cells):
        means = {}
        for method in ("cp", "ncp", "ihmc", "auto"):
            vals = [c["pooled_ess_per_1000_grads"] for c in cells
                    if c["model"] == model and c["method"] == method and c["protocol"] == "default"]
            means[method] = float(np.mean(vals)) if vals else float("nan")
        best = max(means["cp"], means["ncp"])
        lines.append(f"| {model} | {means['cp']:.2f} | {means['ncp']:.2f} | {means['ihmc']:.2f} | {means['auto']:.2f} | "
                     f"{means['ihmc'] / best:.2f} | {means['auto'] / best:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--out", default="results/safe_defaults")
    parser.add_argument("--report", default=None, help="write the markdown table here")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.models.split(","):
        problem = load(name)
        ref = reference(problem, out)
        for seed in (int(s) for s in args.seeds.split(",")):
            for method in args.methods.split(","):
                for protocol in ("default", "paper") if method in PAPER_PROTOCOL else ("default",):
                    path = out / f"{name}__{method}__{protocol}__s{seed}.json"
                    if path.exists():
                        continue
                    cell = run_cell(problem, method, protocol, seed, ref)
                    path.write_text(json.dumps(cell, default=float))
                    print(f"{name} {method} {protocol} s{seed}: pooled {cell['pooled_ess_per_1000_grads']:.2f} "
                          f"R-hat {cell['max_r_hat']:.3f} L {cell['num_leapfrog']} trust {cell['trustworthy']} "
                          f"right {cell['right']} ({cell['seconds']:.0f} s)", flush=True)
    # Cells only: "reference__sparse_logistic.json" matches the pattern too.
    cells = [json.loads(p.read_text()) for p in sorted(out.glob("*__s*.json")) if not p.name.startswith("reference__")]
    text = report(cells)
    print(text)
    if args.report:
        Path(args.report).write_text(
            "# Safe defaults: every method as a new user calls it (benchmarks/safe_defaults.py)\n\n"
            f"jax {jax.__version__}, {jax.devices()[0].device_kind}; cells: {len(cells)}.\n\n" + text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Seconds, not gradients: ``auto`` against NumPyro's NUTS (and nutpie where installed), side by side.

    python benchmarks/wall_clock.py --out results/wall_clock            # resumable: one JSON per cell
    python benchmarks/wall_clock.py --out results/wall_clock --report benchmarks/results/wall_clock.md

For each zoo model and seed, in one process and in this order: NumPyro NUTS on the centred model,
on the non-centred model (every location-scale latent with a latent prior non-centred by
``LocScaleReparam(0)``), nutpie on the PyMC port of the centred model (only with ``make peers``), and
``ar.infer(method="auto")``; each called twice (the second call with a new seed: for us it must
compile nothing). 4 chains x 1000 warm-up + 1000 draws, every phase timed, compilation included.
The score is the smallest bulk ESS (ArviZ, rank-normalised, over every latent element) per second of
the first call. First calls are cold for every workflow and seed: the persistent compilation cache is
off, and JAX's and autoreparam's in-process caches are cleared before each (seeds after the first ran
warm in this process before, flattering auto's first calls, which reuse every program).

Targets (issue 9): auto's ESS per second >= NumPyro's on the better of CP and NCP on every model, and
>= 2x NumPyro's on the centred model in geometric mean over the zoo.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
import warnings
from pathlib import Path

os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import numpyro  # noqa: E402
from numpyro.infer import MCMC, NUTS  # noqa: E402
from numpyro.infer.reparam import LocScaleReparam  # noqa: E402

import autoreparam as ar  # noqa: E402
from autoreparam.diagnostics.standard import standard_diagnostics  # noqa: E402
from autoreparam.errors import ConvergenceWarning  # noqa: E402
from autoreparam.mcmc.programs import PROGRAMS  # noqa: E402
from autoreparam.models import load  # noqa: E402
from autoreparam.reparam import analyse_model, select_sites  # noqa: E402

MODELS = ("eight_schools", "radon_mn", "radon_pa", "radon_az", "radon_in", "radon_ma", "radon_mo", "radon_nd",
          "german_credit", "electric", "election88")
CHAINS, WARMUP, SAMPLES = 4, 1000, 1000


def _latent_samples(problem, samples: dict) -> dict:
    names = analyse_model(problem.model, *problem.args, **problem.kwargs).names
    return {k: np.asarray(v) for k, v in samples.items() if k in names}


def numpyro_nuts(problem, noncentred: bool, seed: int, target_accept: float = 0.8) -> dict:
    model = problem.model
    if noncentred:
        plan = select_sites(analyse_model(problem.model, *problem.args, **problem.kwargs), "default")
        model = numpyro.handlers.reparam(model, config={n: LocScaleReparam(0.0) for n in plan.names})
    mcmc = MCMC(NUTS(model, target_accept_prob=target_accept), num_warmup=WARMUP, num_samples=SAMPLES, num_chains=CHAINS,
                chain_method="vectorized", progress_bar=False)
    start = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), *problem.args, extra_fields=("num_steps", "diverging"), **problem.kwargs)
    samples = mcmc.get_samples(group_by_chain=True)
    jax.block_until_ready(samples)
    seconds = time.perf_counter() - start
    if noncentred:  # the original latents, recomputed from the non-centred draws
        flat = {k: v.reshape((-1,) + v.shape[2:]) for k, v in samples.items()}
        original = numpyro.infer.Predictive(model, posterior_samples=flat, return_sites=list(
            analyse_model(problem.model, *problem.args, **problem.kwargs).names))(
            jax.random.PRNGKey(0), *problem.args, **{k: v for k, v in problem.kwargs.items() if k != "y"})
        samples = {k: np.asarray(v).reshape((CHAINS, SAMPLES) + v.shape[1:]) for k, v in original.items()}
    samples = _latent_samples(problem, samples)
    standard = standard_diagnostics(samples)
    extra = mcmc.get_extra_fields()
    return {"seconds": {"total": seconds}, "min_ess_bulk": standard.min_ess_bulk, "max_r_hat": standard.max_r_hat,
            "gradients": float(np.sum(extra["num_steps"])), "divergences": int(np.sum(extra["diverging"]))}


def nutpie_cell(problem, seed: int) -> dict | None:
    """nutpie on the PyMC port of the centred model; None without the optional extra (make peers)."""
    from autoreparam.benchmark.nutpie_peer import missing_extra, sample_nutpie

    if missing_extra() is not None:
        return None
    start = time.perf_counter()
    chains, samples, _ = sample_nutpie(problem, chains=CHAINS, tune=WARMUP, draws=SAMPLES, seed=seed)
    seconds = time.perf_counter() - start
    standard = standard_diagnostics(_latent_samples(problem, samples))
    return {"seconds": {**chains.seconds, "total": seconds}, "min_ess_bulk": standard.min_ess_bulk,
            "max_r_hat": standard.max_r_hat, "divergences": int(np.sum(chains.divergences)),
            "gradients": float(np.sum(chains.grad_evals) + np.sum(chains.warmup_grad_evals))}


def auto_cell(problem, seed: int) -> dict:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = ar.infer(problem.model, *problem.args, method="auto", num_chains=CHAINS, num_warmup=WARMUP,
                          num_samples=SAMPLES, seed=seed, progress=False, **problem.kwargs)
    seconds = time.perf_counter() - start
    d = result.diagnostics
    return {"seconds": {**result.timing, "total": seconds}, "min_ess_bulk": d.standard.min_ess_bulk,
            "max_r_hat": d.standard.max_r_hat, "divergences": d.divergences, "chosen": result.method,
            "gradients": float(np.sum(result.chains.grad_evals) + np.sum(result.chains.warmup_grad_evals)),
            "decision": result.decision, "trustworthy": result.trustworthy}


RUNNERS = {
    "numpyro_cp": lambda p, s: numpyro_nuts(p, False, s),
    "numpyro_ncp": lambda p, s: numpyro_nuts(p, True, s),
    # What a NumPyro user pays for draws as trusted as auto's (no divergence), where NCP at the default
    # acceptance diverges (German credit: 16 to 55 of 4,000 transitions); not in the default set.
    "numpyro_ncp_099": lambda p, s: numpyro_nuts(p, True, s, target_accept=0.99),
    "nutpie_cp": nutpie_cell,
    "auto": auto_cell,
}


def _per_second(cell: dict | None) -> float:
    if not cell:
        return math.nan
    return cell["min_ess_bulk"] / cell["seconds"]["total"]


def report(cells: list[dict]) -> str:
    by = {}
    for c in cells:
        by.setdefault((c["model"], c["seed"]), {})[c["workflow"], c["call"]] = c
    lines = ["| model | seed | workflow | 1st call s | 2nd call s | min bulk ESS | ESS/s (1st) | R-hat | divergences | chosen |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    ratios_best, ratios_cp = [], []
    for (model, seed), group in sorted(by.items()):
        for workflow in RUNNERS:
            first, second = group.get((workflow, 1)), group.get((workflow, 2))
            if not first:
                continue
            lines.append(
                f"| {model} | {seed} | {workflow} | {first['seconds']['total']:.1f} | "
                f"{second['seconds']['total'] if second else math.nan:.1f} | {first['min_ess_bulk']:.0f} | "
                f"{_per_second(first):.1f} | {first['max_r_hat']:.3f} | {first.get('divergences', '')} | "
                f"{first.get('chosen', '')} |")
        auto = _per_second(group.get(("auto", 1)))
        cp, ncp = _per_second(group.get(("numpyro_cp", 1))), _per_second(group.get(("numpyro_ncp", 1)))
        if math.isfinite(auto) and (math.isfinite(cp) or math.isfinite(ncp)):
            ratios_best.append((model, seed, auto / np.nanmax([cp, ncp])))
            if math.isfinite(cp):  # a run without the centred workflow has no such ratio
                ratios_cp.append(auto / cp)
    lines += ["", "| model | seed | auto / NumPyro on the better of CP and NCP (ESS per second, first calls) |",
              "|---|---|---|"]
    lines += [f"| {m} | {s} | {r:.2f} |" for m, s, r in ratios_best]
    per_model = {}
    for m, _, r in ratios_best:
        per_model.setdefault(m, []).append(r)
    if any(len(rs) > 1 for rs in per_model.values()):
        lines += ["", "| model | auto / better NumPyro, per seed | median |", "|---|---|---|"]
        lines += [f"| {m} | {', '.join(f'{r:.2f}' for r in rs)} | {np.median(rs):.2f} |" for m, rs in per_model.items()]
        met = sum(np.median(rs) >= 1 for rs in per_model.values())
        lines += ["", f"Median over seeds at least 1 (auto at least the better NumPyro) on {met} of {len(per_model)} models; "
                  f"at least 1 on every seed on {sum(min(rs) >= 1 for rs in per_model.values())}."]
    trusted = [(m, s, _per_second(g.get(("auto", 1))) / _per_second(g.get(("numpyro_ncp_099", 1))))
               for (m, s), g in sorted(by.items()) if g.get(("numpyro_ncp_099", 1)) and g.get(("auto", 1))]
    if trusted:
        lines += ["", "| model | seed | auto / NumPyro NCP at acceptance 0.99 (ESS per second, first calls) |",
                  "|---|---|---|"]
        lines += [f"| {m} | {s} | {r:.2f} |" for m, s, r in trusted]
    if ratios_cp:
        geo = float(np.exp(np.mean(np.log(ratios_cp))))
        lines += ["", f"Geometric mean of auto / NumPyro on the centred model: **{geo:.2f}** over {len(ratios_cp)} runs."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--workflows", default=",".join(w for w in RUNNERS if w != "numpyro_ncp_099"))
    parser.add_argument("--out", default="results/wall_clock")
    parser.add_argument("--report", default=None)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.models.split(","):
        problem = load(name)
        for seed in (int(s) for s in args.seeds.split(",")):
            for workflow in args.workflows.split(","):
                for call in (1, 2):
                    path = out / f"{name}__{workflow}__s{seed}__call{call}.json"
                    if path.exists():
                        continue
                    if call == 1:
                        jax.clear_caches()
                        PROGRAMS.clear()
                    cell = RUNNERS[workflow](problem, seed * 1000 + call)
                    if cell is None:
                        break
                    cell.update(model=name, seed=seed, workflow=workflow, call=call, device=jax.devices()[0].device_kind)
                    path.write_text(json.dumps(cell, default=float))
                    print(f"{name} s{seed} {workflow} call {call}: {cell['seconds']['total']:.1f} s, min bulk ESS "
                          f"{cell['min_ess_bulk']:.0f}, {_per_second(cell):.1f} ESS/s", flush=True)
    cells = [json.loads(p.read_text()) for p in sorted(out.glob("*__call*.json"))]
    text = report(cells)
    print(text)
    if args.report:
        Path(args.report).write_text(
            "# Wall clock: auto against NumPyro's NUTS (benchmarks/wall_clock.py)\n\n"
            f"{CHAINS} chains x {WARMUP} warm-up + {SAMPLES} draws; jax {jax.__version__} on "
            f"{jax.devices()[0].device_kind}; persistent compilation cache off.\n\n" + text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Compilation of a model written as a Python loop: one sample site per time step (issue 9).

    python benchmarks/loop_model_compile.py --out benchmarks/results/loop_model_compile.json
    python benchmarks/loop_model_compile.py --src ../before/src --label before --out ...   # another checkout

Issue 9 reports `auto` at 1,170 s against 220 s for NumPyro's NUTS on a hand-non-centred stochastic
volatility model over 100 days. Its sites h_0 ... h_{T-1} come from a Python loop, so every program
that reads the model holds T copies of its per-site code. The model below is that model:

    mu ~ N(0, 2), phi ~ U(-1, 1), sigma ~ HalfNormal(1), h_0 ~ N(mu, sigma / sqrt(1 - phi^2)),
    h_t ~ N(mu + phi (h_{t-1} - mu), sigma), y_t ~ N(0, exp(h_t / 2)).

Its data are **simulated** (mu -1, phi 0.95, sigma 0.25, seed 1): this measures compilation, not
inference. For each number of steps T, every program is compiled in a fresh child process, with
its peak resident memory polled from /proc and the child killed above ``--memory-limit-gb``:

- ``rule``: `auto`'s Section 3 rule program (`auto.rule_lambda`), 32 points;
- ``nuts_segment``: `auto`'s NUTS segment program (`mcmc.segments`), compiled and run for one
  segment of draws from 4 chains;
- ``numpyro_ncp`` and ``numpyro_half``: NumPyro's NUTS (4 chains, vectorised, 10 + 10 draws, so
  compilation dominates) on the model non-centred (``LocScaleReparam(0)``) and half-centred
  (``LocScaleReparam(0.5)``) by NumPyro. Our lambda is a runtime argument of one program, so our
  programs carry the general partial-centring algebra, like the half-centred case;
- ``vip_fit`` and ``vip_fit_scan``: VIP's variational program (``fit_vip`` with the paper's
  protocol) on the loop and on the scan form, its compile seconds, with the fit's own seconds kept;
- ``auto_scan``, ``numpyro_scan`` and ``numpyro_scan_ncp``: the model with its path in ``scan``
  instead (one copy of the step), a whole run of 4 chains x 1000 + 1000 (``--seeds``) by `auto` and
  by NumPyro's NUTS on the centred model and on the model non-centred by hand (``LocScaleReparam``
  written inside the scan body, the only place NumPyro's handler reaches); seconds include
  everything, and the draws' smallest bulk ESS, largest R-hat and divergences are kept.

Writes JSON (one cell per T and program) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

_MODEL = r"""
import numpy as np, jax, jax.numpy as jnp, numpyro, numpyro.distributions as dist
T = STEPS
def first_day(y):
    mu = numpyro.sample("mu", dist.Normal(0.0, 2.0))
    phi = numpyro.sample("phi", dist.Uniform(-1.0, 1.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    h = numpyro.sample("h_0", dist.Normal(mu, sigma / jnp.sqrt(1 - phi**2)))
    numpyro.sample("y_0", dist.Normal(0.0, jnp.exp(h / 2)), obs=y[0])
    return mu, phi, sigma, h
def sv_loop(y):
    mu, phi, sigma, h = first_day(y)
    for t in range(1, T):
        h = numpyro.sample(f"h_{t}", dist.Normal(mu + phi * (h - mu), sigma))
        numpyro.sample(f"y_{t}", dist.Normal(0.0, jnp.exp(h / 2)), obs=y[t])
rng = np.random.default_rng(1)
h = np.zeros(T); h[0] = -1.0
for t in range(1, T): h[t] = -1.0 + 0.95 * (h[t - 1] + 1.0) + 0.25 * rng.normal()
y = jnp.asarray(rng.normal(size=T) * np.exp(h / 2), jnp.float32)
"""

_PROGRAMS = {
    "rule": r"""
from autoreparam.coordinates import Coordinates
from autoreparam.reparam import analyse_model, select_sites
from autoreparam.auto.rule_lambda import RuleLambda
coords = Coordinates(sv_loop, (y,), {}, select_sites(analyse_model(sv_loop, y), "default"))
rule = RuleLambda(coords)
rule.lambda_at(np.zeros((1, coords.original_dim)))
seconds = rule.seconds["compile"]
""",
    "nuts_segment": r"""
from autoreparam.coordinates import Coordinates
from autoreparam.reparam import analyse_model, select_sites
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.nuts import segment_length
from autoreparam.mcmc.segments import SegmentSampler, sample_codes
plan = select_sites(analyse_model(sv_loop, y), "default")
coords = Coordinates(sv_loop, (y,), {}, plan)
config = NUTSConfig()
sampler = SegmentSampler(coords, config, segment_length(config))
chains = sampler.start(np.zeros((4, coords.dim), np.float32), np.ones(coords.dim), 0.1, 0)
_, _, split = sampler.run(Parameterisation.tied(plan, 0.5), chains, sample_codes(sampler.segment_length))
seconds = split["compile"]
""",
    "numpyro_ncp": r"""
import time
from numpyro.infer import MCMC, NUTS
from numpyro.infer.reparam import LocScaleReparam
LAMBDA = 0.0
model = numpyro.handlers.reparam(sv_loop, config=lambda m: LocScaleReparam(LAMBDA)
                                 if m["name"].startswith("h_") and not m["name"].endswith("_decentered") else None)
start = time.perf_counter()
mcmc = MCMC(NUTS(model), num_warmup=10, num_samples=10, num_chains=4, chain_method="vectorized", progress_bar=False)
mcmc.run(jax.random.PRNGKey(0), y)
seconds = time.perf_counter() - start
""",
}
_PROGRAMS["numpyro_half"] = _PROGRAMS["numpyro_ncp"].replace("LAMBDA = 0.0", "LAMBDA = 0.5")
# VIP's variational program (method="vip" with the paper's protocol: 3000 steps of 256 Monte Carlo
# draws, five learning rates and three starting lambdas vmapped in one program): issue 9 saw XLA warn
# of a "very slow compile" of the variational program on this model.
_PROGRAMS["vip_fit"] = r"""
import autoreparam as ar
result = ar.fit_vip(sv_loop, y, discrete=False, config=ar.VIConfig(progress=False))
seconds = result.timing["vip"]["compile_seconds"]
quality = {"fit_seconds": result.timing["vip"]["run_seconds"], "runs": result.timing["vip"]["runs"]}
"""
# The same model with its path in ``numpyro.contrib.control_flow.scan``: one copy of the step. A whole
# run (4 chains x 1000 + 1000), since compiling is cheap here; the quality of the draws is recorded.
_SCAN_MODEL = r"""
from numpyro.contrib.control_flow import scan
def sv_scan(y):
    mu, phi, sigma, h0 = first_day(y)
    def step(h, y_t):
        h = numpyro.sample("h", dist.Normal(mu + phi * (h - mu), sigma))
        numpyro.sample("y", dist.Normal(0.0, jnp.exp(h / 2)), obs=y_t)
        return h, None
    scan(step, h0, y[1:])
def sv_scan_by_hand(y):
    # The expert's hand choice: h_0 and the path non-centred with NumPyro's LocScaleReparam, which
    # reaches the scan body only when written inside it.
    from numpyro.infer.reparam import LocScaleReparam
    non_centred = lambda names: numpyro.handlers.reparam(config={n: LocScaleReparam(0.0) for n in names})
    with non_centred(["h_0"]):
        mu, phi, sigma, h0 = first_day(y)
    def step(h, y_t):
        with non_centred(["h"]):
            h = numpyro.sample("h", dist.Normal(mu + phi * (h - mu), sigma))
        numpyro.sample("y", dist.Normal(0.0, jnp.exp(h / 2)), obs=y_t)
        return h, None
    scan(step, h0, y[1:])
import time, warnings
from autoreparam.diagnostics.standard import standard_diagnostics
"""
_PROGRAMS["auto_scan"] = _SCAN_MODEL + r"""
import autoreparam as ar
start = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    result = ar.infer(sv_scan, y, method="auto", num_chains=4, num_warmup=1000, num_samples=1000, seed=SEED,
                      progress=False)
seconds = time.perf_counter() - start
quality = {"min_ess_bulk": float(result.diagnostics.standard.min_ess_bulk),
           "max_r_hat": float(result.diagnostics.standard.max_r_hat), "trustworthy": bool(result.trustworthy),
           "divergences": int(result.diagnostics.divergences),
           "decision": result.decision.splitlines()[0][:80]}
"""
_NUMPYRO_SCAN = r"""
from numpyro.infer import MCMC, NUTS
start = time.perf_counter()
mcmc = MCMC(NUTS(MODEL), num_warmup=1000, num_samples=1000, num_chains=4, chain_method="vectorized",
            progress_bar=False)
mcmc.run(jax.random.PRNGKey(SEED), y)
samples = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()
           if k in ("mu", "phi", "sigma", "h_0", "h")}
seconds = time.perf_counter() - start
standard = standard_diagnostics(samples)
quality = {"min_ess_bulk": float(standard.min_ess_bulk), "max_r_hat": float(standard.max_r_hat),
           "divergences": int(np.sum(mcmc.get_extra_fields()["diverging"]))}
"""
_PROGRAMS["vip_fit_scan"] = _SCAN_MODEL + _PROGRAMS["vip_fit"].replace("sv_loop", "sv_scan")
_PROGRAMS["numpyro_scan"] = _SCAN_MODEL + _NUMPYRO_SCAN.replace("MODEL", "sv_scan")
_PROGRAMS["numpyro_scan_ncp"] = _SCAN_MODEL + _NUMPYRO_SCAN.replace("MODEL", "sv_scan_by_hand")
_TAIL = r"""
import json
print(json.dumps({"seconds": seconds, **globals().get("quality", {})}))
"""


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_cell(steps: int, program: str, src: str | None, limit_gb: float, timeout: float, seed: int = 0) -> dict:
    code = _MODEL.replace("STEPS", str(steps)) + _PROGRAMS[program].replace("SEED", str(seed)) + _TAIL
    env = {**os.environ, "AUTOREPARAM_COMPILATION_CACHE": "0", "JAX_PLATFORMS": "cpu"}
    if src:
        env["PYTHONPATH"] = str(Path(src).resolve())
    start, peak, outcome = time.perf_counter(), 0, "finished"
    child = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    while child.poll() is None:
        peak = max(peak, _rss_kb(child.pid))
        if peak > limit_gb * 1e6:
            child.kill()
            outcome = f"killed above {limit_gb:g} GB"
        elif time.perf_counter() - start > timeout:
            child.kill()
            outcome = f"killed after {timeout:.0f} s"
        time.sleep(0.25)
    out, err = child.communicate()
    cell = {"steps": steps, "program": program, "seed": seed, "outcome": outcome, "peak_rss_gb": peak / 1e6,
            "wall_seconds": time.perf_counter() - start}
    if outcome == "finished":
        if child.returncode != 0:
            cell["outcome"] = f"failed: {err.strip().splitlines()[-1] if err.strip() else child.returncode}"
        else:
            cell.update(json.loads(out.strip().splitlines()[-1]))
    return cell


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="20,40,100")
    parser.add_argument("--programs", default="rule,nuts_segment,numpyro_ncp,numpyro_half")
    parser.add_argument("--seeds", default="0", help="seeds of the whole runs (scan programs)")
    parser.add_argument("--src", default=None, help="run the children on this checkout's src folder")
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--memory-limit-gb", type=float, default=12.0)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per cell")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    cells, started = [], time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())
    for steps in (int(s) for s in args.steps.split(",")):
        for seed in (int(s) for s in args.seeds.split(",")):
            for program in args.programs.split(","):
                cell = run_cell(steps, program, args.src, args.memory_limit_gb, args.timeout, seed)
                cells.append(cell)
                seconds = f"{cell['seconds']:.1f} s" if "seconds" in cell else "-"
                quality = (f"  ESS {cell['min_ess_bulk']:.0f} R-hat {cell['max_r_hat']:.3f}"
                           if "min_ess_bulk" in cell else "")
                print(f"T={steps:4d} seed {seed} {program:16s} {seconds:>9s}  peak {cell['peak_rss_gb']:.2f} GB"
                      f"{quality}  {cell['outcome']}", flush=True)
    payload = {"label": args.label, "src": args.src, "started": started, "machine": platform.platform(),
               "cpus": os.cpu_count(), "memory_limit_gb": args.memory_limit_gb, "cells": cells}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(payload, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

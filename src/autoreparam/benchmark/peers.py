"""Peers in the same run: what a NumPyro user would do today.

- ``numpyro_nuts_cp``: NumPyro's NUTS with default settings on the model as written.
- ``numpyro_nuts_ncp``: the same on the model non-centred with ``LocScaleReparam(0)``.
- ``numpyro_vip``: NumPyro's VIP workflow: ``LocScaleReparam(centered=None)`` (one learnable centring
  per site) fitted with an ``AutoNormal`` guide by SVI, then NUTS with the centring fixed.

- ``nutpie_cp``: nutpie's Rust NUTS on a PyMC port of the centred model (``nutpie_peer.py``; needs the
  optional ``peers`` extra, and is skipped with a note where it is not installed).

Sites: those our default policy picks (latents whose prior depends on another latent), which is what a
NumPyro user would reparameterise. Every phase is timed: ``compile`` (JAX's tracing, lowering and
compilation inside SVI, warm-up and sampling, measured by ``CompileMeter``), ``variational`` (SVI less
its compilation), ``warmup`` and ``sampling`` (each less the compilation it triggered).
"""

from __future__ import annotations

import time

import jax
import numpy as np
import numpyro
from numpyro.handlers import reparam
from numpyro.infer import MCMC, NUTS, SVI, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal
from numpyro.infer.reparam import LocScaleReparam

from autoreparam.benchmark.compile_meter import CompileMeter
from autoreparam.benchmark.summary import summarise
from autoreparam.benchmark.workspace import Workspace
from autoreparam.mcmc.chains import ChainResult
from autoreparam.reparam.selection import select_sites

SVI_LEARNING_RATE = 0.01
NUTPIE = "nutpie_cp"


def _nuts(model, ws: Workspace, seed: int, names) -> tuple[ChainResult, dict]:
    p, prob = ws.protocol, ws.problem
    mcmc = MCMC(
        NUTS(model), num_warmup=p.nuts_warmup, num_samples=p.nuts_samples, num_chains=p.nuts_chains,
        chain_method="vectorized", progress_bar=False,
    )
    key = jax.random.PRNGKey(seed)
    start = time.perf_counter()
    with CompileMeter() as warm_compile:
        mcmc.warmup(key, *prob.args, collect_warmup=True, extra_fields=("num_steps", "diverging"), **prob.kwargs)
        warm = {k: np.asarray(v) for k, v in mcmc.get_extra_fields(group_by_chain=True).items()}
    warmup_seconds = time.perf_counter() - start
    start = time.perf_counter()
    with CompileMeter() as run_compile:  # the sampling phase compiles its own program
        mcmc.run(mcmc.post_warmup_state.rng_key, *prob.args, extra_fields=("num_steps", "diverging"), **prob.kwargs)
        extra = {k: np.asarray(v) for k, v in mcmc.get_extra_fields(group_by_chain=True).items()}
    sampling_seconds = time.perf_counter() - start
    samples = {n: np.asarray(v) for n, v in mcmc.get_samples(group_by_chain=True).items() if n in names}
    flat = np.concatenate(
        [samples[n].reshape(samples[n].shape[:2] + (-1,)) for n in sorted(names)], axis=-1
    )
    chains = ChainResult(
        kernel="nuts",
        draws=flat,
        grad_evals=extra["num_steps"].sum(axis=1).astype(float),
        warmup_grad_evals=warm["num_steps"].sum(axis=1).astype(float),
        acceptance=np.full((flat.shape[0], 1), np.nan),
        divergences=extra["diverging"].sum(axis=1),
        warmup_divergences=warm["diverging"].sum(axis=1),
        step_size=np.full((flat.shape[0], 1), np.nan),
        num_leapfrog=None,
        seconds={
            "compile": warm_compile.seconds + run_compile.seconds,
            "warmup": warmup_seconds - warm_compile.seconds,
            "sampling": sampling_seconds - run_compile.seconds,
        },
    )
    return chains, samples


def _svi_centring(model, ws: Workspace, sites, seed: int) -> tuple[dict, dict]:
    """The SVI-learned centring per site, and the seconds of SVI: its compilation and the rest."""
    learnable = reparam(model, config={s: LocScaleReparam(centered=None) for s in sites})
    guide = AutoNormal(learnable)
    svi = SVI(learnable, guide, numpyro.optim.Adam(SVI_LEARNING_RATE), Trace_ELBO())
    start = time.perf_counter()
    with CompileMeter() as compiling:
        result = svi.run(
            jax.random.PRNGKey(seed), ws.protocol.peer_svi_steps, *ws.problem.args, progress_bar=False,
            **ws.problem.kwargs,
        )
        centring = {s: np.asarray(result.params[f"{s}_centered"]) for s in sites}
    total = time.perf_counter() - start
    return centring, {"compile": compiling.seconds, "variational": total - compiling.seconds}


def missing_requirement(peer: str) -> str | None:
    """Why ``peer`` cannot run in this environment (an optional extra not installed), or None."""
    if peer == NUTPIE:
        from autoreparam.benchmark.nutpie_peer import missing_extra

        return missing_extra()
    return None


def run_peer_cell(ws: Workspace, peer: str, seed: int) -> None:
    if peer == NUTPIE:
        from autoreparam.benchmark.nutpie_peer import run_nutpie_cell

        run_nutpie_cell(ws, seed)
        return
    model = ws.problem.model
    names = set(ws.structure.names)
    sites = select_sites(ws.structure, "default").names
    seconds = {}
    lam = {}
    if peer == "numpyro_nuts_cp":
        target = model
    elif peer == "numpyro_nuts_ncp":
        target = reparam(model, config={s: LocScaleReparam(0.0) for s in sites})
    elif peer == "numpyro_vip":
        lam, seconds = _svi_centring(model, ws, sites, seed)
        target = reparam(model, config={s: LocScaleReparam(centered=lam[s]) for s in sites})
    else:
        raise ValueError(f"unknown peer '{peer}'")
    chains, samples = _nuts(target, ws, seed, names)
    for phase, value in chains.seconds.items():
        seconds[phase] = seconds.get(phase, 0.0) + value
    total = sum(seconds.values())
    record, arrays = summarise(chains, samples, ws.protocol.keep_draws)
    record.update(
        {
            **ws.describe(),
            "kind": "peer",
            "method": peer,
            "seed": seed,
            "seconds": {**seconds, "total": total},
            "ess_bulk_per_second": record["min_ess_bulk"] / total,
            "lambda": {n: np.asarray(v).ravel() for n, v in lam.items()},
        }
    )
    ws.store.save(f"peer__{ws.name}__{peer}__s{seed}", record, arrays)


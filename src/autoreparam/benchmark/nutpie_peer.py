"""The nutpie peer (``nutpie_cp``): the centred model ported to PyMC, sampled by nutpie's Rust NUTS.

What a speed-minded user picks today: ``nutpie.compile_pymc_model`` (numba backend, nutpie's default)
and ``nutpie.sample`` with its defaults (diagonal mass matrix adapted from draws and gradients,
``cores = min(chains, CPUs)``), with the protocol's chains, tuning and draws. Nothing is
reparameterised: this is the user's centred model, as ``numpyro_nuts_cp`` is.

Phases: ``compile`` is the PyMC model build plus nutpie's compilation (PyTensor graph -> numba);
``warmup`` and ``sampling`` split nutpie's one sampler call by its gradient evaluations (``n_steps``
per draw, tuning and sampling), because nutpie 0.16 reports no per-draw times and runs more chains
than cores (four on two), so one chain's tuning and another's sampling interleave and the phases
have no wall-clock boundary. The split assumes a gradient costs the same in both phases, which holds up to
nutpie's mass-matrix updates during tuning.

Compilation is cheaper after the first in a process (numba and PyTensor warm up once: radon MN
compiled in 8.5 s alone, 2.7 s after eight schools, on a loaded 2-core machine); a benchmark runs
every model in one process, so each record says how many nutpie compilations preceded it.

PyMC and nutpie are the optional ``peers`` extra (``make peers``): they are imported only when a cell
runs, and ``missing_extra()`` says what to install when they are absent.
"""

from __future__ import annotations

import itertools
import time
from importlib import metadata

import numpy as np

from autoreparam.benchmark import pymc_ports
from autoreparam.mcmc.chains import ChainResult

PEER = "nutpie_cp"
# nutpie's default. Its jax backend (measured once each, loaded 2-core machine) compiled faster but
# sampled about 10x slower per gradient through Python callbacks: German credit 77 s and 0.6 ESS/s
# against numba's 78 s and 7.9; eight schools 18 s against 5.8 s; only radon MN's total was lower
# (6.1 s against 9.0 s), because numba's compilation dominates such a short run.
BACKEND = "numba"
_COMPILATIONS = itertools.count()  # per process: the first compilation pays numba's start-up
INSTALL_HINT = "install the optional peers extra: `make peers` (pip install -r requirements-peers.lock)"


def missing_extra() -> str | None:
    """Why the nutpie peer cannot run here, or None when PyMC and nutpie import."""
    for module in ("pymc", "nutpie"):
        try:
            __import__(module)
        except ImportError as error:
            return f"{PEER} needs {module} ({error}); {INSTALL_HINT}"
    return None


def peer_versions() -> dict:
    return {name: metadata.version(name) for name in ("nutpie", "pymc", "pytensor", "numba")}


def _per_chain_sum(stats, name: str) -> np.ndarray:
    return np.asarray(stats[name]).astype(float).sum(axis=1)


def sample_nutpie(problem, *, chains: int, tune: int, draws: int, seed: int, backend: str = BACKEND):
    """Build, compile and sample ``problem``'s PyMC port with nutpie.

    Returns ``(ChainResult, samples, info)``: draws in the original coordinates keyed by site name
    (``(chains, draws, *shape)``), gradient evaluations per chain (tuning and sampling), divergences,
    and ``info`` with the backend, the cores used and the sampler call's wall time.
    """
    import nutpie

    start = time.perf_counter()
    compiled = nutpie.compile_pymc_model(pymc_ports.build(problem), backend=backend)
    compile_seconds = time.perf_counter() - start
    compiled_before = next(_COMPILATIONS)
    start = time.perf_counter()
    trace = nutpie.sample(compiled, draws=draws, tune=tune, chains=chains, seed=seed, progress_bar=False)
    sampler_seconds = time.perf_counter() - start

    stats, warm = trace.sample_stats, trace.warmup_sample_stats
    samples = {name: np.asarray(trace.posterior[name]) for name in sorted(trace.posterior.data_vars)}
    num_chains = next(iter(samples.values())).shape[0]
    flat = np.concatenate([v.reshape(v.shape[:2] + (-1,)) for v in samples.values()], axis=-1)
    grads, warm_grads = _per_chain_sum(stats, "n_steps"), _per_chain_sum(warm, "n_steps")
    warm_share = warm_grads.sum() / (warm_grads.sum() + grads.sum())
    chains_result = ChainResult(
        kernel="nuts",
        draws=flat,
        grad_evals=grads,
        warmup_grad_evals=warm_grads,
        acceptance=np.asarray(stats["mean_tree_accept"], dtype=float).mean(axis=1, keepdims=True),
        divergences=_per_chain_sum(stats, "diverging").astype(int),
        warmup_divergences=_per_chain_sum(warm, "diverging").astype(int),
        step_size=np.asarray(stats["step_size"], dtype=float)[:, -1:],  # fixed after tuning
        num_leapfrog=None,
        seconds={
            "compile": compile_seconds,
            "warmup": sampler_seconds * warm_share,
            "sampling": sampler_seconds * (1.0 - warm_share),
        },
    )
    info = {
        "backend": backend,
        "cores": min(num_chains, _cpu_count()),
        "sampler_seconds": sampler_seconds,
        "compiled_before_in_process": compiled_before,
        "phase_split": "warmup and sampling split the sampler call's wall time by gradient evaluations",
    }
    return chains_result, samples, info


def _cpu_count() -> int:
    # nutpie's own default for ``cores`` (os.cpu_count on Python 3.11).
    import os

    return os.cpu_count() or 1


def run_nutpie_cell(ws, seed: int) -> None:
    """One ``nutpie_cp`` cell of the benchmark: protocol's NUTS chains, tuning and draws."""
    from autoreparam.benchmark.summary import summarise

    p = ws.protocol
    chains, samples, info = sample_nutpie(
        ws.problem, chains=p.nuts_chains, tune=p.nuts_warmup, draws=p.nuts_samples, seed=seed
    )
    missing = sorted(set(ws.structure.names) - set(samples))
    if missing:  # a port that drifted from its model must not be scored on fewer elements
        raise RuntimeError(f"PyMC port of {ws.name} lacks latent site(s) {missing}")
    record, arrays = summarise(chains, samples, p.keep_draws)
    total = sum(chains.seconds.values())
    grads = float(np.sum(chains.grad_evals))
    record.update(
        {
            **ws.describe(),
            "kind": "peer",
            "method": PEER,
            "seed": seed,
            "seconds": {**chains.seconds, "total": total},
            "ess_bulk_per_second": record["min_ess_bulk"] / total,
            "min_ess_bulk_per_1000_grads": 1000.0 * record["min_ess_bulk"] / grads,
            "peer_versions": peer_versions(),
            **info,
        }
    )
    ws.store.save(f"peer__{ws.name}__{PEER}__s{seed}", record, arrays)

"""Turn one sampler run into a cell record (JSON) and its arrays (npz) for the report."""

from __future__ import annotations

import platform

import numpy as np

from autoreparam.diagnostics.ess import paper_metric
from autoreparam.diagnostics.standard import standard_diagnostics
from autoreparam.mcmc.chains import ChainResult

NUM_CHECKPOINTS = 16
MAX_RUNNING_CHAINS = 20  # enough chains for Appendix D's expected errors; bounds the arrays kept


def versions() -> dict:
    import blackjax
    import jax
    import numpyro
    import optax

    import autoreparam

    return {
        "autoreparam": autoreparam.__version__,
        "jax": jax.__version__,
        "numpyro": numpyro.__version__,
        "blackjax": blackjax.__version__,
        "optax": optax.__version__,
        "python": platform.python_version(),
        "device": str(jax.devices()[0].device_kind),
        "machine": platform.machine(),
    }


def running_moments(flat: np.ndarray, num_checkpoints: int = NUM_CHECKPOINTS):
    """Per-chain running mean and sd (ddof 0) of ``flat`` (chains, draws, dim) at log-spaced draw counts."""
    num_draws = flat.shape[1]
    counts = np.unique(np.round(np.logspace(0, np.log10(num_draws), num_checkpoints)).astype(int))
    total = np.cumsum(flat, axis=1, dtype=np.float64)[:, counts - 1]
    total_sq = np.cumsum(np.square(flat, dtype=np.float64), axis=1)[:, counts - 1]
    mean = total / counts[None, :, None]
    var = np.maximum(total_sq / counts[None, :, None] - mean**2, 0.0)
    return counts, mean.astype(np.float32), np.sqrt(var).astype(np.float32)


def summarise(chains: ChainResult, samples: dict, keep_draws: int) -> tuple[dict, dict]:
    """The paper metric, ArviZ diagnostics and health counters, plus arrays for figures."""
    metric = paper_metric(samples, chains.grad_evals)
    # ArviZ's rank-normalised diagnostics cost O(chains x draws x elements x log); a subset of chains
    # keeps them affordable for paper-scale runs (the paper metric above uses every chain).
    standard = standard_diagnostics({k: v[:MAX_RUNNING_CHAINS] for k, v in samples.items()})
    flat = chains.draws
    counts, run_mean, run_sd = running_moments(flat[:MAX_RUNNING_CHAINS])
    thin = max(1, flat.shape[1] // keep_draws)
    record = {
        "ess_per_1000_grads": {"mean": metric.mean, "se": metric.se, "per_chain": metric.per_chain},
        "worst_element": metric.min_element_name,
        "min_ess_bulk": standard.min_ess_bulk,
        "min_ess_tail": standard.min_ess_tail,
        "max_r_hat": standard.max_r_hat,
        "grad_evals_per_chain": chains.grad_evals,
        "warmup_grad_evals_per_chain": chains.warmup_grad_evals,
        "divergences": int(np.sum(chains.divergences)),
        "warmup_divergences": int(np.sum(chains.warmup_divergences)),
        "acceptance": chains.acceptance.mean(axis=0),
        "step_size": np.median(chains.step_size, axis=0),
        "num_chains": chains.num_chains,
        "num_draws": chains.num_draws,
        "seconds": dict(chains.seconds),
    }
    arrays = {
        "element_names": np.array(metric.element_names),
        "pooled_mean": flat.reshape(-1, flat.shape[-1]).mean(axis=0),
        "pooled_sd": flat.reshape(-1, flat.shape[-1]).std(axis=0),
        "checkpoint_draws": counts,
        "grad_evals_per_draw": np.asarray(chains.grad_evals / chains.num_draws),
        "running_mean": run_mean,
        "running_sd": run_sd,
        "thinned_draws": flat[: min(4, flat.shape[0]), ::thin].astype(np.float32),
    }
    return record, arrays

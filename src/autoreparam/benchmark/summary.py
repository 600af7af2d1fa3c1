"""Turn one sampler run into a cell record (JSON) and its arrays (npz) for the report."""

from __future__ import annotations

import platform

import numpy as np

from autoreparam.diagnostics.ess import paper_metric
from autoreparam.diagnostics.standard import standard_diagnostics
from autoreparam.mcmc.chains import ChainResult

NUM_CHECKPOINTS = 16
MAX_RUNNING_CHAINS = 20  # enough chains for Appendix D's expected errors; bounds the arrays kept
# Draws (chains x draws x elements) per call of the ArviZ-style diagnostics: bounds their memory
# (several float64 copies of a block) at paper scale, 100 chains x 50,000 draws.
DIAGNOSTIC_BLOCK_VALUES = 4_000_000


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
    # Every chain, as the paper metric: bulk ESS is divided by the seconds of all chains (cells.py,
    # report/workflows.py), so ESS of the first 20 understated VIP-HMC's ESS per second by about
    # chains / 20 (paper protocol: 100 chains). Blocks of elements keep the memory bounded.
    standard = all_chain_diagnostics(samples)
    flat = chains.draws
    counts, run_mean, run_sd = running_moments(flat[:MAX_RUNNING_CHAINS])
    thin = max(1, flat.shape[1] // keep_draws)
    record = {
        "ess_per_1000_grads": {"mean": metric.mean, "se": metric.se, "per_chain": metric.per_chain},
        "worst_element": metric.min_element_name,
        "min_ess_bulk": standard["min_ess_bulk"],
        "min_ess_tail": standard["min_ess_tail"],
        "max_r_hat": standard["max_r_hat"],
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


def all_chain_diagnostics(samples: dict, block_values: int = DIAGNOSTIC_BLOCK_VALUES) -> dict:
    """``min_ess_bulk``, ``min_ess_tail`` and ``max_r_hat`` of ``standard_diagnostics(samples)``, over
    every chain, computed on blocks of elements (each element's diagnostics are its own)."""
    bulk, tail, r_hat = [], [], []
    for name, values in samples.items():
        values = np.asarray(values)
        flat = values.reshape(values.shape[:2] + (-1,))
        step = max(1, block_values // max(1, flat.shape[0] * flat.shape[1]))
        for start in range(0, flat.shape[2], step):
            part = standard_diagnostics({name: flat[:, :, start:start + step]})
            bulk.append(part.min_ess_bulk)
            tail.append(part.min_ess_tail)
            r_hat.append(part.max_r_hat)
    # The reductions of standard_diagnostics: min propagates NaN, max skips it (NaN only if all are).
    r_hat = [v for v in r_hat if not np.isnan(v)]
    return {
        "min_ess_bulk": float(np.min(bulk)) if bulk else float("nan"),
        "min_ess_tail": float(np.min(tail)) if tail else float("nan"),
        "max_r_hat": float(np.max(r_hat)) if r_hat else float("nan"),
    }

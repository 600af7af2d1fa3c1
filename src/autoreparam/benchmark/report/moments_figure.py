"""Appendix D (paper 002): error of single-chain moments against a gold standard, per model.

The gold standard is the per-element median, over CP-HMC, NCP-HMC, iHMC and VIP-HMC at their oracle
L, of each method's pooled mean and sd (``autoreparam.diagnostics.moments.gold_standard`` computes
the same from draws; the cells keep only the pooled moments, so the median is taken here). The
running moments were computed per chain at checkpoints by the harness, so the errors

    r_bar(t) = 1/N sum_i (1/K sum_k |mu_hat_{i,k}(t) - mu_i|) / sigma_i,
    s_bar(t) = 1/N sum_i (1/K sum_k |sigma_hat_{i,k}(t) - sigma_i|) / sigma_i

follow ``diagnostics.moments.moment_errors`` with t in gradient evaluations. Elements whose gold sd
is not positive (a stuck sampler everywhere) are left out of the averages.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autoreparam.benchmark.report.collect import HMC_METHODS, METHOD_LABELS, Collected
from autoreparam.benchmark.report.figures import COLOURS, new_figure, save
from autoreparam.diagnostics.moments import GoldStandard

GOLD_METHODS = ("cp", "ncp", "ihmc", "vip")
NEEDED = ("pooled_mean", "pooled_sd", "running_mean", "running_sd", "checkpoint_draws", "grad_evals_per_draw")


def _arrays(collected: Collected, keys) -> list[dict]:
    """The cells' arrays that hold everything this figure reads (cells without arrays are skipped; a
    damaged file is an error naming it, not a silent gap in the figure)."""
    out = []
    for key in keys:
        if not collected.store.has_arrays(key):
            continue
        arrays = collected.store.arrays(key)
        if all(name in arrays for name in NEEDED):
            out.append(arrays)
    return out


def _pooled(arrays: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Pool one method's seeds (equal weights per seed): mean and sd (ddof = 0) of all draws."""
    means = np.stack([a["pooled_mean"].astype(float) for a in arrays])
    second = np.stack([a["pooled_sd"].astype(float) ** 2 + a["pooled_mean"].astype(float) ** 2 for a in arrays])
    mean = means.mean(axis=0)
    return mean, np.sqrt(np.maximum(second.mean(axis=0) - mean**2, 0.0))


def gold(collected: Collected, choices: dict, model: str) -> GoldStandard | None:
    """Median over the available gold methods; ``GoldStandard`` with one flat entry ``"all"``."""
    moments = []
    for method in GOLD_METHODS:
        choice = choices.get((model, method))
        arrays = _arrays(collected, choice.keys) if choice else []
        if arrays:
            moments.append(_pooled(arrays))
    if not moments:
        return None
    return GoldStandard(
        mean={"all": np.median([m[0] for m in moments], axis=0)},
        sd={"all": np.median([m[1] for m in moments], axis=0)},
    )


def running_errors(arrays: dict, reference: GoldStandard) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gradient evaluations, r_bar, s_bar) at the cell's checkpoints."""
    mu, sigma = reference.mean["all"], reference.sd["all"]
    keep = np.isfinite(sigma) & (sigma > 0) & np.isfinite(mu)
    grads = arrays["checkpoint_draws"] * float(np.mean(arrays["grad_evals_per_draw"]))
    if not keep.any():
        return grads, np.full(grads.shape, np.nan), np.full(grads.shape, np.nan)
    mean_err = np.abs(arrays["running_mean"][..., keep] - mu[keep]).mean(axis=0) / sigma[keep]
    sd_err = np.abs(arrays["running_sd"][..., keep] - sigma[keep]).mean(axis=0) / sigma[keep]
    return grads, mean_err.mean(axis=-1), sd_err.mean(axis=-1)


def curves(collected: Collected, choices: dict, model: str) -> dict[str, tuple]:
    """``{method: (grads, r_bar, s_bar)}``, averaged over seeds whose checkpoints agree."""
    reference = gold(collected, choices, model)
    if reference is None:
        return {}
    out = {}
    for method in HMC_METHODS:
        choice = choices.get((model, method))
        arrays = _arrays(collected, choice.keys) if choice else []
        runs = [running_errors(a, reference) for a in arrays]
        runs = [r for r in runs if r[0].shape == runs[0][0].shape and np.allclose(r[0], runs[0][0])]
        if runs:
            out[method] = (runs[0][0], np.mean([r[1] for r in runs], axis=0), np.mean([r[2] for r in runs], axis=0))
    return out


def fig_moments(collected: Collected, choices: dict, path: Path) -> Path | None:
    """One row per model: r_bar(t) and s_bar(t) against gradient evaluations, one line per method."""
    rows = [(m, curves(collected, choices, m)) for m in collected.models]
    rows = [(m, c) for m, c in rows if c]
    if not rows:
        return None
    figure = new_figure(8.0, 2.4 * len(rows) + 0.6)
    for i, (model, per_method) in enumerate(rows):
        for j, (what, index) in enumerate((("means", 1), ("standard deviations", 2))):
            axes = figure.add_subplot(len(rows), 2, 2 * i + j + 1)
            for method, values in per_method.items():
                grads, err = values[0], values[index]
                ok = (grads > 0) & np.isfinite(err) & (err > 0)
                axes.plot(grads[ok], err[ok], color=COLOURS[method], label=METHOD_LABELS[method])
            if axes.has_data():
                axes.set_xscale("log")
                axes.set_yscale("log")
            axes.set_title(f"{model}: error of {what}", fontsize=8)
            axes.set_xlabel("gradient evaluations", fontsize=7)
            axes.set_ylabel(r"$\bar r(t)$" if index == 1 else r"$\bar s(t)$", fontsize=8)
            axes.tick_params(labelsize=7)
            if i == 0 and j == 0 and axes.has_data():
                axes.legend(fontsize=6)
    figure.tight_layout()
    return save(figure, path)

"""Figures 5, 6 and 7 of paper 000 Section 6 from the benchmark cells.

- Figure 5: radon by state, ESS per 1000 gradients (oracle L) with 95% intervals per method.
- Figure 6: the other models, the same, with a panel of the ELBO of the CP, NCP and VIP fits.
- Figure 7: the VIP lambda of every element of every model (light = centred, dark = non-centred).

matplotlib is imported inside the functions (importing autoreparam never loads it) and figures are
drawn on an Agg canvas directly, leaving the caller's pyplot backend alone.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from autoreparam.benchmark.report.collect import HMC_METHODS, METHOD_LABELS, Collected
from autoreparam.benchmark.report.oracle import Z95

COLOURS = {"cp": "tab:blue", "ncp": "tab:orange", "ihmc": "tab:green", "vip": "tab:red", "vip_discrete": "tab:purple", "vip_ms": "tab:brown"}
ELBO_LABELS = ("cp", "ncp", "vip")


def new_figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    return figure


def save(figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    return path


def radon_models(models) -> list[str]:
    return [m for m in models if m.startswith("radon_")]


def ess_panel(axes, models, choices: dict) -> None:
    """ESS per 1000 gradients at the oracle L, 95% intervals, one group of points per model."""
    width = 0.8 / len(HMC_METHODS)
    positive = True
    for j, method in enumerate(HMC_METHODS):
        xs, ys, lo, hi = [], [], [], []
        for i, model in enumerate(models):
            choice = choices.get((model, method))
            if choice is None or not choice.estimate.ok:
                continue
            e = choice.estimate
            half = Z95 * e.se if math.isfinite(e.se) else 0.0
            xs.append(i - 0.4 + width * (j + 0.5))
            ys.append(e.mean)
            lo.append(min(half, e.mean) if e.mean > 0 else 0.0)  # keep log axes finite
            hi.append(half)
            positive &= e.mean > 0
        if xs:
            axes.errorbar(xs, ys, yerr=[lo, hi], fmt="o", ms=4, capsize=2, color=COLOURS[method],
                          label=METHOD_LABELS[method])
    if positive and axes.has_data():
        axes.set_yscale("log")
    axes.set_xticks(range(len(models)))
    axes.set_xticklabels([m.removeprefix("radon_").upper() if m.startswith("radon_") else m for m in models],
                         rotation=30, ha="right")
    axes.set_ylabel("ESS / 1000 gradients")
    axes.grid(alpha=0.3, axis="y")


def fig5_radon(collected: Collected, choices: dict, path: Path) -> Path | None:
    """Figure 5 analogue: radon by state."""
    models = radon_models(collected.models)
    if not models:
        return None
    figure = new_figure(max(5.0, 1.0 * len(models) + 3), 3.8)
    axes = figure.add_subplot()
    ess_panel(axes, models, choices)
    axes.set_title("Radon by state: ESS per 1000 gradients (oracle L, 95% intervals)")
    if axes.get_legend_handles_labels()[0]:  # a model with peer cells only has no HMC points
        axes.legend(fontsize=7, loc="best")
    figure.tight_layout()
    return save(figure, path)


def _elbo(collected: Collected, model: str, label: str) -> tuple[float, float]:
    """Mean ELBO over seeds and the root-mean-square of their standard errors."""
    values, ses = [], []
    for r in collected.cells("vi", model):
        fit = (r.get("fits") or {}).get(label) or {}
        if fit.get("elbo") is not None:
            values.append(float(fit["elbo"]))
            ses.append(float(fit["elbo_se"]) if fit.get("elbo_se") is not None else math.nan)
    if not values:
        return math.nan, math.nan
    return float(np.mean(values)), float(np.sqrt(np.mean(np.square(ses))) / np.sqrt(len(ses)))


def fig6_others(collected: Collected, choices: dict, path: Path) -> Path | None:
    """Figure 6 analogue: every non-radon model's ESS, and the ELBO of its CP / NCP / VIP fits."""
    models = [m for m in collected.models if m not in radon_models(collected.models)]
    if not models:
        return None
    figure = new_figure(max(6.0, 2.2 * len(models)), 6.5)
    grid = figure.add_gridspec(2, len(models), height_ratios=(1.3, 1.0))
    axes = figure.add_subplot(grid[0, :])
    ess_panel(axes, models, choices)
    axes.set_title("ESS per 1000 gradients (oracle L, 95% intervals)")
    if axes.get_legend_handles_labels()[0]:  # a model with peer cells only has no HMC points
        axes.legend(fontsize=7, loc="best")
    for i, model in enumerate(models):
        panel = figure.add_subplot(grid[1, i])
        for j, label in enumerate(ELBO_LABELS):
            mean, se = _elbo(collected, model, label)
            if math.isfinite(mean):
                panel.errorbar([j], [mean], yerr=[Z95 * se if math.isfinite(se) else 0.0], fmt="s",
                               color=COLOURS[label], capsize=2)
        panel.set_xticks(range(len(ELBO_LABELS)))
        panel.set_xticklabels([lab.upper() for lab in ELBO_LABELS])
        panel.set_xlim(-0.5, len(ELBO_LABELS) - 0.5)
        panel.set_title(model, fontsize=8)
        panel.tick_params(labelsize=7)
        if i == 0:
            panel.set_ylabel("ELBO")
    figure.tight_layout()
    return save(figure, path)


def vip_lambdas(collected: Collected, model: str) -> tuple[list[str], np.ndarray] | None:
    """Element labels and the VIP lambda of each (mean over seeds) from the model's vi cells."""
    cells = [r for r in collected.cells("vi", model) if isinstance(r.get("lambda"), dict) and r["lambda"]]
    if not cells:
        return None
    sites = sorted(cells[0]["lambda"])
    labels = [f"{s}[{i}]" if len(cells[0]["lambda"][s]) > 1 else s for s in sites
              for i in range(len(cells[0]["lambda"][s]))]
    rows = np.stack([np.concatenate([np.asarray(r["lambda"][s], dtype=float).ravel() for s in sites]) for r in cells])
    finite = np.isfinite(rows)
    count = finite.sum(axis=0)
    mean = np.where(finite, rows, 0.0).sum(axis=0) / np.maximum(count, 1)
    return labels, np.where(count > 0, mean, np.nan)  # NaN (stored as null) where no seed has a value


def fig7_lambda(collected: Collected, path: Path) -> Path | None:
    """Figure 7 analogue: one strip per model, elements on x, grey level = lambda."""
    strips = [(m, vip_lambdas(collected, m)) for m in collected.models]
    strips = [(m, s) for m, s in strips if s is not None]
    if not strips:
        return None
    figure = new_figure(9.0, 0.9 * len(strips) + 1.2)
    image = None
    for i, (model, (labels, lam)) in enumerate(strips):
        axes = figure.add_subplot(len(strips), 1, i + 1)
        image = axes.imshow(lam[None, :], cmap="gray", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
        axes.set_yticks([0])
        axes.set_yticklabels([model], fontsize=8)
        step = max(1, len(labels) // 20)
        axes.set_xticks(range(0, len(labels), step))
        axes.set_xticklabels(labels[::step], rotation=90, fontsize=5)
    figure.suptitle("VIP lambda per element (light = centred, dark = non-centred)", fontsize=9)
    figure.tight_layout(rect=(0.0, 0.0, 0.9, 1.0))
    figure.colorbar(image, cax=figure.add_axes((0.92, 0.2, 0.015, 0.6)), label="lambda")
    return save(figure, path)

"""META.md's figures: the funnel lambda maps (paper 003's figure), Section 3, ESS ratios, training curves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from autoreparam.meta_eval.collect import Results, ess, lambda_of
from autoreparam.meta_eval.protocol import FUNNEL_SIGMA, FUNNEL_Y, SECTION3_SIGMA_MU


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def funnel_maps(results: Results, path: Path) -> Path | None:
    """lambda of x over the (y, sigma) grid: VIP, meta, the prototype (paper 003's "Comparison with VIP")."""
    if not results.funnel:
        return None
    plt = _pyplot()
    methods = [("vip", "per-model VIP"), ("meta", "meta (ours)"), ("prototype", "paper 003 prototype")]
    grid = {m: np.full((len(FUNNEL_SIGMA), len(FUNNEL_Y)), np.nan) for m, _ in methods}
    for row in results.funnel:
        i, j = FUNNEL_SIGMA.index(row["spec"]["sigma"]), FUNNEL_Y.index(row["spec"]["y"])
        for m, _ in methods:
            grid[m][i, j] = lambda_of(row, m)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), constrained_layout=True)
    for ax, (m, title) in zip(axes, methods):
        image = ax.imshow(grid[m], vmin=0, vmax=1, cmap="viridis", origin="lower", aspect="auto")
        for i in range(len(FUNNEL_SIGMA)):
            for j in range(len(FUNNEL_Y)):
                ax.text(j, i, f"{grid[m][i, j]:.2f}", ha="center", va="center", color="w", fontsize=8)
        ax.set_xticks(range(len(FUNNEL_Y)), [f"{y:g}" for y in FUNNEL_Y])
        ax.set_yticks(range(len(FUNNEL_SIGMA)), [f"{s:g}" for s in FUNNEL_SIGMA])
        ax.set_xlabel("y"), ax.set_ylabel("sigma"), ax.set_title(f"lambda of x: {title}")
    fig.colorbar(image, ax=axes, shrink=0.8)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def section3_figure(results: Results, path: Path) -> Path | None:
    if not results.section3:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(SECTION3_SIGMA_MU), figsize=(13, 3.6), constrained_layout=True, sharey=True)
    for ax, sigma_mu in zip(axes, SECTION3_SIGMA_MU):
        rows = [r for r in results.section3 if r["sigma_mu"] == sigma_mu]
        q = [r["q"] for r in rows]
        ax.plot(q, [r["best"] for r in rows], "k-", lw=2, label="lambda* (closed form)")
        for label, style in (("meta", "o-"), ("prototype", "s--")):
            if label in rows[0]:
                ax.plot(q, [r[label] for r in rows], style, label=label)
        for label in results.other_networks:
            if label in rows[0]:
                ax.plot(q, [r[label] for r in rows], ":", alpha=0.6, label=label)
        ax.set_xscale("log"), ax.set_xlabel("q = N / sigma^2"), ax.set_title(f"sigma_mu = {sigma_mu:g}")
    axes[0].set_ylabel("lambda of mu"), axes[0].legend(fontsize=7)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def ess_ratio_figure(results: Results, path: Path) -> Path | None:
    groups = [("funnel grid", results.funnel), ("held-out", results.held_out), ("zoo", results.zoo)]
    if not any(rows for _, rows in groups):
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.6), constrained_layout=True)
    for k, (name, rows) in enumerate(groups):
        for method, marker in (("meta", "o"), ("prototype", "x"), ("meta_vip", "^")):
            ratios = [ess(r, method) / ess(r, "vip") for r in rows if "nuts" in r]
            ax.scatter(k + 0.15 * ("meta", "prototype", "meta_vip").index(method) + np.zeros(len(ratios)), ratios,
                       marker=marker, label=method if k == 0 else None, alpha=0.7)
    ax.axhline(0.9, color="k", ls="--", lw=1), ax.set_yscale("log")
    ax.set_xticks(range(len(groups)), [g for g, _ in groups]), ax.set_ylabel("ESS per gradient / VIP's")
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def training_figure(runs: list[Path], path: Path) -> Path | None:
    logs = [(run, run / "log.jsonl") for run in runs if (run / "log.jsonl").exists()]
    if not logs:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4), constrained_layout=True)
    for run, log in logs:
        entries = [json.loads(line) for line in log.read_text().splitlines()]
        for ax, phase in zip(axes, ("regression", "elbo")):
            points = [(e["step"], e["loss"]) for e in entries if e.get("phase") == phase and e.get("loss") is not None]
            if points:
                steps, losses = zip(*points)
                window = max(1, len(losses) // 30)
                smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
                ax.plot(steps[window - 1:], smooth, label=run.name)
    axes[0].set_title("warm start: cross-entropy to VIP's lambda"), axes[1].set_title("ELBO phase: normalised regret")
    for ax in axes:
        ax.set_xlabel("step"), ax.legend(fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

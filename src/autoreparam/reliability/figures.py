"""Rank histograms (Talts et al. 2018, Figure 2 and Section 4.1): one figure per SBC model.

Rows are method/kernel cells, columns the model's parameters (up to `MAX_COLUMNS`, hierarchy first);
the grey band is the central 99% of a bin's count under uniform ranks (binomial). A histogram that
leaves the band in a pattern (a slope: bias; a U: draws too narrow; a hump: too wide) is what the
tests in `statistics` put a number on. matplotlib is imported inside the functions, on an Agg canvas.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy import stats

from autoreparam.reliability.ranks import NUM_THINNED, rank_bins
from autoreparam.reliability.statistics import number_of_bins

MAX_COLUMNS = 5


def new_figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    return figure


def _columns(labels: list[str]) -> list[int]:
    """The scalar parameters first (hyperparameters), then the first elements of vector sites."""
    scalars = [i for i, label in enumerate(labels) if "[" not in label]
    vectors = [i for i, label in enumerate(labels) if "[" in label]
    return (scalars + vectors)[:MAX_COLUMNS]


def rank_histograms(model: str, cells: dict, verdicts: dict, path: Path) -> Path:
    """``cells``: label -> {"rank": (n, k), "labels"}; ``verdicts``: label -> Calibration."""
    rows = [label for label in cells if len(cells[label]["rank"])]
    labels = cells[rows[0]]["labels"]
    columns = _columns(labels)
    height = 0.9 * len(rows) + 1.0
    figure = new_figure(1.8 * len(columns) + 1.4, height)
    axes = figure.subplots(len(rows), len(columns), squeeze=False, sharex=True)
    for r, label in enumerate(rows):
        rank = cells[label]["rank"]
        n = rank.shape[0]
        bins = number_of_bins(n, NUM_THINNED)
        counts = rank_bins(rank, NUM_THINNED, bins)
        low, high = stats.binom.ppf([0.005, 0.995], n, 1.0 / bins)
        verdict = verdicts.get(label)
        for c, j in enumerate(columns):
            ax = axes[r, c]
            ax.axhspan(low, high, color="0.85", zorder=0)
            ax.bar(np.arange(bins) + 0.5, counts[:, j], width=1.0, color="tab:red" if verdict is not None and
                   not verdict.passed and verdict.labels[int(np.argmin(verdict.adjusted_p))] == labels[j] else "tab:blue",
                   edgecolor="white", linewidth=0.3)
            ax.set_xlim(0, bins)
            ax.set_xticks([])
            ax.set_yticks([])
            if r == 0:
                ax.set_title(labels[j], fontsize=9)
        status = "n/a" if verdict is None else ("pass" if verdict.passed else "FAIL")
        axes[r, 0].set_ylabel(f"{label}\n{status}, n={n}", fontsize=7, rotation=0, ha="right", va="center")
    figure.suptitle(f"SBC rank histograms: {model} (grey: 99% band under uniform ranks; red: the cell's worst element)",
                    fontsize=9)
    figure.subplots_adjust(left=0.16, right=0.98, top=1 - 0.75 / height, bottom=0.02, wspace=0.08, hspace=0.15)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path

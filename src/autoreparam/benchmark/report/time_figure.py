"""Figure: where the time goes, one panel per model, a stacked horizontal bar per workflow.

Segments are the phases of ``report.phases`` (unknown phases get their own colours), plus the
unattributed rest where it is positive; a black tick marks the measured total, so overlapping phases
(bars that pass the tick) show as such. The ESS per second is written at the end of each bar.
"""

from __future__ import annotations

import math
from pathlib import Path

from autoreparam.benchmark.report.collect import Collected
from autoreparam.benchmark.report.figures import new_figure, save
from autoreparam.benchmark.report.phases import LABELS, PHASES, UNATTRIBUTED, ordered_phases, phase_rows

COLOURS = {"compile": "tab:red", "variational": "tab:purple", "warmup": "tab:orange", "pilots": "tab:olive",
           "sampling": "tab:blue", UNATTRIBUTED: "lightgrey"}
SPARE = ("tab:cyan", "tab:pink", "tab:brown", "tab:green", "tab:gray")


def _colour(phase: str, unknown: list[str]) -> str:
    return COLOURS.get(phase) or SPARE[unknown.index(phase) % len(SPARE)]


def fig_time_phases(collected: Collected, path: Path) -> Path | None:
    """One panel per model with timed workflows; None when no model has any."""
    panels = [(m, phase_rows(collected, m)) for m in collected.models]
    panels = [(m, rows) for m, rows in panels if rows]
    if not panels:
        return None
    phases = ordered_phases([row for _, rows in panels for row in rows.values()])
    unknown = [p for p in phases if p not in PHASES]
    height = sum(0.35 * len(rows) + 0.7 for _, rows in panels) + 0.8
    figure = new_figure(9.0, height)
    grid = figure.add_gridspec(len(panels), 1, height_ratios=[len(rows) + 1 for _, rows in panels])
    drawn = set()
    for i, (model, rows) in enumerate(panels):
        axes = figure.add_subplot(grid[i, 0])
        names = list(rows)
        for y, name in enumerate(names):
            row, left = rows[name], 0.0
            segments = [(p, row.seconds.get(p, 0.0)) for p in phases] + [(UNATTRIBUTED, row.unattributed)]
            for phase, width in segments:
                if not (math.isfinite(width) and width > 0):
                    continue
                axes.barh(y, width, left=left, color=_colour(phase, unknown), edgecolor="white", linewidth=0.5)
                drawn.add(phase)
                left += width
            if math.isfinite(row.total):
                axes.plot([row.total, row.total], [y - 0.4, y + 0.4], color="black", linewidth=1.2)
            rate = row.per_second.mean
            text = f" {rate:.3g} ESS/s" if math.isfinite(rate) else " n/a"
            axes.text(max(left, row.total if math.isfinite(row.total) else 0.0), y, text, va="center", fontsize=6)
        axes.set_yticks(range(len(names)))
        axes.set_yticklabels([LABELS.get(n, n) for n in names], fontsize=6)
        axes.invert_yaxis()
        axes.set_title(model, fontsize=8, loc="left")
        axes.tick_params(axis="x", labelsize=6)
        axes.margins(x=0.18)
        axes.grid(alpha=0.3, axis="x")
        if i == len(panels) - 1:
            axes.set_xlabel("seconds (mean over seeds; black tick: measured total)", fontsize=7)
    from matplotlib.patches import Patch

    handles = [Patch(color=_colour(p, unknown), label=PHASES.get(p, p)) for p in phases + [UNATTRIBUTED] if p in drawn]
    figure.legend(handles=handles, loc="upper center", ncol=min(6, len(handles)), fontsize=7, frameon=False)
    figure.tight_layout(rect=(0.0, 0.0, 1.0, 1.0 - 0.45 / height))
    return save(figure, path)

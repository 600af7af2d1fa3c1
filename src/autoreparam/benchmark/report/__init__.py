"""``autoreparam report``: benchmark cells -> BENCHMARKS.md and figures (paper 000 Section 6, 002 Appendix D).

``write_report(results_dir, out_dir)`` reads a ``ResultStore``, picks the oracle L per model and
method, builds the tables (ours, peers, published, targets) and draws Figures 5-8 and the Appendix D
figure into ``out_dir/figures/bench``. Failed cells are reported, never fatal.
"""

from __future__ import annotations

from pathlib import Path

from autoreparam.benchmark.report.collect import collect
from autoreparam.benchmark.report.oracle import oracle_choices
from autoreparam.benchmark.report.targets import evaluate
from autoreparam.benchmark.report.workflows import workflows
from autoreparam.benchmark.store import ResultStore
from autoreparam.errors import ArgumentError
from autoreparam.validation import output_folder

DEFAULT_COMMAND = "make bench && make report"
FIGURE_DIR = Path("figures") / "bench"

__all__ = ["write_report", "DEFAULT_COMMAND", "default_reading_path"]


def default_reading_path() -> Path:
    """``benchmarks/reading.md`` of the checkout this package runs from (editable or source install)."""
    # src/autoreparam/benchmark/report/__init__.py -> the repository root is four folders up.
    return Path(__file__).resolve().parents[4] / "benchmarks" / "reading.md"


def _figures(collected, choices, figure_dir: Path, data_dir) -> tuple[dict, list[str]]:
    from autoreparam.benchmark.report import figures
    from autoreparam.benchmark.report.marginals import fig8_german
    from autoreparam.benchmark.report.moments_figure import fig_moments
    from autoreparam.benchmark.report.time_figure import fig_time_phases

    drawn = {
        "Figure 5: radon by state": figures.fig5_radon(collected, choices, figure_dir / "fig5_radon.png"),
        "Figure 6: other models and their ELBOs": figures.fig6_others(
            collected, choices, figure_dir / "fig6_models_elbo.png"
        ),
        "Figure 7: VIP lambda per element": figures.fig7_lambda(collected, figure_dir / "fig7_lambda.png"),
        "Appendix D: error of single-chain moments": fig_moments(
            collected, choices, figure_dir / "appendix_d_moments.png"
        ),
        "Where the time goes: seconds per phase of each workflow": fig_time_phases(
            collected, figure_dir / "time_phases.png"
        ),
    }
    try:
        path, note = fig8_german(collected, choices, figure_dir / "fig8_german_credit.png", data_dir=data_dir)
    except Exception as error:  # noqa: BLE001 - a missing data file must not cost the whole report
        path, note = None, f"Figure 8 could not be drawn: {type(error).__name__}: {error}"
    drawn["Figure 8: German credit in CP, NCP and VIP coordinates"] = path
    return drawn, [note]


def write_report(
    results_dir,
    out_dir,
    *,
    command: str = DEFAULT_COMMAND,
    reading_path=None,
    data_dir=None,
    extra_results: dict | None = None,
    notes_path=None,
) -> Path:
    """Write ``out_dir/BENCHMARKS.md`` and ``out_dir/figures/bench/*.png``; returns the markdown's path.

    Args:
        results_dir: a ``ResultStore`` folder written by ``run_benchmark``.
        out_dir: where BENCHMARKS.md and figures/bench go (created if missing).
        command: the command that produced the results, quoted in the document.
        reading_path: the hand-written reading, included verbatim (default: ``default_reading_path()``).
        data_dir: model data for Figure 8 (default: ``$AUTOREPARAM_DATA``, else the user cache).
        extra_results: {title: results folder} of other runs (e.g. on a GPU at the paper's scale),
            appended as their own sections with the main and per-L tables (JSON records suffice).
        notes_path: a hand-written markdown file appended verbatim at the end (findings from other
            measurements that the cells do not hold); a missing file is an error, not a silent omission.
    """
    from autoreparam.benchmark.report.document import render

    # Checked before anything is written: an empty report would overwrite a committed BENCHMARKS.md.
    if ResultStore(results_dir).is_empty():
        raise ArgumentError(f"no benchmark results in {results_dir}: run `autoreparam bench --out {results_dir}` "
                            "first, or pass the folder a run wrote as --results")
    if notes_path is not None and not Path(notes_path).is_file():
        raise ArgumentError(f"--notes file {notes_path} not found")
    for title, folder in (extra_results or {}).items():
        if ResultStore(folder).is_empty():
            raise ArgumentError(f"--extra {title}={folder}: no benchmark results in {folder}")
    out = output_folder(out_dir)
    collected = collect(results_dir)
    choices = oracle_choices(collected)
    flows = {m: workflows(collected, m, choices.get((m, "vip"))) for m in collected.models}
    targets = evaluate(choices, flows, collected.models, collected.missing_models)
    drawn, notes = _figures(collected, choices, out / FIGURE_DIR, data_dir)
    reading = Path(reading_path) if reading_path is not None else default_reading_path()
    text = render(collected, choices, flows, targets, drawn, notes, out, command, reading)
    for title, folder in (extra_results or {}).items():
        text += _extra_section(title, folder)
    if notes_path is not None:
        text += "\n" + Path(notes_path).read_text()
    path = out / "BENCHMARKS.md"
    path.write_text(text)
    return path


def _extra_section(title: str, folder) -> str:
    """Another run's main and per-L tables, under its own heading."""
    from autoreparam.benchmark.report.tables import elbo_table, leapfrog_table, main_table

    extra = collect(folder)
    choices = oracle_choices(extra)
    settings = next((r.get("protocol") for r in extra.records if r.get("protocol")), {})
    keys = ("num_chains", "num_warmup", "num_samples", "adapt_fraction", "leapfrog_grid", "grid_patience")
    protocol = ", ".join(f"{k} {settings[k]}" for k in keys if k in settings)
    return (
        f"\n## {title}\n\nResults in `{folder}`; protocol: {protocol}.\n\n"
        f"{main_table(extra, choices)}\n\n{leapfrog_table(extra, choices)}\n\n{elbo_table(extra)}\n"
    )

"""RELIABILITY.md, its rank-histogram figures and a JSON summary, from the sbc and fuzz results.

Every number in the report is computed here from the saved JSON records; nothing is typed in by hand
except the optional ``notes`` file (the investigation of what failed), included verbatim.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import asdict
from pathlib import Path

import numpy as np

from autoreparam.benchmark.store import ResultStore, jsonable
from autoreparam.errors import ArgumentError
from autoreparam.reliability.carry import carry_fuzz_checks
from autoreparam.reliability.figures import rank_histograms
from autoreparam.reliability.fuzz import MCMC_SETTINGS
from autoreparam.reliability.fuzz_tables import fmt_p, fuzz_lines, fuzz_section, in_order
from autoreparam.reliability.methods import CONTROL, RunSettings
from autoreparam.reliability.models import sbc_models
from autoreparam.reliability.power import detectable_errors
from autoreparam.reliability.ranks import NUM_THINNED, ranks
from autoreparam.reliability.sbc import cell_ranks
from autoreparam.reliability.statistics import ALPHA, calibration
from autoreparam.reliability.stores import commands_of, read_fuzz_records, wall_of
from autoreparam.validation import output_folder

FIGURES = Path("figures") / "reliability"
SUMMARY = Path("benchmarks") / "results" / "reliability_summary.json"
NOTES = Path("docs") / "reliability_findings.md"
MIN_REPLICATIONS = 10
CARRIED = {"sbc": "SBC section", "fuzz": "fuzzing section"}
DEFAULT_SBC, DEFAULT_FUZZ = "results/sbc", "results/fuzz"  # the folders of summaries written before they were recorded
SUMMARY_KEYS = ("settings", "fuzz_settings", "sbc", "fuzz", "runtime", "commands")  # what rendering reads
PERTURBATIONS = {"draws shifted by +0.5 posterior sd": (0.5, 1.0), "draws 0.7x too narrow": (0.0, 0.7)}


def _fmt(x: float | None, spec: str) -> str:
    return "n/a" if x is None else format(x, spec)


def perturbed_calibration(cell: dict, shift: float, scale: float):
    """Calibrate a cell's saved draws after moving them by ``shift`` and scaling them by ``scale``
    (both relative to each replication's own draws): a post-hoc control on real SBC output."""
    draws = cell["thinned"]
    mean, sd = draws.mean(axis=1, keepdims=True), draws.std(axis=1, keepdims=True)
    moved = mean + scale * (draws - mean) + shift * sd
    return calibration(ranks(cell["truth"], moved), cell["labels"], NUM_THINNED)


def _ran_as(records: list[dict]) -> str:
    """What the runs sampled in: auto's choices, or VIP's mean lambda per site."""
    if records and records[0]["method"].startswith("auto") and not any(r["mean_lambda"] for r in records):
        counts = {}
        for r in records:
            counts[r["ran_as"].split("-> ")[-1]] = counts.get(r["ran_as"].split("-> ")[-1], 0) + 1
        return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    if records and records[0]["method"].startswith(("vip", "auto", "meta")):  # a lambda learned or predicted per run
        sites = sorted(records[0]["mean_lambda"])
        return ", ".join(f"lambda({n}) {np.mean([r['mean_lambda'].get(n, np.nan) for r in records]):.2f}" for n in sites)
    return ""


def _cell_row(model: str, label: str, cell: dict, cal) -> dict:
    row = {"model": model, "method": label, "replications": len(cell["rank"]), "errors": len(cell["errors"]),
           "untrustworthy": cell["untrustworthy"], "sampled_in": _ran_as(cell["records"]),
           "seconds_per_run": float(np.mean([r["seconds"] for r in cell["records"]])) if cell["records"] else None}
    trusted = [i for i, r in enumerate(cell["records"]) if r["trustworthy"]]
    if len(trusted) >= MIN_REPLICATIONS:
        # Not a valid SBC (trust depends on the draws), but it tells failures the user is warned about
        # from silent ones: a cell that fails on its trusted runs alone fails silently.
        row["trusted_min_adjusted_p"] = calibration(cell["rank"][trusted], cell["labels"], NUM_THINNED).min_adjusted_p
    if cal is not None:
        j = int(np.argmin(cal.adjusted_p))
        row.update(passed=cal.passed, min_adjusted_p=cal.min_adjusted_p, worst=cal.labels[j],
                   worst_pit_mean=float(cal.pit_mean[j]), worst_sd_ratio=float(cal.pit_sd_ratio[j]), bins=cal.bins,
                   elements={lab: {"chi_square_p": float(cal.chi_square_p[i]), "ks_p": float(cal.ks_p[i]),
                                   "holm_p": float(cal.adjusted_p[i]), "pit_mean": float(cal.pit_mean[i]),
                                   "pit_sd_ratio": float(cal.pit_sd_ratio[i])} for i, lab in enumerate(cal.labels)})
    return row


def sbc_section(records: list[dict], figures_dir: Path, power_sims: int = 200) -> dict:
    """The SBC part of the summary (cells, post-hoc controls, power, figure paths), from the saved
    replications; the rank-histogram figures are drawn here, the text by `sbc_lines`."""
    cells = cell_ranks(records)
    models = [m for m in sbc_models() if any(k[0] == m for k in cells)]
    rows, verdicts = [], {}
    for (model, label), cell in sorted(cells.items()):
        cal = calibration(cell["rank"], cell["labels"], NUM_THINNED) if len(cell["rank"]) >= MIN_REPLICATIONS else None
        verdicts[(model, label)] = cal
        rows.append(_cell_row(model, label, cell, cal))
    controls = _derived_controls(cells, verdicts, models)
    power = _power(cells, models, power_sims)
    figures = []
    for model in models:
        by_label = {label: cells[(m, label)] for (m, label) in sorted(cells) if m == model}
        path = rank_histograms(model, by_label, {lab: verdicts[(model, lab)] for lab in by_label},
                               figures_dir / f"sbc_{model}.png")
        figures.append(path.relative_to(figures_dir.parent.parent))
    return {"cells": rows, "post_hoc_controls": controls, "power": power, "power_sims": power_sims,
            "figures": [str(f) for f in figures]}


def sbc_lines(sbc_json: dict) -> list[str]:
    """The SBC tables, from the summary alone (so a committed summary re-renders the document)."""
    rows, controls, power = sbc_json["cells"], sbc_json["post_hoc_controls"], sbc_json["power"]
    power_sims = sbc_json.get("power_sims", 200)
    lines = _sbc_table([r for r in rows if not r["method"].startswith(CONTROL)], "Methods")
    lines += _sbc_table([r for r in rows if r["method"].startswith(CONTROL)], "Negative control (must FAIL)")
    lines += ["", "**Post-hoc controls** on real SBC output: the saved draws of each model's best-calibrated "
              "cell, moved or narrowed per replication, then tested the same way.", "",
              "| model | source cell | perturbation | n | min Holm p | verdict |", "|---|---|---|---|---|---|"]
    lines += [f"| {c['model']} | {c['source']} | {c['perturbation']} | {c['replications']} | "
              f"{fmt_p(c['min_adjusted_p'])} | {'detected' if not c['passed'] else 'missed'} |" for c in controls]
    lines += ["", f"**Power** of this design (simulated, {power_sims} cells per point; one of k parameters "
              f"miscalibrated, Holm over 2k tests at alpha = {ALPHA}): the smallest error detected with "
              "probability 0.8, and the rate of false alarms of a whole cell.", "",
              "| model | n | k | shift (posterior sd) | too narrow (sd ratio) | too wide (sd ratio) | false alarms |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {p['model']} | {p['replications']} | {p['parameters']} | {p['shift_sd'] or '> 2'} | "
              f"{p['narrow_ratio'] or '< 0.3'} | {p['wide_ratio'] or '> 3'} | {_fmt(p['false_alarm_rate'], '.3f')} |"
              for p in power]
    return lines


def _sbc_table(rows: list[dict], title: str) -> list[str]:
    lines = ["", f"**{title}**", "", "| model | method/kernel | n | errors | untrustworthy | min Holm p | worst element "
             "(PIT mean - 0.5, sd ratio) | trusted runs only: min Holm p | s/run | sampled in | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "passed" not in r:
            lines.append(f"| {r['model']} | {r['method']} | {r['replications']} | {r['errors']} | {r['untrustworthy']} "
                         f"| | | | | {r['sampled_in']} | too few replications |")
            continue
        verdict = "pass" if r["passed"] else "**FAIL**"
        lines.append(f"| {r['model']} | {r['method']} | {r['replications']} | {r['errors']} | {r['untrustworthy']} | "
                     f"{fmt_p(r['min_adjusted_p'])} | {r['worst']} ({_fmt(r['worst_pit_mean'], '+.2f')}, "
                     f"{_fmt(r['worst_sd_ratio'], '.2f')}) | "
                     f"{fmt_p(r['trusted_min_adjusted_p']) if 'trusted_min_adjusted_p' in r else '<10 runs'} | "
                     f"{_fmt(r['seconds_per_run'], '.0f')} | {r['sampled_in']} | {verdict} |")
    return lines


def _derived_controls(cells, verdicts, models) -> list[dict]:
    out = []
    for model in models:
        candidates = [(v.min_adjusted_p, label) for (m, label), v in verdicts.items()
                      if m == model and v is not None and not label.startswith(CONTROL)]
        if not candidates:
            continue
        _, source = max(candidates)
        for name, (shift, scale) in PERTURBATIONS.items():
            cal = perturbed_calibration(cells[(model, source)], shift, scale)
            out.append({"model": model, "source": source, "perturbation": name, "replications": cal.num_replications,
                        "min_adjusted_p": cal.min_adjusted_p, "passed": cal.passed})
    return out


def _power(cells, models, sims) -> list[dict]:
    out = []
    for model in models:
        sizes = [len(c["rank"]) for (m, label), c in cells.items() if m == model and not label.startswith(CONTROL)]
        k = len(next(c["labels"] for (m, _), c in cells.items() if m == model and c["labels"]))
        n = int(np.median(sizes))
        if n >= MIN_REPLICATIONS:
            out.append({"model": model, **detectable_errors(n, k, sims=sims)})
    return out


def _read_summary(path: Path) -> dict:
    try:
        return json.loads(path.read_text()) if path.exists() else {}
    except json.JSONDecodeError as e:
        raise ArgumentError(f"{path} is not valid JSON ({e}); restore it from git or rerun the commands it names")


def write_reliability_report(sbc_dir, fuzz_dir, out=".", notes=None, power_sims: int = 200, carry_fuzz=()) -> Path:
    """Summarise the sbc and fuzz folders into ``<out>/benchmarks/results/reliability_summary.json`` and
    render RELIABILITY.md from that summary and the notes. ``fuzz_dir`` may name several folders
    (comma-separated, or a list), read as one (`stores.read_fuzz_records`).

    A section whose folder holds no records is carried over from the summary already at ``out`` (its
    numbers, commands, settings and runtime), and the document says so: the per-replication records
    are not committed, so a checkout that reruns one part keeps the other. ``carry_fuzz``: folders the
    summary at ``out`` read fuzzing checks from; those checks the fresh fuzz records lack are carried
    over one by one (`carry.carry_fuzz_checks`)."""
    out = Path(out)
    fuzz = read_fuzz_records(fuzz_dir)
    sbc_records, fuzz_records = ResultStore(sbc_dir).records(), fuzz.records
    # Read only when a section is carried over: a full rebuild must not depend on the old file.
    previous = _read_summary(out / SUMMARY) if not (sbc_records and fuzz_records) or carry_fuzz else {}
    if not sbc_records and not fuzz_records:
        raise ArgumentError(f"no results in {sbc_dir} or {','.join(fuzz.folders)}: run `autoreparam sbc` or `autoreparam fuzz` "
                            "first, or pass their --out folders as --sbc and --fuzz")
    output_folder(out)
    old_runtime, old_commands = previous.get("runtime", {}), previous.get("commands", {})
    carried, carried_folders = [], []
    if sbc_records:
        settings = sbc_records[0]["settings"]
        sbc_json = sbc_section(sbc_records, out / FIGURES, power_sims)
        sbc_runtime = {"sbc_wall_seconds": wall_of(Path(sbc_dir)),
                       "sbc_run_seconds": sum(r.get("seconds", 0) for r in sbc_records)}
        sbc_commands = commands_of(Path(sbc_dir))
    elif previous.get("sbc"):
        carried.append("sbc")
        settings, sbc_json, sbc_commands = previous["settings"], previous["sbc"], old_commands.get("sbc", [])
        sbc_runtime = {k: old_runtime.get(k, 0.0) for k in ("sbc_wall_seconds", "sbc_run_seconds")}
    else:
        settings, sbc_json, sbc_commands = RunSettings().__dict__, {}, []
        sbc_runtime = {"sbc_wall_seconds": 0.0, "sbc_run_seconds": 0.0}
    if fuzz_records:
        # The stores' own settings (one for all of them: `stores.read_fuzz_records` refuses a mix).
        fuzz_settings = fuzz.settings or asdict(MCMC_SETTINGS)
        fuzz_json, fuzz_commands, fuzz_wall = fuzz_section(fuzz_records), fuzz.commands, fuzz.wall_seconds
        folders = fuzz.folders
        if carry_fuzz:
            fuzz_json, checks, old, carried_folders = carry_fuzz_checks(previous, fuzz_json, list(carry_fuzz),
                                                                        json.loads(json.dumps(fuzz_settings)))
            carried += [f"fuzz:{check}" for check in checks]
            fuzz_commands, folders = old + fuzz_commands, carried_folders + folders
    elif previous.get("fuzz"):
        carried.append("fuzz")
        fuzz_settings = previous.get("fuzz_settings", asdict(MCMC_SETTINGS))
        fuzz_json, fuzz_commands = previous["fuzz"], old_commands.get("fuzz", [])
        fuzz_wall = old_runtime.get("fuzz_wall_seconds", 0.0)
        folders = previous.get("fuzz_folders", [DEFAULT_FUZZ])
        carried_folders = previous.get("fuzz_carried_folders", [])
        carried += [c for c in previous.get("carried_over", []) if c.startswith("fuzz:")]
    else:
        fuzz_settings, fuzz_json, fuzz_commands, fuzz_wall = asdict(MCMC_SETTINGS), {}, [], 0.0
        folders = fuzz.folders
    summary = {"settings": settings, "fuzz_settings": fuzz_settings, "alpha": ALPHA, "num_thinned": NUM_THINNED,
               "sbc": sbc_json, "fuzz": fuzz_json, "runtime": {**sbc_runtime, "fuzz_wall_seconds": fuzz_wall},
               "commands": {"sbc": sbc_commands, "fuzz": fuzz_commands}, "carried_over": carried,
               "sbc_folder": str(sbc_dir) if sbc_records else previous.get("sbc_folder", DEFAULT_SBC),
               "fuzz_folders": folders, "fuzz_carried_folders": carried_folders}
    # What the file will hold (keys sorted as there), so this rendering and a later one from the file agree.
    summary = json.loads(json.dumps(jsonable(summary), sort_keys=True))
    _write_document(out, summary, notes)
    (out / SUMMARY).parent.mkdir(parents=True, exist_ok=True)
    (out / SUMMARY).write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    for section in (c for c in carried if c in CARRIED):  # fuzzing checks carried one by one were asked for
        warnings.warn(f"no records in {sbc_dir if section == 'sbc' else ','.join(fuzz.folders)}: the {CARRIED[section]} is carried "
                      f"over from {out / SUMMARY} as it stood", UserWarning, stacklevel=2)
    return out / "RELIABILITY.md"


def render_reliability_from_summary(out=".", notes=None) -> Path:
    """Render RELIABILITY.md again from the committed summary and notes alone (after editing the notes,
    or to check that the document matches them): no records needed."""
    out = Path(out)
    summary = _read_summary(out / SUMMARY)
    if not summary:
        raise ArgumentError(f"no summary at {out / SUMMARY}: run `autoreparam reliability --sbc DIR --fuzz DIR` first")
    missing = [key for key in SUMMARY_KEYS if key not in summary]
    if missing:
        raise ArgumentError(f"{out / SUMMARY} lacks {', '.join(missing)} (written by older code): run "
                            "`autoreparam reliability --sbc DIR --fuzz DIR` to write it again")
    _write_document(out, summary, notes)
    return out / "RELIABILITY.md"


def _write_document(out: Path, summary: dict, notes=None) -> None:
    """``<out>/RELIABILITY.md`` from ``summary`` and the notes (``notes``, else ``<out>/docs/reliability_findings.md``)."""
    notes_path = Path(notes) if notes else out / NOTES
    (out / "RELIABILITY.md").write_text(render_reliability(summary, notes_path.read_text() if notes_path.exists() else ""))


def render_reliability(summary: dict, notes: str = "") -> str:
    """RELIABILITY.md's text from its summary (`write_reliability_report`) and the hand-written notes."""
    sbc_json, fuzz_json = summary["sbc"], summary["fuzz"]
    return "\n".join(_document(summary["settings"], sbc_lines(sbc_json) if sbc_json else [], sbc_json,
                               fuzz_lines(fuzz_json) if fuzz_json else [], fuzz_json, summary["runtime"],
                               summary["commands"], notes, summary["fuzz_settings"],
                               summary.get("carried_over", []), summary.get("sbc_folder", DEFAULT_SBC),
                               summary.get("fuzz_folders", [DEFAULT_FUZZ]), summary.get("fuzz_carried_folders", []))) + "\n"


MACHINE = ("a 2-core CPU (x86-64, no GPU), shared with other jobs while these runs ran; the commands run by "
           "`benchmarks/process_pool.py` (first named `benchmarks/fuzz_processes.py`) ran on the 16 CPU cores of a lent "
           "GPU machine (their lines above say so; each of their results records it in `ran_on`)")


def _pending(sbc_json: dict) -> list[str]:
    """Methods `method_specs` plans that no SBC cell has yet (a method added after the runs)."""
    from autoreparam.reliability.methods import method_specs

    ran = {c["method"] for c in sbc_json.get("cells", [])}
    missing = [s.label for s in method_specs(include_control=False) if s.label not in ran]
    if not missing or not ran:
        return []
    return ["", f"**Not run yet in SBC: {', '.join(missing)}** (added after these runs). To add them, rerun the same "
            "`autoreparam sbc` command: it skips the finished replications and runs only the new cells, with the same "
            "(theta, y) per replication; then `autoreparam reliability`."]


def _glance(sbc_json: dict, fuzz_json: dict) -> list[str]:
    """The verdicts in a few lines, computed from the same rows as the tables."""
    cells = sbc_json.get("cells", [])
    methods = [c for c in cells if not c["method"].startswith(CONTROL)]
    controls = [c for c in cells if c["method"].startswith(CONTROL)]
    tested = [c for c in methods if "passed" in c]
    failed = [c for c in tested if not c["passed"]]
    n = [c["replications"] for c in methods]
    lines = ["## At a glance", ""]
    if methods:
        lines.append(f"- SBC: {len(methods)} method/kernel x model cells with {min(n)}-{max(n)} replications each "
                     f"({sum(n)} runs); {len(tested) - len(failed)} of {len(tested)} tested cells pass after Holm's "
                     f"correction at family-wise alpha = {ALPHA} per cell"
                     + (f", {len(methods) - len(tested)} have too few replications to test" if len(tested) < len(methods)
                        else "")
                     # the scale a reader needs to judge the failures: what exact methods would show
                     + f"; were every method exact, at most {ALPHA} x {len(tested)} = {ALPHA * len(tested):.2g} cells "
                       "would be expected to fail by chance (Holm controls each cell's family-wise error at alpha).")
        lines.append("- Cells that **fail**: " + ("; ".join(
            f"{c['model']} {c['method']} (Holm p {fmt_p(c['min_adjusted_p'])}, worst {c['worst']}, "
            f"{c['untrustworthy']} of {c['replications']} runs flagged by `infer`)" for c in failed) if failed else "none")
                     + ".")
    if controls:
        detected = [c for c in controls if "passed" in c and not c["passed"]]
        lines.append(f"- Negative control (doubled Jacobian): fails, as it must, on {len(detected)} of {len(controls)} "
                     "models: " + "; ".join(f"{c['model']} n={c['replications']} min Holm p "
                                            f"{fmt_p(c['min_adjusted_p']) if 'min_adjusted_p' in c else 'untested'}"
                                            for c in controls) + ".")
    counts = fuzz_json.get("counts", {})
    if counts:
        lines.append("- Fuzzing: " + "; ".join(f"{k}: {v['programs']} programs, {v['checks']} checks, {v['failed']} "
                                               f"failed ({v['silent']} silently), {v['errors']} errors"
                                               for k, v in in_order(counts)) + ".")
    lines += [f"- Machine: {MACHINE}."] + _pending(sbc_json)
    return lines


def _runs(settings: dict) -> str:
    """A fuzz store's sampling settings, as the report states them."""
    return (f"each run {settings['num_chains']} chains x {settings['num_warmup']} warm-up + "
            f"{settings['num_samples']} draws at target acceptance {settings.get('target_accept') or 0.8}")


def _document(settings, sbc_text, sbc_json, fuzz_text, fuzz_json, runtime, commands, notes,
              fuzz_settings, carried=(), sbc_folder=None, fuzz_folders=(), carried_folders=()) -> list[str]:
    s = settings
    ran = commands["sbc"] + commands["fuzz"]
    fresh = [f for f in fuzz_folders or [DEFAULT_FUZZ] if f not in carried_folders]
    checks = [c.split(":", 1)[1] for c in carried if c.startswith("fuzz:")]
    sections = [c for c in carried if c in CARRIED]
    head = [
        "# Reliability: simulation-based calibration and fuzzing with generated models", "",
        f"Generated by `autoreparam reliability --sbc {sbc_folder or DEFAULT_SBC} "
        f"--fuzz {','.join(fresh)}"
        + (f" --carry-fuzz {','.join(carried_folders)}" if carried_folders else "") + " --out .` from the results of "
        "these commands (UTC start, code commit, command line; recorded by the commands themselves in "
        "`results/*/commands.txt`):", "",
        "```", *(ran or ["(no command recorded)"]), "```", "",
        "Both commands are resumable: `--deadline-minutes` stops starting tasks after that long, with every SBC cell "
        "at the same count, and rerunning the same command adds the missing replications (`--replications` more "
        "adds more). Per-replication JSON stays in `results/` (not committed); the numbers below are in "
        f"`{SUMMARY}`, and `autoreparam reliability --summary-only` renders this file again from it and the notes "
        f"(`{NOTES}`).", "",
    ]
    if sections:
        head += [f"The {' and the '.join(CARRIED[c] for c in sections)} below {'is' if len(sections) == 1 else 'are'} "
                 f"carried over from `{SUMMARY}` as it stood: {'its' if len(sections) == 1 else 'their'} "
                 "per-check records were not in the checkout that wrote this file, so the numbers (and the commands "
                 "above that made them) are the earlier run's, not re-computed.", ""]
    if checks:
        head += [f"The fuzzing check{'s' if len(checks) > 1 else ''} {', '.join(checks)} below {'are' if len(checks) > 1 else 'is'} "
                 f"carried over from `{SUMMARY}` as it stood (`--carry-fuzz`; read from {', '.join(carried_folders)}): "
                 "the numbers and the commands above that made them are the earlier runs', not re-computed; the "
                 f"other fuzzing checks are computed afresh from {', '.join(fresh)}.", ""]
    head += _glance(sbc_json, fuzz_json)
    head += [
        "", "## 1. Simulation-based calibration", "",
        "Talts et al. (2018): draw (theta, y) from the prior predictive, run the method on y, rank every element of "
        f"theta among {NUM_THINNED} draws thinned evenly from all chains; ranks are uniform if the method is correct. "
        f"Every run: `ar.infer(..., num_chains={s['num_chains']}, num_warmup={s['num_warmup']}, "
        f"num_samples={s['num_samples']}, target_accept={s.get('target_accept') or 0.8})`, variational protocol "
        f"`{s['vi']}` (`vi.protocol.FAST`: it seeds the "
        "HMC samplers and, for vip, learns lambda; auto learns its lambda by the Section 3 rule during NUTS's "
        "warm-up), HMC's L by the oracle (the default); `given_0.3` is `infer(method=\"given\", "
        "parameterisation=0.3)`, a fixed partial centring. Per cell, a chi-square test "
        "of the binned ranks (its p-value from the statistic's simulated exact law, since 2026-11-29) and a KS test "
        "of the randomised PIT per element, Holm-adjusted together; a cell fails "
        f"when any adjusted p < {ALPHA}. 'untrustworthy': runs that `infer` itself flagged (R-hat, ESS, divergences). "
        "'trusted runs only' repeats the test on the runs `infer` did not flag: not a valid SBC (trust depends on the "
        "draws), but a cell that fails there fails *silently*, where a user gets no warning. "
        "Replication r of a model uses the same (theta, y) for every method. 'worst element': PIT mean - 0.5 > 0 "
        "means the draws sit below the truth; sd ratio > 1 means the draws are too narrow.", "",
        "Models (`reliability/models.py`): " + "; ".join(f"`{m.name}`: {m.description}" for m in sbc_models().values()) + ".",
    ]
    body = head + sbc_text
    body += ["", "Rank histograms: " + ", ".join(f"[{Path(f).stem}]({f})" for f in sbc_json.get("figures", [])) + "."]
    body += ["", "## 2. Fuzzing with generated models", "",
             "Programs of the corpus (`autoreparam corpus`, seed 0: program i is `generate_program(i, 0)`). "
             "*identity*: in float64, for every location-scale latent partially centred at random points near prior "
             "draws with a random lambda per element (tied, separate a != b, and a random 0/1 mix): "
             "log p_u = log p_v + log|det J| (`Coordinates`), log p_v = NumPyro's log density + the support's "
             "log-Jacobian, the round trip to_cp(from_cp(v)) = v with cancelling log-Jacobians, and log|det J| = slogdet(jacfwd) (programs of <= 60 coordinates); fails above "
             "1e-9 relative. *scan_twin*: each time-series program against its twin written with NumPyro's scan "
             "(`scan_twin.py`): at random centrings, the same element by element, the twin's density and path equal "
             "the unrolled program's, and the twin passes every identity above (1e-9 relative). *prior*: observations removed, every method and kernel must return the prior: exact mean "
             "and variance for latents with constant prior parameters, PIT mean and spread against 4000 forward draws "
             "for all, MCSE z-tests Holm-adjusted per run at 0.001. *invariance*: NUTS in CP, NCP and a random lambda "
             "per element, and `auto` (in checks run since 2026-11-28), must agree pair by pair at every element's "
             "quartiles (same test, Holm over all pairs), every run at the program's seed. *invariance_own_seeds*: "
             "the same check with each run at a seed of its own (`prior.invariance_run_seed`; planned since "
             "2026-12-02): the agreement test assumes independent runs, and runs at one seed share momenta and "
             "uniforms (`benchmarks/results/invariance_seeds.json`). Sampling checks run on the first "
             f"programs with at most 40 latent dimensions, {_runs(fuzz_settings)}. 'silent': a failure the run's own diagnostics did not flag "
             "(for invariance: two runs that disagree and were both trusted by their diagnostics; results "
             "written before ab78106 counted a failure as flagged when any run was flagged)."]
    body += fuzz_text
    body += ["", "## Runtimes", "",
             f"SBC: {runtime['sbc_wall_seconds'] / 3600:.2f} h wall (summed over its commands, with the workers they name, "
             "on the machines they name), "
             f"{runtime['sbc_run_seconds'] / 3600:.2f} h of `infer` calls summed over workers. "
             f"Fuzzing: {runtime['fuzz_wall_seconds'] / 3600:.2f} h wall (summed over its commands"
             + ("; the carried checks' runs not counted" if checks else "") + "), alongside the SBC."]
    if notes:
        body += ["", notes.strip()]
    return body

"""The ``sbc``, ``fuzz`` and ``reliability`` subcommands (arguments here, work in the modules they call)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from autoreparam.cli_types import acceptance, count, minutes, natural

COMMANDS = "commands.txt"  # in a results folder: one line per invocation that wrote to it


def record_command(out, argv=None, program: str = "autoreparam") -> None:
    """Append ``<UTC time> <git commit or 'unknown'> <command line>`` to ``<out>/commands.txt``: the
    report quotes these lines, so RELIABILITY.md names the commands (and code) that made its numbers.
    Without a git checkout (a copy of the tree on another machine) the commit comes from ``GIT_COMMIT``."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        commit = ""
    commit = commit if commit and commit != "unknown" else os.environ.get("GIT_COMMIT", "unknown")
    Path(out).mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    with open(Path(out) / COMMANDS, "a") as log:
        log.write(f"{stamp} {commit} {program} {shlex.join(argv)}\n")


def _ray_arguments(parser) -> None:
    parser.add_argument("--address", default=None, help="join this Ray cluster (default: start a local one)")
    parser.add_argument("--num-cpus", type=count, default=1, help="workers of the local Ray cluster (default 1)")
    parser.add_argument("--serial", action="store_true", help="run in this process, without Ray (compiled programs are dropped every few tasks)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _listed(text):
    return None if text is None else [x for x in text.split(",") if x]


def _prior_cells(text):
    """The prior check's method/kernel cells from ``--mcmc-methods``: None (all), [] for 'none', or the list."""
    return [] if text is not None and text.strip().lower() == "none" else _listed(text)


def run_settings(command: str, args):
    """The runs' `RunSettings` from the options of ``sbc`` or ``fuzz`` (also `benchmarks/process_pool.py`'s)."""
    from dataclasses import replace

    from autoreparam.reliability.fuzz import MCMC_SETTINGS
    from autoreparam.reliability.methods import RunSettings

    if command == "fuzz":
        return replace(MCMC_SETTINGS, target_accept=args.target_accept)
    return RunSettings(args.chains, args.warmup, args.samples, args.vi, args.target_accept)


def add_sbc_parser(sub):
    p = sub.add_parser("sbc", help="simulation-based calibration of every method and kernel; resumable, via Ray")
    p.add_argument("--out", default="results/sbc", help="one JSON per finished replication (default results/sbc)")
    p.add_argument("--replications", type=count, default=50, help="replications per model and method/kernel")
    p.add_argument("--control-replications", type=natural, default=20, help="replications of the negative control")
    p.add_argument("--models", default=None, help="comma-separated SBC models (default: all of them)")
    p.add_argument("--methods", default=None, help="comma-separated method/kernel cells, e.g. ncp/nuts,ihmc/hmc")
    p.add_argument("--chains", type=count, default=4)
    p.add_argument("--warmup", type=count, default=500)
    p.add_argument("--samples", type=count, default=500)
    p.add_argument("--vi", default="fast", choices=["fast", "paper"], help="variational protocol of every run")
    p.add_argument("--target-accept", type=acceptance, default=None,
                   help="the step size's target acceptance of every run (default: infer's, 0.8)")
    p.add_argument("--deadline-minutes", type=minutes, default=None,
                   help="start no replication after this; rerun to go on")
    _ray_arguments(p)
    return p


def run_sbc_command(args) -> int:
    from autoreparam.benchmark.store import ResultStore
    from autoreparam.reliability.methods import refuse_mixed_settings
    from autoreparam.reliability.models import MODEL_NAMES
    from autoreparam.reliability.sbc import plan_tasks, run_sbc, summarise

    settings = run_settings("sbc", args)
    models = _listed(args.models) or MODEL_NAMES
    # Checked before the command is recorded in the folder, whose commands RELIABILITY.md quotes.
    plan_tasks(args.replications, models, _listed(args.methods), settings, args.control_replications)
    with ResultStore(args.out).exclusive("sbc"):
        refuse_mixed_settings(ResultStore(args.out), settings)
        record_command(args.out)
        start = time.perf_counter()
        store = run_sbc(args.out, args.replications, models, _listed(args.methods), settings,
                        control_replications=args.control_replications, address=args.address,
                        num_cpus=args.num_cpus, serial=args.serial, progress=not args.quiet,
                        deadline_minutes=args.deadline_minutes)
    for (model, label), cal in sorted(summarise(store.records()).items()):
        verdict = "pass" if cal.passed else "FAIL"
        print(f"{model:<22} {label:<22} n={cal.num_replications:<4} min Holm p={cal.min_adjusted_p:.2g} {verdict}")
    print(f"results in {store.root} ({time.perf_counter() - start:.0f}s)")
    return 0


def add_fuzz_parser(sub):
    p = sub.add_parser("fuzz", help="check invariants on random programs of the corpus; resumable, via Ray")
    p.add_argument("--out", default="results/fuzz")
    p.add_argument("--n", type=natural, default=2000, help="programs for the log-density identity")
    p.add_argument("--seed", type=natural, default=0, help="corpus seed (program i is generate_program(i, seed))")
    p.add_argument("--mcmc-n", type=natural, default=12, help="programs for the two sampling invariants")
    p.add_argument("--mcmc-methods", default=None,
                   help="comma-separated method/kernel cells of the prior check, e.g. auto/nuts (default: all); "
                        "'none' runs no prior check, only the invariance check")
    p.add_argument("--no-invariance", action="store_true", help="skip the invariance check on the sampled programs")
    p.add_argument("--invariance-runs", default="cp,ncp,random,auto",
                   help="the runs the invariance check compares pair by pair: cp,ncp,random and optionally auto "
                        "(default: all four; stores written before 2026-11-28 hold cp,ncp,random)")
    p.add_argument("--target-accept", type=acceptance, default=None,
                   help="the step size's target acceptance of the sampling checks (default: infer's, 0.8); "
                        "a store keeps one setting, so a new value needs a new --out")
    p.add_argument("--chunk", type=count, default=25, help="identity programs per task")
    p.add_argument("--scan-twins", type=natural, default=200,
                   help="time-series programs checked against their twins written with scan")
    p.add_argument("--deadline-minutes", type=minutes, default=None,
                   help="minutes from the command's start (planning included): start no task after this; rerun to go on")
    _ray_arguments(p)
    return p


def run_fuzz_command(args) -> int:
    from autoreparam.benchmark.store import ResultStore
    from autoreparam.reliability.methods import find_spec
    from autoreparam.reliability.prior import invariance_run_labels

    settings = run_settings("fuzz", args)
    invariance_runs = args.invariance_runs.split(",")
    # Checked before the command is recorded in the folder, whose commands RELIABILITY.md quotes.
    for label in _prior_cells(args.mcmc_methods) or ():
        find_spec(label)
    invariance_run_labels(invariance_runs)
    with ResultStore(args.out).exclusive("fuzz"):
        return _fuzz(args, settings, invariance_runs)


def _fuzz(args, settings, invariance_runs) -> int:
    from autoreparam.benchmark.store import ResultStore
    from autoreparam.reliability.fuzz import refuse_mixed_invariance_runs, run_fuzz, summarise_fuzz
    from autoreparam.reliability.methods import refuse_mixed_settings

    refuse_mixed_settings(ResultStore(args.out), settings)
    if not args.no_invariance and args.mcmc_n:  # refused before the command is recorded in the folder
        refuse_mixed_invariance_runs(ResultStore(args.out), invariance_runs)
    record_command(args.out)
    start = time.perf_counter()
    store = run_fuzz(args.out, n=args.n, seed=args.seed, mcmc_n=args.mcmc_n, chunk=args.chunk, settings=settings,
                     scan_twins=args.scan_twins, methods=_prior_cells(args.mcmc_methods),
                     invariance=not args.no_invariance, invariance_runs=invariance_runs,
                     address=args.address,
                     num_cpus=args.num_cpus, serial=args.serial, progress=not args.quiet,
                     deadline_minutes=args.deadline_minutes)
    summary = summarise_fuzz(store.records())
    for name, part in summary.items():
        print(f"{name}: {part['programs']} programs, {part['runs']} checks, {len(part['failures'])} failed")
    print(f"results in {store.root} ({time.perf_counter() - start:.0f}s)")
    return 0


def add_report_parser(sub):
    p = sub.add_parser("reliability", help="write RELIABILITY.md, its figures and JSON summary from sbc/fuzz results")
    p.add_argument("--sbc", default="results/sbc")
    p.add_argument("--fuzz", default="results/fuzz",
                   help="the fuzzing results: one folder, or several comma-separated (passes run into folders of their "
                        "own), read as one; a check found in two, or runs with different settings, are refused")
    p.add_argument("--out", default=".", help="folder of RELIABILITY.md (figures go to <out>/figures/reliability)")
    p.add_argument("--carry-fuzz", default="",
                   help="comma-separated folders the committed summary read fuzzing checks from: the checks the --fuzz "
                        "records lack are carried over from it one by one, with their commands (a rerun of one check "
                        "in a checkout without the others' records)")
    p.add_argument("--summary-only", action="store_true",
                   help="render RELIABILITY.md again from <out>/benchmarks/results/reliability_summary.json and "
                        "<out>/docs/reliability_findings.md alone (no records needed; e.g. after editing the notes)")
    return p


def run_report_command(args) -> int:
    from autoreparam.reliability.report import render_reliability_from_summary, write_reliability_report

    if args.summary_only:
        print(f"wrote {render_reliability_from_summary(args.out)}")
    else:
        carry = [folder for folder in args.carry_fuzz.split(",") if folder]
        print(f"wrote {write_reliability_report(args.sbc, args.fuzz, args.out, carry_fuzz=carry)}")
    return 0

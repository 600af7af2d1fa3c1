"""``autoreparam fuzz``: invariants on random programs of the corpus, as resumable Ray tasks.

Program i is ``corpus.generate_program(i, seed)`` (the same in every corpus size). Three kinds of task:

- ``identity``: the log-density identity and its oracles (`identity.check_program`) for programs
  ``chunk * j .. chunk * (j + 1) - 1``, one task per chunk (each program costs about a second);
- ``prior``: one method and kernel on one program with its observations removed (`prior.check_prior`);
- ``invariance``: one program sampled in CP, NCP, a random centring and by ``auto``
  (`prior.check_invariance`; ``invariance_runs`` chooses, and a store keeps one choice), each run at
  a seed of its own (``run_seeds``; tasks planned before 2026-12-02 ran all at one seed, and the
  summary counts those apart, `invariance_check_name`);
- ``scan_twin``: time-series programs against their twins written with ``scan``
  (`scan_twin.check_scan_twin`), one task per chunk of the first ``scan_twins`` such programs.

The sampling checks run on the first ``mcmc_n`` programs with at most `MAX_MCMC_DIM` latent
dimensions (each run compiles afresh, about 20 s). A program the generator writes but the compiler
or a check rejects is recorded as an error with its message: that is a finding too.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict
from pathlib import Path

from autoreparam.benchmark.store import ResultStore
from autoreparam.corpus import generate_program
from autoreparam.reliability.identity import check_program
from autoreparam.reliability.methods import RunSettings, find_spec, method_specs
from autoreparam.errors import ArgumentError
from autoreparam.reliability.prior import FIXED_RUNS, INVARIANCE_RUNS, check_invariance, check_prior, invariance_run_labels
from autoreparam.reliability.runner import run_tasks, worker_environment
from autoreparam.reliability.sbc import stable_seed
from autoreparam.reliability.scan_twin import check_scan_twin

MAX_MCMC_DIM = 40
# An invariance task's ``run_seeds``: each run at a seed of its own (`prior.invariance_run_seed`).
OWN_SEEDS = "own"
MCMC_SETTINGS = RunSettings(num_chains=4, num_warmup=500, num_samples=1000)


def _program(index: int, seed: int):
    return generate_program(index, seed)[1]


def mcmc_programs(n: int, seed: int, max_dim: int = MAX_MCMC_DIM) -> list[int]:
    """Indices of the first ``n`` programs with at most ``max_dim`` latent dimensions."""
    from autoreparam.lang import compile_program
    from autoreparam.reparam.sites import analyse_model

    chosen, index = [], 0
    while len(chosen) < n and index < 100 * max(n, 1):
        program = _program(index, seed)
        model, _, kwargs = compile_program(program.text, program.data)
        if analyse_model(model, **kwargs).num_latent_dims <= max_dim:
            chosen.append(index)
        index += 1
    return chosen


def time_series_programs(n: int, seed: int) -> list[int]:
    """Indices of the first ``n`` time-series programs of the corpus."""
    chosen, index = [], 0
    while len(chosen) < n and index < 100 * max(n, 1):
        if _program(index, seed).family == "time_series":
            chosen.append(index)
        index += 1
    return chosen


def plan_fuzz(n: int, seed: int, mcmc_n: int, chunk: int, settings: RunSettings = MCMC_SETTINGS,
              scan_twins: int = 0, methods=None, invariance: bool = True,
              invariance_runs=INVARIANCE_RUNS) -> list[dict]:
    """Every task of a fuzzing run. ``methods``: the method/kernel labels of the prior check (default:
    every method and kernel); ``invariance``: also the invariance check on each sampled program, with
    the runs ``invariance_runs`` (`prior.INVARIANCE_RUNS`)."""
    runs = list(invariance_run_labels(invariance_runs)) if invariance else []
    twins = time_series_programs(scan_twins, seed) if scan_twins else []
    # A chunk's key names its first and last program: keyed by its start alone, a rerun with a larger
    # --n or another --chunk took a shorter chunk of the same start for done and skipped programs
    # (found in review); ``summarise_fuzz`` counts a program checked twice once.
    tasks = [{"key": f"scan_twin__{seed}__{twins[start]:06d}_{twins[start:start + chunk][-1]:06d}", "kind": "scan_twin",
              "seed": seed, "programs": twins[start:start + chunk]} for start in range(0, len(twins), chunk)]
    tasks += [{"key": f"identity__{seed}__{start:06d}_{min(start + chunk, n) - 1:06d}", "kind": "identity",
               "seed": seed, "programs": list(range(start, min(start + chunk, n)))} for start in range(0, n, chunk)]
    labels = [s.label for s in method_specs(include_control=False)]
    if methods is not None:
        labels = [find_spec(label).label for label in methods]  # an unknown label is an ArgumentError here
    for index in mcmc_programs(mcmc_n, seed) if mcmc_n else []:
        tasks += [{"key": f"prior__{seed}__{index:06d}__{label.replace('/', '-')}", "kind": "prior", "seed": seed,
                   "program": index, "method": label, "settings": asdict(settings)} for label in labels]
        if invariance:
            tasks.append({"key": f"invariance__{seed}__{index:06d}", "kind": "invariance", "seed": seed,
                          "program": index, "settings": asdict(settings), "invariance_runs": runs,
                          "run_seeds": OWN_SEEDS})
    return tasks


def _guarded(check, **context) -> dict:
    try:
        return {"status": "ok", **context, **check()}
    except Exception as error:  # noqa: BLE001 - a rejected program is recorded, not raised
        return {"status": "error", **context, "error": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc(limit=8)}


def run_fuzz_task(task: dict) -> dict:
    """Run one task (in a worker); failures of single programs are recorded in the result."""
    seed = task["seed"]
    if task["kind"] in ("identity", "scan_twin"):
        check = check_program if task["kind"] == "identity" else check_scan_twin
        results = []
        for index in task["programs"]:
            program = _program(index, seed)
            results.append(_guarded(lambda: check(program.text, program.data, stable_seed(task["kind"], seed, index)),
                                    program=index, family=program.family))
        return {**task, "results": results}
    program = _program(task["program"], seed)
    settings = RunSettings(**task["settings"])
    run_seed = stable_seed(task["kind"], seed, task["program"], task.get("method", ""))
    if task["kind"] == "prior":
        check = lambda: check_prior(program.text, program.data, find_spec(task["method"]), run_seed, settings)  # noqa: E731
    else:
        runs = task.get("invariance_runs", FIXED_RUNS)  # tasks planned before `auto` joined ran the three
        own = task.get("run_seeds") == OWN_SEEDS  # tasks planned before 2026-12-02 ran every run at one seed
        check = lambda: check_invariance(program.text, program.data, run_seed, settings, runs, own)  # noqa: E731
    return {**task, **_guarded(check, family=program.family)}


def _first_invariance_record(store: ResultStore) -> dict | None:
    for path in sorted((store.root / "cells").glob("invariance__*.json")):
        return store.load(path.stem)
    return None


def stored_invariance_runs(store: ResultStore) -> tuple[str, ...] | None:
    """The runs of the invariance checks already in ``store`` (None if it holds none)."""
    record = _first_invariance_record(store)
    return None if record is None else tuple(record.get("invariance_runs", FIXED_RUNS))


def refuse_mixed_invariance_runs(store: ResultStore, runs) -> None:
    """Refuse to add invariance checks with other runs than those ``store`` holds, or at other seeds: a
    rerun skips every finished key, so a report would count checks of three and of four runs together,
    or checks whose runs shared a seed with checks whose runs did not."""
    record = _first_invariance_record(store)
    if record is None:
        return
    stored, runs = tuple(record.get("invariance_runs", FIXED_RUNS)), invariance_run_labels(runs)
    if tuple(stored) != runs:
        raise ArgumentError(f"{store.root} holds invariance checks of the runs {','.join(stored)}, and this command asks "
                            f"for {','.join(runs)}; write to another --out folder, or pass --invariance-runs "
                            f"{','.join(stored)}")
    if record.get("run_seeds") != OWN_SEEDS:
        raise ArgumentError(f"{store.root} holds invariance checks whose runs shared one seed (planned before "
                            "2026-12-02); checks planned now run each at a seed of its own: write them to another "
                            "--out folder")


def invariance_check_name(record: dict) -> str:
    """The check an invariance record counts under: ``invariance`` (every run at the program's seed, as
    planned before 2026-12-02) or ``invariance_own_seeds`` (each run at its own seed)."""
    return "invariance_own_seeds" if record.get("run_seeds") == OWN_SEEDS else "invariance"


def run_fuzz(out, n: int, seed: int = 0, mcmc_n: int = 12, chunk: int = 25, settings: RunSettings = MCMC_SETTINGS, *,
             scan_twins: int = 0, methods=None, invariance: bool = True, invariance_runs=INVARIANCE_RUNS,
             address=None, num_cpus=1, serial=False, progress=True, deadline_minutes=None) -> ResultStore:
    """Run (or resume) every fuzzing task into ``out``; returns its store.

    The sampling checks run first (few tasks, each worth more), then the identity chunks in program
    order, so a run stopped by ``deadline_minutes`` has checked programs 0..k-1 with nothing skipped.
    """
    # The deadline counts from the call, not from after planning: choosing 2,000 sampled programs
    # analyses thousands of generated programs (about 10 minutes), which a pass of 118 minutes
    # overran by as much (found in use, 2026-12-02).
    end = None if deadline_minutes is None else time.perf_counter() + 60.0 * deadline_minutes
    store = ResultStore(out)
    if invariance and mcmc_n:
        refuse_mixed_invariance_runs(store, invariance_runs)
    tasks = plan_fuzz(n, seed, mcmc_n, chunk, settings, scan_twins, methods, invariance, invariance_runs)

    def left():
        return None if end is None else max(0.0, (end - time.perf_counter()) / 60.0)

    sampling = [t for t in tasks if t["kind"] not in ("identity", "scan_twin")]
    run_tasks(sampling, run_fuzz_task, store, address=address, num_cpus=num_cpus, serial=serial,
              env=worker_environment(Path(out) / "jax_cache"), progress=progress, desc="fuzz: sampling",
              deadline_minutes=left(), max_calls=10)
    # Identity checks compile one small program each and run it three times: compile fast.
    identity = [t for t in tasks if t["kind"] in ("identity", "scan_twin")]
    run_tasks(identity, run_fuzz_task, store, address=address, num_cpus=num_cpus, serial=serial,
              env=worker_environment(None, fast_compile=True), progress=progress, desc="fuzz: identity",
              deadline_minutes=left(), max_calls=5)
    return store


def summarise_fuzz(records: list[dict]) -> dict[str, dict]:
    """Per invariant: programs, checks, failures (silent ones and those the run's diagnostics flagged), errors."""
    parts = {}
    for kind in ("identity", "scan_twin"):
        # one result per program: overlapping chunks (another --chunk, keys of older stores) check some twice
        results = list({r["program"]: r for rec in records if rec["kind"] == kind for r in rec["results"]}.values())
        if kind == "scan_twin" and not results:
            continue  # stores written before the check existed
        parts[kind] = {
            "programs": len(results), "runs": len(results),
            "failures": [r for r in results if r["status"] == "ok" and r["failed"]],
            "errors": [r for r in results if r["status"] != "ok"],
            "families": sorted({r["family"] for r in results}),
        }
    named = [(r, invariance_check_name(r) if r["kind"] == "invariance" else r["kind"]) for r in records]
    for kind in ("prior", "invariance", "invariance_own_seeds"):
        rows = [r for r, name in named if name == kind]
        if kind == "invariance_own_seeds" and not rows:
            continue  # stores written before the check existed
        ok = [r for r in rows if r["status"] == "ok"]
        failures = [r for r in ok if r["failed"]]
        parts[kind] = {
            "programs": len({r["program"] for r in rows}), "runs": len(rows), "failures": failures,
            "silent_failures": [r for r in failures if r["trustworthy"]],
            "errors": [r for r in rows if r["status"] != "ok"],
            "families": sorted({r["family"] for r in rows}),
        }
    return parts

"""Simulation-based calibration of every method and kernel (Talts et al. 2018, Algorithm 1).

One replication: draw (theta, y) from a model's prior predictive, run a method on y, thin its draws
to L = 99 and record the rank of every element of theta among them. Replications are independent
Ray tasks, each saved as JSON when it finishes (true values, thinned draws, ranks, the run's
diagnostics); a rerun skips the saved ones, and asking for more replications later adds to them.
Replication r of a model uses the same (theta, y) for every method (common random numbers).
"""

from __future__ import annotations

import hashlib
import traceback
from dataclasses import asdict
from pathlib import Path

import numpy as np

from autoreparam.benchmark.store import ResultStore
from autoreparam.reliability.methods import RunSettings, find_spec, method_specs, run_spec
from autoreparam.reliability.models import MODEL_NAMES, sbc_models
from autoreparam.reliability.ranks import NUM_THINNED, flatten_sites, ranks, thin
from autoreparam.reliability.runner import run_tasks, worker_environment
from autoreparam.reliability.statistics import Calibration, calibration


def stable_seed(*parts) -> int:
    """A 31-bit seed from its parts, the same in every process (Python's ``hash`` is salted)."""
    return int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:4], "little") >> 1


def task_key(model: str, label: str, replication: int) -> str:
    return f"{model}__{label.replace('/', '-')}__{replication:04d}"


def plan_tasks(replications: int, models=MODEL_NAMES, labels=None, settings: RunSettings = RunSettings(),
               control_replications: int | None = None) -> list[dict]:
    """One task per (model, method/kernel, replication), replications interleaved so that every cell
    fills up evenly and an interrupted run still has a usable (smaller) SBC for every cell.

    The negative control needs few replications to fail: it runs the first ``control_replications``.
    """
    labels = [s.label for s in method_specs()] if labels is None else list(labels)
    for label in labels:
        find_spec(label)  # an unknown label fails here, not in a worker
    unknown = sorted(set(models) - set(sbc_models()))
    if unknown:
        from autoreparam.errors import ArgumentError

        raise ArgumentError(f"unknown SBC model '{unknown[0]}'; choose among {', '.join(sbc_models())}")
    return [
        {"key": task_key(m, label, r), "model": m, "method": label, "replication": r, "settings": asdict(settings)}
        for r in range(replications) for m in models for label in labels
        if control_replications is None or r < control_replications or not find_spec(label).is_control
    ]


def run_replication(task: dict) -> dict:
    """Run one task (in a worker); a failure is recorded with its error rather than raised."""
    try:
        return {**task, "status": "ok", **_replication(task)}
    except Exception as error:  # noqa: BLE001 - one failed run must not stop the others; it is reported
        return {**task, "status": "error", "error": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc(limit=8)}


def _replication(task: dict) -> dict:
    model = sbc_models()[task["model"]]
    spec = find_spec(task["method"])
    truth, data = model.prior_draw(stable_seed("sbc-data", task["model"], task["replication"]))
    seed = stable_seed("sbc-run", task["model"], task["method"], task["replication"])
    samples, summary = run_spec(spec, model.model, model.args, {**model.kwargs, **data}, seed, RunSettings(**task["settings"]))
    true_flat, labels = flatten_sites(truth)
    draws, draw_labels = flatten_sites({k: samples[k] for k in truth}, lead=2)
    if labels != draw_labels:
        raise ValueError(f"the method's draws have elements {draw_labels}, the prior draw {labels}")
    thinned = thin(draws, NUM_THINNED)
    return {
        "labels": labels,
        "truth": true_flat,
        "thinned": thinned,
        "rank": ranks(true_flat[None], thinned[None])[0],
        "data": {k: np.asarray(v).tolist() for k, v in data.items()},
        "sampler_seed": seed,
        **summary,
    }


def run_sbc(out, replications: int, models=MODEL_NAMES, labels=None, settings: RunSettings = RunSettings(), *,
            control_replications=None, address=None, num_cpus=1, serial=False, progress=True,
            deadline_minutes=None) -> ResultStore:
    """Run (or resume) the SBC into ``out``; returns its store."""
    store = ResultStore(out)
    tasks = plan_tasks(replications, models, labels, settings, control_replications)
    env = worker_environment(Path(out) / "jax_cache", lock_cache=True)
    run_tasks(tasks, run_replication, store, address=address, num_cpus=num_cpus, serial=serial, env=env,
              progress=progress, desc="SBC replications", deadline_minutes=deadline_minutes, max_calls=200)
    return store


def cell_ranks(records: list[dict]) -> dict[tuple[str, str], dict]:
    """Finished replications grouped by (model, method/kernel): ranks, thinned draws, truths, counts."""
    cells: dict[tuple[str, str], dict] = {}
    for rec in sorted(records, key=lambda r: (r["model"], r["method"], r["replication"])):
        cell = cells.setdefault((rec["model"], rec["method"]), {"ok": [], "errors": []})
        (cell["ok"] if rec.get("status") == "ok" else cell["errors"]).append(rec)
    out = {}
    for key, cell in cells.items():
        ok = cell["ok"]
        out[key] = {
            "labels": ok[0]["labels"] if ok else [],
            "rank": np.array([r["rank"] for r in ok]),
            "truth": np.array([r["truth"] for r in ok]),
            "thinned": np.array([r["thinned"] for r in ok]),
            "untrustworthy": sum(not r["trustworthy"] for r in ok),
            "errors": [r["error"] for r in cell["errors"]],
            "records": ok,
        }
    return out


def summarise(records: list[dict]) -> dict[tuple[str, str], Calibration]:
    """The calibration verdict of every cell with at least 10 finished replications."""
    return {key: calibration(c["rank"], c["labels"], NUM_THINNED)
            for key, c in cell_ranks(records).items() if len(c["rank"]) >= 10}

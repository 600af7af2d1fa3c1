"""Many independent tasks (per-model labels, evaluation runs) on Ray: a local cluster by default.

Each task is a plain function of keyword arguments that writes its own result file ``out``; a
task whose ``out`` exists is skipped, so a rerun resumes, and a result is on disk as soon as its
task finishes, whatever happens to the driver. A task that failed writes ``{"error": ...}`` to its
``out``, which a rerun tries again. ``address`` joins an existing cluster (``ray start
--head`` on one machine, ``ray start --address ...`` on the others); without it Ray starts a local
cluster of ``num_cpus`` workers. ``serial=True`` runs in this process without Ray (tests, debugging).

Each task gets one CPU and runs JAX on the platform ``JAX_PLATFORMS`` names in the driver's
environment (forwarded to the workers), so the same command runs on a laptop, a CPU cluster or a
GPU machine.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from autoreparam.errors import ArgumentError
from autoreparam.meta.files import write_json
from autoreparam.progress import task_bar
from autoreparam.ray_address import check_reachable

# How many worker processes share the machine: set by an evaluation's driver, recorded by each task
# beside its seconds (`meta_eval.machine`).
WORKERS_VARIABLE = "AUTOREPARAM_EVAL_WORKERS"
# Environment a worker needs to behave like the driver.
_FORWARDED = ("JAX_PLATFORMS", "AUTOREPARAM_DATA", "XDG_CACHE_HOME", "JAX_ENABLE_X64", "XLA_FLAGS", WORKERS_VARIABLE)


@dataclass(frozen=True)
class Task:
    """One unit of work: ``function(out=out, **kwargs)`` writes ``out``."""

    out: Path
    kwargs: dict = field(default_factory=dict)


def _guarded(function: Callable, out: Path, kwargs: dict) -> dict:
    """Run one task; a failure is written as a result (``error``) so it is reported, not retried forever."""
    start = time.perf_counter()
    try:
        summary = function(out=out, **kwargs) or {}
    except Exception as error:  # noqa: BLE001 - recorded in the task's file, with its traceback
        summary = {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=8)}
        write_json(out, {**summary, "task": kwargs, "seconds": time.perf_counter() - start})
    return {"out": str(out), **{k: v for k, v in summary.items() if k != "traceback"}}


def pending(tasks: Sequence[Task]) -> list[Task]:
    """The tasks whose result file does not exist yet, or records a failure (retried on a rerun)."""
    return [t for t in tasks if not Path(t.out).exists() or _failed(Path(t.out))]


def _failed(path: Path) -> bool:
    try:
        return "error" in json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True


def run_tasks(
    function: Callable,
    tasks: Sequence[Task],
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    serial: bool = False,
    label: str = "tasks",
    progress: bool = True,
    max_calls: int = 25,
) -> list[dict]:
    """Run every pending task of ``tasks``; returns one summary per task run now (``error`` on failure).

    ``max_calls``: tasks a Ray worker runs before it is replaced, which bounds the memory that JAX's
    compiled programs of many different models accumulate in one process.
    """
    todo = pending(tasks)
    if num_cpus is not None and num_cpus < 1:
        raise ArgumentError(f"num_cpus must be a positive integer, got {num_cpus}")
    bar = _bar(len(tasks), len(tasks) - len(todo), label, progress)
    summaries = []
    try:
        if serial or not todo:
            for task in todo:
                summaries.append(_guarded(function, Path(task.out), task.kwargs))
                _advance(bar, summaries[-1])
            return summaries
        import ray  # imported here: only task runs need it, and it is slow to import

        started = not ray.is_initialized()
        if started:
            env = {k: os.environ[k] for k in _FORWARDED if k in os.environ}
            check_reachable(address)
            ray.init(address=address, num_cpus=None if address else num_cpus, include_dashboard=False,
                     log_to_driver=False, runtime_env={"env_vars": env} if env else None,
                     configure_logging=False)
        try:
            remote = ray.remote(num_cpus=1, max_calls=max_calls)(_guarded)
            futures = [remote.remote(function, Path(t.out), t.kwargs) for t in todo]
            while futures:
                done, futures = ray.wait(futures, num_returns=1)
                summaries.append(ray.get(done[0]))
                _advance(bar, summaries[-1])
        finally:
            if started:
                ray.shutdown()
    finally:
        if bar is not None:
            bar.close()
    return summaries


def _bar(total: int, done: int, label: str, enabled: bool):
    if not enabled:
        return None
    return task_bar(total, label, initial=done, mininterval=1.0)


def _advance(bar, summary: dict) -> None:
    if bar is None:
        return
    bar.update(1)
    if "error" in summary:
        bar.write(f"failed: {summary['out']}: {summary['error']}")

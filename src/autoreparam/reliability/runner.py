"""Run independent tasks through Ray, saving each result as JSON the moment it finishes; resumable.

A task is a JSON-ready dict with a file-name-safe ``key``; its result is saved as
``<out>/cells/<key>.json`` (`autoreparam.benchmark.store.ResultStore`, written atomically), and a
rerun skips every key already saved with a result; a task saved as an error (``"status": "error"``,
an exception inside the method or the check) runs again, since the error may have been fixed. Ray starts a local cluster with ``num_cpus`` workers by
default, or joins an existing one at ``address``. The driver writes every file, so workers on other
machines need no shared file system. ``serial=True`` runs the tasks in this process, without Ray
(for tests, debugging and machines without Ray).

Each worker process is started with `worker_environment`: JAX on the CPU, one thread per worker,
closed-over data hoisted out of the compiled programs as arguments
(``JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS``), and a persistent compilation cache. Replications of a
model differ only in their data, so from the second one on every XLA program comes from the cache:
measured on eight schools, NCP-HMC, 22 s per replication without it and 6 s with it (2-core
machine), with bitwise-identical draws. Workers that replicate one model (``sbc``) share that folder
under a size bound far above what a run writes, only so that JAX locks it: unbounded, one worker
could read another's half-written entry. The lock makes each write scan the folder, 27 ms at 1,000
entries and 0.55 s at 20,000 (benchmarks/cache_lock_cost.py), so ``fuzz``, whose workers compile
distinct programs (about 30 entries each), goes without it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable

from autoreparam.benchmark.store import ResultStore
from autoreparam.compilation_cache import SHARED_CACHE_MAX_BYTES, adopt_bound, switched_off
from autoreparam.mcmc.programs import release_compiled_programs
from autoreparam.progress import task_bar
from autoreparam.ray_address import check_reachable


def worker_environment(cache_dir: str | os.PathLike | None, fast_compile: bool = False,
                       lock_cache: bool = False) -> dict[str, str]:
    """Environment variables for a worker process (they must be set before JAX is imported).

    ``lock_cache``: the workers compile the same programs (replications of a model, as in ``sbc``), so
    they would race on the same entries; give the cache folder a size bound that makes JAX lock it.
    Off for workers that compile distinct programs (``fuzz``): there a race is rare, and the lock's
    scan of the folder on every write would grow with the thousands of entries such a run writes.
    """
    xla = ["--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1"]
    if fast_compile:  # programs that run once: compile time dominates, so skip LLVM's optimisation
        xla.append("--xla_backend_optimization_level=0")
    env = {
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": " ".join(xla),
        "JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS": "True",
        "JAX_EMBEDDED_CONSTANTS_MAX_BYTES": "0",
    }
    if cache_dir is not None and not switched_off():  # the off switch holds in the workers too (found in review)
        env.update({
            "JAX_COMPILATION_CACHE_DIR": str(Path(cache_dir).resolve()),
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
        })
        if lock_cache:
            # With a bound JAX locks each read and write, so no worker reads another's half-written entry
            # and compiles again. An earlier unbounded run's entries first get the access-time files a
            # bounded cache reads (without them every write fails with a warning).
            adopt_bound(cache_dir)
            env["JAX_COMPILATION_CACHE_MAX_SIZE"] = str(SHARED_CACHE_MAX_BYTES)
    # PYTHONPATH: a run from a frozen copy of the source
    for name in ("AUTOREPARAM_DATA", "PYTHONPATH", "AUTOREPARAM_COMPILATION_CACHE", "AUTOREPARAM_CACHE_DIR"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _bar(total: int, desc: str, progress: bool):
    return task_bar(total, desc, enabled=progress)


def run_tasks(
    tasks: list[dict],
    work: Callable[[dict], dict],
    store: ResultStore,
    *,
    address: str | None = None,
    num_cpus: int | None = 1,
    serial: bool = False,
    env: dict[str, str] | None = None,
    progress: bool = True,
    desc: str = "tasks",
    deadline_minutes: float | None = None,
    max_calls: int = 0,
) -> int:
    """Run every task whose key ``store`` lacks, saving ``work(task)`` under its key; returns how many ran.

    ``deadline_minutes``: start no task after this long (running ones finish); rerun to continue.
    ``max_calls``: a Ray worker process exits after this many tasks (0: never), returning the memory
    its compiled programs hold (in-process caches are never evicted; a long-lived worker running
    many models ran a 23 GB machine out of memory). A task whose worker dies (out of memory,
    killed) is reported and not saved, and the others go on; a rerun retries it. With ``serial``,
    this process drops every compiled program after each ``max_calls`` tasks instead
    (`release_compiled_programs`): a serial fuzzing pass that kept them stopped after 46 tasks
    (four generated programs, every method) with "LLVM ERROR: Unable to allocate section memory".
    """
    deadline = None if deadline_minutes is None else time.perf_counter() + 60.0 * deadline_minutes
    pending = [t for t in tasks if not store.done(t["key"]) or _errored(store, t["key"])]
    bar = _bar(len(pending), desc, progress)
    started, finished = time.perf_counter(), []

    def save(task, result) -> None:
        store.save(task["key"], result)
        finished.append(task["key"])
        bar.set_postfix_str(task["key"][:50], refresh=False)
        bar.update(1)

    try:
        if serial:
            for done, task in enumerate(pending, start=1):
                if deadline is not None and time.perf_counter() > deadline:
                    break
                save(task, work(task))
                if max_calls and done % max_calls == 0:
                    release_compiled_programs()
        elif pending:
            _run_ray(pending, work, save, address, num_cpus, env or {}, deadline, max_calls)
    finally:
        bar.close()
    store.root.mkdir(parents=True, exist_ok=True)
    # One line per call: a resumed run's wall time is the sum of its passes.
    with open(store.root / "wall_seconds.txt", "a") as log:
        log.write(f"{time.perf_counter() - started:.1f} {len(finished)}\n")
    return len(finished)


def _errored(store: ResultStore, key: str) -> bool:
    """Whether the saved result of ``key`` is an error (failed tasks were never tried again; found in review)."""
    return store.load(key).get("status") == "error"


def _run_ray(pending, work, save, address, num_cpus, env, deadline, max_calls=0) -> None:
    import ray

    runtime_env = {"env_vars": env}
    started_here = not ray.is_initialized()
    if started_here:
        if address is None:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                     object_store_memory=200 * 1024**2, runtime_env=runtime_env)
        else:
            check_reachable(address)
            ray.init(address=address, log_to_driver=False, runtime_env=runtime_env)
    remote = ray.remote(num_cpus=1, max_retries=0, max_calls=max_calls)(work)
    # A bounded queue: results stream to disk as they finish and an interrupt loses little work.
    limit = 4 * max(1, int(ray.cluster_resources().get("CPU", 1)))
    queue, in_flight = list(pending), {}
    try:
        while True:
            if deadline is not None and time.perf_counter() > deadline:
                queue.clear()
            while queue and len(in_flight) < limit:
                task = queue.pop(0)
                in_flight[remote.remote(task)] = task
            if not in_flight:
                break
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                task = in_flight.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayError as error:  # the worker died: not the task's verdict
                    print(f"{task['key']}: {type(error).__name__}, not saved (a rerun retries it)", file=sys.stderr)
                    continue
                save(task, result)
    finally:
        for ref in in_flight:
            ray.cancel(ref, force=True)
        if started_here:
            ray.shutdown()

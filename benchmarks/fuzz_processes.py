"""`autoreparam fuzz`'s tasks on a machine without Ray: one process per core, same store, same keys.

The GPU machines lent to this project have 16 CPU cores but no Ray (and nothing can be installed
there beyond carried wheels; Ray's is too large to carry). This script runs the very tasks
`autoreparam fuzz` plans (`reliability.fuzz.plan_fuzz`, `run_fuzz_task`) in a process pool and saves
each result under the same key in the same `ResultStore`, so its cells merge with a Ray run's and
`autoreparam reliability --fuzz DIR` reads them unchanged. Resumable: finished keys are skipped.

    python benchmarks/fuzz_processes.py --out results/fuzz --n 3000 --mcmc-n 15 --chunk 20 \
        --workers 16 --deadline-minutes 7

The sampling checks (prior reproduction, invariance) are planned first, then the identity chunks in
program order, as `run_fuzz` does.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mcmc-n", type=int, default=5)
    parser.add_argument("--chunk", type=int, default=20)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--deadline-minutes", type=float, default=None)
    args = parser.parse_args(argv)

    from autoreparam.reliability.runner import worker_environment

    # Children are spawned, so they import JAX afresh under this environment (one thread each).
    os.environ.update(worker_environment(None, fast_compile=True))
    from autoreparam.benchmark.store import ResultStore
    from autoreparam.reliability.cli import record_command
    from autoreparam.reliability.fuzz import plan_fuzz, run_fuzz_task

    store = ResultStore(args.out)
    store.root.mkdir(parents=True, exist_ok=True)
    record_command(store.root, argv, program="python benchmarks/fuzz_processes.py")
    tasks = plan_fuzz(args.n, args.seed, args.mcmc_n, args.chunk)
    tasks = [t for t in tasks if t["kind"] != "identity"] + [t for t in tasks if t["kind"] == "identity"]
    pending = [t for t in tasks if not store.done(t["key"])]
    deadline = None if args.deadline_minutes is None else time.perf_counter() + 60 * args.deadline_minutes
    started, finished = time.perf_counter(), 0
    print(f"{len(pending)} of {len(tasks)} tasks to run on {args.workers} processes", file=sys.stderr, flush=True)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(args.workers, mp_context=context, max_tasks_per_child=5) as pool:
        in_flight = {}
        while pending or in_flight:
            while pending and len(in_flight) < 2 * args.workers and (deadline is None or time.perf_counter() < deadline):
                task = pending.pop(0)
                in_flight[pool.submit(run_fuzz_task, task)] = task
            if not in_flight:
                break
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                task = in_flight.pop(future)
                try:
                    store.save(task["key"], future.result())
                    finished += 1
                except Exception as error:  # noqa: BLE001 - a dead worker is reported; a rerun retries the task
                    print(f"{task['key']}: {type(error).__name__}: {error} (not saved)", file=sys.stderr, flush=True)
            print(f"{finished} done, {len(pending)} left, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
            if deadline is not None and time.perf_counter() > deadline:
                pending.clear()
    with open(store.root / "wall_seconds.txt", "a") as log:
        log.write(f"{time.perf_counter() - started:.1f} {finished}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

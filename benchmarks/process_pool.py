"""`autoreparam sbc`, `autoreparam fuzz` and `autoreparam meta evaluate` tasks without Ray: one process per core.

The GPU machines lent to this project have 16 CPU cores but no Ray (nothing can be installed there
beyond carried wheels, and Ray's is too large to carry). This script runs the very tasks the two
commands plan (`reliability.sbc.plan_tasks` / `run_replication`, `reliability.fuzz.plan_fuzz` /
`run_fuzz_task`) in a process pool and saves each result under the same key in the same
`ResultStore`, so its cells merge with a Ray run's and `autoreparam reliability` reads them
unchanged. Each saved result names the machine and the jax version that produced it (`ran_on`).
Resumable: finished keys are skipped. (Its first version, for fuzzing only, was
`benchmarks/fuzz_processes.py`.)

    python benchmarks/process_pool.py fuzz --out results/fuzz --n 3000 --mcmc-n 5 --chunk 20 \
        --workers 16 --deadline-minutes 7
    python benchmarks/process_pool.py fuzz --out results/fuzz_invariance --n 0 --mcmc-n 2000 \
        --mcmc-methods none --skip-programs 300 --workers 16 --deadline-minutes 6
    python benchmarks/process_pool.py sbc --out results/sbc --replications 100 \
        --control-replications 20 --workers 16 --deadline-minutes 7
    python benchmarks/process_pool.py meta-evaluate --out runs/ev_fit --corpus runs/corpus --protocol short_3 \
        --seed-networks runs/seed_0/meta_gnn,runs/seed_1/meta_gnn --workers 16 --deadline-minutes 7

`meta-evaluate` runs the model tasks of `autoreparam meta evaluate` (funnel grid, held-out programs, zoo,
other seeds' networks; `meta_eval.run.plan_evaluation`), each writing its own JSON as the command's do;
the in-process checks and the timing tasks are left to the command on a quiet machine, with the same
options (a folder refuses others): `autoreparam meta evaluate --out runs/ev_fit --corpus runs/corpus
--protocol short_3 --seed-networks ... --parts checks,timing`. Each task's JSON records its machine.

`--deadline-minutes`: no task starts after it; the tasks in flight (at most one per worker) finish.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from autoreparam.cli_types import acceptance, count, natural
from autoreparam.meta_eval.protocol import PROTOCOLS


def _settings(args):
    """The runs' settings, built from the same options as `autoreparam fuzz` / `sbc` build them."""
    from autoreparam.reliability.cli import run_settings

    return run_settings(args.command, args)


def _fuzz_tasks(args):
    from autoreparam.reliability.fuzz import plan_fuzz, run_fuzz_task

    from autoreparam.reliability.cli import _prior_cells

    tasks = plan_fuzz(args.n, args.seed, args.mcmc_n, args.chunk, _settings(args),
                      methods=_prior_cells(args.mcmc_methods), invariance=not args.no_invariance)
    if args.skip_programs:
        # Another machine takes the first sampled programs: start this one further along the same list.
        skipped = sorted({t["program"] for t in tasks if "program" in t})[:args.skip_programs]
        tasks = [t for t in tasks if t.get("program") not in set(skipped)]
    # The sampling checks first (few tasks, each worth more), then the identity chunks in program order.
    return [t for t in tasks if t["kind"] != "identity"] + [t for t in tasks if t["kind"] == "identity"], run_fuzz_task


def _sbc_tasks(args):
    from autoreparam.reliability.sbc import plan_tasks, run_replication

    return (plan_tasks(args.replications, settings=_settings(args), control_replications=args.control_replications),
            run_replication)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fuzz = sub.add_parser("fuzz", help="the tasks of `autoreparam fuzz`")
    fuzz.add_argument("--out", required=True)
    fuzz.add_argument("--n", type=natural, default=3000)
    fuzz.add_argument("--seed", type=natural, default=0)
    fuzz.add_argument("--mcmc-n", type=natural, default=5)
    fuzz.add_argument("--chunk", type=count, default=20)
    fuzz.add_argument("--mcmc-methods", default=None, help="as `autoreparam fuzz --mcmc-methods` ('none': no prior check)")
    fuzz.add_argument("--no-invariance", action="store_true", help="skip the invariance check")
    fuzz.add_argument("--skip-programs", type=natural, default=0,
                      help="leave out the first N sampled programs (another machine runs them)")
    sbc = sub.add_parser("sbc", help="the tasks of `autoreparam sbc` (every model and method/kernel cell)")
    sbc.add_argument("--out", required=True)
    sbc.add_argument("--replications", type=int, default=100)
    sbc.add_argument("--control-replications", type=int, default=20)
    sbc.add_argument("--chains", type=int, default=4)
    sbc.add_argument("--warmup", type=int, default=500)
    sbc.add_argument("--samples", type=int, default=500)
    sbc.add_argument("--vi", default="fast", choices=["fast", "paper"])
    meta = sub.add_parser("meta-evaluate", help="the model tasks of `autoreparam meta evaluate`")
    meta.add_argument("--out", required=True)
    meta.add_argument("--corpus", default=None)
    meta.add_argument("--protocol", default="cpu", choices=sorted(PROTOCOLS))
    meta.add_argument("--network", default=None, help="weights stem (default: the shipped network)")
    meta.add_argument("--seed-networks", default="", help="comma-separated weights stems of other training seeds")
    meta.add_argument("--parts", default="funnel,held_out,zoo,seeds")
    for p in (fuzz, sbc, meta):
        p.add_argument("--workers", type=count, default=os.cpu_count())
        p.add_argument("--deadline-minutes", type=float, default=None)
    for p in (fuzz, sbc):
        p.add_argument("--target-accept", type=acceptance, default=None,
                       help="as `autoreparam fuzz/sbc --target-accept`; a store keeps one setting")
    return parser


def _pool(pending: list, submit, on_result, workers: int, deadline_minutes, max_tasks_per_child: int) -> int:
    """Run ``pending`` tasks in ``workers`` spawned processes; ``on_result(task, future)``; returns tasks finished.

    One task per worker in flight: past the deadline no task starts, and the ones running finish.
    """
    deadline = None if deadline_minutes is None else time.perf_counter() + 60 * deadline_minutes
    started, finished = time.perf_counter(), 0
    context = multiprocessing.get_context("spawn")
    # A worker is replaced after some tasks to return the memory of the programs it compiled.
    with ProcessPoolExecutor(workers, mp_context=context, max_tasks_per_child=max_tasks_per_child) as pool:
        in_flight = {}
        while pending or in_flight:
            while pending and len(in_flight) < workers and (deadline is None or time.perf_counter() < deadline):
                task = pending.pop(0)
                in_flight[submit(pool, task)] = task
            if not in_flight:
                break
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                task = in_flight.pop(future)
                try:
                    on_result(task, future)
                    finished += 1
                except Exception as error:  # noqa: BLE001 - a dead worker is reported; a rerun retries the task
                    name = task["key"] if isinstance(task, dict) else task.out
                    print(f"{name}: {type(error).__name__}: {error} (not saved)"[:500], file=sys.stderr, flush=True)
            if finished % 20 == 0 or not pending:
                print(f"{finished} done, {len(pending)} left, {time.perf_counter() - started:.0f} s", file=sys.stderr,
                      flush=True)
            if deadline is not None and time.perf_counter() > deadline:
                pending.clear()
    return finished


def _meta_evaluate(args) -> int:
    """The model tasks of `autoreparam meta evaluate`, each writing its JSON (resumable as the command is)."""
    import jax

    from autoreparam.meta.tasks import WORKERS_VARIABLE, _guarded, pending
    from autoreparam.meta_eval.model_task import evaluate_model
    from autoreparam.meta_eval.run import plan_evaluation

    os.environ[WORKERS_VARIABLE] = str(args.workers)  # recorded by each task beside its seconds
    seeds = tuple(s for s in args.seed_networks.split(",") if s)
    parts = tuple(p for p in args.parts.split(",") if p)
    tasks = plan_evaluation(args.out, corpus=args.corpus, protocol=args.protocol, network=args.network,
                            seed_networks=seeds, prototype=None, parts=parts).tasks
    # The longest tasks first (the zoo's NUTS runs), so that none starts just before the deadline.
    order = {"zoo": 0, "held_out": 1, "funnel": 2, "seeds": 3}
    todo = sorted(pending(tasks), key=lambda t: order.get(os.path.relpath(t.out, args.out).split(os.sep)[0], 4))
    print(f"{len(todo)} of {len(tasks)} tasks to run on {args.workers} processes (jax {jax.__version__})",
          file=sys.stderr, flush=True)

    def report(task, future):
        summary = future.result()
        if "error" in summary:
            print(f"failed: {summary['out']}: {summary['error']}"[:500], file=sys.stderr, flush=True)

    started = time.perf_counter()
    finished = _pool(todo, lambda pool, t: pool.submit(_guarded, evaluate_model, t.out, t.kwargs), report,
                     args.workers, args.deadline_minutes, max_tasks_per_child=5)
    with open(os.path.join(args.out, "wall_seconds.txt"), "a") as log:
        log.write(f"{time.perf_counter() - started:.1f} {finished}\n")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parser().parse_args(argv)

    from autoreparam.reliability.runner import worker_environment

    # Children are spawned, so they import JAX afresh under this environment (one thread each).
    # SBC runs few programs many times: they share a persistent compilation cache, as `autoreparam sbc`'s do.
    # Fuzzing compiles each program once: no cache, and no LLVM optimisation.
    cache = None if args.command in ("fuzz", "meta-evaluate") else os.path.join(args.out, "jax_cache")
    os.environ.update(worker_environment(cache, fast_compile=args.command == "fuzz"))
    # JAX is imported by now (autoreparam's package import) and reads JAX_PLATFORMS only then: this
    # process too must stay off an accelerator (on a GPU machine it would otherwise reserve its memory).
    import jax

    jax.config.update("jax_platforms", "cpu")
    if args.command == "meta-evaluate":
        return _meta_evaluate(args)

    from autoreparam.benchmark.store import ResultStore
    from autoreparam.reliability.cli import record_command
    from autoreparam.reliability.methods import refuse_mixed_settings

    store = ResultStore(args.out)
    refuse_mixed_settings(store, _settings(args))  # as the commands do: one store, one setting
    store.root.mkdir(parents=True, exist_ok=True)
    record_command(store.root, argv[1:], program=f"python benchmarks/process_pool.py {args.command}")
    tasks, run_task = (_fuzz_tasks if args.command == "fuzz" else _sbc_tasks)(args)
    ran_on = f"{platform.node()} ({os.cpu_count()} CPUs), Python {platform.python_version()}, jax {jax.__version__}"
    pending = [t for t in tasks if not store.done(t["key"])]
    print(f"{len(pending)} of {len(tasks)} tasks to run on {args.workers} processes", file=sys.stderr, flush=True)
    started = time.perf_counter()

    def save(task, future):
        store.save(task["key"], {**future.result(), "ran_on": ran_on})

    finished = _pool(pending, lambda pool, t: pool.submit(run_task, t), save, args.workers, args.deadline_minutes,
                     max_tasks_per_child=5 if args.command == "fuzz" else 100)
    with open(store.root / "wall_seconds.txt", "a") as log:
        log.write(f"{time.perf_counter() - started:.1f} {finished}\n")
    return 0


if __name__ == "__main__":
    from autoreparam.errors import AutoreparamError

    try:
        raise SystemExit(main())
    except AutoreparamError as error:  # a refused store or bad option: one line, as the commands print it
        print(f"process_pool: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None

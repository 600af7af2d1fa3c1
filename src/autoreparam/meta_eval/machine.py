"""Where an evaluation ran: one line per machine, recorded in protocol.json and in each task's JSON."""

from __future__ import annotations

import os
import platform


def cpus() -> int:
    """CPUs this process may use (its affinity where the platform has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


# Set by the driver of an evaluation (`meta_eval.run.worker_count`, `benchmarks/process_pool.py`): how
# many worker processes shared the machine, which matters when reading its seconds.
WORKERS_VARIABLE = "AUTOREPARAM_EVAL_WORKERS"


def describe_machine() -> str:
    """Host, architecture, JAX platform, CPUs, worker processes (where the driver said) and jax version."""
    import jax

    workers = os.environ.get(WORKERS_VARIABLE)
    pool = "" if workers is None else f", {workers} worker process{'' if workers == '1' else 'es'}"
    return (f"{platform.node()} ({platform.machine()}, {jax.devices()[0].platform}, {cpus()} CPUs{pool}, "
            f"jax {jax.__version__})")

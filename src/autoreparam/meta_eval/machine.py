"""Where an evaluation ran: one line per machine, recorded in protocol.json and in each task's JSON."""

from __future__ import annotations

import os
import platform

from autoreparam.meta.tasks import WORKERS_VARIABLE  # set by the driver: `meta_eval.run.worker_count`


def cpus() -> int:
    """CPUs this process may use (its affinity where the platform has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()




def describe_machine() -> str:
    """Host, architecture, JAX platform, CPUs, worker processes (where the driver said) and jax version."""
    import jax

    workers = os.environ.get(WORKERS_VARIABLE)
    pool = "" if workers is None else f", {workers} worker process{'' if workers == '1' else 'es'}"
    return (f"{platform.node()} ({platform.machine()}, {jax.devices()[0].platform}, {cpus()} CPUs{pool}, "
            f"jax {jax.__version__})")

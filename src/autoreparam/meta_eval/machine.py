"""Where an evaluation ran: one line per machine, recorded in protocol.json and in each task's JSON."""

from __future__ import annotations

import os
import platform


def cpus() -> int:
    """CPUs this process may use (its affinity where the platform has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def describe_machine(workers: int | None = None) -> str:
    """Host, architecture, JAX platform, CPUs, worker processes (if known) and jax version."""
    import jax

    pool = "" if workers is None else f", {workers} worker processes"
    return (f"{platform.node()} ({platform.machine()}, {jax.devices()[0].platform}, {cpus()} CPUs{pool}, "
            f"jax {jax.__version__})")

"""How long JAX spent compiling inside a block of code that does not expose its compilation.

NumPyro's ``MCMC.warmup``, ``MCMC.run`` and ``SVI.run`` trace, lower and compile their programs on
first call, inside the same call that then runs them. JAX reports each of those steps as a time span
through ``jax.monitoring`` (tracing a jaxpr, lowering it to MLIR, the backend's compilation). The
spans nest (tracing an outer ``jit`` traces the inner ones), so the compile time of a block is the
length of the UNION of the spans recorded while it ran, never their sum.
"""

from __future__ import annotations

import threading

import jax.monitoring

COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
)


def union_length(spans) -> float:
    """Total length of the union of ``(start, end)`` intervals."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


class CompileMeter:
    """``with CompileMeter() as meter: ...`` then ``meter.seconds``: compile time inside the block."""

    def __init__(self):
        self._spans: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def _listen(self, event: str, start: float, end: float, **_) -> None:
        if event in COMPILE_EVENTS:
            with self._lock:
                self._spans.append((start, end))

    def __enter__(self) -> CompileMeter:
        jax.monitoring.register_event_time_span_listener(self._listen)
        return self

    def __exit__(self, *exc) -> None:
        jax.monitoring.unregister_event_time_span_listener(self._listen)

    @property
    def seconds(self) -> float:
        with self._lock:
            return union_length(self._spans)

"""Compile each sampler program once per input signature, and time compilation apart from running.

Samplers keep their jitted programs and call them through a ``ProgramCache``: the first call with a
given set of shapes and dtypes compiles ahead of time (``lower().compile()``), later calls reuse the
executable, and both times are returned so results can report compile time separately.
"""

from __future__ import annotations

import time

import jax


class ProgramCache:
    def __init__(self):
        self._compiled: dict = {}
        self.num_compilations = 0

    def __call__(self, name: str, jitted, args: tuple):
        """Run ``jitted(*args)``; returns ``(outputs, compile_seconds, run_seconds)``."""
        signature = (name,) + tuple(
            (tuple(x.shape), str(x.dtype)) for x in jax.tree_util.tree_leaves(args) if hasattr(x, "shape")
        )
        compile_seconds = 0.0
        if signature not in self._compiled:
            start = time.perf_counter()
            self._compiled[signature] = jitted.lower(*args).compile()
            compile_seconds = time.perf_counter() - start
            self.num_compilations += 1
        start = time.perf_counter()
        out = jax.block_until_ready(self._compiled[signature](*args))
        return out, compile_seconds, time.perf_counter() - start

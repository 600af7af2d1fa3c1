"""Compile each program once per process, and time compilation apart from running.

Every compiled program of autoreparam (samplers, variational fits) goes through ``PROGRAMS``, one
cache per process. A program is named by a *key* that says everything its traced function closes
over (its kind, the model function, the data's static parts, the site plan, the configuration);
everything else, the data arrays included, is a runtime argument. So a second ``infer`` call on the
same model, with a new seed or new data of the same shapes, runs the executables the first call
compiled: no tracing and no compilation. The first call with a given key and argument shapes
compiles ahead of time (``lower().compile()``) and both times are returned, so that results report
compile time separately.

JAX's persistent compilation cache (``autoreparam.compilation_cache``) extends this across
processes.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable, Hashable

import jax

# Executables kept per process; the least recently used are dropped beyond this.
MAX_PROGRAMS = 256


def _placement(x):
    """Where a committed array lives (an executable compiled for one placement refuses another:
    "Computation was compiled for input shardings that disagree"); None for anything JAX may move."""
    return x.sharding if getattr(x, "committed", False) else None


def _signature(args: tuple) -> tuple:
    leaves, treedef = jax.tree_util.tree_flatten(args)
    shapes = tuple((tuple(x.shape), str(x.dtype), _placement(x)) if hasattr(x, "shape") else ("static", x)
                   for x in leaves)
    return (treedef, shapes)


class ProgramCache:
    """``cache(key, build, args) -> (outputs, compile_seconds, run_seconds)``.

    ``build()`` returns the function to compile; it is called only when ``key`` is new. ``key`` must
    be hashable and must determine the function completely: two calls with equal keys must build
    functions that compute the same thing from the same arguments.
    """

    def __init__(self, max_programs: int = MAX_PROGRAMS):
        self._compiled: OrderedDict = OrderedDict()
        self._jitted: dict = {}
        self._lock = threading.Lock()
        self.max_programs = max_programs
        self.num_compilations = 0

    def __call__(self, key: Hashable, build: Callable[[], Callable], args: tuple):
        signature = (key, _signature(args))
        compile_seconds = 0.0
        with self._lock:
            executable = self._compiled.get(signature)
            if executable is not None:
                self._compiled.move_to_end(signature)
        if executable is None:
            jitted = self._jitted.get(key)
            if jitted is None:
                jitted = jax.jit(build())
            start = time.perf_counter()
            executable = jitted.lower(*args).compile()
            compile_seconds = time.perf_counter() - start
            with self._lock:
                self._jitted[key] = jitted
                self._compiled[signature] = executable
                self.num_compilations += 1
                while len(self._compiled) > self.max_programs:
                    old, _ = self._compiled.popitem(last=False)
                    if not any(k[0] == old[0] for k in self._compiled):
                        self._jitted.pop(old[0], None)
        start = time.perf_counter()
        out = jax.block_until_ready(executable(*args))
        return out, compile_seconds, time.perf_counter() - start

    def clear(self) -> None:
        with self._lock:
            self._compiled.clear()
            self._jitted.clear()


PROGRAMS = ProgramCache()


def release_compiled_programs() -> None:
    """Drop every compiled program this process holds (``PROGRAMS`` and JAX's own caches, which hold the
    graph's and the fits' jitted programs), as a fresh process would have none.

    Used where that matters: a recycled fuzzing worker (each XLA executable keeps LLVM code sections
    mapped; a process that keeps thousands runs out of mappings long before it runs out of memory),
    and a benchmark that times each workflow's first call, compilation included.
    """
    PROGRAMS.clear()
    jax.clear_caches()

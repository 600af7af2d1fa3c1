"""Suite-wide settings: CPU only, warnings are errors (pyproject), optional float64 pass.

Set AUTOREPARAM_TEST_X64=1 to run the whole suite in double precision. Tests that need float64
(e.g. log-density identities to 1e-6) enter ``jax.enable_x64(True)`` themselves.
AUTOREPARAM_TEST_SHARED_CACHE=0 compiles every program in every worker (no shared persistent cache).
"""

from __future__ import annotations

import logging
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# The suite writes nothing to the user's cache; the cache itself is tested in a subprocess.
os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")

import jax  # noqa: E402
import pytest  # noqa: E402

if os.environ.get("AUTOREPARAM_TEST_X64") == "1":
    jax.config.update("jax_enable_x64", True)

# One persistent compilation cache for this run, in a fresh temporary folder shared by the xdist
# workers (they inherit the controller's environment): XLA compilation is about three quarters of the
# suite's time, and files on different workers compile the same programs (the zoo models, the same
# small test models written twice). A new folder per run, so a run never reads an earlier run's
# executables; removed at the end (a folder given in AUTOREPARAM_TEST_JAX_CACHE is used and kept).
# JAX still logs "Compiling ..." on a cache hit, so the tests that count compilations (XlaCompilations)
# count the same. Not through AUTOREPARAM_COMPILATION_CACHE: the suite must not write to the user's
# cache, and subprocesses (the cache's own tests) must not inherit it.
_SUITE_CACHE = "AUTOREPARAM_TEST_JAX_CACHE"


def pytest_configure(config):
    """Made here, not at import: a command-line error exits before configure, and left an empty folder."""
    if os.environ.get("AUTOREPARAM_TEST_SHARED_CACHE", "1") == "0":
        return
    if _SUITE_CACHE not in os.environ:
        import tempfile

        os.environ[_SUITE_CACHE] = tempfile.mkdtemp(prefix="autoreparam-suite-jax-cache-")
        config.autoreparam_owns_suite_cache = True
    jax.config.update("jax_compilation_cache_dir", os.environ[_SUITE_CACHE])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.3)
    # A size bound switches on JAX's file lock around reads and writes: without it one worker could read
    # an entry another was still writing, and JAX's "Error reading persistent compilation cache entry"
    # warning is an error in this suite (found in review; jax-ml/jax#22718). 16 GiB: never evicts here.
    jax.config.update("jax_compilation_cache_max_size", 16 * 2**30)


def pytest_unconfigure(config):
    if getattr(config, "autoreparam_owns_suite_cache", False) and not hasattr(config, "workerinput"):
        import shutil

        shutil.rmtree(os.environ.pop(_SUITE_CACHE), ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """Under AUTOREPARAM_TEST_X64=1, tests marked ``float32`` (what float64 holds, float32 does not) are skipped."""
    if not jax.config.jax_enable_x64:
        return
    skip = pytest.mark.skip(reason="checks float32 behaviour; this run is in float64 (AUTOREPARAM_TEST_X64=1)")
    for item in items:
        if item.get_closest_marker("float32") is not None:
            item.add_marker(skip)


class XlaCompilations(logging.Handler):
    """Counts the XLA compilations JAX logs (``jax_log_compiles``, at WARNING) while it is installed."""

    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        if record.getMessage().startswith("Compiling"):
            self.messages.append(record.getMessage()[:120])

    def __enter__(self):
        self.previous = jax.config.jax_log_compiles
        logging.getLogger("jax").addHandler(self)
        jax.config.update("jax_log_compiles", True)
        return self

    def __exit__(self, *exc):
        jax.config.update("jax_log_compiles", self.previous)
        logging.getLogger("jax").removeHandler(self)

"""Suite-wide settings: CPU only, warnings are errors (pyproject), optional float64 pass.

Set AUTOREPARAM_TEST_X64=1 to run the whole suite in double precision. Tests that need float64
(e.g. log-density identities to 1e-6) enter ``jax.enable_x64(True)`` themselves.
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

"""Suite-wide settings: CPU only, warnings are errors (pyproject), optional float64 pass.

Set AUTOREPARAM_TEST_X64=1 to run the whole suite in double precision. Tests that need float64
(e.g. log-density identities to 1e-6) enter ``jax.enable_x64(True)`` themselves.
"""

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# The suite writes nothing to the user's cache; the cache itself is tested in a subprocess.
os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")

import jax  # noqa: E402

if os.environ.get("AUTOREPARAM_TEST_X64") == "1":
    jax.config.update("jax_enable_x64", True)

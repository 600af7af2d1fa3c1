"""The floating-point type samplers run in: JAX's default, read at each call.

float32, or float64 once a user enables it (``jax.config.update("jax_enable_x64", True)``, or
``with jax.enable_x64(True)``), which the language's docs advise for large integers. Chains started
in float32 under x64 met a float64 log density, and every ``infer`` call failed inside JAX
("cond branches must have equal output types"; found in review).
"""

from __future__ import annotations

import jax
import numpy as np


def float_dtype() -> np.dtype:
    """``float32``, or ``float64`` where JAX's 64-bit mode is on (read now, not at import)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(np.float64))

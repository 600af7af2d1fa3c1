"""Argument checks for the toy models, run only on concrete values (never on traced ones)."""

from __future__ import annotations

import numpy as np
from jax.core import Tracer

from autoreparam.errors import ArgumentError


def _numbers(name: str, value) -> np.ndarray:
    """`value` as float64, or an `ArgumentError` naming it (e.g. ``--option q=abc`` arrives as a string)."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentError(f"{name} must be a number, got {value!r}") from None


def check_interval(name: str, value, low: float, high: float) -> None:
    """`ArgumentError` unless every element of `value` lies in ``[low, high]``; None passes."""
    if value is None or isinstance(value, Tracer):
        return
    array = _numbers(name, value)
    # Written so that NaN fails: NaN compares false with everything.
    if not np.all((array >= low) & (array <= high)):
        raise ArgumentError(f"{name} must lie in [{low}, {high}], got {value!r}")


def check_positive(name: str, value) -> None:
    """`ArgumentError` unless every element of `value` is finite and > 0."""
    if isinstance(value, Tracer):
        return
    array = _numbers(name, value)
    if not np.all(np.isfinite(array) & (array > 0)):
        raise ArgumentError(f"{name} must be finite and positive, got {value!r}")


def check_count(name: str, value) -> int:
    """`value` as a positive int, or `ArgumentError`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ArgumentError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_seed(value) -> int:
    """``value`` as a non-negative int, or `ArgumentError` (``int("abc")`` and negative seeds failed inside
    NumPy, and 1.7 was silently seed 1; found in review)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ArgumentError(f"seed must be a non-negative integer, got {value!r}")
    return int(value)

"""Gathering group parameters by index, the way the original code's one-hot products did."""

from __future__ import annotations

import jax.numpy as jnp


def take_or_zero(values, index):
    """``values[index]`` along axis 0, with 0 for an index past the end.

    The original autoreparam code gathered group effects as ``tf.one_hot(index, n) @ values``,
    which gives 0 for ``index == n``. With 0-based indices (what our loaders return) this is plain
    indexing; with the 1-based indices that ``quirks=True`` keeps, it reproduces the original
    model, in which the last group gets no effect. (Negative indices are never produced.)
    """
    return jnp.take(jnp.asarray(values), jnp.asarray(index), axis=0, mode="fill", fill_value=0)

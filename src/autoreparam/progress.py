"""Visible progress for long compiled loops, fed by ``jax.debug.callback`` and easy to turn off."""

from __future__ import annotations

import contextlib
import sys
from typing import Callable

import numpy as np


def _best_elbo(values: np.ndarray) -> str:
    finite = values[np.isfinite(values)]
    return f"best ELBO {finite.max():.2f}" if finite.size else ""


@contextlib.contextmanager
def progress_reporter(total: int, label: str, enabled: bool = True, describe: Callable = _best_elbo):
    """Yield ``report(step, values)`` that advances a tqdm bar on stderr; a no-op when disabled.

    Under ``vmap`` a ``jax.debug.callback`` is called once per run (or chain) with that run's values,
    not once with the batch, so the values of one step are gathered until a later step arrives (or
    the loop ends) and ``describe(values) -> str`` then sees all of them: "best ELBO" is the best run's.
    """
    if not enabled:
        yield lambda step, values: None
        return
    from tqdm.auto import tqdm  # imported lazily: only long interactive runs need it

    bar = tqdm(total=total, desc=label, file=sys.stderr, leave=False, mininterval=0.5)
    pending = {"step": None, "values": []}

    def flush():
        if pending["step"] is None:
            return
        bar.n = pending["step"] + 1
        postfix = describe(np.concatenate(pending["values"]))
        if postfix:
            bar.set_postfix_str(postfix, refresh=False)
        bar.refresh()

    def report(step, values):
        step = int(np.max(step))
        if step != pending["step"]:
            flush()
            pending["step"], pending["values"] = step, []
        pending["values"].append(np.ravel(np.asarray(values, dtype=float)))

    try:
        yield report
    finally:
        flush()
        bar.n = total
        bar.close()

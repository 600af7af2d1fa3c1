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

    ``values`` arrive batched over runs or chains (the callback is called once per step for the
    whole vmapped batch); ``describe(values) -> str`` turns them into the bar's postfix.
    """
    if not enabled:
        yield lambda step, values: None
        return
    from tqdm.auto import tqdm  # imported lazily: only long interactive runs need it

    bar = tqdm(total=total, desc=label, file=sys.stderr, leave=False, mininterval=0.5)

    def report(step, values):
        bar.n = int(np.max(step)) + 1
        postfix = describe(np.asarray(values))
        if postfix:
            bar.set_postfix_str(postfix, refresh=False)
        bar.refresh()

    try:
        yield report
    finally:
        bar.n = total
        bar.close()

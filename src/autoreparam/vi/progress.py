"""Visible progress for long compiled loops, fed by ``jax.debug.callback`` and easy to turn off."""

from __future__ import annotations

import contextlib
import sys

import numpy as np


@contextlib.contextmanager
def progress_reporter(total: int, label: str, enabled: bool = True):
    """Yield ``report(step, values)`` that advances a tqdm bar on stderr; a no-op when disabled."""
    if not enabled:
        yield lambda step, values: None
        return
    from tqdm.auto import tqdm  # imported lazily: only long interactive runs need it

    bar = tqdm(total=total, desc=label, file=sys.stderr, leave=False, mininterval=0.5)

    def report(step, values):
        values = np.asarray(values)
        finite = values[np.isfinite(values)]
        bar.n = int(step) + 1
        if finite.size:
            bar.set_postfix_str(f"best ELBO {finite.max():.2f}", refresh=False)
        bar.refresh()

    try:
        yield report
    finally:
        bar.n = total
        bar.close()

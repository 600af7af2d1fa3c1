"""Visible progress, easy to turn off: for long compiled loops (fed by ``jax.debug.callback``), for
sampling (between compiled segments) and for runs of many tasks. A bar that redraws itself on a
terminal; a few plain lines anywhere else (``interactive``)."""

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

    # Off a terminal, redrawn frames would flood the log: four plain lines instead (see `interactive`).
    bar = tqdm(total=total, desc=label, file=sys.stderr, leave=False, mininterval=0.5,
               disable=not interactive())
    if not interactive():
        print(f"{label}: {total} steps", file=sys.stderr, flush=True)
    pending = {"step": None, "values": [], "next_line": 0.25}

    def flush():
        if pending["step"] is None:
            return
        bar.n = pending["step"] + 1
        postfix = describe(np.concatenate(pending["values"]))
        if postfix:
            bar.set_postfix_str(postfix, refresh=False)
        bar.refresh()
        if not interactive() and bar.n >= pending["next_line"] * total:
            # A plain line at each quarter (there was only the first; found in review).
            print(f"{label}: {bar.n} of {total} steps" + (f", {postfix}" if postfix else ""), file=sys.stderr,
                  flush=True)
            while pending["next_line"] * total <= bar.n:
                pending["next_line"] += 0.25

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


def interactive() -> bool:
    """A progress bar that redraws itself belongs on a terminal; in a log it floods (a CI log of one
    ``infer`` held hundreds of redrawn lines), so elsewhere progress is a few plain lines."""
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


class SamplingProgress:
    """Progress of MCMC transitions, all chains together: a tqdm bar on a terminal, else a plain line
    every ``PLAIN_EVERY`` of the planned transitions. It is updated on the host between compiled
    segments (``mcmc.segments``), so it costs the compiled program nothing.
    """

    PLAIN_EVERY = 0.25

    def __init__(self, total: int, label: str = "sampling"):
        self.total, self.label, self.done = int(total), label, 0
        self._next_line = self.PLAIN_EVERY
        self._bar = None
        if interactive():
            from tqdm.auto import tqdm  # imported lazily: only interactive runs draw a bar

            self._bar = tqdm(total=self.total, desc=label, file=sys.stderr, leave=False, mininterval=0.5,
                             unit="transition")

    def __call__(self, transitions: int, draws=None) -> None:
        self.done += int(transitions)
        if self._bar is not None:
            self._bar.update(int(transitions))
            # Read only where it is shown: fetching the flags from the device costs host time per segment.
            divergent = int(np.sum(draws[3])) if draws is not None else 0
            if divergent:
                self._bar.set_postfix_str(f"{divergent} divergent in the last segment", refresh=False)
        elif self.done >= self._next_line * self.total:
            print(f"{self.label}: {self.done} of {self.total} transitions", file=sys.stderr, flush=True)
            while self._next_line * self.total <= self.done:
                self._next_line += self.PLAIN_EVERY

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class PlainCounter:
    """A task bar off a terminal: a plain line at the start, at every tenth of the tasks and at the end,
    with ``tqdm``'s ``update``, ``set_postfix_str``, ``write`` and ``close``."""

    LINES = 10

    def __init__(self, total: int, label: str, initial: int = 0):
        self.total, self.label, self.n = int(total), label, int(initial)
        self._postfix = ""
        self._next = self._step_after(self.n)
        self._printed = self.n
        print(f"{label}: {self.n} of {self.total} done", file=sys.stderr, flush=True)

    def _step_after(self, n: int) -> int:
        every = max(1, -(-self.total // self.LINES))
        return (n // every + 1) * every

    def update(self, n: int = 1) -> None:
        self.n += int(n)
        if self.n >= min(self._next, self.total):
            postfix = f" (last: {self._postfix})" if self._postfix else ""
            print(f"{self.label}: {self.n} of {self.total} done{postfix}", file=sys.stderr, flush=True)
            self._next = self._step_after(self.n)
            self._printed = self.n

    def set_postfix_str(self, text: str, refresh: bool = False) -> None:
        self._postfix = text

    def write(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        # The last state, where no line said it (a run that ended between lines; found in review).
        if self.n != self._printed:
            postfix = f" (last: {self._postfix})" if self._postfix else ""
            print(f"{self.label}: {self.n} of {self.total} done{postfix}", file=sys.stderr, flush=True)
            self._printed = self.n


def task_bar(total: int, label: str, initial: int = 0, enabled: bool = True, mininterval: float = 0.5):
    """Progress over independent tasks (benchmark cells, SBC replications, training steps): a tqdm bar
    on a terminal, a few plain lines elsewhere (``PlainCounter``), nothing when disabled (a tqdm that
    draws nothing, so callers need no checks)."""
    from tqdm.auto import tqdm  # imported lazily: only long runs need it

    if not enabled:
        return tqdm(total=total, initial=initial, desc=label, disable=True)
    if not interactive():
        return PlainCounter(total, label, initial)
    return tqdm(total=total, initial=initial, desc=label, file=sys.stderr, mininterval=mininterval)

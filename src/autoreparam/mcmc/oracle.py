"""Oracle tuning of the number of leapfrog steps L (paper 002 Appendix C).

Run the sampler for every L of a grid and keep the L with the best ESS per gradient evaluation. The
paper reports the best run itself, which favours lucky runs; ``select_then_rerun`` in ``infer`` picks
L on pilot runs and reports a fresh run, which does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from autoreparam.errors import ArgumentError
from autoreparam.mcmc.chains import ChainResult


@dataclass(frozen=True)
class OracleResult:
    best_leapfrog: int
    scores: dict[int, tuple[float, float]]  # L -> (mean, s.e.) of ESS per 1000 gradients
    runs: dict[int, ChainResult]

    def table(self) -> str:
        lines = ["L      ESS/1000 grads"]
        for L, (mean, se) in sorted(self.scores.items()):
            mark = "  <- best" if L == self.best_leapfrog else ""
            lines.append(f"{L:<6} {mean:9.3f} +- {se:.3f}{mark}")
        return "\n".join(lines)


def check_grid(grid: Sequence[int]) -> tuple[int, ...]:
    grid = tuple(int(L) for L in grid)
    if not grid or any(L <= 0 for L in grid):
        raise ArgumentError(f"the leapfrog grid must hold positive integers, got {grid}")
    return grid


def oracle_leapfrog(
    run: Callable[[int], ChainResult],
    score: Callable[[ChainResult], tuple[float, float]],
    grid: Sequence[int],
    patience: int | None = None,
) -> OracleResult:
    """Run ``run(L)`` up the grid and keep the L whose ``score(result)[0]`` (ESS per gradient) is best.

    ``patience``: stop after that many successive L without a new best (ESS per gradient is usually
    unimodal in L, and the long trajectories at the end of the grid are the expensive ones); ``None``
    runs the whole grid, as the paper does.
    """
    scores, runs = {}, {}
    best, drops = -np.inf, 0
    for L in check_grid(grid):
        runs[L] = run(L)
        scores[L] = score(runs[L])
        value = scores[L][0] if np.isfinite(scores[L][0]) else -np.inf
        drops = 0 if value > best else drops + 1
        best = max(best, value)
        if patience is not None and drops >= patience:
            break
    finite = {L: s for L, s in scores.items() if np.isfinite(s[0])}
    best = max(finite, key=lambda L: finite[L][0]) if finite else grid[0]
    return OracleResult(best, scores, runs)

"""Oracle tuning of the number of leapfrog steps L (paper 002 Appendix C), made safe for users.

Run the sampler for every candidate L of a grid and keep the one with the best ESS per gradient
evaluation. Two scores:

- ``"pooled"`` (the default of ``infer``): rank-normalised bulk ESS pooled over chains (Vehtari et
  al. 2021), minimum over elements, per 1000 gradients. Chains that disagree with each other have a
  small pooled ESS, so the score sees what a per-chain score cannot.
- ``"paper"``: the paper's per-chain metric (``diagnostics.ess.paper_metric``), kept to reproduce
  the published protocol. It scores each chain on its own, so chains stuck in different places can
  look healthy (German credit iHMC at L = 1: 1.57 per 1000 gradients while R-hat was 2.8).

Either way a candidate whose chains disagree (max R-hat above ``max_r_hat``) is never chosen while
another candidate's chains agree; if none agree, the best score wins and ``OracleResult.agreeing``
says so. The paper reports the best run itself, which favours lucky runs; ``infer`` picks L on
pilot runs and reports a fresh run, which does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence, Union

import numpy as np

from autoreparam.errors import ArgumentError
from autoreparam.mcmc.chains import ChainResult

MAX_R_HAT = 1.01
# Pilot runs are short (an eighth of the draws, 4 chains by default): the largest of many elements'
# R-hats then exceeds 1.01 by noise alone (radon MN: 1.012 to 1.03 for chains that agree, measured),
# which rejected the best candidates. Pilots use this looser bound; chains stuck apart score far
# above it (German credit iHMC at L = 1: 2.8). The final run is judged at 1.01 (diagnostics.health).
PILOT_MAX_R_HAT = 1.05
Leapfrog = Union[int, tuple]  # one L, or one per space (iHMC)


@dataclass(frozen=True)
class OracleResult:
    best_leapfrog: Leapfrog
    scores: dict  # L -> (mean, s.e.) of ESS per 1000 gradients
    runs: dict  # L -> ChainResult
    r_hat: dict  # L -> max R-hat over elements (NaN where unknown)
    metric: str = "pooled"
    agreeing: bool = True  # the chosen L's chains agreed (R-hat <= max_r_hat)
    max_r_hat: float = MAX_R_HAT

    def table(self) -> str:
        lines = [f"L        ESS/1000 grads ({self.metric})   max R-hat"]
        for L, (mean, se) in self.scores.items():
            mark = "  <- best" if L == self.best_leapfrog else ""
            rhat = self.r_hat.get(L, math.nan)
            flag = " (chains disagree)" if rhat > self.max_r_hat else ""
            lines.append(f"{_label(L):<8} {mean:9.3f} +- {se:<7.3f}        {rhat:6.3f}{flag}{mark}")
        return "\n".join(lines)


def _label(L: Leapfrog) -> str:
    return str(L) if isinstance(L, int) else ",".join(map(str, L))


def _is_count(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) and x > 0


def check_grid(grid: Sequence, num_spaces: int | None = None) -> tuple:
    """Candidates as given, each once: positive integers, or tuples of positive integers (one L per
    space; ``num_spaces`` of them when given). Floats, strings and booleans are refused: ``2.7`` was
    truncated to 2 and ``"4"`` accepted, and a tuple of the wrong length failed after the variational
    fit (found in review)."""
    if isinstance(grid, (str, bytes)) or not isinstance(grid, (Sequence, np.ndarray)):
        raise ArgumentError(f"the leapfrog grid must be a sequence of positive integers, e.g. (1, 2, 4), got {grid!r}")
    out = []
    for L in grid:
        if isinstance(L, (tuple, list)):
            if not L or not all(_is_count(x) for x in L):
                raise ArgumentError(f"the leapfrog grid must hold positive integers, got {tuple(grid)}")
            if num_spaces is not None and len(L) not in (1, num_spaces):
                raise ArgumentError(f"the leapfrog grid's candidate {tuple(L)} gives {len(L)} leapfrog counts; "
                                    f"this method samples in {num_spaces} space(s): give one L, or one per space")
            value = tuple(int(x) for x in L)
        elif _is_count(L):
            value = int(L)
        else:
            raise ArgumentError(f"the leapfrog grid must hold positive integers, got {tuple(grid)}")
        if value not in out:
            out.append(value)
    if not out:
        raise ArgumentError("the leapfrog grid is empty")
    return tuple(out)


def oracle_leapfrog(
    run: Callable[[Leapfrog], ChainResult],
    score: Callable[[ChainResult], tuple],
    grid: Sequence,
    patience: int | None = None,
    max_r_hat: float = MAX_R_HAT,
    metric: str = "pooled",
) -> OracleResult:
    """Run ``run(L)`` along the grid and keep the L with the best score among agreeing chains.

    ``score(result)`` returns ``(mean, se)`` or ``(mean, se, max_r_hat)``; without an R-hat every
    candidate counts as agreeing. ``patience``: stop after that many successive candidates without a
    new best (ESS per gradient is usually unimodal in L, and the long trajectories at the end of the
    grid are the expensive ones); ``None`` runs the whole grid, as the paper does.
    """
    scores, runs, r_hats = {}, {}, {}
    best, drops = -np.inf, 0
    for L in check_grid(grid):
        runs[L] = run(L)
        mean, se, *rest = score(runs[L])
        scores[L] = (float(mean), float(se))
        r_hats[L] = float(rest[0]) if rest else math.nan
        value = mean if np.isfinite(mean) and not r_hats[L] > max_r_hat else -np.inf
        # Drops count only once some candidate's chains agree: at short L chains often disagree
        # and a longer L is exactly what they need.
        drops = 0 if value > best or best == -np.inf else drops + 1
        best = max(best, value)
        if patience is not None and drops >= patience:
            break
    return _choose(scores, runs, r_hats, max_r_hat, metric)


def oracle_over_families(
    run: Callable[[Leapfrog], ChainResult],
    score: Callable[[ChainResult], tuple],
    families: Sequence[Sequence],
    patience: int | None = None,
    max_r_hat: float = MAX_R_HAT,
    metric: str = "pooled",
) -> OracleResult:
    """``oracle_leapfrog`` along each family of candidates (each with its own patience), best overall.

    iHMC searches three families: the same L in both halves, and each half alone at L with the
    other at 1 (a half that cannot move the chain should cost one gradient, not L).
    """
    scores, runs, r_hats = {}, {}, {}
    for family in families:
        todo = [L for L in check_grid(family) if L not in scores]
        if not todo:
            continue
        part = oracle_leapfrog(run, score, todo, patience, max_r_hat, metric)
        scores.update(part.scores)
        runs.update(part.runs)
        r_hats.update(part.r_hat)
    return _choose(scores, runs, r_hats, max_r_hat, metric)


def _choose(scores, runs, r_hats, max_r_hat, metric) -> OracleResult:
    finite = {L: s[0] for L, s in scores.items() if np.isfinite(s[0])}
    agreeing = {L: v for L, v in finite.items() if not r_hats[L] > max_r_hat}
    pool = agreeing or finite
    chosen = max(pool, key=lambda L: pool[L]) if pool else next(iter(scores))
    return OracleResult(chosen, scores, runs, r_hats, metric, bool(agreeing), max_r_hat)

"""The "oracle" choice of L and the arithmetic of estimates (paper 000 Section 6, 002 Appendix C).

For each (model, method) the metric (min-over-elements ESS per 1000 gradient evaluations) of every
cell is averaged over seeds at each L, and the L with the best average is kept, as the authors did.
Its estimate pools the per-chain values of all seeds at that L: mean and sd / sqrt(n) (ddof = 1,
the harness's default). Taking the maximum over a grid favours runs that were lucky at one L.

The paper's metric scores each chain alone, so chains stuck in different places can score well
(German credit CP-HMC: 1.41 at R-hat 4). A cell whose chains disagree (max R-hat above 1.01) is
marked and never the oracle's pick: an L is eligible only if every seed's chains agree there. A
(model, method) with no eligible L keeps its best L for display, flagged, and is never a "best
fixed" denominator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from autoreparam.benchmark.report.collect import HMC_METHODS, Collected, cell_mean, per_chain

Z95 = 1.959963984540054
MAX_R_HAT = 1.01


def disagrees(record: dict) -> bool:
    """The cell's chains disagree: max rank-normalised R-hat above 1.01 (NaN or missing: unknown, not flagged)."""
    value = record.get("max_r_hat")
    try:
        return float(value) > MAX_R_HAT
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Estimate:
    """A mean with its standard error over ``n`` values (NaN where unknown)."""

    mean: float
    se: float
    n: int = 0

    @property
    def ok(self) -> bool:
        """A number was measured (an infinite ratio counts: a positive value over a zero)."""
        return not math.isnan(self.mean)

    def interval(self, z: float = Z95) -> tuple[float, float]:
        half = z * self.se if math.isfinite(self.se) else math.nan
        return self.mean - half, self.mean + half


MISSING = Estimate(math.nan, math.nan, 0)


def pooled(values) -> Estimate:
    """Mean and sd / sqrt(n) (ddof = 1) of the finite values; one value has no standard error."""
    x = np.asarray([v for v in values if v is not None], dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return MISSING
    se = float(np.std(x, ddof=1) / np.sqrt(x.size)) if x.size > 1 else math.nan
    return Estimate(float(x.mean()), se, int(x.size))


def ratio(num: Estimate, den: Estimate) -> Estimate:
    """``num / den`` with the delta-method s.e. ``|r| sqrt((se_a/a)^2 + (se_b/b)^2)`` (independent).

    A positive value over zero (a denominator whose chains never moved) is an infinite ratio.
    """
    if not (num.ok and den.ok):
        return MISSING
    if den.mean == 0:
        return Estimate(math.inf, math.nan, min(num.n, den.n)) if num.mean > 0 else MISSING
    r = num.mean / den.mean
    if num.mean == 0:
        se = abs(num.se / den.mean) if math.isfinite(num.se) else math.nan
    else:
        se = abs(r) * math.sqrt((num.se / num.mean) ** 2 + (den.se / den.mean) ** 2)
    return Estimate(r, se, min(num.n, den.n))


@dataclass(frozen=True)
class OracleChoice:
    """The best L of one (model, method), its pooled estimate, and the seed-averaged metric per L."""

    model: str
    method: str
    num_leapfrog: int
    estimate: Estimate
    mean_by_leapfrog: dict = field(default_factory=dict)
    keys: tuple[str, ...] = ()  # the cells at the chosen L, one per seed
    agreeing: bool = True  # every seed's chains agreed at the chosen L
    disagreeing_leapfrogs: frozenset = frozenset()  # L at which some seed's chains disagree


def choose(collected: Collected, model: str, method: str) -> OracleChoice | None:
    """The oracle L of one (model, method); None when no cell has a finite metric."""
    by_leapfrog: dict[int, list[dict]] = {}
    for record in collected.cells("hmc", model, method):
        if math.isfinite(cell_mean(record)):
            by_leapfrog.setdefault(int(record["num_leapfrog"]), []).append(record)
    if not by_leapfrog:
        return None
    means = {L: float(np.mean([cell_mean(r) for r in rs])) for L, rs in sorted(by_leapfrog.items())}
    flagged = frozenset(L for L, rs in by_leapfrog.items() if any(disagrees(r) for r in rs))
    # The grid stops early per seed, so seeds may reach different L: an L that only some seeds ran
    # would be averaged over those alone, against others averaged over all (found in review).
    seeds = {r.get("seed") for rs in by_leapfrog.values() for r in rs}
    complete = [L for L, rs in by_leapfrog.items() if {r.get("seed") for r in rs} == seeds]
    eligible = [L for L in complete if L not in flagged] or complete or list(means)
    best = max(eligible, key=lambda L: (means[L], -L))  # ties go to the cheaper L
    cells = sorted(by_leapfrog[best], key=lambda r: r.get("seed", 0))
    estimate = pooled(np.concatenate([per_chain(r) for r in cells]))
    if not estimate.ok:  # no per-chain values stored: fall back on the cells' own means
        estimate = pooled([cell_mean(r) for r in cells])
    return OracleChoice(
        model, method, best, estimate, means, tuple(r.get("key", "") for r in cells),
        best not in flagged and best in complete, flagged,
    )


def oracle_choices(collected: Collected) -> dict[tuple[str, str], OracleChoice]:
    """``{(model, method): OracleChoice}`` for every (model, method) with a usable cell."""
    out = {}
    for model in collected.models:
        for method in HMC_METHODS:
            choice = choose(collected, model, method)
            if choice is not None:
                out[model, method] = choice
    return out


def best_fixed(choices: dict, model: str) -> OracleChoice | None:
    """The better of CP-HMC and NCP-HMC (higher mean at their oracle L) on ``model``, among those whose
    chains agree: a fixed parameterisation that never mixed is not a denominator."""
    fixed = [choices[model, m] for m in ("cp", "ncp") if (model, m) in choices and choices[model, m].agreeing]
    return max(fixed, key=lambda c: c.estimate.mean) if fixed else None

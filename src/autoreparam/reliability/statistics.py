"""Tests of uniform ranks with a family-wise error rate, and the bias and spread they point to.

Per scalar parameter two tests of uniformity: Pearson's chi-square on the binned ranks (Talts et al.
2018, Section 4.1, their histogram made a test) and Kolmogorov-Smirnov on the randomised PIT
``(rank + U) / (L + 1)``, which is exactly U(0, 1) under the null and is the more powerful of the two
against a shifted posterior. All p-values of a cell (2 per parameter) are adjusted together by
Holm's step-down procedure (Holm 1979, "A simple sequentially rejective multiple test procedure"),
which controls the family-wise error rate under any dependence between the tests.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import stats

from autoreparam.reliability.ranks import randomised_pit, rank_bins

ALPHA = 0.01  # family-wise error rate of one cell (method x kernel x model)
PIT_SEED = 20180410  # the randomisation of the PIT is fixed, so a report is reproducible


def holm(pvalues) -> np.ndarray:
    """Holm-adjusted p-values (same order as given): reject hypothesis i at level a iff adjusted_i <= a.

    A NaN p-value (a test that could not be computed) stays NaN and is left out of the family: sorted
    among the others it made ``argmin`` pick it and hid a p of 1e-12 (found in review)."""
    p = np.asarray(pvalues, dtype=float).ravel()
    out = np.full(p.size, np.nan)
    tested = np.flatnonzero(~np.isnan(p))
    order = tested[np.argsort(p[tested])]
    m = order.size
    out[order] = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    return out


def number_of_bins(num_replications: int, num_thinned: int) -> int:
    """The most bins (of 5, 10, 20) dividing ``L + 1`` with at least 5 expected ranks per bin."""
    options = [b for b in (20, 10, 5) if (num_thinned + 1) % b == 0 and num_replications / b >= 5]
    return options[0] if options else 2


# Pearson's statistic at 5 expected ranks per bin (100 replications in 20 bins) is not chi-square in
# its far tail: at the thresholds Holm uses (0.01 / 22) the asymptotic p-value was 1.4 times too
# small, and a cell of exactly uniform ranks failed 1.2% of the time against the 1% promised (found in
# review). So the p-value is read off the statistic's exact law, simulated once per (replications,
# bins); beyond the simulation's reach (fewer than MIN_TAIL draws as extreme) the asymptotic value
# stays, where it only says how far past any threshold a cell is.
NULL_DRAWS, NULL_CHUNK, NULL_SEED, MIN_TAIL = 400_000, 50_000, 19790101, 10


@functools.lru_cache(maxsize=16)
def pearson_null(num_replications: int, bins: int) -> np.ndarray:
    """``NULL_DRAWS`` sorted draws of Pearson's statistic for uniform counts of ``num_replications``
    ranks in ``bins`` equiprobable bins."""
    rng = np.random.default_rng(NULL_SEED)
    expected = num_replications / bins
    draws = [np.sum((rng.multinomial(num_replications, np.full(bins, 1.0 / bins), size=NULL_CHUNK) - expected) ** 2,
                    axis=1) / expected for _ in range(NULL_DRAWS // NULL_CHUNK)]
    return np.sort(np.concatenate(draws))


def chi_square_p(rank: np.ndarray, num_thinned: int, bins: int) -> np.ndarray:
    counts = rank_bins(rank, num_thinned, bins)
    result = stats.chisquare(counts, axis=0)
    null = pearson_null(int(np.asarray(rank).shape[0]), bins)
    # Draws at least as extreme (a relative tolerance: the same counts give the same statistic).
    extreme = null.size - np.searchsorted(null, np.asarray(result.statistic) * (1 - 1e-12), side="left")
    simulated = (1.0 + extreme) / (1.0 + null.size)
    return np.where(extreme >= MIN_TAIL, simulated, result.pvalue)


def ks_p(pit: np.ndarray) -> np.ndarray:
    return np.array([stats.kstest(pit[:, j], "uniform").pvalue for j in range(pit.shape[1])])


@dataclass(frozen=True)
class Calibration:
    """The verdict on one cell and the numbers behind it, per parameter element."""

    labels: list[str]
    num_replications: int
    bins: int
    chi_square_p: np.ndarray
    ks_p: np.ndarray
    adjusted_p: np.ndarray  # Holm over the cell's 2k p-values: (k,) the smaller of each parameter's two
    pit_mean: np.ndarray  # mean randomised PIT - 0.5: > 0 the method's draws sit low (true value ranks high)
    pit_sd_ratio: np.ndarray  # sd of the PIT / sd of U(0,1): > 1 the draws are too narrow, < 1 too wide

    @property
    def min_adjusted_p(self) -> float:
        return float(np.nanmin(self.adjusted_p)) if np.any(~np.isnan(self.adjusted_p)) else float("nan")

    @property
    def passed(self) -> bool:
        return self.min_adjusted_p > ALPHA

    @property
    def worst(self) -> str:
        return self.labels[int(np.nanargmin(self.adjusted_p)) if np.any(~np.isnan(self.adjusted_p)) else 0]


def calibration(rank: np.ndarray, labels: list[str], num_thinned: int) -> Calibration:
    """Test the ranks (replications, k) of one cell for uniformity, Holm-adjusted over the cell."""
    rank = np.asarray(rank)
    n, k = rank.shape
    bins = number_of_bins(n, num_thinned)
    pit = randomised_pit(rank, num_thinned, np.random.default_rng(PIT_SEED))
    chi, ks = chi_square_p(rank, num_thinned, bins), ks_p(pit)
    pair = holm(np.concatenate([chi, ks])).reshape(2, k)
    adjusted = np.fmin(pair[0], pair[1])  # fmin: a NaN test does not hide the other
    return Calibration(
        labels=list(labels), num_replications=n, bins=bins, chi_square_p=chi, ks_p=ks, adjusted_p=adjusted,
        pit_mean=pit.mean(axis=0) - 0.5, pit_sd_ratio=pit.std(axis=0) * np.sqrt(12.0),
    )

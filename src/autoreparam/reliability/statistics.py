"""Tests of uniform ranks with a family-wise error rate, and the bias and spread they point to.

Per scalar parameter two tests of uniformity: Pearson's chi-square on the binned ranks (Talts et al.
2018, Section 4.1, their histogram made a test) and Kolmogorov-Smirnov on the randomised PIT
``(rank + U) / (L + 1)``, which is exactly U(0, 1) under the null and is the more powerful of the two
against a shifted posterior. All p-values of a cell (2 per parameter) are adjusted together by
Holm's step-down procedure (Holm 1979, "A simple sequentially rejective multiple test procedure"),
which controls the family-wise error rate under any dependence between the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from autoreparam.reliability.ranks import randomised_pit, rank_bins

ALPHA = 0.01  # family-wise error rate of one cell (method x kernel x model)
PIT_SEED = 20180410  # the randomisation of the PIT is fixed, so a report is reproducible


def holm(pvalues) -> np.ndarray:
    """Holm-adjusted p-values (same order as given): reject hypothesis i at level a iff adjusted_i <= a."""
    p = np.asarray(pvalues, dtype=float).ravel()
    order = np.argsort(p)
    m = p.size
    adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


def number_of_bins(num_replications: int, num_thinned: int) -> int:
    """The most bins (of 5, 10, 20) dividing ``L + 1`` with at least 5 expected ranks per bin."""
    options = [b for b in (20, 10, 5) if (num_thinned + 1) % b == 0 and num_replications / b >= 5]
    return options[0] if options else 2


def chi_square_p(rank: np.ndarray, num_thinned: int, bins: int) -> np.ndarray:
    counts = rank_bins(rank, num_thinned, bins)
    return stats.chisquare(counts, axis=0).pvalue


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
        return float(np.min(self.adjusted_p))

    @property
    def passed(self) -> bool:
        return self.min_adjusted_p > ALPHA

    @property
    def worst(self) -> str:
        return self.labels[int(np.argmin(self.adjusted_p))]


def calibration(rank: np.ndarray, labels: list[str], num_thinned: int) -> Calibration:
    """Test the ranks (replications, k) of one cell for uniformity, Holm-adjusted over the cell."""
    rank = np.asarray(rank)
    n, k = rank.shape
    bins = number_of_bins(n, num_thinned)
    pit = randomised_pit(rank, num_thinned, np.random.default_rng(PIT_SEED))
    chi, ks = chi_square_p(rank, num_thinned, bins), ks_p(pit)
    adjusted = holm(np.concatenate([chi, ks])).reshape(2, k).min(axis=0)
    return Calibration(
        labels=list(labels), num_replications=n, bins=bins, chi_square_p=chi, ks_p=ks, adjusted_p=adjusted,
        pit_mean=pit.mean(axis=0) - 0.5, pit_sd_ratio=pit.std(axis=0) * np.sqrt(12.0),
    )

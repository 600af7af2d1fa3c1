"""Rank statistics of simulation-based calibration (Talts, Betancourt, Simpson, Vehtari & Gelman 2018).

Draw theta ~ p(theta), y ~ p(y | theta), then L draws theta_1..L of the method's posterior given y.
If the method samples p(theta | y) exactly and the L draws are independent, the rank
``#{l : theta_l < theta}`` of every scalar function of theta is uniform on {0, ..., L} (Talts et al.,
Theorem 1). MCMC draws are autocorrelated, so they are thinned first (Section 5.1: autocorrelation
alone makes ranks non-uniform); the runs keep ``L + 1`` a multiple of the histogram's bins.
"""

from __future__ import annotations

import numpy as np

NUM_THINNED = 99  # L: ranks take 100 values, split evenly into 5, 10 or 20 bins


def flatten_sites(values: dict, lead: int = 0) -> tuple[np.ndarray, list[str]]:
    """{site: array (*lead_shape, *site_shape)} -> (array (*lead_shape, elements), element labels).

    Sites in sorted order, elements in C order, labelled like ``theta[3]``.
    """
    columns, labels = [], []
    for name in sorted(values):
        array = np.asarray(values[name], dtype=np.float64)
        lead_shape, shape = array.shape[:lead], array.shape[lead:]
        columns.append(array.reshape(lead_shape + (-1,)))
        labels += [name + (f"[{','.join(map(str, i))}]" if shape else "") for i in np.ndindex(*shape)] if shape else [name]
    return np.concatenate(columns, axis=-1), labels


def thin(draws: np.ndarray, num: int = NUM_THINNED) -> np.ndarray:
    """``num`` draws evenly spaced over all chains: (chains, draws, k) -> (num, k)."""
    flat = draws.reshape((-1,) + draws.shape[2:])
    if flat.shape[0] < num:
        raise ValueError(f"cannot thin {flat.shape[0]} draws to {num}")
    index = np.round(np.linspace(0, flat.shape[0] - 1, num)).astype(int)
    return flat[index]


def ranks(truth: np.ndarray, thinned: np.ndarray) -> np.ndarray:
    """Rank of each true value among its thinned draws: truth (n, k), thinned (n, L, k) -> (n, k) in 0..L."""
    return np.sum(thinned < truth[:, None, :], axis=1)


def randomised_pit(rank: np.ndarray, num_thinned: int, rng: np.random.Generator) -> np.ndarray:
    """``(rank + U) / (L + 1)``: exactly U(0, 1) when the ranks are uniform on 0..L, for a continuous test."""
    return (rank + rng.uniform(size=np.shape(rank))) / (num_thinned + 1)


def rank_bins(rank: np.ndarray, num_thinned: int, bins: int) -> np.ndarray:
    """Counts per bin, per column: (n, k) -> (bins, k); ``L + 1`` must be a multiple of ``bins``."""
    if (num_thinned + 1) % bins:
        raise ValueError(f"{num_thinned + 1} rank values do not split evenly into {bins} bins")
    which = np.asarray(rank) * bins // (num_thinned + 1)
    return np.stack([np.sum(which == b, axis=0) for b in range(bins)])

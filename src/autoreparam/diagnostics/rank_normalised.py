"""Rank-normalised bulk ESS, tail ESS and R-hat for every element at once: ArviZ's code, vectorised.

Vehtari, Gelman, Simpson, Carpenter and Buerkner (2021), "Rank-normalization, folding, and
localization: an improved R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2):
Section 4.1 (split chains, rank normalisation with Blom's offset 3/8), Section 4.2 (folding) and
Appendix A (ESS by Geyer's initial monotone sequence). These are ArviZ 0.23's ``_ess_bulk``,
``_ess_tail`` and ``_rhat_rank`` (``arviz/stats/diagnostics.py``) line for line, with the per-element
Python loop of ArviZ's ``make_ufunc`` replaced by array operations over a trailing element axis.

Why a port rather than a call: the three diagnostics cost ArviZ about 1.8 ms per element (0.73 s
for a 400-element posterior), and ``auto`` computes them for its pilots and for its result. Most of
that is ranking: ArviZ sorts every element's draws three times with a stable sort; here one
unstable sort per ranking (``average_ranks``) and one ranking shared by bulk ESS and R-hat
(``bulk_tail_rhat``). ``infer`` then needs neither ArviZ nor xarray, whose import took about 1.5 s
of a process's first call. ``tests/diagnostics/test_rank_normalised.py``
checks every value against ArviZ's own functions (random, autocorrelated, antithetic, constant,
discrete and odd-length chains).
"""

from __future__ import annotations

import numpy as np
from scipy import special
from scipy.fft import next_fast_len
from scipy.stats.mstats import mquantiles

BLOM_OFFSET = 3.0 / 8.0
TAIL_PROBABILITIES = (0.05, 0.95)


def split_chains(x: np.ndarray) -> np.ndarray:
    """(k, chains, draws) -> (k, 2 chains, draws // 2): first and last halves (the middle draw of an
    odd length is dropped), as ArviZ's ``_split_chains``."""
    half = x.shape[2] // 2
    return np.concatenate([x[:, :, :half], x[:, :, x.shape[2] - half:]], axis=1)


def average_ranks(flat: np.ndarray) -> np.ndarray:
    """Ranks (1-based, ties at their average) along the last axis of (k, n): ``scipy.stats.rankdata
    (method="average")``'s values, from one unstable sort (average ranks do not depend on the order
    of equal values), 2.3x faster on 400 x 4000 draws."""
    k, n = flat.shape
    order = np.argsort(flat, axis=1)
    ordered = np.take_along_axis(flat, order, axis=1)
    starts = np.ones((k, n), bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ends = np.ones((k, n), bool)
    ends[:, :-1] = starts[:, 1:]
    position = np.broadcast_to(np.arange(n), (k, n))
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, position, n - 1)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((k, n))
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=1)
    return ranks


def z_scale(x: np.ndarray) -> np.ndarray:
    """Rank-normalise each element over all its chains and draws: average ranks, Blom's offset,
    the standard normal quantile (ArviZ's ``_z_scale``; ``ndtri`` is ``norm.ppf``'s own function)."""
    k = x.shape[0]
    flat = x.reshape(k, -1)
    ranks = average_ranks(flat)
    return special.ndtri((ranks - BLOM_OFFSET) / (flat.shape[1] - 2 * BLOM_OFFSET + 1)).reshape(x.shape)


# Layout and order of operations. Arrays are (element, chain, draw), so that every mean over draws or
# over chains runs along a contiguous last axis, where NumPy adds in the same (pairwise) order as for
# ArviZ's one-element arrays; variances follow ArviZ's numba code (sums in sequence, then
# E[x^2] - E[x]^2), which ArviZ uses when numba is installed (the peers extra brings it; without it
# ArviZ calls np.var, equal to the last few bits). The walk's stop below compares sums that can be
# zero in exact arithmetic (the indicators of tail ESS), where such bits decide; in the stress run of
# 18,000 elements, with numba, every stop was ArviZ's.


def _mean_last(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).mean(axis=-1)


def _sequential_variance(x: np.ndarray, ddof: int) -> np.ndarray:
    """ArviZ's ``stats_variance_1d`` along the last axis, for every leading index at once."""
    total = np.zeros(x.shape[:-1])
    squares = np.zeros(x.shape[:-1])
    for j in range(x.shape[-1]):
        value = x[..., j]
        total = total + value
        squares = squares + value * value
    m = x.shape[-1]
    return (squares / m - (total / m) ** 2) * (m / (m - ddof))


def _autocovariance(x: np.ndarray) -> np.ndarray:
    """Autocovariance of every element and chain at every lag, by FFT (ArviZ's ``autocov``)."""
    n = x.shape[-1]
    m = next_fast_len(2 * n)
    centred = x - x.mean(axis=-1, keepdims=True)
    spectrum = np.fft.rfft(centred, n=m, axis=-1)
    spectrum *= np.conjugate(spectrum)
    return np.fft.irfft(spectrum, n=m, axis=-1)[..., :n] / n


def ess(x: np.ndarray) -> np.ndarray:
    """ESS of each element of (k, chains, draws) by Geyer's initial monotone sequence (ArviZ's ``_ess``).

    ArviZ walks the autocorrelations in pairs P_j = rho_2j + rho_2j+1. It stops at the first pair
    j >= 1 whose sum is not positive (or where the draws run out), keeps the pairs before it made
    monotone (each at most the previous: a running minimum), and adds that pair's even term when
    ArviZ would have kept it (the pair sum is not negative, or the term is positive). Here every
    pair is computed at once and the stop is found per element.
    """
    x = np.asarray(x, dtype=float)
    k, chains, draws = x.shape
    total = chains * draws
    constant = (x.max(axis=(1, 2)) - x.min(axis=(1, 2))) < np.finfo(float).resolution
    acov = _autocovariance(x)  # (k, chains, draws)
    mean_var = _mean_last(acov[:, :, 0]) * draws / (draws - 1.0)
    var_plus = mean_var * (draws - 1.0) / draws
    if chains > 1:
        var_plus = var_plus + _sequential_variance(x.mean(axis=-1), ddof=1)
    lag_means = _mean_last(np.swapaxes(acov, 1, 2)).T  # (draws, k): every lag's mean over chains
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (mean_var - lag_means) / var_plus
    rho[0] = 1.0
    # Pairs ArviZ may compute: j = 1, 2, ... while 2j - 1 < draws - 3.
    last_pair = max(0, -(-(draws - 2) // 2) - 1)
    pairs = rho[0:2 * last_pair + 2:2] + rho[1:2 * last_pair + 2:2]  # (last_pair + 1, k)
    # The pair where the walk stops: 0 when pair 0 is not positive, else the first j >= 1 whose sum
    # is not positive, else the last one computed.
    not_positive = np.concatenate([np.zeros((1, k), bool), pairs[1:] <= 0.0])  # pair 0 is judged below
    first_stop = np.where(not_positive.any(axis=0), np.argmax(not_positive, axis=0), last_pair)
    stop = np.where(pairs[0] > 0.0, first_stop, 0)
    monotone = np.minimum.accumulate(pairs, axis=0)
    kept = np.arange(pairs.shape[0])[:, None] < stop[None, :]
    even = rho[2 * stop, np.arange(k)]
    stop_sum = pairs[stop, np.arange(k)]
    extra = np.where(stop == 0, 1.0, np.where((stop_sum >= 0.0) | (even > 0.0), even, 0.0))
    tau = -1.0 + 2.0 * np.sum(np.where(kept, monotone, 0.0), axis=0) + extra
    tau = np.maximum(tau, 1.0 / np.log10(total))
    used_nan = np.any(np.isnan(np.where(kept, pairs, 0.0)), axis=0) | np.isnan(pairs[0]) | np.isnan(extra)
    out = np.where(used_nan, np.nan, total / tau)
    return np.where(constant, float(total), out)


def _elements_first(x) -> np.ndarray:
    """(chains, draws, k) -> (k, chains, draws), contiguous, in the draws' own floating type: ArviZ
    folds float32 draws around a float32 median, and ``ess`` works in float64 as ArviZ's ``_ess``."""
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(float)
    return np.ascontiguousarray(np.moveaxis(x, 2, 0))


def bulk_tail_rhat(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ess_bulk``, ``ess_tail`` and ``rhat_rank`` of (chains, draws, k) together, ranking the split
    chains once for both bulk ESS and bulk R-hat (R-hat is NaN with one chain)."""
    elements = _elements_first(x)
    split = split_chains(elements)
    z = z_scale(split)
    bulk = ess(z)
    if elements.shape[1] < 2:
        return bulk, _tail(elements), np.full(bulk.shape, np.nan)
    return bulk, _tail(elements), _rhat_from(split, z)


def ess_bulk(x: np.ndarray) -> np.ndarray:
    """Bulk ESS of each element of (chains, draws, k): ESS of the rank-normalised split chains
    (ArviZ's ``_ess_bulk``)."""
    return ess(z_scale(split_chains(_elements_first(x))))


def ess_tail(x: np.ndarray) -> np.ndarray:
    """Tail ESS of each element of (chains, draws, k): the smaller ESS of the indicators of the 5% and
    95% quantiles (type 7, R's default), on split chains (ArviZ's ``_ess_tail``)."""
    return _tail(_elements_first(x))


def _tail(x: np.ndarray) -> np.ndarray:
    k = x.shape[0]
    quantiles = mquantiles(x.reshape(k, -1), TAIL_PROBABILITIES, alphap=1, betap=1, axis=1)  # (k, 2)
    quantiles = np.asarray(quantiles)[:, :, None, None]
    low = ess(split_chains((x <= quantiles[:, 0]).astype(float)))
    high = ess(split_chains((x <= quantiles[:, 1]).astype(float)))
    return np.where(high < low, high, low)  # Python's min(low, high), which keeps low when one is NaN


def _rhat(x: np.ndarray) -> np.ndarray:
    """ArviZ's ``_rhat`` of each element of (k, chains, draws)."""
    draws = x.shape[2]
    between = draws * _sequential_variance(x.mean(axis=-1), ddof=1)
    within = _mean_last(_sequential_variance(x, ddof=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + draws - 1) / draws)


def rhat_rank(x: np.ndarray) -> np.ndarray:
    """Rank-normalised split R-hat of each element of (chains, draws, k), the larger of the bulk and
    the folded (tail) value (ArviZ's ``_rhat_rank``); needs at least 2 chains."""
    split = split_chains(_elements_first(x))
    return _rhat_from(split, z_scale(split))


def _rhat_from(split: np.ndarray, z: np.ndarray) -> np.ndarray:
    """R-hat from the split chains and their rank-normalised values."""
    bulk = _rhat(z)
    median = np.median(split.reshape(split.shape[0], -1), axis=1)[:, None, None]
    tail = _rhat(z_scale(np.abs(split - median)))
    return np.where(tail > bulk, tail, bulk)  # Python's max(bulk, tail), which keeps bulk when one is NaN

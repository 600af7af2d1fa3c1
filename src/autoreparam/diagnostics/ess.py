"""The paper's efficiency metric: min-over-elements ESS per 1000 gradient evaluations, per chain.

Appendix D (002) defines, for one chain of N draws of one scalar with autocorrelations r_i,

    ESS = N / (1 + 2 sum_{i=1}^{k} (N - i) / N * r_i),

and the authors computed it with tfp.mcmc.effective_sample_size (davmre/autoreparam inference.py),
whose defaults fix the two choices the formula leaves open:

* r_i is tfp.stats.auto_correlation: the lag-i sum of centred products divided by N - i, over the
  lag-0 sum divided by N. Hence (N - i) / N * r_i = c_i / c_0 = rho_i, the biased (divide by N)
  autocorrelation, and ESS = N / (1 + 2 sum_{i=1}^{k} rho_i).
* filter_threshold = 0: the sum stops before the first lag with r_i < 0 (that lag and all later
  ones are excluded), so k = (first negative lag) - 1, or N - 1 if none is negative.

The protocol (REFERENCE.md; Section 6) computes ESS on the original variables, separately for each
chain and each scalar element, normalises it to 1000 * ESS / (gradient evaluations of the chain),
takes the minimum over elements per chain, then the mean and standard error over chains.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from autoreparam.diagnostics.autocorrelation import autocovariance
from autoreparam.diagnostics.draws import as_draws, blocks
from autoreparam.errors import ArgumentError

# Bounds the float64 copy of draws made per block (~8e6 values, 64 MB; at least one series).
DEFAULT_MAX_VALUES = 2**23
# Series are transformed about 1e6 values at a time: blocks that fit in cache run ~3x faster
# than one huge FFT call.
_FFT_BLOCK_VALUES = 2**20
# First try lags up to this many; only series with no negative autocorrelation so far are redone
# with all N - 1 lags. Shorter padding halves the FFT cost, and the answer is unchanged.
_FIRST_MAX_LAG = 1024


def ess_of_series(x: np.ndarray, *, workers: int | None = None) -> np.ndarray:
    """ESS of each series along the last axis of `x` (..., N), by the formula above.

    A constant series has no defined autocorrelation; it gets ESS 0, as the authors' code did
    (np.nan_to_num of TFP's NaN), so that a stuck chain counts as the worst possible one.
    """
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[-1]
    if n < 2:
        raise ArgumentError(f"ESS needs at least 2 draws per chain, got {n}")
    batch_shape = x.shape[:-1]
    series = x.reshape(-1, n)
    ess = np.empty(series.shape[0])
    found = np.zeros(series.shape[0], dtype=bool)
    max_lag = min(_FIRST_MAX_LAG, n - 1)
    ess[:], found[:] = _truncated_ess(series, max_lag, workers)
    if max_lag < n - 1 and not found.all():
        redo = ~found
        ess[redo], _ = _truncated_ess(series[redo], n - 1, workers)
    return ess.reshape(batch_shape)


def _truncated_ess(series: np.ndarray, max_lag: int, workers):
    """ESS from lags 1..max_lag, and whether each series had a negative lag within them.

    Where a negative lag was found the ESS is final; elsewhere it is final only if max_lag = N - 1.
    """
    n = series.shape[-1]
    cov = autocovariance(series, max_lag=max_lag, workers=workers)
    lag0 = cov[:, 0]
    moving = lag0 > 0
    rho = cov[:, 1:] / np.where(moving, lag0, 1.0)[:, None]  # rho_1 .. rho_K
    negative = rho < 0
    found = negative.any(axis=1)
    # Number of lags kept: those before the first negative one, or all K if none is negative.
    kept = np.where(found, negative.argmax(axis=1), max_lag)
    partial_sums = np.concatenate([np.zeros((rho.shape[0], 1)), np.cumsum(rho, axis=1)], axis=1)
    truncated_sum = partial_sums[np.arange(rho.shape[0]), kept]
    ess = np.where(moving, n / (1.0 + 2.0 * truncated_sum), 0.0)
    return ess, found | ~moving


def ess_per_chain(
    draws: Mapping, *, max_values: int = DEFAULT_MAX_VALUES, workers: int | None = None
) -> np.ndarray:
    """ESS of every chain and scalar element: array (chains, elements).

    Args:
        draws: {site name: array (chains, draws, *shape)}; elements are ordered site by site, in C
            order within a site (names from `diagnostics.draws.as_draws(draws).element_names`).
        max_values: chunk size bound (number of draws converted to float64 at once).
        workers: threads for the FFTs (None: scipy's default, -1: all cores).
    """
    checked = as_draws(draws)
    out = np.empty((checked.num_chains, checked.num_elements))
    n = checked.num_draws
    for block in blocks(checked, max_values):
        # (chains, draws, k) -> (chains * k, draws): one series per row, the FFT axis last.
        num_chains, _, num_elements = block.values.shape
        series = np.swapaxes(block.values, 1, 2).reshape(-1, n)
        ess = np.empty(series.shape[0])
        step = max(1, _FFT_BLOCK_VALUES // n)
        for row in range(0, series.shape[0], step):
            ess[row : row + step] = ess_of_series(series[row : row + step], workers=workers)
        out[block.chains, block.elements] = ess.reshape(num_chains, num_elements)
    return out


def ess_by_site(draws: Mapping, **kwargs) -> dict[str, np.ndarray]:
    """`ess_per_chain` regrouped by site: {name: array (chains, *shape)}."""
    checked = as_draws(draws)
    flat = ess_per_chain(draws, **kwargs)
    out, offset = {}, 0
    for name, site in checked.sites.items():
        size = site.shape[2]
        out[name] = flat[:, offset : offset + size].reshape((checked.num_chains,) + checked.shapes[name])
        offset += size
    return out


@dataclass(frozen=True, eq=False)  # holds arrays: no element-wise ==
class EfficiencyMetric:
    """ESS per 1000 gradient evaluations, the paper's headline number (mean +- s.e. over chains).

    Attributes:
        mean: mean over chains of each chain's minimum-over-elements ESS per 1000 gradients.
        se: standard error of that mean, sd / sqrt(chains) (NaN with one chain).
        per_chain: (chains,) each chain's minimum over elements.
        per_chain_min_element: (chains,) name of the element attaining each chain's minimum.
        min_element_name: the element with the smallest ESS averaged over chains.
        element_names: names of all elements, in the column order of `per_element`.
        per_element: (chains, elements) ESS per 1000 gradient evaluations.
    """

    mean: float
    se: float
    per_chain: np.ndarray
    per_chain_min_element: tuple[str, ...]
    min_element_name: str
    element_names: tuple[str, ...]
    per_element: np.ndarray


def paper_metric(
    draws: Mapping,
    grad_evals_per_chain,
    *,
    ddof: int = 1,
    max_values: int = DEFAULT_MAX_VALUES,
    workers: int | None = None,
) -> EfficiencyMetric:
    """The Section 6 metric: min-over-elements ESS per 1000 gradient evaluations, mean +- s.e.

    Args:
        draws: {site name: array (chains, draws, *shape)}, on the original (centred) variables.
        grad_evals_per_chain: gradient evaluations spent on each chain's kept draws: draws x L for
            HMC with L leapfrog steps, draws x 2L for iHMC. A scalar, or one value per chain.
        ddof: delta degrees of freedom of the sd in the standard error. 1 (the default) gives the
            unbiased sd; the authors' code (util.get_min_ess) used np.std, i.e. ddof = 0.
    """
    checked = as_draws(draws)
    grads = np.asarray(grad_evals_per_chain, dtype=np.float64)
    if grads.ndim > 1 or (grads.ndim == 1 and grads.shape != (checked.num_chains,)):
        raise ArgumentError(
            f"grad_evals_per_chain must be a scalar or have shape ({checked.num_chains},), "
            f"got {grads.shape}"
        )
    if not np.all(np.isfinite(grads) & (grads > 0)):
        raise ArgumentError(f"grad_evals_per_chain must be positive, got {grad_evals_per_chain}")
    ess = ess_per_chain(draws, max_values=max_values, workers=workers)
    per_element = 1000.0 * ess / (grads[:, None] if grads.ndim else grads)
    per_chain = per_element.min(axis=1)
    names = checked.element_names
    num_chains = per_chain.shape[0]
    se = (
        float(np.std(per_chain, ddof=ddof) / np.sqrt(num_chains))
        if num_chains > ddof
        else float("nan")
    )
    return EfficiencyMetric(
        mean=float(per_chain.mean()),
        se=se,
        per_chain=per_chain,
        per_chain_min_element=tuple(names[i] for i in per_element.argmin(axis=1)),
        min_element_name=names[int(per_element.mean(axis=0).argmin())],
        element_names=names,
        per_element=per_element,
    )

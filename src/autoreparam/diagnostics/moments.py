"""Appendix D (002): error of single-chain posterior moments against a gold standard.

Gold standard: each method's mean and standard deviation of every latent from all its draws (all
chains pooled), then the median over methods (for four methods, the mean of the two central values),
robust to one method failing to mix.

Running error: with mu_hat_{i,k}(t) and sigma_hat_{i,k}(t) the mean and sd of element i from the
first t gradient evaluations' worth of draws of chain k, and K chains, N elements,

    r_i(t) = 1/K sum_k |mu_hat_{i,k}(t) - mu_i|,
    s_i(t) = 1/K sum_k |sigma_hat_{i,k}(t) - sigma_i|,
    r_bar(t) = 1/N sum_i r_i(t) / sigma_i,
    s_bar(t) = 1/N sum_i s_i(t) / sigma_i.

Standard deviations are the ddof = 0 kind (np.std), as the authors' numpy code would give.

Gradient evaluations, not draws, are the x axis, so that methods with different numbers of
leapfrog steps per draw are compared at equal cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from autoreparam.diagnostics.draws import Draws, as_draws, blocks
from autoreparam.diagnostics.ess import DEFAULT_MAX_VALUES
from autoreparam.errors import ArgumentError


@dataclass(frozen=True, eq=False)  # holds arrays: no element-wise ==
class GoldStandard:
    """Per-site reference posterior means and standard deviations (arrays of the site's shape)."""

    mean: dict[str, np.ndarray]
    sd: dict[str, np.ndarray]


@dataclass(frozen=True, eq=False)  # holds arrays: no element-wise ==
class MomentErrors:
    """Normalised errors of running single-chain moments at a list of checkpoints.

    Attributes:
        grad_evals: (T,) the checkpoints, in gradient evaluations.
        num_draws: (T,) draws per chain those evaluations bought (floor(grad_evals / per draw)).
        mean_error: (T,) r_bar(t).
        sd_error: (T,) s_bar(t).
        element_names: names of the N scalar elements.
        mean_error_per_element: (T, N) r_i(t) / sigma_i.
        sd_error_per_element: (T, N) s_i(t) / sigma_i.
    """

    grad_evals: np.ndarray
    num_draws: np.ndarray
    mean_error: np.ndarray
    sd_error: np.ndarray
    element_names: tuple[str, ...]
    mean_error_per_element: np.ndarray
    sd_error_per_element: np.ndarray


def pooled_moments(draws: Mapping, *, max_values: int = DEFAULT_MAX_VALUES) -> GoldStandard:
    """Mean and sd (ddof = 0) of every element over all chains and draws of one method."""
    checked = as_draws(draws, min_draws=1)
    # Sums of draws minus a shift (each element's first draw): a one-pass variance that keeps its
    # precision when the mean is large compared with the sd.
    shift = np.concatenate([np.asarray(s[0, 0], dtype=np.float64) for s in checked.sites.values()])
    sums = np.zeros(checked.num_elements)
    squares = np.zeros(checked.num_elements)
    for block in blocks(checked, max_values):
        shifted = block.values - shift[block.elements]
        sums[block.elements] += shifted.sum(axis=(0, 1))
        squares[block.elements] += (shifted**2).sum(axis=(0, 1))
    count = checked.num_chains * checked.num_draws
    mean_offset = sums / count
    sds = np.sqrt(np.maximum(squares / count - mean_offset**2, 0.0))  # ddof = 0, as np.std
    return GoldStandard(mean=_unflatten(checked, shift + mean_offset), sd=_unflatten(checked, sds))


def gold_standard(
    draws_per_method: Sequence[Mapping], *, max_values: int = DEFAULT_MAX_VALUES
) -> GoldStandard:
    """Median over methods of each method's pooled mean and sd (Appendix D).

    Methods may differ in chains and draws, but must have the same sites and site shapes.
    """
    if isinstance(draws_per_method, Mapping) or len(draws_per_method) == 0:
        raise ArgumentError("draws_per_method must be a non-empty sequence of draws mappings")
    per_method = [pooled_moments(d, max_values=max_values) for d in draws_per_method]
    reference = per_method[0]
    for index, moments in enumerate(per_method[1:], start=1):
        if {k: v.shape for k, v in moments.mean.items()} != {
            k: v.shape for k, v in reference.mean.items()
        }:
            raise ArgumentError(f"method {index} has other sites or site shapes than method 0")
    # np.median of an even count is the mean of the two central values, as Appendix D specifies.
    return GoldStandard(
        mean={k: np.median([m.mean[k] for m in per_method], axis=0) for k in reference.mean},
        sd={k: np.median([m.sd[k] for m in per_method], axis=0) for k in reference.sd},
    )


def log_checkpoints(num_draws: int, grad_evals_per_draw: float, num: int = 30) -> np.ndarray:
    """About `num` log-spaced gradient-evaluation counts from one draw's worth to all draws."""
    if num_draws < 1 or num < 1:
        raise ArgumentError(f"need num_draws >= 1 and num >= 1, got {num_draws} and {num}")
    draws = np.unique(np.round(np.logspace(0.0, np.log10(num_draws), num)).astype(int))
    return draws * float(grad_evals_per_draw)


def moment_errors(
    draws: Mapping,
    grad_evals_per_draw: float,
    gold: GoldStandard,
    checkpoints=None,
    *,
    max_values: int = DEFAULT_MAX_VALUES,
) -> MomentErrors:
    """r_bar(t) and s_bar(t) of Appendix D at each checkpoint t (in gradient evaluations).

    Args:
        draws: one method's {site: array (chains, draws, *shape)} on the original variables.
        grad_evals_per_draw: gradient evaluations per kept draw (L for HMC, 2L for iHMC).
        gold: reference moments, e.g. from `gold_standard`; every site of `draws` must be in it.
        checkpoints: gradient-evaluation counts; default `log_checkpoints`. Each must buy at least
            one and at most all of the draws.
    """
    checked = as_draws(draws, min_draws=1)
    per_draw = float(grad_evals_per_draw)
    if not (np.isfinite(per_draw) and per_draw > 0):
        raise ArgumentError(f"grad_evals_per_draw must be positive, got {grad_evals_per_draw}")
    if checkpoints is None:
        checkpoints = log_checkpoints(checked.num_draws, per_draw)
    grad_evals = np.asarray(checkpoints, dtype=float).reshape(-1)
    # A small tolerance so that k * per_draw, computed in floating point, still buys k draws.
    counts = np.floor(grad_evals / per_draw * (1 + 1e-12)).astype(int)
    if counts.size == 0 or counts.min() < 1 or counts.max() > checked.num_draws:
        raise ArgumentError(
            f"checkpoints must buy between 1 and {checked.num_draws} draws "
            f"({per_draw} gradient evaluations each), got {grad_evals}"
        )
    gold_mean, gold_sd = _flatten_gold(checked, gold)
    unique_counts, position = np.unique(counts, return_inverse=True)
    # Sums over chains of |running moment - gold|, accumulated block by block of chains.
    mean_err = np.zeros((unique_counts.size, checked.num_elements))
    sd_err = np.zeros_like(mean_err)
    for block in blocks(checked, max_values):
        mean_sum, sd_sum = _running_abs_errors(
            block.values, unique_counts, gold_mean[block.elements], gold_sd[block.elements]
        )
        mean_err[:, block.elements] += mean_sum
        sd_err[:, block.elements] += sd_sum
    scale = checked.num_chains * gold_sd  # 1/K over chains, then normalised by sigma_i
    mean_err, sd_err = mean_err[position] / scale, sd_err[position] / scale
    return MomentErrors(
        grad_evals=grad_evals,
        num_draws=counts,
        mean_error=mean_err.mean(axis=1),
        sd_error=sd_err.mean(axis=1),
        element_names=checked.element_names,
        mean_error_per_element=mean_err,
        sd_error_per_element=sd_err,
    )


def _running_abs_errors(chunk: np.ndarray, counts: np.ndarray, mu: np.ndarray, sigma: np.ndarray):
    """Sums over the block's chains of |running mean - mu| and |running sd - sigma|, (T, k).

    `counts` (sorted, unique) are the numbers of leading draws the running moments use.
    """
    # Centre on the gold mean first: sums of squares of O(sigma) values keep their precision.
    centred = chunk[:, : counts[-1], :] - mu
    starts = np.concatenate([[0], counts[:-1]])
    # Sums over the segments between checkpoints, then cumulative: sums over the first t draws,
    # without a (chains, draws, k) cumulative-sum array.
    sums = np.cumsum(np.add.reduceat(centred, starts, axis=1), axis=1)
    squares = np.cumsum(np.add.reduceat(centred**2, starts, axis=1), axis=1)
    t = counts[None, :, None].astype(float)
    mean_offset = sums / t  # running mean minus the gold mean
    running_sd = np.sqrt(np.maximum(squares / t - mean_offset**2, 0.0))  # ddof = 0
    return np.abs(mean_offset).sum(axis=0), np.abs(running_sd - sigma).sum(axis=0)


def _flatten_gold(checked: Draws, gold: GoldStandard) -> tuple[np.ndarray, np.ndarray]:
    means, sds = [], []
    for name, shape in checked.shapes.items():
        if name not in gold.mean or name not in gold.sd:
            raise ArgumentError(f"site '{name}': no gold-standard mean or sd")
        mean, sd = np.asarray(gold.mean[name], float), np.asarray(gold.sd[name], float)
        if mean.shape != shape or sd.shape != shape:
            raise ArgumentError(
                f"site '{name}': gold moments have shapes {mean.shape}, {sd.shape}, draws {shape}"
            )
        means.append(mean.reshape(-1))
        sds.append(sd.reshape(-1))
    mean, sd = np.concatenate(means), np.concatenate(sds)
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(sd)) and np.all(sd > 0)):
        raise ArgumentError("gold-standard means must be finite and sds positive")
    return mean, sd


def _unflatten(checked: Draws, flat: np.ndarray) -> dict[str, np.ndarray]:
    out, offset = {}, 0
    for name, shape in checked.shapes.items():
        size = int(np.prod(shape, dtype=int))
        out[name] = flat[offset : offset + size].reshape(shape)
        offset += size
    return out

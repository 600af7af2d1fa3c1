"""Standard convergence diagnostics: rank-normalised bulk and tail ESS, R-hat (ArviZ's), and MCSE.

These are the modern diagnostics of Vehtari et al. (2021), "Rank-normalization, folding, and
localization: an improved R-hat", pooled over chains. They complement, and differ from, the
paper's per-chain metric in `diagnostics.ess`. Bulk ESS, tail ESS and R-hat are ArviZ's functions
run on every element at once (`diagnostics.rank_normalised`, tested equal to ArviZ's): ArviZ took
0.1 s for 56 elements and 0.7 s for 400, on every ``infer`` call and every pilot of ``auto``, and
this takes about half that (``benchmarks/diagnostics_speed.py``). The Monte Carlo standard error is
ArviZ's own.

ArviZ 0.23 writes a stamp file and may warn (FutureWarning, once a day) when it is first
imported, and its import takes about 1.5 s (numba compiles its ECDF helpers, matplotlib loads), so
it is imported only by the functions that need it (``mean_and_mcse``, ``InferenceResult.to_arviz``);
``infer`` does not import it.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from autoreparam.diagnostics import rank_normalised
from autoreparam.diagnostics.draws import as_draws
from autoreparam.errors import DataError

# ArviZ returns NaN below these sizes (rank-normalised ESS needs 4 draws, R-hat 2 chains).
MIN_DRAWS = 4
MIN_CHAINS_FOR_RHAT = 2


@dataclass(frozen=True, eq=False)  # holds arrays: no element-wise ==
class StandardDiagnostics:
    """Per-site ArviZ diagnostics (arrays of the site's shape) and their worst values.

    Attributes:
        ess_bulk: site -> rank-normalised bulk ESS (az.ess(method="bulk")).
        ess_tail: site -> tail ESS, the smaller of the 5% and 95% quantile ESS (method="tail").
        r_hat: site -> rank-normalised split R-hat (az.rhat(method="rank")); NaN with one chain.
        min_ess_bulk, min_ess_tail: minima over all elements.
        max_r_hat: maximum over the elements whose R-hat is defined. An element that never changed in
            any chain (an LKJ factor's fixed entries) has R-hat 0/0 = NaN and is left out, so that it
            cannot hide another element's R-hat of 3 from every ``not r_hat > limit`` check. NaN only
            when no element has an R-hat (one chain).
        stuck_sites: sites no element of which changed within any chain. ESS cannot tell them: by
            ArviZ's convention a constant series has ESS equal to its length, so with one chain (no
            R-hat) a site that never moved read as perfectly mixed.
    """

    ess_bulk: dict[str, np.ndarray]
    ess_tail: dict[str, np.ndarray]
    r_hat: dict[str, np.ndarray]
    min_ess_bulk: float
    min_ess_tail: float
    max_r_hat: float
    stuck_sites: tuple[str, ...] = ()


def standard_diagnostics(draws: Mapping) -> StandardDiagnostics:
    """Bulk ESS, tail ESS and R-hat of every site of {name: array (chains, draws, *shape)}."""
    sites = _site_arrays(draws)
    bulk, tail, rhat = _elementwise(rank_normalised.bulk_tail_rhat, sites)
    return StandardDiagnostics(
        ess_bulk=bulk,
        ess_tail=tail,
        r_hat=rhat,
        min_ess_bulk=_reduce(bulk, np.min),
        min_ess_tail=_reduce(tail, np.min),
        max_r_hat=_reduce(rhat, np.nanmax),
        stuck_sites=tuple(name for name, values in sites.items()
                          if values.size and np.all(values.max(axis=1) == values.min(axis=1))),
    )


def _quietly(fn, *args, **kwargs):
    """Call ArviZ with a stuck chain allowed: zero within-chain variance gives inf/NaN, not a warning."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return fn(*args, **kwargs)


def bulk_ess(draws) -> dict[str, np.ndarray]:
    """Rank-normalised bulk ESS per site (pooled over chains): az.ess(method="bulk")."""
    return _elementwise(rank_normalised.ess_bulk, _site_arrays(draws))


def tail_ess(draws) -> dict[str, np.ndarray]:
    """Tail ESS per site, min of the 5% and 95% quantile ESS: az.ess(method="tail")."""
    return _elementwise(rank_normalised.ess_tail, _site_arrays(draws))


def mean_and_mcse(draws) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and its Monte Carlo standard error (az.mcse, method "mean") of every element,
    flattened in sorted site order (the layout of ``Coordinates.ravel_original``)."""
    dataset = _to_dataset(draws)
    mcse = _per_site(_quietly(_arviz().mcse, dataset, method="mean"))
    names = sorted(dataset.data_vars)
    means = [np.asarray(dataset[n].mean(dim=("chain", "draw")).values, dtype=float).ravel() for n in names]
    return np.concatenate(means), np.concatenate([np.ravel(mcse[n]) for n in names])


def rank_rhat(draws) -> dict[str, np.ndarray]:
    """Rank-normalised split R-hat per site: az.rhat(method="rank"); NaN with one chain."""
    sites = _site_arrays(draws)
    if next(iter(sites.values())).shape[0] < MIN_CHAINS_FOR_RHAT:
        # ArviZ would log a shape warning and return NaN; say NaN directly.
        return {name: np.full(values.shape[2:], np.nan) for name, values in sites.items()}
    return _elementwise(rank_normalised.rhat_rank, sites)


def _site_arrays(draws) -> dict[str, np.ndarray]:
    """{name: (chains, draws, *shape)} arrays, checked (at least ``MIN_DRAWS`` draws, all finite)."""
    if hasattr(draws, "data_vars"):  # an xarray Dataset with dims (chain, draw, ...)
        draws = {name: np.asarray(draws[name].values) for name in draws.data_vars}
    checked = as_draws(draws, min_draws=MIN_DRAWS)
    sites = {}
    for name, flat in checked.sites.items():
        if not np.all(np.isfinite(flat)):
            raise DataError(f"site '{name}': draws contain NaN or infinite values")
        sites[name] = flat.reshape(flat.shape[:2] + checked.shapes[name])
    return sites


def _elementwise(diagnostic, sites: dict[str, np.ndarray]):
    """``diagnostic`` ((chains, draws, k) -> (k,), or a tuple of such) of every element of the checked
    ``sites`` (``_site_arrays``), in one call over all of them; returns {site: array of the site's
    shape} (or a tuple of them)."""
    shapes = {name: values.shape[2:] for name, values in sites.items()}
    flat = np.concatenate([values.reshape(values.shape[:2] + (-1,)) for values in sites.values()], axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):  # a stuck chain gives inf or NaN, not a warning
        results = diagnostic(flat)

    def per_site(values):
        values, out, start = np.asarray(values, dtype=float), {}, 0
        for name, shape in shapes.items():
            size = int(np.prod(shape, dtype=int))
            out[name] = values[start:start + size].reshape(shape)
            start += size
        return out

    return tuple(per_site(v) for v in results) if isinstance(results, tuple) else per_site(results)


def _to_dataset(draws):
    """An xarray Dataset with dims (chain, draw, <site>_dim_0, ...), built without ArviZ's
    converter, which warns whenever chains outnumber draws even though our axes are explicit."""
    import xarray as xr

    if isinstance(draws, xr.Dataset):
        return draws
    checked = as_draws(draws, min_draws=MIN_DRAWS)
    variables = {}
    for name, flat in checked.sites.items():
        shape = checked.shapes[name]
        values = flat.reshape(flat.shape[:2] + shape)
        if not np.all(np.isfinite(values)):
            raise DataError(f"site '{name}': draws contain NaN or infinite values")
        dims = ("chain", "draw") + tuple(f"{name}_dim_{i}" for i in range(len(shape)))
        variables[name] = (dims, values)
    return xr.Dataset(variables)


def _per_site(result) -> dict[str, np.ndarray]:
    return {name: np.asarray(result[name].values, dtype=float) for name in result.data_vars}


def _reduce(per_site: dict[str, np.ndarray], reducer) -> float:
    values = np.concatenate([np.ravel(v) for v in per_site.values()])
    return float("nan") if np.all(np.isnan(values)) else float(reducer(values))


# The once-a-day notice about ArviZ's coming refactor is not ours to act on: a filter on its message,
# installed once for the process.
_ARVIZ_NOTICE = r"\s*ArviZ is undergoing a major refactor"


def _arviz():
    if "arviz" not in sys.modules:
        warnings.filterwarnings("ignore", message=_ARVIZ_NOTICE, category=FutureWarning)
    import arviz

    return arviz

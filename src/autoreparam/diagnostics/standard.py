"""Standard convergence diagnostics, delegated to ArviZ: rank-normalised bulk and tail ESS, R-hat.

These are the modern diagnostics of Vehtari et al. (2021), "Rank-normalization, folding, and
localization: an improved R-hat", pooled over chains. They complement, and differ from, the
paper's per-chain metric in `diagnostics.ess`; nothing here re-implements ArviZ.

ArviZ 0.23 writes a stamp file and may warn (FutureWarning, once a day) when it is first
imported, so it is imported inside the functions, never when autoreparam is imported. Its import
takes about 1.5 s (numba compiles ArviZ's ECDF helpers, matplotlib loads), which a process's first
``infer`` call paid after sampling; ``load_arviz_in_background`` starts it on a thread at the top of
``infer``, where it overlaps the compilation of the samplers (XLA compiles without holding the GIL).
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

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
        max_r_hat: maximum over all elements (NaN with one chain).
    """

    ess_bulk: dict[str, np.ndarray]
    ess_tail: dict[str, np.ndarray]
    r_hat: dict[str, np.ndarray]
    min_ess_bulk: float
    min_ess_tail: float
    max_r_hat: float


def standard_diagnostics(draws: Mapping) -> StandardDiagnostics:
    """Bulk ESS, tail ESS and R-hat of every site of {name: array (chains, draws, *shape)}."""
    dataset = _to_dataset(draws)
    bulk, tail, rhat = bulk_ess(dataset), tail_ess(dataset), rank_rhat(dataset)
    return StandardDiagnostics(
        ess_bulk=bulk,
        ess_tail=tail,
        r_hat=rhat,
        min_ess_bulk=_reduce(bulk, np.min),
        min_ess_tail=_reduce(tail, np.min),
        max_r_hat=_reduce(rhat, np.max),
    )


def _quietly(fn, *args, **kwargs):
    """Call ArviZ with a stuck chain allowed: zero within-chain variance gives inf/NaN, not a warning."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return fn(*args, **kwargs)


def bulk_ess(draws) -> dict[str, np.ndarray]:
    """Rank-normalised bulk ESS per site (pooled over chains), by az.ess(method="bulk")."""
    return _per_site(_quietly(_arviz().ess, _to_dataset(draws), method="bulk"))


def tail_ess(draws) -> dict[str, np.ndarray]:
    """Tail ESS per site: min of the 5% and 95% quantile ESS, by az.ess(method="tail")."""
    return _per_site(_quietly(_arviz().ess, _to_dataset(draws), method="tail"))


def mean_and_mcse(draws) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and its Monte Carlo standard error (az.mcse, method "mean") of every element,
    flattened in sorted site order (the layout of ``Coordinates.ravel_original``)."""
    dataset = _to_dataset(draws)
    mcse = _per_site(_quietly(_arviz().mcse, dataset, method="mean"))
    names = sorted(dataset.data_vars)
    means = [np.asarray(dataset[n].mean(dim=("chain", "draw")).values, dtype=float).ravel() for n in names]
    return np.concatenate(means), np.concatenate([np.ravel(mcse[n]) for n in names])


def rank_rhat(draws) -> dict[str, np.ndarray]:
    """Rank-normalised split R-hat per site, by az.rhat(method="rank"); NaN with one chain."""
    dataset = _to_dataset(draws)
    if dataset.sizes["chain"] < MIN_CHAINS_FOR_RHAT:
        # ArviZ would log a shape warning and return NaN; say NaN directly.
        return {name: np.full(dataset[name].shape[2:], np.nan) for name in dataset.data_vars}
    return _per_site(_quietly(_arviz().rhat, dataset, method="rank"))


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


# The once-a-day notice about ArviZ's coming refactor is not ours to act on. A filter on its message,
# installed once for the process: ``warnings.catch_warnings`` swaps the process's filters and is not
# safe on the import thread while the caller's thread uses warnings too.
_ARVIZ_NOTICE = r"\s*ArviZ is undergoing a major refactor"
_loader: threading.Thread | None = None


def _arviz():
    if "arviz" not in sys.modules:
        warnings.filterwarnings("ignore", message=_ARVIZ_NOTICE, category=FutureWarning)
    import arviz  # waits for a background import under way (the module's import lock)

    return arviz


def _import_quietly() -> None:
    # Only the import: the caller's thread installed the notice's filter (``warnings`` is not thread-safe).
    try:
        import arviz  # noqa: F401
    except Exception:  # noqa: BLE001 - the diagnostics import it again and report the error there
        pass


def load_arviz_in_background() -> None:
    """Start importing ArviZ on a daemon thread, once per process; a no-op once it is imported."""
    global _loader
    if _loader is None and "arviz" not in sys.modules:
        warnings.filterwarnings("ignore", message=_ARVIZ_NOTICE, category=FutureWarning)
        _loader = threading.Thread(target=_import_quietly, name="autoreparam-import-arviz", daemon=True)
        _loader.start()

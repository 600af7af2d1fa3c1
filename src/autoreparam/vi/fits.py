"""Variational fits of fixed and learned parameterisations, under one protocol.

``fit_parameterisations`` is the workhorse: it builds the runs (every requested parameterisation times
every learning rate), fits them in one compiled program and keeps, per parameterisation, the run with
the best mean ELBO over its last steps (paper 002 Appendix C).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field, replace
from typing import Mapping

import jax
import jax.numpy as jnp
import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.errors import ModelError
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.vi.engine import Runs, run_fits
from autoreparam.vi.protocol import VIConfig

@dataclass(frozen=True)
class Learned:
    """A learned centring (VIP), started from each lambda in ``starts`` at every learning rate.

    The paper starts from lambda = 0.5 only. VIP's objective is not convex in lambda (paper 000
    Section 6.3 reports local optima); starting also near NCP and near CP and keeping the best run
    means VIP's ELBO cannot end far below the best fixed parameterisation's. A start may also be a
    `Parameterisation` (per-element values, e.g. the meta-learned prediction); its values are kept
    inside [START_CLIP, 1 - START_CLIP] so that their logits are finite.
    """

    starts: tuple = (0.5,)

    def __post_init__(self):
        scalars = [s for s in self.starts if not isinstance(s, Parameterisation)]
        if not self.starts or any(not (0.0 < s < 1.0) for s in scalars):
            raise ValueError(f"learned centring must start strictly inside (0, 1), got {self.starts}")


START_CLIP = 1e-3


def _start_logit(start, fixed: Parameterisation):
    """The learned centring's initial logit: a scalar start everywhere, or a Parameterisation's values."""
    if isinstance(start, Parameterisation):
        return jax.tree_util.tree_map(lambda x: jax.scipy.special.logit(jnp.clip(x, START_CLIP, 1 - START_CLIP)), start)
    # Logits live outside [0, 1]: build them by tree_map (no range validation on unflatten).
    value = 0.0 if start is None else float(np.log(start / (1 - start)))
    return jax.tree_util.tree_map(lambda x, v=value: jnp.full_like(x, v), fixed)


LEARNED = Learned()


@dataclass(frozen=True)
class VIFit:
    """The chosen run of one parameterisation: q's loc and scale, the centring, the ELBO."""

    label: str
    parameterisation: Parameterisation
    loc: np.ndarray  # (dim,) in the parameterisation's unconstrained coordinates
    scale: np.ndarray  # (dim,)
    elbo: float  # from fresh draws after fitting
    elbo_se: float
    learning_rate: float
    window_mean: float  # the selection criterion: mean ELBO over the last steps
    trace: np.ndarray = field(repr=False)
    nonfinite_steps: int = 0
    retried_from: tuple = ()  # the learning rates of a first try whose ELBO was not finite (`fit_or_retry`)

    @property
    def ok(self) -> bool:
        return bool(np.isfinite(self.elbo))

    def site_loc(self, coords: Coordinates) -> dict:
        return {k: np.asarray(v) for k, v in coords.unravel(jnp.asarray(self.loc)).items()}

    def site_scale(self, coords: Coordinates) -> dict:
        return {k: np.asarray(v) for k, v in coords.unravel(jnp.asarray(self.scale)).items()}


def _stack(trees):
    return jax.tree_util.tree_map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *trees)


def _index(tree, i):
    return jax.tree_util.tree_map(lambda x: x[i], tree)


def _fatal(fits: dict, needed) -> list[str]:
    """The fits whose ELBO is not finite, when every fit failed or a ``needed`` one did; else none."""
    failed = [label for label, fit in fits.items() if not fit.ok]
    fatal = len(failed) == len(fits) if needed is None else any(label in failed for label in needed)
    return failed if fatal else []


def require_finite(fits: dict, config, needed=None, tried=()) -> None:
    """An error naming the fits whose ELBO is not finite, when every fit failed or a ``needed`` one did:
    their q (NaN, or far from anything) would be the sampler's start and scales. ``tried``: learning
    rates already tried too (`fit_or_retry`'s retry)."""
    failed = _fatal(fits, needed)
    if not failed:
        return
    rates = " and then ".join(str(tuple(r)) for r in (*tried, tuple(config.learning_rates)))
    raise ModelError(
        f"the variational fit{'s' if len(failed) > 1 else ''} {', '.join(failed)} ended with a non-finite ELBO at "
        f"learning rates {rates}: lower VIConfig.learning_rates (e.g. (0.01, 0.02)), or "
        "check that the model's density is finite near its initial values"
    )


# A retry's learning rates, against the first try's: a fit whose ELBO became non-finite mostly took a step
# too long for a heavy-tailed or steep density (a funnel several levels deep).
RETRY_RATE_FACTOR = 0.1


def fit_or_retry(coords, targets: dict, init_values: dict, config, *, needed=None, **options):
    """`fit_parameterisations`, then once more at a tenth of the learning rates for the fits whose ELBO
    was not finite when that is fatal (`require_finite`): each retried fit replaces its first try if
    finite. Raises `require_finite`'s error, naming both tries, when the retry does not mend it.
    Returns ``(fits, timing)`` as `fit_parameterisations` does (timing summed over both tries).
    A replaced fit records the first try's rates (``VIFit.retried_from``; `retry_note` says so)."""
    fits, timing = fit_parameterisations(coords, targets, init_values, config, **options)
    failed = _fatal(fits, needed)
    if not failed:
        return fits, timing
    slower = replace(config, learning_rates=tuple(r * RETRY_RATE_FACTOR for r in config.learning_rates))
    again, more = fit_parameterisations(coords, {k: targets[k] for k in failed}, init_values, slower, **options)
    first = tuple(config.learning_rates)
    fits = {**fits, **{k: replace(again[k], retried_from=first) for k in failed if again[k].ok}}
    timing = {**timing, **{k: timing[k] + more[k] for k in ("compile_seconds", "run_seconds", "runs")}}
    require_finite(fits, slower, needed, tried=(first,))
    return fits, timing


def retry_note(fits: dict) -> str:
    """A sentence for ``result.decision`` on the fits `fit_or_retry` fitted again (empty if none)."""
    retried = [fit for fit in fits.values() if fit.retried_from]
    if not retried:
        return ""
    names = ", ".join(fit.label for fit in retried)
    return (f" The variational fit{'s' if len(retried) > 1 else ''} {names} ended with a non-finite ELBO at learning "
            f"rates {retried[0].retried_from} and {'were' if len(retried) > 1 else 'was'} fitted again at a tenth of "
            f"them (kept: {', '.join(f'{fit.learning_rate:g}' for fit in retried)}).")


def run_id(target: str, start_index: int) -> int:
    """A run's random-number stream, named by what it fits (the target's name and the index of its
    start), stable across processes (CRC-32, not Python's salted ``hash``)."""
    return zlib.crc32(f"{target}/{start_index}".encode()) & 0x7FFFFFFF


# A run that skipped more of its steps than this (a non-finite ELBO or gradient: ``vi.engine``) did not fit.
MAX_SKIPPED_SHARE = 0.5


def _best_run(window_mean, elbo, skipped, num_steps: int) -> int:
    """The run (learning rate, start) to keep: the best mean ELBO over the last steps (002 App. C) among
    runs whose final ELBO is finite and that skipped at most ``MAX_SKIPPED_SHARE`` of their steps.

    By the window alone, a run whose final ELBO was -inf beat a finite one (it then counted as a
    failed fit and was refitted, or VIP gave way to a fixed centring), and a run that skipped every
    step for NaN gradients, q never moved from its start, passed as fitted (both found in review).
    Where no run is sound, the window alone chooses, as before, and the fit's own checks judge it.
    """
    window_mean, elbo, skipped = (np.asarray(a) for a in (window_mean, elbo, skipped))
    finite = np.isfinite(window_mean)
    sound = finite & np.isfinite(elbo) & (skipped <= MAX_SKIPPED_SHARE * num_steps)
    return int(np.argmax(np.where(sound if sound.any() else finite, window_mean, -np.inf)))


def fit_parameterisations(
    coords: Coordinates,
    targets: Mapping[str, Parameterisation | Learned],
    init_values: dict,
    config: VIConfig,
    *,
    tied: bool = True,
    seed: int = 0,
    label: str = "VI",
) -> tuple[dict[str, VIFit], dict]:
    """Fit each target (a fixed ``Parameterisation`` or a ``Learned`` centring) at every learning rate.

    ``init_values``: original-coordinate values the mean of q starts from (mapped into each run's
    starting parameterisation). A learned centring starts at each of its ``starts`` (the paper's
    code: lambda = 0.5, logit 0). Returns the chosen fit per target and timing information.
    """
    plan = coords.plan
    run_specs = []
    for name, target in targets.items():
        learned = isinstance(target, Learned)
        starts = target.starts if learned else (None,)
        for start_index, start in enumerate(starts):
            if isinstance(start, Parameterisation):
                fixed = start
            else:
                fixed = Parameterisation.tied(plan, start) if learned else target
            logit = _start_logit(start, fixed)
            init_loc = coords.start_vector(init_values, fixed)
            for lr in config.learning_rates:
                run_specs.append((name, fixed, 1.0 if learned else 0.0, lr, init_loc, logit,
                                  run_id(name, start_index)))
    runs = Runs(
        fixed=_stack([s[1] for s in run_specs]),
        learn=jnp.array([s[2] for s in run_specs]),
        learning_rate=jnp.array([s[3] for s in run_specs]),
        init_loc=jnp.stack([s[4] for s in run_specs]),
        init_logit=_stack([s[5] for s in run_specs]),
    )
    results = run_fits(coords, runs, config, tied=tied, seed=seed, label=label, run_ids=[s[6] for s in run_specs])
    fits = {}
    for name in targets:
        idx = [i for i, s in enumerate(run_specs) if s[0] == name]
        best = idx[_best_run(results.window_mean[idx], results.elbo[idx], results.nonfinite_steps[idx],
                             config.num_steps)]
        fits[name] = VIFit(
            label=name,
            parameterisation=_index(jax.tree_util.tree_map(jnp.asarray, results.centring), best),
            loc=results.loc[best],
            scale=results.scale[best],
            elbo=float(results.elbo[best]),
            elbo_se=float(results.elbo_se[best]),
            learning_rate=float(run_specs[best][3]),
            window_mean=float(results.window_mean[best]),
            trace=results.trace[best],
            nonfinite_steps=int(results.nonfinite_steps[best]),
        )
    timing = {"compile_seconds": results.compile_seconds, "run_seconds": results.run_seconds, "runs": len(run_specs)}
    return fits, timing

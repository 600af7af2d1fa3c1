"""Named problems: ``load("radon_mn")`` returns a `Problem` with the model and its data."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from autoreparam.errors import ArgumentError
from autoreparam.models import builders
from autoreparam.models.data.radon import STATES as _RADON_STATES
from autoreparam.models.problem import Problem


@dataclass(frozen=True)
class _Entry:
    build: Callable[..., Problem]
    options: tuple[str, ...]  # keyword options `load` passes on to `build`


def _entries() -> dict[str, _Entry]:
    # Built on demand (cheap) rather than at import, so the table always reflects `builders`.
    entries = {
        "eight_schools": _Entry(builders.eight_schools, ()),
        "german_credit": _Entry(builders.german_credit, ()),
        "election88": _Entry(builders.election88, ()),
        "electric": _Entry(builders.electric, ()),
        "neals_funnel": _Entry(builders.neals_funnel, ("dim",)),
        "funnel_with_observation": _Entry(builders.funnel_with_observation, ("y", "sigma")),
        "gaussian_section3": _Entry(builders.gaussian_section3, ("q", "n", "sigma_mu", "seed")),
        "hierarchical_linear": _Entry(builders.hierarchical_linear, ("seed",)),
        "sparse_logistic": _Entry(builders.sparse_logistic, ("seed",)),
    }
    for state in _RADON_STATES:
        for variant in ("radon", "radon_stddvs"):
            entries[f"{variant}_{state.lower()}"] = _Entry(
                builders.radon_builder(variant, state), ("missing_floor",)
            )
    return entries


def available() -> list[str]:
    """Names `load` accepts."""
    return list(_entries())


def load(name: str, *, data_dir: str | os.PathLike | None = None, quirks: bool = False, **options) -> Problem:
    """The problem called `name`, with its data read from `data_dir` (default: see `data`).

    ``quirks=True`` reproduces the original code's data handling (REFERENCE.md); it changes
    radon, election88 and electric and nothing else. ``options`` are model specific:
    radon ``missing_floor`` ("mean" or "drop"); neals_funnel ``dim``; funnel_with_observation
    ``y``, ``sigma``; gaussian_section3 ``q``, ``n``, ``sigma_mu``, ``seed``; the simulated
    hierarchical_linear and sparse_logistic ``seed``.
    """
    entries = _entries()
    if name not in entries:
        raise ArgumentError(f"unknown problem {name!r}; available: {', '.join(entries)}")
    entry = entries[name]
    unknown = sorted(set(options) - set(entry.options))
    if unknown:
        accepted = ", ".join(entry.options) or "none"
        raise ArgumentError(f"problem {name!r} takes no option(s) {unknown}; it accepts: {accepted}")
    return entry.build(data_dir=data_dir, quirks=bool(quirks), **options)

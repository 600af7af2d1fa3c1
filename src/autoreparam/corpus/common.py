"""What every family shares: the design a writer asks for, the generated program, strata and units.

Informativeness (the quantity that decides whether centring or non-centring is better; paper 000
Section 3, q = N / sigma^2 for unit prior scale) is ``tau^2 n / sigma^2``: group-level scale
squared times observations per group over the noise variance. Each family defines its own tau, n
and sigma (for a GLM sigma^2 is the inverse Fisher information per observation). A design asks for
a stratum of log10 informativeness; the family draws latents from the prior until the realised
value falls in it (rejection sampling: the data are then prior predictive draws conditioned on the
stratum), recording the realised value and whether the stratum was hit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

# One-decade strata of log10 informativeness, from 1e-3 to 1e3.
STRATA: tuple[tuple[float, float], ...] = tuple((float(lo), float(lo + 1)) for lo in range(-3, 3))
UNITS_LOG10_RANGE = (-2.0, 2.0)  # everything with units is scaled by 10^U(-2, 2)
MAX_TRIES = 200  # rejection-sampling draws per program before taking the closest one


@dataclass(frozen=True)
class Design:
    """What the writer asks of a family: sizes ("train" or "large") and an informativeness stratum."""

    size: str = "train"
    stratum: tuple[float, float] = (-1.0, 0.0)

    @property
    def large(self) -> bool:
        return self.size == "large"


@dataclass(frozen=True)
class GeneratedProgram:
    """A program's text, its data (the language's JSON data format) and how it was generated."""

    family: str
    text: str
    data: dict
    params: dict = field(default_factory=dict)


def num(value: float, digits: int = 4) -> float:
    """``value`` rounded to ``digits`` significant digits: the constant written in the program text."""
    return float(f"{float(value):.{digits}g}")


def text_num(value: float) -> str:
    """A constant as program text (non-negative; negative constants are written as ``-`` and this)."""
    value = num(value)
    return repr(value) if value != int(value) or abs(value) >= 1e16 else str(int(value))


def signed_text_num(value: float) -> str:
    """`text_num` with a leading minus for negative values (the language's literals are unsigned)."""
    return ("-" if value < 0 else "") + text_num(abs(value))


def log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    return float(10.0 ** rng.uniform(np.log10(low), np.log10(high)))


def draw_units(rng: np.random.Generator) -> float:
    return num(10.0 ** rng.uniform(*UNITS_LOG10_RANGE))


def target_informativeness(rng: np.random.Generator, design: Design) -> float:
    return float(10.0 ** rng.uniform(*design.stratum))


def draw_in_stratum(rng, draw: Callable, log10_q: Callable, stratum) -> tuple[dict, float, bool]:
    """Draw until ``log10_q(draw(rng))`` lies in ``stratum``; else the closest of `MAX_TRIES` draws.

    Returns the draw, its log10 informativeness and whether the stratum was hit.
    """
    best, best_q, best_gap = None, None, np.inf
    for _ in range(MAX_TRIES):
        sample = draw(rng)
        q = float(log10_q(sample))
        gap = max(stratum[0] - q, q - stratum[1], 0.0) if np.isfinite(q) else np.inf
        if gap == 0.0:
            return sample, q, True
        if best is None or gap < best_gap:
            best, best_q, best_gap = sample, q, gap
    return best, best_q, False


def group_sizes(rng: np.random.Generator, num_groups: int, max_per_group: int) -> np.ndarray:
    """Observations per group, uniform on 0..max (so empty groups occur); at least one in all."""
    sizes = rng.integers(0, max_per_group + 1, size=num_groups)
    if sizes.sum() == 0:
        sizes[rng.integers(num_groups)] = 1
    return sizes


def group_index(sizes: np.ndarray) -> np.ndarray:
    """1-based group of each observation, in group order."""
    return np.repeat(np.arange(1, len(sizes) + 1), sizes)


def as_list(array) -> list:
    """A JSON-ready list (floats rounded to 7 significant digits: float32 precision)."""
    array = np.asarray(array)
    if array.dtype.kind in "iub":
        return array.astype(int).tolist()
    return [float(f"{v:.7g}") for v in array.ravel()] if array.ndim == 1 else [as_list(row) for row in array]

"""How large an error the SBC tests detect: simulated power of `statistics.calibration`.

Talts et al. (2018), Section 4: a posterior that is shifted or too narrow or too wide bends the rank
histogram. Here that is made a number for the run's own design (replications n, parameters k,
L thinned draws, Holm over 2k tests at `statistics.ALPHA`): with the true value theta ~ N(0, 1)
(any posterior is one after a monotone map, which ranks do not see) and L independent draws from
N(shift, scale^2), simulate whole cells in which one parameter is miscalibrated and k - 1 are not,
and report the smallest shift (in posterior standard deviations) and the scale errors that the cell
rejects with probability `POWER`.
"""

from __future__ import annotations

import numpy as np

from autoreparam.reliability.ranks import NUM_THINNED
from autoreparam.reliability.statistics import ALPHA, calibration

POWER = 0.8
SHIFTS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0)
NARROW = (0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5, 0.4, 0.3)  # draws' sd / posterior sd
WIDE = (1.05, 1.1, 1.15, 1.2, 1.3, 1.4, 1.5, 1.75, 2.0, 2.5, 3.0)


def _cell_ranks(rng, n: int, k: int, shift: float, scale: float, num_thinned: int) -> np.ndarray:
    truth = rng.standard_normal((n, k))
    draws = rng.standard_normal((n, num_thinned, k))
    draws[..., 0] = shift + scale * draws[..., 0]  # parameter 0 is the miscalibrated one
    return np.sum(draws < truth[:, None, :], axis=1)


def rejection_rate(n: int, k: int, shift: float = 0.0, scale: float = 1.0, sims: int = 200,
                   num_thinned: int = NUM_THINNED, seed: int = 0) -> float:
    """Fraction of simulated cells that `calibration` rejects (at shift 0, scale 1: the false alarm rate)."""
    rng = np.random.default_rng(seed)
    labels = [f"p{j}" for j in range(k)]
    rejected = sum(not calibration(_cell_ranks(rng, n, k, shift, scale, num_thinned), labels, num_thinned).passed
                   for _ in range(sims))
    return rejected / sims


def smallest_detected(n: int, k: int, grid, kind: str, sims: int = 200, seed: int = 0) -> float | None:
    """The first effect of ``grid`` (ordered from small to large) rejected with probability >= `POWER`."""
    for value in grid:
        shift, scale = (value, 1.0) if kind == "shift" else (0.0, value)
        if rejection_rate(n, k, shift, scale, sims, seed=seed) >= POWER:
            return float(value)
    return None


def detectable_errors(n: int, k: int, sims: int = 200, seed: int = 0) -> dict:
    """The design's power: smallest shift, narrowing and widening detected with probability `POWER`."""
    return {
        "replications": n,
        "parameters": k,
        "alpha": ALPHA,
        "power": POWER,
        "false_alarm_rate": rejection_rate(n, k, sims=sims, seed=seed + 1),
        "shift_sd": smallest_detected(n, k, SHIFTS, "shift", sims, seed),
        "narrow_ratio": smallest_detected(n, k, NARROW, "scale", sims, seed),
        "wide_ratio": smallest_detected(n, k, WIDE, "scale", sims, seed),
        "simulations": sims,
    }

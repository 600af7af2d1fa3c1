"""The variational protocol: the paper's settings as defaults, every one of them an argument.

Paper 002 Appendix C and REFERENCE.md ("Protocol of the authors' code"): Adam, 3000 steps, 256 Monte
Carlo samples per ELBO estimate, learning rates {0.02, 0.05, 0.1, 0.2, 0.4} each run separately and
dropped to lr/5 after 1/3 and lr/20 after 2/3 of the steps; keep the run with the best mean ELBO over
its last 32 steps.

One default differs: VIP starts from lambda in {0.05, 0.5, 0.95} rather than 0.5 alone, and keeps
the best run. From 0.5 alone VIP ends in CP-like local optima hundreds of nats below NCP on election
'88 and the Electric Company (measured in BENCHMARKS.md). ``PAPER`` is the paper's protocol exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np

from autoreparam.errors import ArgumentError


def _is_number(x) -> bool:
    """A real number: a Python, NumPy or JAX scalar (0-d arrays too), not a bool or a string."""
    if isinstance(x, (bool, np.bool_, str, bytes)):
        return False
    return np.ndim(x) == 0 and np.issubdtype(np.asarray(x).dtype, np.number)


@dataclass(frozen=True)
class VIConfig:
    num_steps: int = 3000
    num_samples: int = 256
    learning_rates: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.4)
    decay_fractions: tuple[float, ...] = (1 / 3, 2 / 3)
    decay_factors: tuple[float, ...] = (1 / 5, 1 / 20)
    select_window: int = 32
    final_num_samples: int = 4096  # fresh draws for the reported ELBO and its standard error
    init_scale: float = 0.1
    stl: bool = True
    vip_starts: tuple[float, ...] = (0.05, 0.5, 0.95)  # initial lambda of VIP's runs (paper: 0.5 only)
    progress: bool = True

    def __post_init__(self):
        for field in ("num_steps", "num_samples", "select_window", "final_num_samples"):
            value = getattr(self, field)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
                raise ArgumentError(f"VIConfig.{field} must be a positive integer, got {value!r}")
        for field in ("learning_rates", "decay_fractions", "decay_factors", "vip_starts"):
            value = getattr(self, field)
            if not isinstance(value, (tuple, list)):
                raise ArgumentError(f"VIConfig.{field} must be a tuple of numbers, e.g. ({value!r},), got {value!r}")
            if not all(_is_number(x) for x in value):
                raise ArgumentError(f"VIConfig.{field} must hold numbers, got {value!r}")
            # A tuple of floats: the config keys compiled programs, so it must hash (a list crashed there).
            object.__setattr__(self, field, tuple(float(x) for x in value))
        for field in ("stl", "progress"):
            if not isinstance(getattr(self, field), (bool, np.bool_)):
                raise ArgumentError(f"VIConfig.{field} must be True or False, got {getattr(self, field)!r}")
        if not _is_number(self.init_scale):
            raise ArgumentError(f"VIConfig.init_scale must be a positive number, got {self.init_scale!r}")
        if self.final_num_samples < 2:
            raise ArgumentError(f"VIConfig.final_num_samples must be at least 2 (the ELBO's standard error needs "
                                f"two draws), got {self.final_num_samples}")
        # `not (x > 0)` rather than `x <= 0`, so that NaN is rejected too.
        if not self.learning_rates or any(not (lr > 0) or math.isinf(lr) for lr in self.learning_rates):
            raise ArgumentError(f"VIConfig.learning_rates must be positive and finite, got {self.learning_rates}")
        if len(self.decay_fractions) != len(self.decay_factors):
            raise ArgumentError("VIConfig.decay_fractions and decay_factors must have the same length")
        if any(not (0.0 <= f <= 1.0) for f in self.decay_fractions):
            raise ArgumentError(f"VIConfig.decay_fractions must lie in [0, 1], got {self.decay_fractions}")
        if list(self.decay_fractions) != sorted(self.decay_fractions):
            # ``learning_rate_factor`` applies each factor from its fraction on, in order: out of order, an
            # earlier decay would override a later one for the rest of the fit (found in review).
            raise ArgumentError(f"VIConfig.decay_fractions must be in increasing order (each with its factor), "
                                f"got {self.decay_fractions}")
        if any(not (f > 0) or math.isinf(f) for f in self.decay_factors):
            raise ArgumentError(f"VIConfig.decay_factors must be positive and finite, got {self.decay_factors}")
        if not self.vip_starts or any(not (0.0 < x < 1.0) for x in self.vip_starts):
            raise ArgumentError(f"VIConfig.vip_starts must lie strictly inside (0, 1), got {self.vip_starts}")
        if not (self.init_scale > 0) or math.isinf(self.init_scale):
            raise ArgumentError(f"VIConfig.init_scale must be positive and finite, got {self.init_scale}")

    def learning_rate_factor(self, step):
        """Piecewise-constant decay: 1, then each factor once its fraction of the steps has passed."""
        factor = jnp.ones((), dtype=jnp.result_type(float))
        for fraction, value in zip(self.decay_fractions, self.decay_factors):
            factor = jnp.where(step >= int(round(fraction * self.num_steps)), value, factor)
        return factor


def check_config(config, name: str = "config") -> None:
    """A VIConfig (or None), not a dict or another object, named as the caller's argument."""
    if config is not None and not isinstance(config, VIConfig):
        raise ArgumentError(f"{name} must be an autoreparam.VIConfig (e.g. VIConfig(num_steps=1000)) or None, "
                            f"not {type(config).__name__}")


PAPER = VIConfig(vip_starts=(0.5,))

# A light fit for seeding NUTS, which adapts its own step size and mass matrix: q only has to give
# starting points, scales and candidate parameterisations. About 1/150 of the paper's density
# evaluations per fit (400 x 32 x 2 against 3000 x 256 x 5). Not enough on its own to choose a
# parameterisation: its fits can be unconverged, and on election '88 its VIP fit won the ELBO yet its
# pilot chains sampled over 100x worse per gradient than CP's (BENCHMARKS.md). ``method="auto"``
# uses it and decides with pilot chains.
FAST = VIConfig(num_steps=400, num_samples=32, learning_rates=(0.05, 0.2), final_num_samples=256)

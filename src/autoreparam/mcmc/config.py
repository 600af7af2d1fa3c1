"""Sampler settings. Defaults follow the authors' code (REFERENCE.md, "Protocol of the authors' code")."""

from __future__ import annotations

from dataclasses import dataclass

from autoreparam.errors import ArgumentError

STEP_SIZE_RULES = ("sign", "dual_averaging")
PAPER_L_GRID = (1, 2, 4, 8, 16, 32, 64, 128)


def _positive(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ArgumentError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class HMCConfig:
    """Fixed-L HMC with a diagonal preconditioner and per-chain step-size adaptation.

    ``num_warmup`` burn-in steps, of which the first ``adapt_fraction`` adapt the step size towards
    ``target_accept``: by the paper's rule ``log s += rate * sign(accept - target)`` (002 Appendix C,
    after Andrieu & Thoms 2008) or by dual averaging (Hoffman & Gelman 2014, Section 3.2.1; the
    authors' later code). The code used 10,000 burn-in steps with 6,000 adapting and 50,000 samples.
    """

    num_warmup: int = 1000
    num_samples: int = 2000
    adapt_fraction: float = 0.6
    step_size_rule: str = "sign"
    sign_rate: float = 0.02
    target_accept: float = 0.75
    divergence_threshold: float = 1000.0

    def __post_init__(self):
        _positive("num_warmup", self.num_warmup)
        _positive("num_samples", self.num_samples)
        if not 0.0 <= self.adapt_fraction <= 1.0:
            raise ArgumentError(f"adapt_fraction must lie in [0, 1], got {self.adapt_fraction}")
        if self.step_size_rule not in STEP_SIZE_RULES:
            raise ArgumentError(f"step_size_rule must be one of {STEP_SIZE_RULES}, got '{self.step_size_rule}'")
        if not 0.0 < self.target_accept < 1.0:
            raise ArgumentError(f"target_accept must lie in (0, 1), got {self.target_accept}")

    @property
    def num_adapt(self) -> int:
        return int(round(self.adapt_fraction * self.num_warmup))


@dataclass(frozen=True)
class NUTSConfig:
    """NUTS with BlackJAX's window adaptation (step size and diagonal mass matrix)."""

    num_warmup: int = 1000
    num_samples: int = 2000
    target_accept: float = 0.8
    max_num_doublings: int = 10

    def __post_init__(self):
        _positive("num_warmup", self.num_warmup)
        _positive("num_samples", self.num_samples)
        _positive("max_num_doublings", self.max_num_doublings)
        if not 0.0 < self.target_accept < 1.0:
            raise ArgumentError(f"target_accept must lie in (0, 1), got {self.target_accept}")


def initial_step_size(num_leapfrog: int) -> float:
    """The authors' initial step size for L leapfrog steps, relative to q's standard deviations.

    REFERENCE.md: per-coordinate initial step sizes = q's standard deviations / (L/4)^2. With the
    standard deviations carried by the inverse mass matrix (equivalent, see ``mcmc.spaces``), the scalar
    step size starts at 1 / (L/4)^2.
    """
    return 1.0 / (num_leapfrog / 4.0) ** 2

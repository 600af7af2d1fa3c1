"""Sampler settings. Defaults follow the authors' code (REFERENCE.md, "Protocol of the authors' code")."""

from __future__ import annotations

from dataclasses import dataclass

from autoreparam.errors import ArgumentError

STEP_SIZE_RULES = ("window", "sign", "dual_averaging")
NUTS_ADAPTATIONS = ("per_chain", "pooled", "pooled_step")
INITIAL_METRICS = ("unit", "gradient", "stiff")
PAPER_L_GRID = (1, 2, 4, 8, 16, 32, 64, 128)


def _positive(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ArgumentError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class HMCConfig:
    """Fixed-L HMC with a diagonal preconditioner and per-chain (and per-space) adaptation.

    ``step_size_rule``:
    - ``"window"`` (default): Stan's windowed adaptation over all ``num_warmup`` steps: dual averaging
      of the step size towards a mean acceptance of ``target_accept`` (0.8) and a diagonal mass
      matrix estimated from the warm-up draws, seeded by q's variances (``mcmc.warmup``).
    - ``"sign"``: the paper's protocol: q's variances as a fixed mass matrix, and the first
      ``adapt_fraction`` of the burn-in steps adapt the step size by ``log s += rate * sign(accept -
      target)`` (002 Appendix C, after Andrieu & Thoms 2008) towards 0.75. The code used 10,000
      burn-in steps with 6,000 adapting and 50,000 samples.
    - ``"dual_averaging"``: as "sign", with dual averaging (Hoffman & Gelman 2014, Section 3.2.1;
      the authors' later code).
    """

    num_warmup: int = 1000
    num_samples: int = 2000
    adapt_fraction: float = 0.6
    step_size_rule: str = "window"
    sign_rate: float = 0.02
    target_accept: float | None = None  # None: 0.8 for "window" (Stan), 0.75 otherwise (the paper)
    divergence_threshold: float = 1000.0
    # Each iteration's step size is s * U(1 - j, 1 + j) (Neal 2011, Section 5.4.2.2): a fixed
    # trajectory length can resonate with a Gaussian direction and stall one chain (radon AZ, CP at
    # L = 32: 0.09 ESS per 1000 gradients without jitter, 7.1 with j = 0.2, measured). None: 0.2 for
    # "window", 0 for the paper's rules.
    step_jitter: float | None = None

    def __post_init__(self):
        _positive("num_warmup", self.num_warmup)
        _positive("num_samples", self.num_samples)
        if self.step_jitter is not None and not 0.0 <= self.step_jitter < 1.0:
            raise ArgumentError(f"step_jitter must lie in [0, 1), got {self.step_jitter}")
        if not 0.0 <= self.adapt_fraction <= 1.0:
            raise ArgumentError(f"adapt_fraction must lie in [0, 1], got {self.adapt_fraction}")
        if self.step_size_rule not in STEP_SIZE_RULES:
            raise ArgumentError(f"step_size_rule must be one of {STEP_SIZE_RULES}, got '{self.step_size_rule}'")
        if self.target_accept is not None and not 0.0 < self.target_accept < 1.0:
            raise ArgumentError(f"target_accept must lie in (0, 1), got {self.target_accept}")

    @property
    def acceptance_target(self) -> float:
        if self.target_accept is not None:
            return self.target_accept
        return 0.8 if self.step_size_rule == "window" else 0.75

    @property
    def jitter(self) -> float:
        if self.step_jitter is not None:
            return self.step_jitter
        return 0.2 if self.step_size_rule == "window" else 0.0

    @property
    def num_adapt(self) -> int:
        return int(round(self.adapt_fraction * self.num_warmup))


@dataclass(frozen=True)
class NUTSConfig:
    """NUTS with Stan's windowed adaptation (step size and diagonal mass matrix).

    ``adaptation``:
    - ``"pooled"`` (default): all chains share one step size, adapted by dual averaging on their mean
      acceptance, and one mass matrix, the variances of all chains' window draws (``mcmc.segments``).
      Vectorised chains then take trajectories of similar length, where per-chain tuning left one
      straggler chain (smaller step size, longer trajectories) that the others waited for at every
      transition. Measured with ``auto`` on six zoo models, 4 and 16 chains
      (``benchmarks/results/pooled_adaptation/``): 1.50x the ESS per second of per-chain tuning in
      geometric mean (0.66x on electric to 3.41x on election '88 with 16 chains).
    - ``"pooled_step"``: one step size for all chains (as ``"pooled"``), a mass matrix per chain.
      Measured and not recommended: 1.40x per-chain tuning in geometric mean against pooled's 1.60x,
      and 0.43x on German credit with 4 chains, where one step size was too large for a chain with a
      poorer mass matrix (``benchmarks/results/pooled_adaptation/README.md``).
    - ``"per_chain"``: each chain adapts its own step size and mass matrix (Stan, NumPyro).
    """

    num_warmup: int = 1000
    num_samples: int = 2000
    target_accept: float = 0.8
    max_num_doublings: int = 10
    adaptation: str = "pooled"
    # Each transition's step size is s * U(1 - j, 1 + j) (Neal 2011, Section 5.4.2.2), per chain.
    step_jitter: float = 0.0
    # The metric of a warm-up that starts without one (``auto``, ``meta``, ``auto``'s CP and NCP
    # alternatives; ``mcmc.segments``). A metric from a variational fit (q's variances) is always kept.
    # - "stiff" (default): the identity, except elements whose 1 / |gradient| at the start is below
    #   ``segments.STIFF_INVERSE_MASS`` (coordinates about 100 times narrower than unit scale) take it.
    #   On electric the warm-up's seconds fell 2.0x to 5.7x; on the ten other zoo models no element is
    #   that stiff and the draws are identical to "unit"'s (benchmarks/results/stiff_metric/).
    # - "unit": the identity (Stan's, NumPyro's).
    # - "gradient": 1 / |gradient| at the start for every element (nutpie's). Measured and not the
    #   default (benchmarks/results/initial_metric/README.md): 1.41x ESS per second on electric and
    #   1.34x on election '88, but 0.75x on German credit and 0.84x on radon ND over 7 seeds, and eight
    #   schools' runs diverged more often (25 against 10 in 7 seeds).
    initial_metric: str = "stiff"

    def __post_init__(self):
        _positive("num_warmup", self.num_warmup)
        _positive("num_samples", self.num_samples)
        _positive("max_num_doublings", self.max_num_doublings)
        if not 0.0 < self.target_accept < 1.0:
            raise ArgumentError(f"target_accept must lie in (0, 1), got {self.target_accept}")
        if not 0.0 <= self.step_jitter < 1.0:
            raise ArgumentError(f"step_jitter must lie in [0, 1), got {self.step_jitter}")
        if self.initial_metric not in INITIAL_METRICS:
            raise ArgumentError(f"initial_metric must be one of {INITIAL_METRICS}, got '{self.initial_metric}'")
        if self.adaptation not in NUTS_ADAPTATIONS:
            raise ArgumentError(f"adaptation must be one of {NUTS_ADAPTATIONS}, got '{self.adaptation}'")


def initial_step_size(num_leapfrog: int) -> float:
    """The authors' initial step size for L leapfrog steps, relative to q's standard deviations.

    REFERENCE.md: per-coordinate initial step sizes = q's standard deviations / (L/4)^2. With the
    standard deviations carried by the inverse mass matrix (equivalent, see ``mcmc.spaces``), the scalar
    step size starts at 1 / (L/4)^2.
    """
    return 1.0 / (num_leapfrog / 4.0) ** 2

"""What every sampler returns: draws in the original coordinates plus exact cost and health counters."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ChainResult:
    """Draws of all chains in the ORIGINAL constrained coordinates, flattened per draw.

    ``draws``: (chains, draws, original_dim), laid out as ``Coordinates.ravel_original``.
    ``grad_evals``: model gradient evaluations per chain in the sampling phase (warm-up apart).
    ``acceptance``, ``step_size``: per chain and per space (two spaces for iHMC).
    ``divergences``: transitions (iterations) with at least one divergent half-step, per chain.
    """

    kernel: str
    draws: np.ndarray = field(repr=False)
    grad_evals: np.ndarray  # (chains,)
    warmup_grad_evals: np.ndarray  # (chains,)
    acceptance: np.ndarray  # (chains, spaces)
    divergences: np.ndarray  # (chains,) in the sampling phase
    warmup_divergences: np.ndarray  # (chains,)
    step_size: np.ndarray  # (chains, spaces)
    num_leapfrog: int | None
    seconds: dict  # compile / warmup / sampling wall time
    draw_stats: dict = field(default_factory=dict, repr=False)  # per-draw (chains, draws) arrays for ArviZ
    # (chains, spaces): divergent half-steps per space in the sampling phase (iHMC: which half diverged)
    space_divergences: np.ndarray | None = None
    inverse_mass: np.ndarray | None = field(default=None, repr=False)  # (chains, spaces, dim) after warm-up

    @property
    def num_chains(self) -> int:
        return int(self.draws.shape[0])

    @property
    def num_draws(self) -> int:
        return int(self.draws.shape[1])

    def grad_evals_per_draw(self) -> np.ndarray:
        return self.grad_evals / self.num_draws

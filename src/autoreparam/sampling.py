"""From variational fits to chains: initial points, preconditioning, and the oracle choice of L.

Between the VI stage and the samplers: every sampler starts from independent draws of the fitted
mean-field q (paper 000 Section 6.2) and is preconditioned by q's variances (the mass matrix; with
Stan's windowed warm-up they only seed it). Fixed-L HMC picks L on short pilot runs, scored so that
chains which disagree are never chosen (``mcmc.oracle``), then runs afresh.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.diagnostics.ess import paper_metric
from autoreparam.diagnostics.masked import diagnostic_views
from autoreparam.diagnostics.standard import standard_diagnostics
from autoreparam.errors import ArgumentError
from autoreparam.mcmc.config import HMCConfig, NUTSConfig
from autoreparam.mcmc.hmc import CycleSampler
from autoreparam.mcmc.nuts import NUTSSampler
from autoreparam.mcmc.oracle import PILOT_MAX_R_HAT, oracle_over_families
from autoreparam.precision import float_dtype
from autoreparam.vi.fits import VIFit

ORACLE_METRICS = ("pooled", "paper")


def draws_from_q(fit: VIFit, num_chains: int, seed: int) -> np.ndarray:
    """Initial positions: independent draws of the fitted mean-field q (paper 000 Section 6.2)."""
    rng = np.random.default_rng(seed)
    return (fit.loc + fit.scale * rng.standard_normal((num_chains, fit.loc.size))).astype(float_dtype())


def pilot_length(num_samples: int) -> int:
    """Draws per chain of a pilot run: an eighth of the final run, at least 100."""
    return max(100, num_samples // 8)


# Below this many iterations per call, the pilots and the final run each get their own HMC program
# (compiling a second program costs seconds; a few dozen calls of a shared one cost milliseconds).
MIN_SHARED_CHUNK = 25


def shared_chunk(num_samples: int, pilot_draws: int) -> int | None:
    """Iterations per call of the one HMC program (``CycleSampler``) that both the pilots
    (``pilot_draws``) and the final run (``num_samples``) can use: their greatest common divisor, or
    None (a program each) when small.

    Measured (`benchmarks/results/hmc_first_call/`, fresh processes, 2 cores): before the final run
    shared the pilots' programs, a first ``infer`` call compiled 4 sampler programs instead of 2;
    eight schools NCP's first call went from 14.8 to 10.9 s and iHMC's from 24.3 to 15.3 s, with the
    same draws bit for bit. Since the warm-up and the draws are one program (46b6e71), it compiles 1,
    0.8 to 2.9 s less.
    """
    chunk = math.gcd(num_samples, pilot_draws)
    return chunk if chunk >= MIN_SHARED_CHUNK else None


def efficiency_score(coords: Coordinates, metric: str):
    """``result -> (ESS per 1000 gradients, s.e., max R-hat)`` under ``metric`` ("pooled" or "paper").

    "pooled": min over elements of ArviZ's rank-normalised bulk ESS, pooled over chains, per 1000
    gradient evaluations of all chains together (no standard error: NaN). "paper": the per-chain
    metric of paper 000 Section 6 with its standard error over chains. R-hat is computed for both.
    """
    if metric not in ORACLE_METRICS:
        raise ArgumentError(f"oracle_metric must be one of {ORACLE_METRICS}, got '{metric}'")

    def score(result):
        views = diagnostic_views(coords.split_original(result.draws), coords.without_density)
        standard = standard_diagnostics(views.standard)
        if metric == "paper":
            m = paper_metric(views.efficiency, result.grad_evals)
            return m.mean, m.se, standard.max_r_hat
        return 1000.0 * standard.min_ess_bulk / float(np.sum(result.grad_evals)), math.nan, standard.max_r_hat

    return score


def leapfrog_families(grid, num_spaces: int) -> list[list]:
    """Oracle candidates: the grid for HMC; for iHMC the same L in both halves, and each half alone at
    L with the other at 1, so that a half which cannot move the chain costs one gradient, not L.

    Measured (8 chains x 2000 draws, pooled bulk ESS per 1000 gradients): on eight schools the
    centred half cannot move in the funnel's neck and (L_cp, L_ncp) = (1, 16) reaches 0.69x NCP
    where equal L reaches 0.47x; on radon MN the non-centred half is the stiff one and (4, 1) reaches
    0.83x CP where (4, 4) reaches 0.68x.
    """
    grid = list(grid)
    if num_spaces == 1 or any(isinstance(L, (tuple, list)) for L in grid):
        return [grid]
    lopsided = [[tuple(L if k == j else 1 for k in range(num_spaces)) for L in grid if L > 1] for j in range(num_spaces)]
    return [[(L,) * num_spaces for L in grid]] + [f for f in lopsided if f]


def sample_hmc(
    coords: Coordinates,
    spaces: list[VIFit],
    config: HMCConfig,
    num_chains: int,
    num_leapfrog,
    grid,
    seed: int,
    metric: str = "pooled",
    patience: int | None = 2,
):
    """HMC (one space) or iHMC (several) from draws of the first space's q, preconditioned by each q.

    ``num_leapfrog="oracle"`` picks L on pilot runs over ``grid`` (``leapfrog_families``) and then
    runs afresh, so the reported run is not the luckiest of the grid.
    """
    params = tuple(f.parameterisation for f in spaces)
    inverse_mass = np.stack([f.scale**2 for f in spaces])
    positions = draws_from_q(spaces[0], num_chains, seed)
    oracle = None
    chunk = None
    if num_leapfrog == "oracle":
        pilot_draws = pilot_length(config.num_samples)
        chunk = shared_chunk(config.num_samples, pilot_draws)
        pilot = CycleSampler(coords, len(params), dataclasses.replace(config, num_samples=pilot_draws),
                             chunk=chunk)
        oracle = oracle_over_families(
            lambda L: pilot.run(params, inverse_mass, positions, L, seed + 7919),
            efficiency_score(coords, metric),
            leapfrog_families(grid, len(params)),
            patience=patience,
            max_r_hat=PILOT_MAX_R_HAT,
            metric=metric,
        )
        num_leapfrog = oracle.best_leapfrog
    chains = CycleSampler(coords, len(spaces), config, chunk=chunk).run(params, inverse_mass, positions, num_leapfrog,
                                                                         seed)
    return chains, oracle


def sample_nuts(coords: Coordinates, fit: VIFit, num_chains: int, config: NUTSConfig, seed: int, progress=None,
                fitted_metric: bool = True):
    """NUTS from draws of q, with q's variances seeding the window adaptation's mass matrix.

    ``fitted_metric=False``: ``fit`` is a start without a fit (unit scales, ``meta.start``); the warm-up's
    first metric then follows ``config.initial_metric`` (``mcmc.segments.metric_bound``).
    """
    sampler = NUTSSampler(coords, config)
    return sampler.run(fit.parameterisation, fit.scale**2, draws_from_q(fit, num_chains, seed), seed, progress=progress,
                       metric_from_gradient=not fitted_metric)

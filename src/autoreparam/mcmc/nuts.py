"""NUTS in any parameterisation, for everyday use: a warm-up and draws, in segments of one compiled program.

The warm-up is Stan's windowed adaptation (a step size and a diagonal inverse mass matrix, seeded
by q's variances when a fit is available; by default one of each shared by all chains, adapted on
all chains' acceptance and draws: ``NUTSConfig.adaptation``), run by ``mcmc.segments`` so that the
warm-up, the draws and every parameterisation of a model share one executable. Gradient
evaluations are the integrator steps BlackJAX reports for every transition.
"""

from __future__ import annotations

import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.chains import ChainResult
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.segments import Chains, SegmentDraws, SegmentSampler, sample_codes, warmup_codes
from autoreparam.precision import float_dtype
from autoreparam.reparam.parameterisation import Parameterisation

# Transitions per call of the compiled program: long enough that a call's overhead is negligible,
# short enough for a live progress bar and for ``auto`` to stop a hopeless candidate early.
SEGMENT_LENGTH = 50


def segment_length(config: NUTSConfig) -> int:
    """``SEGMENT_LENGTH``, or less for runs shorter than one segment (no padding beyond the run)."""
    return max(1, min(SEGMENT_LENGTH, config.num_warmup, config.num_samples))


def chain_result(warm: SegmentDraws, draws: SegmentDraws, chains: Chains, seconds: dict) -> ChainResult:
    """A ``ChainResult`` from a warm-up's transitions and the kept draws.

    Gradient counts are the integrator's steps, plus each chain's first gradient in the warm-up's.
    They leave out one gradient per segment and chain: every segment program starts by evaluating
    the gradient at the chains' positions again (``bj_hmc.init``; carrying it across segments would
    go stale when the data change between calls of the one compiled program). That is 1 per
    ``SEGMENT_LENGTH`` (50) transitions, 0.1% to 0.3% of NUTS's 7 to 15 gradients per transition.
    """
    return ChainResult(
        kernel="nuts",
        draws=draws.draws,
        grad_evals=draws.steps.sum(axis=1).astype(float),
        warmup_grad_evals=warm.steps.sum(axis=1).astype(float) + 1,
        acceptance=draws.accept.mean(axis=1)[:, None],
        divergences=draws.divergent.sum(axis=1),
        warmup_divergences=warm.divergent.sum(axis=1),
        step_size=np.asarray(chains.adapt.step_size)[:, None],
        num_leapfrog=None,
        seconds=seconds,
        draw_stats={"acceptance_rate": draws.accept, "diverging": draws.divergent, "n_steps": draws.steps},
        inverse_mass=np.asarray(chains.adapt.inverse_mass)[:, None, :],
    )


def no_draws(num_chains: int, original_dim: int) -> SegmentDraws:
    """Zero transitions' worth of draws (a phase with nothing left to run), ready to ``join``."""
    return SegmentDraws(np.zeros((num_chains, 0, original_dim), float_dtype()), np.zeros((num_chains, 0), np.int32),
                        np.zeros((num_chains, 0), float_dtype()), np.zeros((num_chains, 0), bool))


def join(parts: list[SegmentDraws], keep: int | None = None) -> SegmentDraws:
    """Concatenate segments' draws along the draw axis, keeping the first ``keep``."""
    joined = SegmentDraws(*(np.concatenate(arrays, axis=1) for arrays in zip(*parts)))
    return joined if keep is None else SegmentDraws(*(a[:, :keep] for a in joined))


class NUTSSampler:
    """NUTS for one model; its one compiled program is shared with every other sampler of the model."""

    def __init__(self, coords: Coordinates, config: NUTSConfig):
        self.coords, self.config = coords, config
        self.segments = SegmentSampler(coords, config, segment_length(config))

    @property
    def num_compilations(self) -> int:
        return self.segments.num_compilations

    def run(self, param: Parameterisation, inverse_mass, init_positions, seed: int, progress=None,
            metric_from_gradient: bool = False) -> ChainResult:
        """Warm up ``init_positions`` (chains, dim) and draw ``config.num_samples`` per chain.

        ``metric_from_gradient``: ``inverse_mass`` is no estimate (a start without a fit); the warm-up's
        first metric then takes elements of 1 / |gradient| at the start as ``config.initial_metric`` says
        (``segments.metric_bound``).
        """
        config = self.config
        before = dict(self.segments.setup_seconds)
        chains = self.segments.start(init_positions, inverse_mass, 1.0, seed)
        chains, warm, warm_seconds = self.segments.run(param, chains, warmup_codes(config.num_warmup),
                                                       progress=progress, metric_from_gradient=metric_from_gradient)
        chains, draws, sample_seconds = self.segments.run(param, chains, sample_codes(config.num_samples),
                                                          progress=progress)
        setup = {k: v - before[k] for k, v in self.segments.setup_seconds.items()}  # starting the chains
        seconds = {
            "compile": warm_seconds["compile"] + sample_seconds["compile"] + setup["compile"],
            "warmup": warm_seconds["run"] + setup["run"],
            "sampling": sample_seconds["run"],
        }
        return chain_result(warm, draws, chains, seconds)

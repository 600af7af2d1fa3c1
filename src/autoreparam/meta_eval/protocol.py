"""What the evaluation runs (META.md): models, methods, and the VI and NUTS settings, all in one place.

Budgeted for a 2-core machine in a few hours (NUTS runs dominate); every number is an argument of
`EvalProtocol`, and ``autoreparam meta evaluate --protocol full`` uses longer chains.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from autoreparam.vi.protocol import VIConfig

# The methods compared, in table order. Fixed centrings, the two learned ones, the two predicted.
METHODS = ("cp", "ncp", "half", "vip", "meta", "meta_vip", "prototype")
METHOD_NAMES = {
    "cp": "CP", "ncp": "NCP", "half": "lambda = 0.5", "vip": "per-model VIP", "meta": "meta (ours)",
    "meta_vip": "meta-initialised VIP", "prototype": "paper 003 prototype",
}
ZOO = ("eight_schools", "radon_az", "radon_in", "radon_ma", "radon_mn", "radon_mo", "radon_nd", "radon_pa",
       "german_credit", "election88", "electric")
FUNNEL_Y = (-20.0, -10.0, 0.0, 10.0, 20.0)
FUNNEL_SIGMA = (0.1, 5.075, 10.05, 15.025, 20.0)
HELD_OUT_SPLITS = ("interpolation", "extrapolation", "held_out_family")
SECTION3_Q = tuple(float(q) for q in np.logspace(-2, 2, 9))
SECTION3_SIGMA_MU = (0.3, 1.0, 3.0)


@dataclass(frozen=True)
class NUTSRuns:
    """NUTS runs per (model, method): chains, warm-up, draws, seeds, tree depth."""

    num_chains: int = 4
    num_warmup: int = 500
    num_samples: int = 1000
    seeds: tuple[int, ...] = (0,)
    max_num_doublings: int = 8  # caps a bad parameterisation's cost at 255 gradients per draw

    def to_dict(self) -> dict:
        return {"num_chains": self.num_chains, "num_warmup": self.num_warmup, "num_samples": self.num_samples,
                "seeds": list(self.seeds), "max_num_doublings": self.max_num_doublings}


# One vmapped program fits every centring of a model (5 fixed, VIP from 3 starts, VIP from the
# prediction): 2,000 Adam steps of 64 draws at 3 learning rates, final ELBO from 4,096 fresh draws.
EVAL_VI = VIConfig(num_steps=2000, num_samples=64, learning_rates=(0.02, 0.05, 0.1), final_num_samples=4096,
                   progress=False)
FUNNEL_VI = EVAL_VI


@dataclass(frozen=True)
class EvalProtocol:
    name: str = "cpu"
    funnel_nuts: NUTSRuns = field(default_factory=lambda: NUTSRuns(num_samples=2000))
    model_nuts: NUTSRuns = field(default_factory=NUTSRuns)
    held_out_per_split: int = 3
    timing_samples: int = 1000  # draws per chain of the end-to-end timing runs (ar.infer)


PROTOCOLS = {
    "cpu": EvalProtocol(),
    "tiny": EvalProtocol(name="tiny", funnel_nuts=NUTSRuns(num_warmup=100, num_samples=100),
                         model_nuts=NUTSRuns(num_warmup=100, num_samples=100), held_out_per_split=1,
                         timing_samples=100),
    # What a loaded 2-core machine finishes in under an hour (META.md of this branch): shorter chains,
    # one held-out model per split, shorter timing runs.
    "short": EvalProtocol(name="short", funnel_nuts=NUTSRuns(num_warmup=300, num_samples=700),
                          model_nuts=NUTSRuns(num_warmup=300, num_samples=700), held_out_per_split=1,
                          timing_samples=500),
    # The same runs with three held-out models per split (nine): one per split is thin evidence.
    "short_3": EvalProtocol(name="short_3", funnel_nuts=NUTSRuns(num_warmup=300, num_samples=700),
                            model_nuts=NUTSRuns(num_warmup=300, num_samples=700), held_out_per_split=3,
                            timing_samples=500),
    "full": EvalProtocol(name="full", funnel_nuts=NUTSRuns(num_warmup=1000, num_samples=10000, seeds=(0, 1, 2)),
                         model_nuts=NUTSRuns(num_warmup=1000, num_samples=2000, seeds=(0, 1)),
                         held_out_per_split=15, timing_samples=2000),
}

"""Benchmark protocols: the paper's, a 2-core CPU default that finishes in about an hour, a CI smoke test."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from autoreparam.errors import ArgumentError
from autoreparam.mcmc.config import PAPER_L_GRID
from autoreparam.vi.protocol import PAPER as PAPER_VI
from autoreparam.vi.protocol import VIConfig

PAPER_MODELS = (
    "eight_schools",
    "radon_az",
    "radon_in",
    "radon_ma",
    "radon_mn",
    "radon_mo",
    "radon_nd",
    "radon_pa",
    "german_credit",
    "election88",
    "electric",
)
# "vip" and "vip_discrete" follow the paper (VIP started at lambda = 0.5); "vip_ms" is our default VIP,
# started from lambda in {0.05, 0.5, 0.95} (vi/protocol.py explains why).
HMC_METHODS = ("cp", "ncp", "ihmc", "vip", "vip_discrete", "vip_ms")
# nutpie_cp runs where the optional peers extra is installed (`make peers`) and is skipped elsewhere.
PEERS = ("numpyro_nuts_cp", "numpyro_nuts_ncp", "numpyro_vip", "nutpie_cp")
# Our NUTS cells (cells.py): NUTS on the best method, our VIP then NUTS, and ``infer(method="auto")``.
EXTRAS = ("nuts", "vip_nuts", "auto")


@dataclass(frozen=True)
class Protocol:
    """Everything a benchmark run depends on; written into every result and the report."""

    name: str
    models: tuple[str, ...]
    num_chains: int
    num_warmup: int
    num_samples: int
    adapt_fraction: float
    leapfrog_grid: tuple[int, ...]
    # Stop the L grid after this many successive drops in ESS/gradient (None: run the whole grid).
    grid_patience: int | None
    seeds: tuple[int, ...]
    vi: VIConfig = PAPER_VI  # the "vip" column is the paper's VIP; "vip_ms" uses our default starts
    sites: str = "all"  # the paper reparameterises every Normal latent
    step_size_rule: str = "sign"  # the paper's rule; "dual_averaging" adapts faster in short warm-ups
    # NUTS cells: ours on the best method, auto, and NumPyro's peers ("what a user would do today").
    nuts_chains: int = 4
    nuts_warmup: int = 1000
    nuts_samples: int = 1000
    peer_svi_steps: int = 5000
    keep_draws: int = 1000  # thinned draws per cell kept for figures

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["vi"] = {k: v for k, v in d["vi"].items() if k != "progress"}
        return d


PROTOCOLS = {
    "paper": Protocol(
        name="paper",
        models=PAPER_MODELS,
        num_chains=100,
        num_warmup=10_000,
        num_samples=50_000,
        adapt_fraction=0.6,
        leapfrog_grid=PAPER_L_GRID,
        grid_patience=None,
        seeds=(0,),
    ),
    "cpu": Protocol(
        name="cpu",
        models=PAPER_MODELS,
        num_chains=16,
        num_warmup=1000,
        num_samples=2000,
        adapt_fraction=0.6,
        leapfrog_grid=PAPER_L_GRID,
        grid_patience=2,
        seeds=(0,),
        vi=VIConfig(num_steps=1500, num_samples=64, final_num_samples=1024, vip_starts=(0.5,)),
    ),
    "tiny": Protocol(
        name="tiny",
        models=("eight_schools",),
        num_chains=4,
        num_warmup=60,
        num_samples=80,
        adapt_fraction=0.6,
        leapfrog_grid=(1, 2),
        grid_patience=None,
        seeds=(0,),
        vi=VIConfig(num_steps=60, num_samples=8, learning_rates=(0.1,), final_num_samples=32, vip_starts=(0.5,)),
        step_size_rule="dual_averaging",  # 36 adapting steps are too few for the sign rule
        nuts_chains=2,
        nuts_warmup=60,
        nuts_samples=60,
        peer_svi_steps=50,
        keep_draws=40,
    ),
}


def get_protocol(name: str, **overrides) -> Protocol:
    if name not in PROTOCOLS:
        raise ArgumentError(f"unknown protocol '{name}'; choose one of {', '.join(PROTOCOLS)}")
    protocol = PROTOCOLS[name]
    overrides = {k: v for k, v in overrides.items() if v is not None}
    return dataclasses.replace(protocol, **overrides) if overrides else protocol

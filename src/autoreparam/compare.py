"""Side-by-side comparison of CP-HMC, NCP-HMC, iHMC and VIP-HMC on one model (paper 000 Section 6).

One VIP run provides the CP, NCP and VIP fits for every method; each method then gets its own L by
oracle on pilot runs and a fresh run, reported as ESS per 1000 gradient evaluations.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from autoreparam.coordinates import Coordinates
from autoreparam.errors import ArgumentError
from autoreparam.initial import initial_values
from autoreparam.mcmc.config import PAPER_L_GRID, HMCConfig
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model
from autoreparam.result import Diagnostics, compute_diagnostics
from autoreparam.sampling import sample_hmc
from autoreparam.vi.protocol import VIConfig
from autoreparam.vi.vip import VIPResult, run_vip

SPACES = {"cp": ("cp",), "ncp": ("ncp",), "ihmc": ("cp", "ncp"), "vip": ("vip",)}
LABELS = {"cp": "CP-HMC", "ncp": "NCP-HMC", "ihmc": "iHMC", "vip": "VIP-HMC"}


@dataclass(frozen=True)
class Comparison:
    vip: VIPResult = field(repr=False)
    diagnostics: dict[str, Diagnostics] = field(repr=False)
    seconds: dict[str, float]

    def table(self) -> str:
        """ESS per 1000 gradients (pooled bulk ESS, and the paper's per-chain metric), L, R-hat, divergences."""
        head = f"{'method':<9}{'pooled':>9}{'per chain (paper)':>20}{'L':>7}{'min bulk ESS':>14}{'max R-hat':>11}"
        lines = [head + f"{'divergences':>16}  trust"]
        for method, d in self.diagnostics.items():
            mean, se = d.ess_per_1000_grads
            L = d.num_leapfrog if isinstance(d.num_leapfrog, int) else ",".join(map(str, d.num_leapfrog))
            div = str(d.divergences)
            if d.space_divergences is not None and len(d.space_divergences) > 1:
                div = "/".join(str(int(n)) for n in d.space_divergences) + " (halves)"
            lines.append(
                f"{LABELS[method]:<9}{d.pooled_ess_per_1000_grads:>9.2f}{mean:>12.2f} +- {se:<5.2f}{L:>7}"
                f"{d.standard.min_ess_bulk:>14.0f}{d.standard.max_r_hat:>11.3f}{div:>16}  "
                f"{'ok' if d.health.trustworthy else 'NO'}"
            )
        return "\n".join(lines)

    def report(self) -> str:
        elbo = "\n".join(
            f"  {label:<13} ELBO {fit.elbo:10.3f} +- {fit.elbo_se:.3f}" for label, fit in self.vip.fits.items()
        )
        health = "\n".join(f"  {LABELS[method]}: {line}" for method, d in self.diagnostics.items() for line in d.health.lines())
        return (
            f"ESS per 1000 gradient evaluations, min over elements (pooled over chains; per chain as in the paper)\n"
            f"{self.table()}\n" + (f"\n{health}\n" if health else "")
            + f"\nvariational fits:\n{elbo}\n\nlambda found by VIP (1 = centred, 0 = non-centred):\n"
            f"{self.vip.vip.parameterisation.describe()}"
        )


def compare(
    model: Callable,
    *model_args,
    methods: Sequence[str] = ("cp", "ncp", "ihmc", "vip"),
    num_chains: int = 4,
    num_warmup: int = 1000,
    num_samples: int = 2000,
    seed: int = 0,
    sites="default",
    num_leapfrog="oracle",
    leapfrog_grid: Sequence[int] = PAPER_L_GRID,
    step_size_rule: str = "window",
    oracle_metric: str = "pooled",
    vi_config: VIConfig | None = None,
    progress: bool = True,
    **model_kwargs,
) -> Comparison:
    """Every method of ``methods`` on one model, each at its own oracle L, from one VIP run's fits.

    Defaults as ``infer``'s (windowed adaptation, L scored by pooled ESS with R-hat checked);
    ``step_size_rule="sign", oracle_metric="paper"`` is the paper's protocol.
    """
    unknown = [m for m in methods if m not in SPACES]
    if unknown:
        raise ArgumentError(f"unknown method '{unknown[0]}' for compare; choose from {', '.join(SPACES)}")
    seconds = {}
    start = time.perf_counter()
    structure = analyse_model(model, *model_args, seed=seed, **model_kwargs)
    coords = Coordinates(model, model_args, model_kwargs, select_sites(structure, sites))
    init = initial_values(model, model_args, model_kwargs, structure.names, seed=seed)
    vi_config = dataclasses.replace(vi_config or VIConfig(), progress=progress)
    vip = run_vip(coords, init, vi_config, discrete=False, seed=seed)
    seconds["variational"] = time.perf_counter() - start
    config = HMCConfig(num_warmup=num_warmup, num_samples=num_samples, step_size_rule=step_size_rule)
    diagnostics = {}
    for method in methods:
        start = time.perf_counter()
        spaces = [vip.fits[label] for label in SPACES[method]]
        chains, oracle = sample_hmc(
            coords, spaces, config, num_chains, num_leapfrog, leapfrog_grid, seed, metric=oracle_metric
        )
        samples = coords.split_original(chains.draws)
        diagnostics[method] = compute_diagnostics(samples, chains, oracle, SPACES[method])
        seconds[method] = time.perf_counter() - start
    return Comparison(vip, diagnostics, seconds)


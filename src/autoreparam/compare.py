"""Side-by-side comparison of parameterisations on one model.

Two kinds:

- ``kernel="nuts"`` (the default, what a user runs): NUTS in CP, NCP and VIP's lambda, beside
  ``auto``. One light variational fit (``vi.protocol.FAST``) gives the CP, NCP and VIP starting
  points and VIP's lambda; every method shares one compiled NUTS program (``mcmc.segments``), so
  the comparison costs little more than the sampling itself.
- ``kernel="hmc"``: the paper's comparison (000 Section 6): CP-HMC, NCP-HMC, iHMC and VIP-HMC,
  fixed-L HMC each at its own oracle L on pilot runs, from one VIP run under the paper's
  variational protocol.

Both report ESS per 1000 gradient evaluations (pooled bulk ESS, and the paper's per-chain metric),
R-hat, divergences, whether the result can be trusted, and the seconds of each method.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from autoreparam.auto import run_auto
from autoreparam.coordinates import Coordinates
from autoreparam.errors import ArgumentError
from autoreparam.initial import initial_values
from autoreparam.mcmc.config import PAPER_L_GRID, HMCConfig, NUTSConfig
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model
from autoreparam.result import Diagnostics, compute_diagnostics, search_gradients
from autoreparam.sampling import sample_hmc, sample_nuts
from autoreparam.validation import check_call, check_counts, check_target_accept
from autoreparam.vi.protocol import FAST, VIConfig, check_config
from autoreparam.vi.vip import VIPResult, run_vip

SPACES = {"cp": ("cp",), "ncp": ("ncp",), "ihmc": ("cp", "ncp"), "vip": ("vip",), "auto": ("auto",)}
METHODS = {"nuts": ("cp", "ncp", "vip", "auto"), "hmc": ("cp", "ncp", "ihmc", "vip")}
LABELS = {"cp": "CP", "ncp": "NCP", "ihmc": "iHMC", "vip": "VIP", "auto": "auto"}


@dataclass(frozen=True)
class Comparison:
    vip: VIPResult = field(repr=False)
    diagnostics: dict[str, Diagnostics] = field(repr=False)
    seconds: dict[str, float]
    kernel: str = "hmc"
    decisions: dict = field(default_factory=dict)
    # auto's gradients after the warm-up beyond its draws' (pilots, candidates, redraws, run-ons)
    search_gradients: dict = field(default_factory=dict)

    def label(self, method: str) -> str:
        suffix = "" if method in ("auto", "ihmc") else f"-{self.kernel.upper()}"
        return LABELS[method] + suffix

    def table(self) -> str:
        """ESS per 1000 gradients (pooled bulk ESS, and the paper's per-chain metric), L, R-hat, divergences."""
        head = f"{'method':<9}{'pooled':>9}{'per chain (paper)':>21}{'L':>7}{'min bulk ESS':>14}{'max R-hat':>11}"
        lines = [head + f"{'divergences':>16}{'seconds':>9}  trust"]
        for method, d in self.diagnostics.items():
            mean, se = d.ess_per_1000_grads
            L = d.num_leapfrog
            L = "-" if L is None else (L if isinstance(L, int) else ",".join(map(str, L)))
            div = str(d.divergences)
            if d.space_divergences is not None and len(d.space_divergences) > 1:
                div = "/".join(str(int(n)) for n in d.space_divergences) + " (halves)"
            lines.append(
                f"{self.label(method):<9}{d.pooled_ess_per_1000_grads:>9.2f}{mean:>12.2f} +- {se:<5.2f}{L:>7}"
                f"{d.standard.min_ess_bulk:>14.0f}{d.standard.max_r_hat:>11.3f}{div:>16}"
                f"{self.seconds.get(method, float('nan')):>9.1f}  {'ok' if d.health.trustworthy else 'NO'}"
            )
        return "\n".join(lines)

    def report(self) -> str:
        elbo = "\n".join(
            f"  {label:<13} ELBO {fit.elbo:10.3f} +- {fit.elbo_se:.3f}" for label, fit in self.vip.fits.items()
        )
        health = "\n".join(f"  {self.label(m)}: {line}" for m, d in self.diagnostics.items() for line in d.health.lines())
        why = "".join(f"\nauto: {text}\n" for text in self.decisions.values())
        search = "".join(
            f"\n{self.label(m)}: its search after the warm-up ran {n} gradient evaluations beyond its draws', which "
            "the table's ESS per gradient leaves out (as the paper leaves out HMC's oracle over L)\n"
            for m, n in self.search_gradients.items() if n > 0)
        compile_note = (f"\nseconds: warm-up and sampling (with auto's search); compiling took "
                        f"{self.seconds['compile']:.1f} s in all, in whichever method first needed each program\n"
                        if "compile" in self.seconds else "")
        return (
            "ESS per 1000 gradient evaluations, min over elements (pooled over chains; per chain as in the paper)\n"
            f"{self.table()}\n" + compile_note + (f"\n{health}\n" if health else "") + why + search
            + f"\nvariational fits:\n{elbo}\n\nlambda found by VIP (1 = centred, 0 = non-centred):\n"
            f"{self.vip.vip.parameterisation.describe()}"
        )


def compare(
    model: Callable,
    /,
    *model_args,
    kernel: str = "nuts",
    methods: Sequence[str] | None = None,
    num_chains: int = 4,
    num_warmup: int = 1000,
    num_samples: int = 2000,
    seed: int = 0,
    sites="default",
    num_leapfrog="oracle",
    leapfrog_grid: Sequence[int] = PAPER_L_GRID,
    step_size_rule: str = "window",
    oracle_metric: str = "pooled",
    target_accept: float | None = None,
    vi_config: VIConfig | None = None,
    progress: bool = True,
    **model_kwargs,
) -> Comparison:
    """Every method of ``methods`` (default: ``METHODS[kernel]``) on one model, side by side.

    HMC defaults as ``infer``'s (windowed adaptation, L scored by pooled ESS with R-hat checked);
    ``step_size_rule="sign", oracle_metric="paper"`` is the paper's protocol. ``target_accept``: as
    ``infer``'s, for every method (0.8 by default; 0.95 against divergences).
    """
    if kernel not in METHODS:
        raise ArgumentError(f"unknown kernel '{kernel}' for compare; choose from {', '.join(METHODS)}")
    if isinstance(methods, str):
        raise ArgumentError(f"methods must be a list of method names, e.g. methods=['{methods}'], not a string")
    methods = tuple(METHODS[kernel] if methods is None else methods)
    allowed = METHODS[kernel] + (("auto",) if kernel == "hmc" else ())
    unknown = [m for m in methods if m not in allowed]
    if unknown:
        raise ArgumentError(f"method '{unknown[0]}' is not compared with kernel='{kernel}'; choose from {', '.join(allowed)}")
    if not methods or len(set(methods)) != len(methods):
        raise ArgumentError(f"methods must name at least one method, each once; got {list(methods)}")
    # infer's checks of the counts, the seed and the model, before anything is fitted or compiled
    check_counts(num_chains, num_warmup, num_samples, num_leapfrog)
    check_target_accept(target_accept)
    check_config(vi_config, "vi_config")
    model_args, model_kwargs, seed = check_call(model, model_args, model_kwargs, seed, entry=compare)
    seconds = {}
    start = time.perf_counter()
    structure = analyse_model(model, *model_args, seed=seed, **model_kwargs)
    coords = Coordinates(model, model_args, model_kwargs, select_sites(structure, sites))
    rewritable = bool(select_sites(structure, "all").sites)  # for the advice on a flagged run
    init, free_init = initial_values(model, model_args, model_kwargs, structure.names, seed=seed, unconstrained=True)
    vi_config = dataclasses.replace(vi_config or (FAST if kernel == "nuts" else VIConfig()), progress=progress)
    vip = run_vip(coords, init, vi_config, discrete=False, seed=seed)
    seconds["variational"] = time.perf_counter() - start
    hmc_config = HMCConfig(num_warmup=num_warmup, num_samples=num_samples, step_size_rule=step_size_rule,
                           target_accept=target_accept)
    nuts_config = NUTSConfig(num_warmup=num_warmup, num_samples=num_samples,
                             target_accept=0.8 if target_accept is None else float(target_accept))
    diagnostics, decisions, search = {}, {}, {}
    seconds["compile"] = 0.0
    for method in methods:
        start = time.perf_counter()
        oracle, labels, standard = None, SPACES[method], None
        if method == "auto":
            # auto starts at the unconstrained origin, as `infer(method="auto")` does (`initial.ORIGIN`).
            outcome = run_auto(coords, None, None, num_chains, nuts_config, seed, vi_config=vi_config)
            chains, labels, decisions[method] = outcome.chains, (outcome.label,), outcome.reason
            standard = outcome.standard
            compiled = outcome.timing.get("compile", 0.0)
            search[method] = search_gradients(outcome.gradients, int(np.sum(chains.grad_evals)))
        elif kernel == "nuts":
            chains = sample_nuts(coords, vip.fits[method], num_chains, nuts_config, seed)
        else:
            spaces = [vip.fits[label] for label in labels]
            chains, oracle = sample_hmc(
                coords, spaces, hmc_config, num_chains, num_leapfrog, leapfrog_grid, seed, metric=oracle_metric
            )
        if method != "auto":
            compiled = chains.seconds.get("compile", 0.0) + sum(
                r.seconds.get("compile", 0.0) for r in (oracle.runs.values() if oracle is not None else ()))
        samples = coords.split_original(chains.draws)
        diagnostics[method] = compute_diagnostics(samples, chains, oracle, labels, method, rewritable,
                                                  coords.without_density, standard)
        # Compilation apart: programs shared by several methods compile in whichever runs first, which
        # charged CP 7.5 s and NCP 0.02 s in one comparison (found in review).
        seconds["compile"] += compiled
        seconds[method] = time.perf_counter() - start - compiled
    return Comparison(vip, diagnostics, seconds, kernel, decisions, search)

"""VIP: the variationally inferred parameterisation (paper 000 Section 5.2, Algorithm 2, lines 1-8).

VIP maximises the ELBO jointly over a mean-field normal q and the centring lambda of every element of
every reparameterised latent. We run it beside the fixed CP and NCP fits under the same protocol, so the
result can say when VIP lost (a local optimum, a NaN) and recommend the best fixed parameterisation
instead (the paper's own advice, 000 Section 6.3). A "discrete" variant rounds lambda to 0/1 and refits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.errors import ArgumentError
from autoreparam.initial import check_init_strategy, initial_values
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import ReparamPlan, select_sites
from autoreparam.reparam.sites import analyse_model
from autoreparam.vi.fits import Learned, VIFit, fit_or_retry, fit_parameterisations
from autoreparam.validation import check_call, warn_if_unrolled
from autoreparam.vi.protocol import VIConfig, check_config

# VIP must beat the best fixed ELBO unless it is worse by more than this many standard errors.
_TOLERANCE_SE = 2.0


@dataclass(frozen=True)
class VIPResult:
    """VIP beside CP and NCP: lambda per site and element, ELBOs with standard errors, q, a recommendation."""

    plan: ReparamPlan
    coords: Coordinates = field(repr=False)
    fits: dict[str, VIFit] = field(repr=False)
    recommended: str
    reason: str
    timing: dict = field(repr=False)

    @property
    def vip(self) -> VIFit:
        return self.fits["vip"]

    @property
    def lam(self) -> dict[str, np.ndarray]:
        """Learned lambda per site (1 = centred, 0 = non-centred); the scale centring in separate form."""
        return self.vip.parameterisation.lam

    @property
    def best(self) -> VIFit:
        return self.fits[self.recommended]

    def summary(self) -> str:
        lines = ["parameterisation  ELBO (+- s.e.)         learning rate"]
        for label, fit in self.fits.items():
            mark = "  <- recommended" if label == self.recommended else ""
            lines.append(f"{label:<17} {fit.elbo:>10.3f} +- {fit.elbo_se:<8.3f}  {fit.learning_rate:<6g}{mark}")
        lines.append(f"recommendation: {self.recommended} ({self.reason})")
        lines.append("lambda per site (1 = centred, 0 = non-centred):")
        lines.append(self.vip.parameterisation.describe())
        return "\n".join(lines)


def recommend(fits: dict[str, VIFit]) -> tuple[str, str]:
    """The fit to sample in: VIP unless its ELBO is below the best fixed fit's by more than the error allows."""
    fixed = {k: f for k, f in fits.items() if k in ("cp", "ncp") and f.ok}
    vip = fits["vip"]
    if not fixed:
        return ("vip", "the fixed fits failed") if vip.ok else ("cp", "every fit failed; falling back to the model as written")
    best_label, best = max(fixed.items(), key=lambda kv: kv[1].elbo)
    if not vip.ok:
        return best_label, f"VIP's ELBO is not finite; {best_label.upper()} has the best fixed ELBO"
    se = math.hypot(vip.elbo_se, best.elbo_se)
    if vip.elbo < best.elbo - _TOLERANCE_SE * se:
        return best_label, (
            f"VIP's ELBO {vip.elbo:.2f} is below {best_label.upper()}'s {best.elbo:.2f} by more than "
            f"{_TOLERANCE_SE:g} s.e. (a local optimum)"
        )
    if vip.elbo >= best.elbo:
        return "vip", f"VIP's ELBO {vip.elbo:.2f} >= best fixed ({best_label.upper()}) {best.elbo:.2f}"
    return "vip", (f"VIP's ELBO {vip.elbo:.2f} is within {_TOLERANCE_SE:g} s.e. of the best fixed "
                   f"({best_label.upper()}) {best.elbo:.2f}")


def run_vip(
    coords: Coordinates,
    init_values: dict,
    config: VIConfig,
    *,
    form: str = "tied",
    discrete: bool = True,
    seed: int = 0,
    starts: tuple | None = None,
) -> VIPResult:
    """VIP, CP and NCP fits (and the rounded refit) on already-built coordinates.

    ``starts``: VIP's initial centrings (default ``config.vip_starts``); a `Parameterisation` starts
    from per-element values (``infer(method="vip", init="meta")`` passes the meta-learned prediction).
    """
    if form not in ("tied", "separate"):
        raise ArgumentError(f"form must be 'tied' or 'separate', got '{form}'")
    plan = coords.plan
    targets = {
        "cp": Parameterisation.centred(plan),
        "ncp": Parameterisation.non_centred(plan),
        "vip": Learned(tuple(config.vip_starts if starts is None else starts)),
    }
    # One finite fit is enough (recommend() falls back to it); only when all fail are they fitted again.
    fits, timing = fit_or_retry(coords, targets, init_values, config, tied=form == "tied", seed=seed,
                                label="VIP + CP + NCP")
    timings = {"vip": timing}
    if discrete and fits["vip"].ok:
        rounded = fits["vip"].parameterisation.rounded()
        refit, timing = fit_parameterisations(
            coords, {"vip_discrete": rounded}, init_values, config, seed=seed + 1, label="discrete VIP"
        )
        fits.update(refit)
        timings["vip_discrete"] = timing
    recommended, reason = recommend(fits)
    return VIPResult(plan, coords, fits, recommended, reason, timings)


def fit_vip(
    model: Callable,
    /,
    *model_args,
    sites: str | Sequence[str] = "default",
    form: str = "tied",
    config: VIConfig | None = None,
    discrete: bool = True,
    init_strategy: Callable | None = None,
    seed: int = 0,
    **model_kwargs,
) -> VIPResult:
    """Learn a partial centring of ``model``'s latents by maximising the ELBO (VIP).

    ``sites``: "default" (latents with a latent-dependent prior), "all" (every location-scale latent,
    as in the paper) or a list of names. ``form``: "tied" (one lambda, ICML paper) or "separate" (a for
    the location, b for the scale, workshop paper). ``config``: the VI protocol (paper's by default).
    """
    model_args, model_kwargs, seed = check_call(model, model_args, model_kwargs, seed, entry=fit_vip)
    check_config(config)
    config = VIConfig() if config is None else config
    structure = analyse_model(model, *model_args, seed=seed, **model_kwargs)
    check_init_strategy(init_strategy, structure.latents)
    warn_if_unrolled(structure.names)
    plan = select_sites(structure, sites)
    coords = Coordinates(model, model_args, model_kwargs, plan)
    init = initial_values(model, model_args, model_kwargs, structure.names, init_strategy, seed)
    return run_vip(coords, init, config, form=form, discrete=discrete, seed=seed)

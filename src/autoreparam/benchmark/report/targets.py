"""Targets computed from the numbers: each PASS, FAIL or NOT MEASURED, with the numbers behind it.

The claims are those of paper 000 Section 6 (VIP-HMC at least as good as the better fixed
parameterisation, and about 4x better on German credit, Figures 5-6) and the project's own goals
against NumPyro. "Within error" means not below by more than two standard errors of the difference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from autoreparam.benchmark.report.oracle import Estimate, best_fixed, ratio

PASS, FAIL, NOT_MEASURED = "PASS", "FAIL", "NOT MEASURED"
GERMAN = "german_credit"


@dataclass(frozen=True)
class Check:
    model: str
    verdict: str
    detail: str


@dataclass(frozen=True)
class Target:
    claim: str
    checks: tuple[Check, ...]

    @property
    def verdict(self) -> str:
        verdicts = {c.verdict for c in self.checks}
        if FAIL in verdicts:
            return FAIL
        if not self.checks or NOT_MEASURED in verdicts:
            return NOT_MEASURED
        return PASS


def fmt(e: Estimate) -> str:
    if not e.ok:
        return "n/a"
    return f"{e.mean:.3g}" + (f" ± {e.se:.2g}" if math.isfinite(e.se) else "")


def _zero_if_nan(x: float) -> float:
    return x if math.isfinite(x) else 0.0


DISAGREEING_FIXED = "CP-HMC and NCP-HMC ran, but their chains disagree (R-hat > 1.01) at every L: no fixed denominator"


def _missing(choices, model, method: str, label: str) -> str:
    """Why a comparison with the better fixed parameterisation has no numbers."""
    if (model, method) not in choices:
        return f"no {label} result"
    if any((model, m) in choices for m in ("cp", "ncp")):
        return DISAGREEING_FIXED
    return "no fixed-parameterisation result"


def _disagreeing(choice, label: str) -> str | None:
    """Why a method's number fails a target: its chains disagree at every L (the † of the tables), so its
    per-chain metric overstates, while a fixed parameterisation's chains agree (the callers check that
    first) (found in review: such a VIP-HMC passed against CP)."""
    if choice is not None and not choice.agreeing:
        return (f"{label} {fmt(choice.estimate)} (L={choice.num_leapfrog}): its chains disagree (R-hat > 1.01) "
                "at every L")
    return None


def _vip_vs_fixed(choices, model, method="vip") -> Check:
    vip, best = choices.get((model, method)), best_fixed(choices, model)
    if vip is None or best is None:
        return Check(model, NOT_MEASURED, _missing(choices, model, method, "VIP-HMC"))
    if (why := _disagreeing(vip, "VIP-HMC")) is not None:
        return Check(model, FAIL, why)
    a, b = vip.estimate, best.estimate
    slack = 2 * math.hypot(_zero_if_nan(a.se), _zero_if_nan(b.se))
    ok = a.mean >= b.mean - slack
    return Check(
        model, PASS if ok else FAIL,
        f"VIP-HMC {fmt(a)} (L={vip.num_leapfrog}) vs {best.method.upper()} {fmt(b)} (L={best.num_leapfrog}); "
        f"allowed shortfall 2 s.e. = {slack:.3g}",
    )


def _german_factor(choices, models, method="vip") -> Check:
    if GERMAN not in models or (GERMAN, method) not in choices:
        return Check(GERMAN, NOT_MEASURED, "German credit not in the results")
    if best_fixed(choices, GERMAN) is None:
        return Check(GERMAN, NOT_MEASURED, _missing(choices, GERMAN, method, "VIP-HMC"))
    best = best_fixed(choices, GERMAN)
    if (why := _disagreeing(choices[GERMAN, method], "VIP-HMC")) is not None:
        return Check(GERMAN, FAIL, why)
    r = ratio(choices[GERMAN, method].estimate, best.estimate)
    if not r.ok:
        return Check(GERMAN, NOT_MEASURED, f"no ratio: VIP-HMC {fmt(choices[GERMAN, method].estimate)}, "
                     f"{best.method.upper()} {fmt(best.estimate)}")
    lo, hi = r.interval()
    interval = f" (95%: {lo:.3g} to {hi:.3g})" if math.isfinite(lo) else ""
    return Check(
        GERMAN, PASS if r.mean >= 4 else FAIL,
        f"VIP / best fixed ({best.method.upper()} {fmt(best.estimate)}) = {fmt(r)}{interval}",
    )


def _ours_vs_numpyro_vip(flows, model) -> Check:
    # Like for like: our VIP fit then NUTS against NumPyro's SVI-learned centring then NUTS.
    ours, theirs = flows["vip_nuts"], flows["numpyro_vip"]
    if not (ours.per_gradient.ok and theirs.per_gradient.ok and ours.per_second.ok and theirs.per_second.ok):
        return Check(model, NOT_MEASURED, f"missing numbers ({ours.failed or theirs.failed or 'not run'})")
    ok = ours.per_gradient.mean >= theirs.per_gradient.mean and ours.per_second.mean >= theirs.per_second.mean
    return Check(
        model, PASS if ok else FAIL,
        f"per 1000 grads {fmt(ours.per_gradient)} vs {fmt(theirs.per_gradient)}; "
        f"per second {fmt(ours.per_second)} vs {fmt(theirs.per_second)}",
    )


def _ihmc_factor_two(choices, model) -> Check:
    ihmc, best = choices.get((model, "ihmc")), best_fixed(choices, model)
    if ihmc is None or best is None:
        return Check(model, NOT_MEASURED, _missing(choices, model, "ihmc", "iHMC"))
    if (why := _disagreeing(ihmc, "iHMC")) is not None:
        return Check(model, FAIL, why)
    ok = ihmc.estimate.mean >= 0.5 * best.estimate.mean
    return Check(
        model, PASS if ok else FAIL,
        f"iHMC {fmt(ihmc.estimate)} vs {best.method.upper()} {fmt(best.estimate)} "
        f"(half: {0.5 * best.estimate.mean:.3g})",
    )


def _auto_ahead_per_second(flows, model) -> Check:
    auto, cp = flows["auto"].per_second, flows["numpyro_nuts_cp"].per_second
    if not (auto.ok and cp.ok):
        return Check(model, NOT_MEASURED, "no auto or no numpyro_nuts_cp result")
    return Check(
        model, PASS if auto.mean > cp.mean else FAIL,
        f"auto {fmt(auto)} ESS/s vs NumPyro NUTS CP {fmt(cp)} ({auto.mean / cp.mean:.3g}x)",
    )


def _auto_near_best_nuts(flows, model, measure: str) -> Check:
    """auto against the better of NumPyro's NUTS on the centred and the non-centred model: the better
    fixed parameterisation sampled by the same kind of sampler."""
    unit = {"per_gradient": "ESS/1000 grads", "per_second": "ESS/s"}[measure]
    auto, cp, ncp = (getattr(flows[k], measure) for k in ("auto", "numpyro_nuts_cp", "numpyro_nuts_ncp"))
    fixed = [e for e in (cp, ncp) if e.ok]
    if not (auto.ok and fixed):
        return Check(model, NOT_MEASURED, "no auto or no NumPyro NUTS result")
    best = max(fixed, key=lambda e: e.mean)
    return Check(
        model, PASS if auto.mean >= 0.8 * best.mean else FAIL,
        f"auto {fmt(auto)} {unit} vs NumPyro NUTS CP {fmt(cp)}, NCP {fmt(ncp)} (80% of the better: {0.8 * best.mean:.3g})",
    )


def evaluate(choices: dict, flows: dict, models, missing=()) -> list[Target]:
    """All targets; ``flows`` is ``{model: workflows(...)}``; ``missing``: the protocol's models that have no
    cell, each a NOT MEASURED check of every target "on every model"."""
    models = tuple(models)
    not_run = tuple(Check(m, NOT_MEASURED, "no cell: not run") for m in missing)
    targets = [
        Target(
            "VIP-HMC >= the better of CP-HMC / NCP-HMC within error (ESS per 1000 gradients), on every model",
            tuple(_vip_vs_fixed(choices, m) for m in models),
        ),
        Target("VIP-HMC >= 4x the better fixed parameterisation on German credit", (_german_factor(choices, models),)),
        Target(
            "our VIP-HMC (3 starts) >= the better of CP-HMC / NCP-HMC within error, on every model",
            tuple(_vip_vs_fixed(choices, m, "vip_ms") for m in models),
        ),
        Target(
            "our VIP-HMC (3 starts) >= 4x the better fixed parameterisation on German credit",
            (_german_factor(choices, models, "vip_ms"),),
        ),
        Target(
            "our VIP + NUTS >= NumPyro's VIP workflow (SVI centring + NUTS) per gradient and per second, on every model",
            tuple(_ours_vs_numpyro_vip(flows[m], m) for m in models),
        ),
        Target(
            "iHMC within a factor of two of the better fixed parameterisation, on every model",
            tuple(_ihmc_factor_two(choices, m) for m in models),
        ),
        Target(
            "auto ahead of NumPyro's NUTS on the user's centred model in ESS per second, all phases counted, on every model",
            tuple(_auto_ahead_per_second(flows[m], m) for m in models),
        ),
        Target(
            "auto within 20% of the better fixed parameterisation (NumPyro NUTS on the centred or the non-centred "
            "model) in ESS per 1000 gradients, on every model",
            tuple(_auto_near_best_nuts(flows[m], m, "per_gradient") for m in models),
        ),
        Target(
            "auto within 20% of the better fixed parameterisation in ESS per second, all phases counted, on every model",
            tuple(_auto_near_best_nuts(flows[m], m, "per_second") for m in models),
        ),
    ]
    return [Target(t.claim, t.checks + not_run) if t.claim.endswith("on every model") else t for t in targets]


def targets_markdown(targets: list[Target]) -> str:
    lines = []
    for t in targets:
        lines.append(f"- **{t.verdict}**: {t.claim}")
        lines.extend(f"  - {c.verdict}: `{c.model}`: {c.detail}" for c in t.checks)
    return "\n".join(lines)

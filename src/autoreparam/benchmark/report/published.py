"""Published numbers (REFERENCE.md "Published results") side by side with ours.

ICML paper 000 Section 6 gives German credit in our units (ESS per 1000 gradients). The workshop
paper 004 gives eight schools, German credit and radon by state in "ESS per leapfrog step" units
that are not ours, so only ratios to the better fixed parameterisation are compared there.
"""

from __future__ import annotations

import math

from autoreparam.benchmark.report.oracle import MISSING, Estimate, best_fixed, ratio
from autoreparam.benchmark.report.targets import fmt

METHODS = ("cp", "ncp", "ihmc", "vip")

# ESS per 1000 gradient evaluations, mean and s.e. (ICML paper text).
ICML = {"german_credit": {"cp": (1.2, 0.2), "ncp": (1.3, 0.2), "ihmc": (3.0, 0.2), "vip": (5.6, 0.6)}}

# ESS per leapfrog step, 5 trials (workshop tables); radon has no standard errors.
_RADON = {
    "mn": (798, 340, 1495, 1144),
    "in": (1034, 75, 590, 865),
    "pa": (425, 43, 410, 816),
    "mo": (427, 16, 233, 416),
    "nd": (2840, 187, 2421, 3273),
    "ma": (5796, 179, 6696, 5551),
    "az": (3644, 100, 2472, 3875),
}
WORKSHOP = {
    "eight_schools": {"cp": (92, 4), "ncp": (3475, 849), "ihmc": (3879, 281), "vip": (4986, 660)},
    "german_credit": {"cp": (64, 21), "ncp": (35, 15), "ihmc": (101, 32), "vip": (115, 12)},
    **{f"radon_{s}": {m: (v, math.nan) for m, v in zip(METHODS, row)} for s, row in _RADON.items()},
}


def _estimates(table: dict) -> dict[str, Estimate]:
    return {m: Estimate(float(mean), float(se), 5) for m, (mean, se) in table.items()}


def _ratios(values: dict[str, Estimate]) -> tuple[Estimate, Estimate]:
    """VIP / better fixed and iHMC / better fixed."""
    fixed = [values[m] for m in ("cp", "ncp") if m in values and values[m].ok]
    if not fixed:
        return MISSING, MISSING
    best = max(fixed, key=lambda e: e.mean)
    return ratio(values.get("vip", MISSING), best), ratio(values.get("ihmc", MISSING), best)


def _ours(choices: dict, model: str) -> dict[str, Estimate]:
    return {m: choices[model, m].estimate for m in METHODS if (model, m) in choices}


def _ours_ratios(choices: dict, model: str) -> tuple[Estimate, Estimate]:
    best = best_fixed(choices, model)
    if best is None:
        return MISSING, MISSING
    ours = _ours(choices, model)
    return ratio(ours.get("vip", MISSING), best.estimate), ratio(ours.get("ihmc", MISSING), best.estimate)


def published_markdown(choices: dict, models, data_notes: dict) -> str:
    """Two tables (absolute numbers where the units match, ratios otherwise) and the data notes."""
    models = [m for m in models if m in WORKSHOP or m in ICML]
    if not models:
        return "None of the models with published numbers (eight schools, German credit, radon) is in these results."
    lines = [
        "ICML paper (same units as ours: ESS per 1000 gradient evaluations, mean ± s.e.):",
        "",
        "| Model | source | CP-HMC | NCP-HMC | iHMC | VIP-HMC |",
        "|---|---|---|---|---|---|",
    ]
    for model in [m for m in models if m in ICML]:
        pub, ours = _estimates(ICML[model]), _ours(choices, model)
        lines.append(f"| {model} | published | " + " | ".join(fmt(pub[m]) for m in METHODS) + " |")
        lines.append(f"| {model} | ours | " + " | ".join(fmt(ours.get(m, MISSING)) for m in METHODS) + " |")
    if not any(m in ICML for m in models):
        lines.append("| (German credit not in these results) | | | | | |")
    lines += [
        "",
        "Workshop paper (ESS per leapfrog step, not our units: compare the ratios to the better of CP / NCP, "
        "not the absolute values):",
        "",
        "| Model | published CP / NCP / iHMC / VIP | published VIP / best fixed | ours VIP / best fixed "
        "| published iHMC / best fixed | ours iHMC / best fixed |",
        "|---|---|---|---|---|---|",
    ]
    for model in [m for m in models if m in WORKSHOP]:
        pub = _estimates(WORKSHOP[model])
        raw = " / ".join(f"{pub[m].mean:g}" for m in METHODS)
        pub_vip, pub_ihmc = _ratios(pub)
        our_vip, our_ihmc = _ours_ratios(choices, model)
        lines.append(f"| {model} | {raw} | {fmt(pub_vip)} | {fmt(our_vip)} | {fmt(pub_ihmc)} | {fmt(our_ihmc)} |")
    lines += [
        "",
        "Our data handling differs from the original code's (REFERENCE.md, \"Quirks of the original code\"), "
        "so even the ratios need not agree. Each model's note, as recorded in its cells:",
        "",
    ]
    lines += [f"- `{m}`: {data_notes.get(m, '(no data note recorded)')}" for m in models]
    return "\n".join(lines)

"""Markdown tables: the main comparison (paper 000 Section 6, Figures 5-6 as numbers), the peers,
the protocol and the failed cells."""

from __future__ import annotations

import math

import numpy as np

from autoreparam.benchmark.report.collect import HMC_METHODS, METHOD_LABELS, Collected, per_chain
from autoreparam.benchmark.report.oracle import best_fixed, pooled, ratio
from autoreparam.benchmark.report.targets import fmt


# Marks a cell whose chains disagree (R-hat > 1.01): its per-chain ESS means nothing.
DISAGREE = "†"
DISAGREE_NOTE = (
    f"{DISAGREE}: the chains disagree (max R-hat > 1.01) at every L of the grid that ran (the grid stops "
    "early), so the paper's per-chain metric overstates this method; it is shown at its best L, never used "
    "as a \"best fixed\" denominator, and a ratio over it is marked the same (a target comparing it with a "
    "fixed parameterisation whose chains agree fails)."
)


def _row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _header(names) -> list[str]:
    return [_row(names), _row(["---"] * len(names))]


def _method_cell(collected: Collected, choices: dict, model: str, method: str) -> str:
    choice = choices.get((model, method))
    if choice is None:
        reasons = collected.failures(model, "hmc", method)
        return f"failed: {reasons[0]}" if reasons else "not run"
    mark = "" if choice.agreeing else f" {DISAGREE}"
    return f"{fmt(choice.estimate)} (L={choice.num_leapfrog}){mark}"


def _nuts_cell(collected: Collected, model: str) -> str:
    cells = collected.cells("nuts", model)
    if not cells:
        reasons = collected.failures(model, "nuts")
        return f"failed: {reasons[0]}" if reasons else "not run"
    on = ", ".join(sorted({str(r.get("method", "?")).removeprefix("nuts_") for r in cells}))
    return f"{fmt(pooled(np.concatenate([per_chain(r) for r in cells])))} (on {on})"


def main_table(collected: Collected, choices: dict) -> str:
    """Rows: models; columns: each HMC method at its oracle L, NUTS on the best, and two ratios."""
    names = ["Model"] + [METHOD_LABELS[m] for m in HMC_METHODS] + [
        "NUTS on best", "VIP / best fixed", "VIP 3 starts / best fixed", "iHMC / best fixed"
    ]
    lines = _header(names)
    for model in collected.models:
        best = best_fixed(choices, model)
        ratios = []
        for method in ("vip", "vip_ms", "ihmc"):
            if best is None or (model, method) not in choices:
                ratios.append("n/a")
                continue
            r = ratio(choices[model, method].estimate, best.estimate)
            # A numerator whose chains disagree at every L overstates, as its cell's † says.
            mark = "" if choices[model, method].agreeing else " †"
            ratios.append(f"{fmt(r)} (vs {best.method.upper()}){mark}")
        cells = [_method_cell(collected, choices, model, m) for m in HMC_METHODS]
        lines.append(_row([f"`{model}`"] + cells + [_nuts_cell(collected, model)] + ratios))
    return "\n".join(lines)


def leapfrog_table(collected: Collected, choices: dict) -> str:
    """The seed-averaged metric at every L, so that the oracle's pick can be checked by eye."""
    grid = sorted({L for c in choices.values() for L in c.mean_by_leapfrog})
    lines = _header(["Model", "Method"] + [f"L={L}" for L in grid])
    for (model, method), choice in choices.items():
        values = [choice.mean_by_leapfrog.get(L) for L in grid]
        text = [
            "—" if v is None
            else (f"**{v:.3g}**" if L == choice.num_leapfrog else f"{v:.3g}")
            + (DISAGREE if L in choice.disagreeing_leapfrogs else "")
            for L, v in zip(grid, values)
        ]
        lines.append(_row([f"`{model}`", METHOD_LABELS[method]] + text))
    return "\n".join(lines)


def _per_second(e) -> str:
    return fmt(e) if e.ok else "n/a"


def peers_table(model: str, flows: dict) -> str:
    """One model's workflows, then the two ratios the targets read."""
    lines = _header(["Workflow", "ESS / 1000 grads", "min bulk ESS / s (all phases)", "total s", "note"])
    for flow in flows.values():
        if flow.failed:
            status = "not run" if flow.failed == "not run" else f"failed: {flow.failed}"
            lines.append(_row([flow.label, status, "", "", ""]))
            continue
        seconds = f"{flow.seconds.mean:.3g}" if flow.seconds.ok else "n/a"
        lines.append(_row([flow.label, fmt(flow.per_gradient), _per_second(flow.per_second), seconds, flow.note]))
    auto_vs_cp = ratio(flows["auto"].per_second, flows["numpyro_nuts_cp"].per_second)
    vip_vs_numpyro = ratio(flows["vip_nuts"].per_gradient, flows["numpyro_vip"].per_gradient)
    vip_vs_numpyro_s = ratio(flows["vip_nuts"].per_second, flows["numpyro_vip"].per_second)
    lines += [
        "",
        f"- auto / numpyro_nuts_cp, ESS per second: {fmt(auto_vs_cp)}",
        f"- our VIP + NUTS / numpyro_vip: ESS per 1000 gradients {fmt(vip_vs_numpyro)}, "
        f"ESS per second {fmt(vip_vs_numpyro_s)}",
    ]
    return "\n".join(lines)


def _flatten(prefix: str, value, out: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    else:
        out[prefix] = value


def _value(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, (list, tuple)):
        return ", ".join(f"{x:.4g}" if isinstance(x, float) else str(x) for x in v) or "(none)"
    return str(v)


def mapping_table(mapping: dict, key: str = "setting") -> str:
    flat: dict = {}
    _flatten("", mapping, flat)
    lines = _header([key, "value"])
    lines += [_row([f"`{k}`", _value(v)]) for k, v in sorted(flat.items())]
    return "\n".join(lines)


def failed_list(collected: Collected) -> str:
    missing = [f"- `{m}`: no cell; the protocol names it but it did not run (rerun the benchmark to continue)"
               for m in collected.missing_models]
    missing += [f"- `{m}`: no cell for seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}; its numbers "
                "are over the other seeds (rerun the benchmark to continue)" for m, seeds in collected.missing_seeds]
    if not collected.failed and not missing:
        return "No cell failed."
    return "\n".join(missing + [f"- `{key}`: {reason}" for key, reason in collected.failed])


def elbo_table(collected: Collected) -> str:
    """ELBO of each variational fit per model (mean over seeds), the lower panel of Figure 6."""
    labels = ("cp", "ncp", "vip", "vip_discrete", "vip_ms")
    lines = _header(["Model"] + [f"ELBO {lab}" for lab in labels] + ["recommended"])
    for model in collected.models:
        # vip_ms (our VIP, several starts) is fitted in a cell of its own ("vi_ms").
        cells = collected.cells("vi", model) + collected.cells("vi_ms", model)
        if not cells:
            lines.append(_row([f"`{model}`"] + ["n/a"] * len(labels) + [""]))
            continue
        values = []
        for lab in labels:
            xs = [((r.get("fits") or {}).get(lab) or {}).get("elbo") for r in cells]
            xs = [x for x in xs if x is not None and math.isfinite(x)]
            values.append(f"{sum(xs) / len(xs):.4g}" if xs else "n/a")
        recommended = ", ".join(sorted({str(r.get("recommended")) for r in cells if "recommended" in r}))
        lines.append(_row([f"`{model}`"] + values + [recommended]))
    return "\n".join(lines)

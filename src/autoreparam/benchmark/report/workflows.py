"""What a user pays end to end: ESS per gradient and per second of each workflow on one model.

Workflows: our ``ar.infer(method="auto")``, our NUTS in the parameterisation whose HMC did best,
our VIP-HMC at its oracle L, NumPyro's peers (``numpyro_nuts_cp``, ``numpyro_nuts_ncp``,
``numpyro_vip``) and nutpie on the PyMC port of the centred model (``nutpie_cp``). Per second is
the smallest bulk ESS (ArviZ) over all elements divided by every phase's seconds. Auto and the
peers time themselves (``ess_bulk_per_second``). The harness does not, for NUTS-on-best and
VIP-HMC, so their seconds are summed here: the seed's variational fits (all
of them: CP, NCP, VIP, discrete VIP) plus the cell's own phases; VIP-HMC also pays the compilation of
the single-space HMC program, which the harness times only in the first cell that builds it. The
grid search over L and over methods (the "oracle") is not counted for either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from autoreparam.benchmark.report.collect import Collected, number, per_chain, seconds_total
from autoreparam.benchmark.report.oracle import MISSING, Estimate, OracleChoice, pooled

PEER_LABELS = {
    "auto": "our auto (`ar.infer(method=\"auto\")`)",
    "nuts_best": "our NUTS on the best method",
    "vip_hmc": "our VIP-HMC (oracle L)",
    "vip_nuts": "our VIP, then NUTS (`ar.infer(method=\"vip\", kernel=\"nuts\")`, protocol's VI)",
    "numpyro_nuts_cp": "NumPyro NUTS, centred",
    "numpyro_nuts_ncp": "NumPyro NUTS, non-centred",
    "numpyro_vip": "NumPyro VIP (LocScaleReparam + SVI, then NUTS)",
    "nutpie_cp": "nutpie NUTS, centred (PyMC port)",
}


@dataclass(frozen=True)
class Workflow:
    """One workflow's numbers on one model, over seeds."""

    name: str
    per_gradient: Estimate  # ESS per 1000 gradient evaluations (pooled chains)
    per_second: Estimate  # min bulk ESS per second, all phases counted (over seeds)
    seconds: Estimate  # total seconds (over seeds)
    note: str = ""
    failed: str = ""

    @property
    def label(self) -> str:
        return PEER_LABELS.get(self.name, self.name)


def _summarise(name: str, records: list[dict], failures: list[str], per_second, seconds, note: str = "") -> Workflow:
    if not records:
        reason = "; ".join(sorted(set(failures))) or "not run"
        return Workflow(name, MISSING, MISSING, MISSING, failed=reason)
    chains = np.concatenate([per_chain(r) for r in records])
    return Workflow(
        name,
        pooled(chains),
        pooled([per_second(r) for r in records]),
        pooled([seconds(r) for r in records]),
        note=note,
    )


def _rate(ess: float, seconds: float) -> float:
    return ess / seconds if math.isfinite(seconds) and seconds > 0 else math.nan


def _vi_seconds(collected: Collected, model: str, seed, kind: str = "vi") -> float:
    """The seconds of the seed's fits: ``vi`` (the four single-start fits) or ``vi_ms`` (VIP's starts)."""
    cells = [r for r in collected.cells(kind, model) if r.get("seed") == seed]
    return seconds_total(cells[0]) if cells else math.nan


def _compile_seconds(collected: Collected, model: str, seed) -> float:
    """The single-space HMC program's compilation, paid once per model and seed (the max over cells)."""
    values = [
        number((r.get("seconds") or {}).get("compile"))
        for r in collected.cells("hmc", model)
        if r.get("seed") == seed and r.get("method") != "ihmc"
    ]
    values = [v for v in values if math.isfinite(v)]
    return max(values) if values else 0.0


def _own_seconds(record: dict) -> float:
    seconds = record.get("seconds") or {}
    return float(np.nansum([number(seconds.get(k)) for k in ("warmup", "sampling")]))


def workflows(collected: Collected, model: str, vip_choice: OracleChoice | None) -> dict[str, Workflow]:
    """Every workflow of ``model``, keyed as in ``PEER_LABELS``."""
    out = {}
    auto = collected.cells("auto", model)
    chosen = ", ".join(sorted({str(r.get("chosen", "?")) for r in auto}))
    out["auto"] = _summarise(
        "auto", auto, collected.failures(model, "auto"),
        lambda r: number(r.get("ess_bulk_per_second")), seconds_total, note=f"chose {chosen}" if auto else "",
    )

    nuts = collected.cells("nuts", model)

    def nuts_seconds(r):
        seconds = seconds_total(r) + _vi_seconds(collected, model, r.get("seed"))
        if r.get("method") == "nuts_vip_ms":  # it sampled in the multi-start fit, a fit of its own
            seconds += _vi_seconds(collected, model, r.get("seed"), "vi_ms")
        return seconds

    methods = ", ".join(sorted({str(r.get("method", "?")).removeprefix("nuts_") for r in nuts}))
    out["nuts_best"] = _summarise(
        "nuts_best", nuts, collected.failures(model, "nuts"),
        lambda r: _rate(number(r.get("min_ess_bulk")), nuts_seconds(r)), nuts_seconds,
        note=f"on {methods}" if nuts else "",
    )

    keys = set(vip_choice.keys) if vip_choice else set()
    vip = [r for r in collected.cells("hmc", model, "vip") if r.get("key") in keys]

    def vip_seconds(r):
        seed = r.get("seed")
        return _vi_seconds(collected, model, seed) + _compile_seconds(collected, model, seed) + _own_seconds(r)

    note = f"L = {vip_choice.num_leapfrog}" if vip_choice else ""
    vip_workflow = _summarise(
        "vip_hmc", vip, collected.failures(model, "hmc", "vip"),
        lambda r: _rate(number(r.get("min_ess_bulk")), vip_seconds(r)), vip_seconds, note=note,
    )
    if vip_choice is not None and vip:  # per gradient: the oracle estimate, as in the main table
        vip_workflow = Workflow("vip_hmc", vip_choice.estimate, vip_workflow.per_second, vip_workflow.seconds, note)
    out["vip_hmc"] = vip_workflow

    vip_nuts = collected.cells("vip_nuts", model)
    used = sorted({r["fit_used"] for r in vip_nuts if r.get("fit_used")})
    out["vip_nuts"] = _summarise(
        "vip_nuts", vip_nuts, collected.failures(model, "vip_nuts"),
        lambda r: number(r.get("ess_bulk_per_second")), seconds_total,
        note=f"sampled in {', '.join(used)}" if used else "",
    )
    for peer in ("numpyro_nuts_cp", "numpyro_nuts_ncp", "numpyro_vip", "nutpie_cp"):
        out[peer] = _summarise(
            peer, collected.cells("peer", model, peer), collected.failures(model, "peer", peer),
            lambda r: number(r.get("ess_bulk_per_second")), seconds_total,
        )
    return out

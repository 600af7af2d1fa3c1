"""Benchmark records -> tidy per-kind views (paper 000 Section 6; the inputs of every table and figure).

A cell is one JSON record of ``ResultStore``; a cell that carries ``"failed": reason`` has no
metrics and is listed, never dropped silently. NaN and inf were stored as null: ``number`` turns
them back into NaN so that arithmetic never meets ``None``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autoreparam.benchmark.store import ResultStore

HMC_METHODS = ("cp", "ncp", "ihmc", "vip", "vip_discrete", "vip_ms")
METHOD_LABELS = {
    "cp": "CP-HMC",
    "ncp": "NCP-HMC",
    "ihmc": "iHMC",
    "vip": "VIP-HMC",
    "vip_discrete": "discrete VIP-HMC",
    "vip_ms": "VIP-HMC, 3 starts (ours)",
}


def number(value) -> float:
    """A JSON value as a float; null, missing or non-numeric values become NaN."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        return math.nan
    return out


def per_chain(record: dict) -> np.ndarray:
    """The cell's per-chain ESS per 1000 gradients, finite values only."""
    values = np.array([number(v) for v in (record.get("ess_per_1000_grads") or {}).get("per_chain") or []])
    return values[np.isfinite(values)]


def cell_mean(record: dict) -> float:
    return number((record.get("ess_per_1000_grads") or {}).get("mean"))


def seconds_total(record: dict) -> float:
    """The record's ``seconds.total`` if present, else the sum of its phases (nested dicts skipped)."""
    seconds = record.get("seconds") or {}
    if "total" in seconds:
        return number(seconds["total"])
    values = [number(v) for v in seconds.values() if not isinstance(v, dict)]
    return float(np.nansum(values)) if values else math.nan


@dataclass(frozen=True)
class Collected:
    """Every record of a results folder, with the few things read from all of them."""

    root: Path
    store: ResultStore
    records: tuple[dict, ...]
    models: tuple[str, ...]
    protocol: dict
    versions: tuple[dict, ...]
    data_notes: dict
    failed: tuple[tuple[str, str], ...]  # (key, reason)
    missing_models: tuple[str, ...] = ()  # in the protocol, without a single cell (not run yet)
    missing_seeds: tuple[tuple[str, tuple], ...] = ()  # (model, seeds of the protocol it has no cell for)

    def cells(self, kind: str, model: str | None = None, method: str | None = None, ok: bool = True) -> list[dict]:
        """Records of one kind (optionally one model / method); ``ok`` drops failed cells."""
        return [
            r
            for r in self.records
            if r.get("kind") == kind
            and (model is None or r.get("model") == model)
            and (method is None or r.get("method") == method)
            and not (ok and "failed" in r)
        ]

    def failures(self, model: str, kind: str, method: str | None = None) -> list[str]:
        return [
            str(r["failed"])
            for r in self.cells(kind, model, method, ok=False)
            if "failed" in r
        ]


def collect(results_dir) -> Collected:
    """Read every cell under ``results_dir``; models in the protocol's order, then any others."""
    store = ResultStore(results_dir)
    records = tuple(store.records())
    protocols = [r["protocol"] for r in records if isinstance(r.get("protocol"), dict)]
    protocol = protocols[0] if protocols else {}
    # Passes into one folder may name other models and seeds (``runner.ADDITIVE_FIELDS``): what was planned
    # is every pass's, not the first record's alone (a second pass's models went unnamed; found in review).
    planned = list(dict.fromkeys(m for p in protocols for m in p.get("models", [])))
    planned_seeds = sorted({s for p in protocols for s in p.get("seeds", [])})
    ordered = [m for m in planned if any(r.get("model") == m for r in records)]
    others = sorted({r["model"] for r in records if r.get("model") and r["model"] not in ordered})
    versions = []
    for r in records:
        v = r.get("versions")
        if isinstance(v, dict) and v not in versions:
            versions.append(v)
    notes = {}
    for r in records:
        if r.get("model") and r.get("data_note") and r["model"] not in notes:
            notes[r["model"]] = r["data_note"]
    failed = tuple((r.get("key", "?"), str(r["failed"])) for r in records if "failed" in r)
    return Collected(
        root=Path(results_dir),
        store=store,
        records=records,
        models=tuple(ordered + others),
        protocol=protocol,
        versions=tuple(versions),
        data_notes=notes,
        failed=failed,
        # A partial run once reported its targets "on every model" over the models it had reached.
        missing_models=tuple(m for m in planned if m not in ordered),
        missing_seeds=_missing_seeds(records, ordered, planned_seeds),
    )


def _missing_seeds(records, models, seeds) -> tuple[tuple[str, tuple], ...]:
    """Models with cells for only some of the planned seeds: their means are over fewer seeds than the
    others' (a stopped run), which the report must say."""
    missing = []
    for model in models:
        ran = {r.get("seed") for r in records if r.get("model") == model}
        absent = tuple(s for s in seeds if s not in ran)
        if absent:
            missing.append((model, absent))
    return tuple(missing)

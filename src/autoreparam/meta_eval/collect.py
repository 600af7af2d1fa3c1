"""Read evaluation results and compute every target of META.md (one function per target)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autoreparam.errors import ArgumentError
from autoreparam.meta_eval.protocol import ZOO


def _load(path: Path) -> dict:
    """One task's result; a damaged file reads as a failed task naming what to do (it was a bare
    JSONDecodeError that stopped the report; found in review)."""
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return {"error": f"the result file is damaged ({error}); delete it and rerun `autoreparam meta evaluate` "
                         "with the same options: it runs that task again"}


def _read(folder: Path) -> list[dict]:
    if not folder.exists():
        return []
    rows = [_load(p) for p in sorted(folder.glob("*.json"))]
    return [r for r in rows if "error" not in r]


def errors(folder: Path) -> list[dict]:
    """Tasks that failed, with their error message."""
    if not folder.exists():
        return []
    paths = sorted(folder.glob("*.json"))
    return [{"file": str(p.name), "error": r["error"]} for p, r in zip(paths, map(_load, paths)) if "error" in r]


def machine_names(where: dict[str, dict[str, int]]) -> list[str]:
    """The distinct machines of `Results.machines`' answer, in the order its parts name them."""
    return list(dict.fromkeys(m for counts in where.values() for m in counts))


@dataclass
class Results:
    root: Path
    protocol: dict
    section3: list
    robustness: list
    funnel: list
    held_out: list
    zoo: list
    timing: list
    seeds: dict  # group ("funnel", "held_out", "zoo") -> rows of the ELBO-only tasks of other networks

    @classmethod
    def load(cls, root) -> "Results":
        root = Path(root)

        def rows(name):
            path = root / name
            return json.loads(path.read_text())["rows"] if path.exists() else []

        if not (root / "protocol.json").exists():
            raise ArgumentError(f"{root} is not an evaluation folder (no protocol.json): give the folder "
                                "`autoreparam meta evaluate --out` wrote")
        protocol = json.loads((root / "protocol.json").read_text())
        zoo = sorted(_read(root / "zoo"), key=lambda r: ZOO.index(r["name"]) if r["name"] in ZOO else 99)
        timing = sorted(_read(root / "timing"), key=lambda r: ZOO.index(r["name"]) if r["name"] in ZOO else 99)
        seeds = {g: _read(root / "seeds" / g) for g in ("funnel", "held_out", "zoo")}
        return cls(root, protocol, rows("section3.json"), rows("robustness.json"), _read(root / "funnel"),
                   _read(root / "held_out"), zoo, timing, seeds)

    def machines(self) -> dict[str, dict[str, int]]:
        """Part -> {machine: number of its tasks that ran there}, from each task's ``ran_on``.

        Rows written before tasks recorded their machine are counted under protocol.json's ``machine``.
        """
        checks = [json.loads((self.root / name).read_text()) for name in ("section3.json", "robustness.json")
                  if (self.root / name).exists()]
        parts = {"checks": checks, "funnel": self.funnel, "held_out": self.held_out, "zoo": self.zoo,
                 "timing": self.timing, "seeds": [r for rows in self.seeds.values() for r in rows]}
        out = {}
        for part, rows in parts.items():
            counts: dict[str, int] = {}
            for row in rows:
                machine = row.get("ran_on", self.protocol.get("machine", "?"))
                counts[machine] = counts.get(machine, 0) + 1
            if counts:
                out[part] = counts
        return out

    @property
    def networks(self) -> list[str]:
        return list(self.protocol.get("networks", {"meta": None}))

    @property
    def other_networks(self) -> list[str]:
        return list(self.protocol.get("other_networks", {}))


def ess(row: dict, method: str) -> float:
    """Mean over seeds of ESS per 1000 gradients (NaN if absent)."""
    runs = row.get("nuts", {}).get(method, [])
    values = [r["ess_per_1000"] for r in runs if r.get("ess_per_1000") is not None]
    return float(np.mean(values)) if values else float("nan")


def best_fixed(row: dict) -> tuple[str, float]:
    values = {k: row["elbo"].get(k) for k in ("cp", "ncp")}
    values = {k: v for k, v in values.items() if v is not None}
    label = max(values, key=values.get)
    return label, values[label]


def regret(row: dict, method: str) -> float:
    """ELBO of ``method`` minus the best fixed ELBO (positive: better than both CP and NCP)."""
    value = row["elbo"].get(method)
    return float("nan") if value is None else value - best_fixed(row)[1]


def section3_error(rows: list, label: str) -> float:
    return float(np.mean([abs(r[label] - r["best"]) for r in rows if label in r])) if rows else float("nan")


def lambda_of(row: dict, method: str, site: str = "x") -> float:
    value = row["lambda"].get(method, {}).get(site)
    return float(np.mean(value)) if isinstance(value, list) else float(value["mean"]) if value else float("nan")

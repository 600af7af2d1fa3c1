"""The Electric Company experiment (Gelman & Hill 2006, ARM ch. 9 and 23).

192 classrooms in 96 treated/control pairs, grades 1-4; y is the post-test score. Read from
stan-dev's ``electric.data.json``, which equals field by field the Python dict the original code
imported (SOURCE.md). Indices are 1-based there; we convert them to 0-based. ``quirks=True`` keeps
them 1-based, as the original code used them (see `indexing`): pair 96 then gets no intercept,
grade 4 no treatment effect and a unit noise scale, and pairs of grade 4 a prior mean of 0.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autoreparam.errors import DataError
from autoreparam.models.data.cache import read_parsed
from autoreparam.models.data.indexing import group_index

_SOURCE = "electric/electric.data.json"


@dataclass(frozen=True, eq=False)
class ElectricData:
    pair: np.ndarray  # (N,) int32 pair of each classroom
    grade: np.ndarray  # (N,) int32 grade of each classroom
    grade_pair: np.ndarray  # (num_pairs,) int32 grade of each pair
    treatment: np.ndarray  # (N,) float64 0/1
    y: np.ndarray  # (N,) float64 post-test score
    num_pairs: int
    num_grades: int

    @property
    def num_classrooms(self) -> int:
        return int(self.y.shape[0])


def load_electric(data_dir: str | os.PathLike | None = None, *, quirks: bool = False) -> ElectricData:
    """Classrooms' pair, grade, treatment and score (hash-checked)."""
    arrays = read_parsed("electric", _parse_electric_json, data_dir)
    num_pairs, num_grades = int(arrays["n_pair"]), int(arrays["n_grade"])
    return ElectricData(
        pair=group_index(_SOURCE, "pair", arrays["pair"], num_pairs, quirks=quirks),
        grade=group_index(_SOURCE, "grade", arrays["grade"], num_grades, quirks=quirks),
        grade_pair=group_index(_SOURCE, "grade_pair", arrays["grade_pair"], num_grades, quirks=quirks),
        treatment=np.array(arrays["treatment"], dtype=np.float64),
        y=np.array(arrays["y"], dtype=np.float64),
        num_pairs=num_pairs,
        num_grades=num_grades,
    )


def _parse_electric_json(path: Path) -> dict[str, np.ndarray]:
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    n, n_pair = int(raw["N"]), int(raw["n_pair"])
    if int(raw["n_grade_pair"]) != int(raw["n_grade"]):
        raise DataError(f"{path}: n_grade_pair and n_grade differ")
    arrays = {key: np.asarray(raw[key], dtype=np.int64) for key in ("pair", "grade", "treatment")}
    arrays["grade_pair"] = np.asarray(raw["grade_pair"], dtype=np.int64)
    arrays["y"] = np.asarray(raw["y"], dtype=np.float64)
    for key, value in arrays.items():
        expected = (n_pair,) if key == "grade_pair" else (n,)
        if value.shape != expected:
            raise DataError(f"{path}: field {key!r} has shape {value.shape}, expected {expected}")
    if not np.all(np.isin(arrays["treatment"], (0, 1))):
        raise DataError(f"{path}: field 'treatment' must be 0/1")
    arrays["n_pair"] = np.asarray(n_pair)
    arrays["n_grade"] = np.asarray(int(raw["n_grade"]))
    return arrays

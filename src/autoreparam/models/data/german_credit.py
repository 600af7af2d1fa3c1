"""German credit (UCI Statlog, Hofmann 1994): the categorical file ``german.data``.

Design matrix as in the original autoreparam code (``models.py:load_german_credit_data``) and
REFERENCE.md: a column of ones, the 7 integer attributes standardised with ddof=1 (pandas'
``std``), then each of the 13 categorical attributes one-hot encoded with every level present,
levels in sorted (string) order as ``np.unique`` gives them: D = 1 + 7 + 54 = 62 columns.
The label is 1 for "good" credit (code 1): 700 of 1000.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autoreparam.errors import DataError
from autoreparam.models.data.cache import read_parsed

# 0-based columns of german.data holding integers; the other 13 of the first 20 are categorical.
NUMERIC_COLUMNS = (1, 4, 7, 10, 12, 15, 17)
_NUM_ATTRIBUTES = 20


@dataclass(frozen=True, eq=False)
class GermanCreditData:
    x: np.ndarray  # (1000, 62) design matrix
    y: np.ndarray  # (1000,) int32, 1 = good credit
    feature_names: tuple[str, ...]  # 62 names: "intercept", "attr2", ..., "attr1=A11", ...

    @property
    def num_features(self) -> int:
        return int(self.x.shape[1])


def load_german_credit(data_dir: str | os.PathLike | None = None) -> GermanCreditData:
    """Design matrix and labels from ``german_credit/german.data`` (hash-checked)."""
    arrays = read_parsed("german_credit", _parse_german_data, data_dir)
    numeric, categorical = arrays["numeric"], arrays["categorical"]
    columns = [np.ones((numeric.shape[0], 1))]
    names = ["intercept"]
    std = numeric.std(axis=0, ddof=1)
    if np.any(std == 0):
        raise DataError("german_credit/german.data: a numeric attribute is constant")
    columns.append((numeric - numeric.mean(axis=0)) / std)
    names += [f"attr{j + 1}" for j in NUMERIC_COLUMNS]
    categorical_columns = [j for j in range(_NUM_ATTRIBUTES) if j not in NUMERIC_COLUMNS]
    for k, j in enumerate(categorical_columns):
        levels, codes = np.unique(categorical[:, k], return_inverse=True)
        columns.append(np.eye(len(levels))[codes])
        names += [f"attr{j + 1}={level}" for level in levels]
    x = np.concatenate(columns, axis=1)
    return GermanCreditData(x=x, y=np.array(arrays["label"] == 1, dtype=np.int32), feature_names=tuple(names))


def _parse_german_data(path: Path) -> dict[str, np.ndarray]:
    with open(path, encoding="ascii") as f:
        rows = [line.split() for line in f if line.strip()]
    if any(len(row) != _NUM_ATTRIBUTES + 1 for row in rows):
        raise DataError(f"{path}: expected {_NUM_ATTRIBUTES + 1} fields on every line")
    table = np.array(rows, dtype=str)
    categorical_columns = [j for j in range(_NUM_ATTRIBUTES) if j not in NUMERIC_COLUMNS]
    label = table[:, _NUM_ATTRIBUTES].astype(np.int64)
    if not np.all(np.isin(label, (1, 2))):
        raise DataError(f"{path}: the label column holds values other than 1 and 2")
    return {
        "numeric": table[:, list(NUMERIC_COLUMNS)].astype(np.int64).astype(np.float64),
        "categorical": table[:, categorical_columns],
        "label": label,
    }

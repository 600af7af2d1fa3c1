"""Parsers of the two radon files (EPA/SRRS survey as distributed with ARM ch. 12-13).

``srrs2.dat`` is one row per house (all 7 survey states plus "R5"), CSV with whitespace-padded
fields and header names; ``cty.dat`` is one row per county *sample point* (all US states), so a
county can appear more than once. Only the columns the models need are kept; text is stripped.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from autoreparam.errors import DataError

_SRRS2_COLUMNS = {
    "idnum": np.int64,
    "state": str,
    "stfips": np.int64,
    "cntyfips": np.int64,
    "county": str,
    "floor": np.int64,
    "activity": np.float64,
}
_CTY_COLUMNS = {"stfips": np.int64, "ctfips": np.int64, "st": str, "cty": str, "Uppm": np.float64}


def parse_srrs2(path: Path) -> dict[str, np.ndarray]:
    """Columns of ``srrs2.dat`` the radon models use, one entry per house, file order."""
    return _parse_padded_csv(path, _SRRS2_COLUMNS)


def parse_cty(path: Path) -> dict[str, np.ndarray]:
    """Columns of ``cty.dat``: state and county FIPS, state code, county name, uranium (ppm)."""
    return _parse_padded_csv(path, _CTY_COLUMNS)


def _parse_padded_csv(path: Path, columns: dict[str, type]) -> dict[str, np.ndarray]:
    with open(path, newline="", encoding="ascii") as f:
        reader = csv.reader(f)
        header = [name.strip() for name in next(reader)]
        rows = [row for row in reader if row]
    position = {name: i for i, name in enumerate(header)}
    absent = [name for name in columns if name not in position]
    if absent:
        raise DataError(f"{path}: missing column(s) {absent}")
    short = [i + 2 for i, row in enumerate(rows) if len(row) != len(header)]
    if short:
        raise DataError(f"{path}: line(s) {short[:5]} do not have {len(header)} fields")
    parsed = {}
    for name, kind in columns.items():
        text = [row[position[name]].strip() for row in rows]
        if kind is str:
            parsed[name] = np.array(text, dtype=str)
        elif kind is np.int64:
            parsed[name] = np.array([int(t) for t in text], dtype=np.int64)
        else:
            parsed[name] = np.array([float(t) for t in text], dtype=np.float64)
    return parsed

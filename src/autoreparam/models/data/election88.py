"""Election '88 poll (Gelman & Hill 2006, ARM ch. 14): 11,566 respondents in 51 states.

Read from stan-dev's ``election88_full.data.json``, which equals field by field the Python dict
the original code imported (SOURCE.md). States are coded 1..51 there; we convert them to 0-based.
``quirks=True`` keeps them 1-based, as the original code used them (see `indexing`).
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

_SOURCE = "election88/election88_full.data.json"


@dataclass(frozen=True, eq=False)
class Election88Data:
    state: np.ndarray  # (N,) int32, 0-based (1-based with quirks)
    black: np.ndarray  # (N,) float64 0/1
    female: np.ndarray  # (N,) float64 0/1
    y: np.ndarray  # (N,) int32 0/1, 1 = supports Bush
    num_states: int

    @property
    def num_respondents(self) -> int:
        return int(self.y.shape[0])


def load_election88(data_dir: str | os.PathLike | None = None, *, quirks: bool = False) -> Election88Data:
    """Poll respondents' state, race, sex and vote intention (hash-checked)."""
    arrays = read_parsed("election88", _parse_election_json, data_dir)
    num_states = int(arrays["n_state"])
    return Election88Data(
        state=group_index(_SOURCE, "state", arrays["state"], num_states, quirks=quirks),
        black=np.array(arrays["black"], dtype=np.float64),
        female=np.array(arrays["female"], dtype=np.float64),
        y=np.array(arrays["y"], dtype=np.int32),
        num_states=num_states,
    )


def _parse_election_json(path: Path) -> dict[str, np.ndarray]:
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    arrays = {key: np.asarray(raw[key], dtype=np.int64) for key in ("state", "black", "female", "y")}
    n = int(raw["N"])
    for key, value in arrays.items():
        if value.shape != (n,):
            raise DataError(f"{path}: field {key!r} has shape {value.shape}, expected ({n},)")
        if key != "state" and not np.all(np.isin(value, (0, 1))):
            raise DataError(f"{path}: field {key!r} must be 0/1")
    arrays["n_state"] = np.asarray(int(raw["n_state"]))
    return arrays

"""A zoo `Problem`'s data in the language's JSON data format, for the programs in ``examples/``.

Fields are the model function's argument names (so ``examples/radon.arp`` declares ``county``,
``floor``, ``log_uranium``, ``num_counties``, ``y``), plus the sizes a program declares (``N``,
``J``, ``D``). Group indices become 1-based, as the language indexes.
"""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import dataclass, field

import numpy as np

from autoreparam.errors import ArgumentError


@dataclass(frozen=True)
class _Spec:
    indices: tuple[str, ...] = ()  # 0-based group indices, written 1-based
    sizes: dict = field(default_factory=dict)  # size field -> (array field, axis)
    drop: tuple[str, ...] = ()  # arguments the program derives itself


# Keyed by the model function's name: every radon state shares `radon`.
_SPECS = {
    "eight_schools": _Spec(sizes={"J": ("sigma", 0)}),
    "radon": _Spec(indices=("county",), sizes={"N": ("county", 0)}),
    "radon_stddvs": _Spec(indices=("county",), sizes={"N": ("county", 0)}),
    "german_credit": _Spec(sizes={"N": ("x", 0), "D": ("x", 1)}),
    "election88": _Spec(indices=("state",), sizes={"N": ("state", 0)}),
    "electric": _Spec(indices=("pair", "grade", "grade_pair"), sizes={"N": ("pair", 0)}),
}


def _plain(value):
    array = np.asarray(value)
    if array.dtype.kind in "iub":
        return array.astype(int).tolist()
    return array.astype(float).tolist()


def export_problem_data(problem) -> dict:
    """The data of a zoo problem (`autoreparam.models.load(name)`) as a JSON-ready dict.

    Raises `ArgumentError` for a model the examples do not cover, and for ``quirks=True`` data
    (1-based indices used as 0-based), which no program in the language reproduces.
    """
    model_name = getattr(problem.model, "__name__", "")
    if model_name not in _SPECS:
        raise ArgumentError(f"no program in examples/ for model '{model_name}'; exportable: {', '.join(_SPECS)}")
    if "original code's quirk" in problem.data_note or "quirks included" in problem.data_note:
        raise ArgumentError("quirks=True data cannot be exported: the language indexes correctly")
    spec = _SPECS[model_name]
    bound = inspect.signature(problem.model).bind(*problem.args, **problem.kwargs)
    fields = {k: v for k, v in bound.arguments.items() if v is not None and k not in spec.drop}
    out = {}
    for name, (source, axis) in spec.sizes.items():
        out[name] = int(np.shape(fields[source])[axis])
    for name, value in fields.items():
        out[name] = _plain(np.asarray(value) + 1) if name in spec.indices else _plain(value)
    return out


def write_problem_data(problem, path: str | os.PathLike) -> None:
    """`export_problem_data` written as a JSON file."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(export_problem_data(problem), f)

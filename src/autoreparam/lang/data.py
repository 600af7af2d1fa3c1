"""The data format: one JSON object, field name -> number or (nested, rectangular) list of numbers.

Fields are matched to the program's ``data`` declarations: a missing field, an undeclared field, a
ragged array, a non-integer value in an ``int`` field, a non-finite number, a value beyond what JAX
computes with (int32 and float32 unless ``jax_enable_x64``) or an array of the wrong rank is an
error naming the field and the declaration's line. Sizes (``real[N]``) are checked
against the other fields in the compiler's dry run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from autoreparam.lang import ir
from autoreparam.lang.check import CheckedProgram
from autoreparam.lang.errors import ProgramError


class _RepeatedKey(Exception):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _object_without_repeated_keys(pairs: list) -> dict:
    """A JSON object's pairs as a dict; a key given twice raises (json's default keeps the last silently)."""
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise _RepeatedKey(key)
        seen[key] = value
    return seen


def read_data(data: Mapping | str | os.PathLike | None) -> dict:
    """A data mapping from a dict, a JSON file's path, or None (no data).

    A file's faults (missing, a folder, not UTF-8, not JSON, not one object) name the data file, with
    the line and column of a JSON error, not the program's.
    """
    if data is None:
        return {}
    if isinstance(data, Mapping):
        return dict(data)
    if not isinstance(data, (str, os.PathLike)):
        raise ProgramError("data", None, "the data must be a mapping (field name -> value), the path of a JSON file "
                           f"or None, not {type(data).__name__}", path="<data>")
    path = Path(data)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProgramError("data", None, "data file not found", path=str(path)) from None
    except IsADirectoryError:
        raise ProgramError("data", None, "the data path is a folder; give the JSON file inside it", path=str(path)) from None
    except UnicodeDecodeError as error:
        raise ProgramError("data", None, f"the data file is not UTF-8 text ({error.reason} at byte {error.start}); "
                           "save it as UTF-8 JSON", path=str(path)) from None
    except OSError as error:
        raise ProgramError("data", None, f"the data file cannot be read: {error.strerror}", path=str(path)) from None
    try:
        loaded = json.loads(text, object_pairs_hook=_object_without_repeated_keys)
    except _RepeatedKey as repeated:
        raise ProgramError("data", None, f"the data file gives field '{repeated.key}' twice; JSON keeps only the "
                           "last, so remove the one you do not mean", path=str(path)) from None
    except json.JSONDecodeError as error:
        raise ProgramError("data", ir.Pos(error.lineno, error.colno), f"not valid JSON: {error.msg}", source=text,
                           path=str(path)) from None
    if not isinstance(loaded, dict):
        raise ProgramError("data", None, "the data file must hold one JSON object: field name -> value", path=str(path))
    return loaded


def _array(name: str, value, base: str, rank: int, node) -> np.ndarray:
    try:
        array = np.asarray(value)
    except ValueError:
        raise ProgramError("data", node.pos, f"data field '{name}' is a ragged array; it must be rectangular") from None
    if array.dtype.kind == "O":  # e.g. an int beyond 64 bits: as a float it meets the range check below
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            pass
    if array.dtype.kind == "b":
        raise ProgramError("data", node.pos, f"data field '{name}' holds booleans; write 0 and 1")
    if array.dtype.kind not in "iuf":
        raise ProgramError("data", node.pos, f"data field '{name}' must hold numbers (rectangular lists of numbers)")
    if array.shape == (0,) and rank > 1:
        # JSON writes every empty array as `[]`; the declared sizes (checked later) give its shape.
        array = array.reshape((0,) * rank)
    if array.ndim != rank:
        raise ProgramError("data", node.pos, f"data field '{name}' has {array.ndim} axis(es), but is declared with {rank}")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ProgramError("data", node.pos, f"data field '{name}' holds {int(np.sum(~np.isfinite(array)))} NaN or infinite value(s)")
    int_max, real_max = _limits()
    if base == "int":
        if not np.all(array == np.round(array)):
            raise ProgramError("data", node.pos, f"data field '{name}' is declared int but holds non-integer values")
        _check_range(name, array, int_max, "integers", node)
        return array.astype(np.int64)
    _check_range(name, array, real_max, "numbers", node)
    return array


def _limits() -> tuple[int, float]:
    # JAX computes in int32 and float32 unless jax_enable_x64: a larger int would wrap around there
    # (2**31 becomes -2**31) and a larger real become inf. Ints also pass through float64 here,
    # exact only up to 2**53.
    return min(int(np.iinfo(jnp.result_type(int)).max), 2**53), float(np.finfo(jnp.result_type(float)).max)


def _check_range(name: str, array: np.ndarray, limit, what: str, node):
    outside = np.abs(array) > limit
    if np.any(outside):
        largest = f"{limit:,}" if isinstance(limit, int) else f"{limit:.3g}"
        raise ProgramError("data", node.pos, f"data field '{name}' holds {array[outside].flat[0]:g}, beyond the "
                           f"{what} the model computes with (magnitude at most {largest}): rescale the data, or "
                           "enable 64-bit JAX (jax.config.update('jax_enable_x64', True))")


def bind_data(checked: CheckedProgram, data: Mapping) -> dict[str, np.ndarray]:
    """The program's data as numpy arrays (int64 or float64), validated against its declarations."""
    named_otherwise = [key for key in data if not isinstance(key, str)]
    if named_otherwise:
        raise ProgramError("data", None, f"data field names must be text, the names the program declares; got "
                           f"{named_otherwise[0]!r} ({type(named_otherwise[0]).__name__})")
    undeclared = sorted(set(data) - set(checked.data))
    if undeclared:
        raise ProgramError("data", None, f"data field(s) {', '.join(map(repr, undeclared))} are not declared in the "
                           "program; declare each with `data NAME: TYPE`, or remove it from the data")
    arrays = {}
    for name, node in checked.data.items():
        symbol = checked.symbols[name]
        if isinstance(node, ir.Observe):
            if name in data:
                raise ProgramError("data", node.pos, f"'{name}' is given in the program and in the data file; keep one")
            arrays[name] = _array(name, node.value, symbol.base, symbol.rank, node)
            continue
        if name not in data:
            if name in checked.observed:
                where = checked.observed[name]
                raise ProgramError("data", where, f"observed variable '{name}' was never given data: add field '{name}' "
                                   "to the data file")
            raise ProgramError("data", node.pos, f"missing data field '{name}' (declared here as {node.type.base}"
                               f"{'[...]' if node.type.dims else ''}); add it to the data file")
        arrays[name] = _array(name, data[name], node.type.base, node.type.rank, node)
    return arrays

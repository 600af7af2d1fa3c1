"""Finding a data file and checking it is the file we expect (sha256) and holds finite numbers."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pooch

from autoreparam.errors import DataError
from autoreparam.models.data.paths import DATA_ENV_VAR, resolve_data_dir
from autoreparam.models.data.registry import FILES


def sha256_of(path: str | os.PathLike) -> str:
    """Hex sha256 of a file (pooch reads it in chunks)."""
    return pooch.file_hash(str(path), alg="sha256")


def sha256_mismatch(name: str, where: str | os.PathLike, found: str) -> DataError:
    """The error for a file whose bytes are not the ones `FILES` names."""
    spec = FILES[name]
    return DataError(
        f"data file {spec.relpath!r} at {where} is not the expected file: "
        f"expected sha256 {spec.sha256}, found {found}. Replace it with the file from {spec.url} "
        f"(autoreparam.models.data.download({spec.relpath.split('/', 1)[0]!r}), or on the command line "
        f"autoreparam download {spec.relpath.split('/', 1)[0]}, does so)"
    )


def locate(name: str, data_dir: str | os.PathLike | None = None) -> Path:
    """Full path of data file `name` (a key of `FILES`); `DataError` if it is not there.

    Loaders never download: a missing file is an error that says where it was expected and how to get it.
    """
    spec = FILES[name]
    path = resolve_data_dir(data_dir) / spec.relpath
    if not path.is_file():
        dataset = spec.relpath.split("/", 1)[0]
        raise DataError(
            f"data file {spec.relpath!r} not found: expected it at {path}. Point the environment "
            f"variable {DATA_ENV_VAR} (or the data_dir argument, on the command line --data-dir) at a folder "
            f"holding {dataset}/, or fetch it with autoreparam.models.data.download({dataset!r}) (on the command "
            f"line: autoreparam download {dataset})."
        )
    return path


def verified_path(name: str, data_dir: str | os.PathLike | None = None) -> tuple[Path, str]:
    """Path and sha256 of data file `name`, after checking the hash against `FILES`."""
    path = locate(name, data_dir)
    try:
        found = sha256_of(path)
    except OSError as exc:
        raise DataError(f"data file {FILES[name].relpath!r} at {path} cannot be read: {exc}") from exc
    if found != FILES[name].sha256:
        raise sha256_mismatch(name, path, found)
    return path, found


def require_finite(source: str, arrays: Mapping[str, np.ndarray]) -> None:
    """`DataError` naming `source` and the field if any floating array holds NaN or inf."""
    for field, value in arrays.items():
        value = np.asarray(value)
        if np.issubdtype(value.dtype, np.floating) and not np.all(np.isfinite(value)):
            bad = int(np.size(value) - np.count_nonzero(np.isfinite(value)))
            raise DataError(f"{source}: field {field!r} holds {bad} NaN or infinite value(s)")

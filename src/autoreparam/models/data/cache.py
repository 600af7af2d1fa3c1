"""Parse each data file once: an in-process cache, backed by ``.npz`` files in the user cache.

`read_parsed` checks the file's sha256 on every call (cheap next to parsing, and it catches a file
replaced while the process runs), then returns the parsed arrays for that hash. The disk copy is
named after the hash and a parser version, so an edited file or an edited parser never meets a
stale copy. The disk cache is an optimisation only: if the folder cannot be written, or a cached
file cannot be read, the file is simply parsed again.
"""

from __future__ import annotations

import functools
import os
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

import numpy as np

from autoreparam.errors import DataError
from autoreparam.models.data.integrity import require_finite, verified_path
from autoreparam.models.data.paths import parsed_cache_dir
from autoreparam.models.data.registry import FILES

# Bump when any parser's output changes, so old .npz files are ignored.
PARSER_VERSION = 1

Parser = Callable[[Path], dict[str, np.ndarray]]


def read_parsed(name: str, parser: Parser, data_dir: str | os.PathLike | None = None) -> Mapping[str, np.ndarray]:
    """Read-only arrays parsed from data file `name` (a key of `FILES`) by `parser`."""
    path, sha = verified_path(name, data_dir)
    return _parsed(name, sha, str(path), parser)


def clear_memory_cache() -> None:
    """Forget the in-process parsed arrays (the disk cache is kept)."""
    _parsed.cache_clear()


@functools.lru_cache(maxsize=None)
def _parsed(name: str, sha: str, path: str, parser: Parser) -> Mapping[str, np.ndarray]:
    source = FILES[name].relpath
    target = parsed_cache_dir() / f"{name}-{sha}-p{PARSER_VERSION}.npz"
    arrays = _load_npz(source, target)
    if arrays is None:
        arrays = _parse(source, Path(path), parser)
        _save_npz(target, arrays)
    for value in arrays.values():
        # Shared between callers through the cache, so nobody may write into them.
        value.flags.writeable = False
    return MappingProxyType(arrays)


def _parse(source: str, path: Path, parser: Parser) -> dict[str, np.ndarray]:
    try:
        arrays = {k: np.asarray(v) for k, v in parser(path).items()}
    except DataError:
        raise
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise DataError(f"{source}: cannot parse {path}: {exc}") from exc
    for key, value in arrays.items():
        if value.dtype == object:
            raise TypeError(f"parser for {source} returned an object array for {key!r}")
    require_finite(source, arrays)
    return arrays


def _load_npz(source: str, target: Path) -> dict[str, np.ndarray] | None:
    if not target.is_file():
        return None
    try:
        with np.load(target, allow_pickle=False) as npz:
            arrays = {key: npz[key] for key in npz.files}
        require_finite(source, arrays)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        # A truncated or tampered cache file is treated as absent (DataError is a ValueError).
        return None
    return arrays


def _save_npz(target: Path, arrays: Mapping[str, np.ndarray]) -> None:
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.stem, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        # Atomic on POSIX: readers see the old state or the whole new file, never half of it.
        os.replace(tmp, target)
        tmp = None
    except OSError:
        pass  # Read-only or missing cache folder: run without the disk cache.
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass

"""One JSON file (plus optional arrays) per finished cell, written atomically; finished cells are skipped."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
from autoreparam.errors import ArgumentError, DataError
from autoreparam.validation import output_folder

LOCK = ".autoreparam.lock"


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            # On disk before the rename: a crash must not leave a "finished" file that is empty.
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def jsonable(value):
    """``value`` with arrays as lists and non-finite floats as None, as records are stored."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.floating, float)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def _read_cell(path: Path) -> dict:
    """One finished cell's record; a file that is not JSON is named (cells are written atomically, so it
    was damaged afterwards) with what to do."""
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DataError(f"result file {path} is not valid JSON ({error}); delete it and rerun the command that "
                        "wrote it: finished cells are kept, so only that one runs again") from None


class ResultStore:
    """``root/cells/<key>.json`` and ``root/arrays/<key>.npz``; keys are file-name safe."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def _json(self, key: str) -> Path:
        return self.root / "cells" / f"{key}.json"

    def _npz(self, key: str) -> Path:
        return self.root / "arrays" / f"{key}.npz"

    def done(self, key: str) -> bool:
        return self._json(key).exists()

    def save(self, key: str, record: dict, arrays: dict | None = None) -> None:
        # Arrays first: a cell counts as done only once its JSON exists, and then its arrays exist too.
        if arrays:
            _atomic_write(self._npz(key), lambda h: np.savez_compressed(h, **arrays))
            record = {**record, "arrays": str(self._npz(key).relative_to(self.root))}
        text = json.dumps(jsonable({**record, "key": key}), indent=1, sort_keys=True)
        _atomic_write(self._json(key), lambda h: h.write(text.encode()))

    def load(self, key: str) -> dict:
        return _read_cell(self._json(key))  # a damaged file was a bare JSONDecodeError on resume (found in review)

    def has_arrays(self, key: str) -> bool:
        return self._npz(key).exists()

    def arrays(self, key: str) -> dict:
        """The cell's arrays; a missing or damaged file is a DataError naming it and its record."""
        path = self._npz(key)
        advice = (f"delete {self._json(key)} (and {path}) and rerun the command that wrote them: finished cells are "
                  "kept, so only that one runs again")
        try:
            # Opened here: NumPy leaves its own handle open when the file is not a zip archive.
            with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as data:
                return {k: data[k] for k in data.files}
        except FileNotFoundError:
            raise DataError(f"the arrays of result {key} are missing ({path}); {advice}") from None
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError) as error:
            raise DataError(f"the arrays file {path} is damaged ({type(error).__name__}: {error}); {advice}") from None

    @contextlib.contextmanager
    def exclusive(self, command: str, flag: str = "--out"):
        """Hold the folder for one command: two runs into one empty folder each passed the settings check
        (there was no record yet) and mixed their cells (found in review). The lock is the kernel's
        (``flock``), so a run that dies leaves none behind."""
        output_folder(self.root, flag)
        handle = open(self.root / LOCK, "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise ArgumentError(f"another {command} is writing to {self.root}; wait for it to finish, or give "
                                f"another {flag}") from None
        try:
            yield self
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()

    def first_record(self, field: str) -> dict | None:
        """The first finished cell (in key order) whose record has ``field``, or None; reads no further."""
        for path in sorted((self.root / "cells").glob("*.json")):
            record = _read_cell(path)
            if field in record:
                return record
        return None

    def is_empty(self) -> bool:
        """No finished cell (a folder that does not exist is empty), without reading any."""
        return next((self.root / "cells").glob("*.json"), None) is None

    def records(self) -> list[dict]:
        folder = self.root / "cells"
        return [_read_cell(p) for p in sorted(folder.glob("*.json"))] if folder.exists() else []

"""Fetch the data files from their public URLs into a data folder, checking each sha256.

Nothing is downloaded unless `download` is called; loaders never reach the network.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from autoreparam.errors import DataError
from autoreparam.models.data.integrity import sha256_mismatch, sha256_of
from autoreparam.models.data.paths import default_data_dir
from autoreparam.models.data.registry import FILES, files_for

Fetch = Callable[[str], bytes]

_TIMEOUT_S = 60.0


def fetch_url(url: str) -> bytes:
    """Bytes at `url` (http(s) or file://), through urllib."""
    with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:
        return response.read()


def download(
    name_or_all: str = "all",
    cache_dir: str | os.PathLike | None = None,
    *,
    fetch: Fetch | None = None,
) -> list[Path]:
    """Download a data set (``"radon"``), one file (``"radon_cty"``) or ``"all"``.

    Files go to ``cache_dir`` (default ``${XDG_CACHE_HOME:-~/.cache}/autoreparam/data``, which is
    where loaders look when ``AUTOREPARAM_DATA`` is unset), laid out as the loaders expect. A file
    already there with the right hash is kept. Returns the paths of the requested files.

    Raises `DataError` when every URL of a file fails (e.g. offline) or when the downloaded bytes
    do not have the expected sha256; nothing is written for that file then. ``fetch`` replaces the
    network access (``url -> bytes``), for tests and for mirrors.
    """
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_data_dir()
    fetch = fetch_url if fetch is None else fetch
    return [_download_one(name, root, fetch) for name in files_for(name_or_all)]


def _download_one(name: str, root: Path, fetch: Fetch) -> Path:
    spec = FILES[name]
    target = root / spec.relpath
    if target.is_file() and sha256_of(target) == spec.sha256:
        return target
    failures = []
    for url in spec.urls:
        try:
            payload = fetch(url)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            failures.append(f"{url}: {exc}")
            continue
        found = hashlib.sha256(payload).hexdigest()
        if found != spec.sha256:
            failures.append(str(sha256_mismatch(name, url, found)))
            continue
        _write_atomically(target, payload)
        return target
    raise DataError(
        f"could not download {spec.relpath!r} (are you offline?). Tried:\n  " + "\n  ".join(failures)
    )


def _write_atomically(target: Path, payload: bytes) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".part")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
            os.replace(tmp, target)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:
        raise DataError(f"cannot write {target}: {exc}") from exc

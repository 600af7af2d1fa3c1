"""Fetch the data files from their public URLs with pooch, checking each sha256.

Nothing is downloaded unless `download` is called; loaders never reach the network. pooch does the
work (a temporary file, the hash check, the move into place, keeping a file that already matches);
this module adds the mirrors and errors that name the file, every URL tried and what to do.
"""

from __future__ import annotations

import os
import urllib.error
from collections.abc import Callable
from pathlib import Path

import requests

from autoreparam.errors import DataError
from autoreparam.models.data.paths import data_store
from autoreparam.models.data.registry import FILES, files_for

Fetch = Callable[[str], bytes]
_NETWORK_ERRORS = (requests.exceptions.RequestException, urllib.error.URLError, ConnectionError, TimeoutError)


def download(
    name_or_all: str = "all",
    cache_dir: str | os.PathLike | None = None,
    *,
    fetch: Fetch | None = None,
) -> list[Path]:
    """Download a data set (``"radon"``), one file (``"radon_cty"``) or ``"all"``.

    Files go where the loaders look: ``cache_dir`` if given, else ``$AUTOREPARAM_DATA``, else the
    user cache (``${XDG_CACHE_HOME:-~/.cache}/autoreparam/data`` on Linux), laid out as the loaders
    expect. A file already there with the right hash is kept. Returns the paths of the requested files.

    Raises `DataError` when every URL of a file fails (e.g. offline) or gives bytes without the
    expected sha256; nothing is written for that file then. ``fetch`` replaces the network access
    (``url -> bytes``), for tests and for mirrors.
    """
    downloader = None if fetch is None else _downloader(fetch)
    return [_download_one(name, cache_dir, downloader) for name in files_for(name_or_all)]


def _downloader(fetch: Fetch):
    """A pooch downloader (``url, output_file, pooch``) that writes what ``fetch(url)`` returns."""

    def download_with_fetch(url, output_file, _pooch):
        payload = fetch(url)
        with open(output_file, "wb") as f:
            f.write(payload)

    return download_with_fetch


def _download_one(name: str, cache_dir, downloader) -> Path:
    spec = FILES[name]
    failures = []
    for url in spec.urls:  # the canonical source, then its mirrors
        store = data_store(cache_dir, urls={name: url})
        try:
            return Path(store.fetch(spec.relpath, downloader=downloader))
        except _NETWORK_ERRORS as exc:
            failures.append(f"{url}: {exc}")
        except ValueError as exc:  # pooch: the bytes do not have the registered sha256
            failures.append(f"{url}: {exc}")
        except OSError as exc:
            raise DataError(f"cannot write {spec.relpath!r} under {store.abspath}: {exc}") from exc
    raise DataError(
        f"could not download {spec.relpath!r} (are you offline?). Tried:\n  " + "\n  ".join(failures)
    )

"""Where the data files live, as a pooch store: the hash registry, the user cache, the env override.

The store is built when asked for, never at import time, so that importing autoreparam touches
neither the file system nor the network (STYLE.md, habit 10) and a changed environment is seen.
"""

from __future__ import annotations

import os
from pathlib import Path

import pooch

from autoreparam.models.data.registry import FILES

# Names a folder laid out like the project's shared data folder (eight_schools/, radon/,
# german_credit/, election88/, electric/); it overrides the user cache.
DATA_ENV_VAR = "AUTOREPARAM_DATA"
_PROJECT = "autoreparam"


def user_cache_dir() -> Path:
    """The per-user cache folder (platformdirs, through pooch): ``${XDG_CACHE_HOME:-~/.cache}/autoreparam`` on Linux."""
    return Path(pooch.os_cache(_PROJECT))


def default_data_dir() -> Path:
    """Where data files go when neither a folder nor ``$AUTOREPARAM_DATA`` is given."""
    return user_cache_dir() / "data"


def parsed_cache_dir() -> Path:
    """Where parsed arrays are kept as ``.npz`` files, keyed by the source file's sha256."""
    return user_cache_dir() / "parsed"


def data_store(data_dir: str | os.PathLike | None = None, urls: dict[str, str] | None = None) -> pooch.Pooch:
    """A pooch store over every registered file (path relative to the folder -> sha256).

    Its folder is ``data_dir`` if given, else ``$AUTOREPARAM_DATA``, else the user cache.
    ``urls`` (file name -> URL) replaces a file's canonical URL, e.g. by one of its mirrors.
    """
    urls = urls or {}
    return pooch.create(
        path=Path(data_dir).expanduser() if data_dir is not None else default_data_dir(),
        base_url="",
        registry={spec.relpath: f"sha256:{spec.sha256}" for spec in FILES.values()},
        urls={spec.relpath: urls.get(name, spec.url) for name, spec in FILES.items()},
        env=None if data_dir is not None else DATA_ENV_VAR,
        retry_if_failed=0,
    )


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data folder to read: the explicit argument, else ``$AUTOREPARAM_DATA``, else the user cache."""
    return Path(data_store(data_dir).abspath)

"""Where the data files live and where parsed copies are cached.

Every function here reads the environment when it is called, never at import time, so that importing
autoreparam touches neither the file system nor the network (STYLE.md, habit 10).
"""

from __future__ import annotations

import os
from pathlib import Path

# Name of the environment variable that points at a folder laid out like /work/shared/data
# (eight_schools/, radon/, german_credit/, election88/, electric/).
DATA_ENV_VAR = "AUTOREPARAM_DATA"


def user_cache_dir() -> Path:
    """The per-user cache folder: ``${XDG_CACHE_HOME:-~/.cache}/autoreparam``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "autoreparam"


def default_data_dir() -> Path:
    """Where `download` puts the raw files when no folder is given."""
    return user_cache_dir() / "data"


def parsed_cache_dir() -> Path:
    """Where parsed arrays are kept as ``.npz`` files, keyed by the source file's sha256."""
    return user_cache_dir() / "parsed"


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data folder to read: the explicit argument, else ``$AUTOREPARAM_DATA``, else the user cache."""
    if data_dir is not None:
        return Path(data_dir).expanduser()
    from_env = os.environ.get(DATA_ENV_VAR)
    if from_env:
        return Path(from_env).expanduser()
    return default_data_dir()

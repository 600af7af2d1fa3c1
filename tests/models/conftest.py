"""Fixtures for the model-zoo tests.

Real data come from ``$AUTOREPARAM_DATA``, else from ``shared/data`` beside the checkout (the
folder the Makefile points at, read-only); tests that need them skip with a clear reason when the
folder is absent. The user cache is redirected to a
temporary folder for the whole session, so the tests never write to ~/.cache.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# `make test` installs the package (pip install -e .); this lets a bare checkout run too.
_SRC = Path(__file__).resolve().parents[2] / "src"
try:
    import autoreparam  # noqa: F401
except ImportError:
    sys.path.insert(0, str(_SRC))

# <checkout>/../shared/data: resolved from this file, never an absolute path of one machine.
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data"
# One file per data set: enough to tell whether the folder is there at all.
_PROBE_FILES = ("radon/srrs2.dat", "german_credit/german.data", "election88/election88_full.data.json")


def real_data_dir() -> Path:
    return Path(os.environ.get("AUTOREPARAM_DATA") or DEFAULT_DATA_DIR)


# The data file each zoo family needs (by name prefix); eight schools and simulated models need none.
_ZOO_DATA_FILES = {"radon": "radon/srrs2.dat", "german_credit": "german_credit/german.data",
                   "election88": "election88/election88_full.data.json", "electric": "electric/electric.data.json"}


def load_zoo_or_skip(name: str):
    """The zoo problem ``name`` from the real data folder, or a skip naming the missing file."""
    from autoreparam.models import load

    needed = next((f for prefix, f in _ZOO_DATA_FILES.items() if name.startswith(prefix)), None)
    root = real_data_dir()
    if needed and not (root / needed).is_file():
        pytest.skip(f"real data not found: {root / needed}; set AUTOREPARAM_DATA")
    return load(name, data_dir=root if needed else None)


@pytest.fixture(scope="session", autouse=True)
def isolated_user_cache(tmp_path_factory):
    """Point XDG_CACHE_HOME at a fresh folder so the .npz cache lands there, not in ~/.cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg_cache")))
        yield


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real data folder; skips the test if it is not there."""
    root = real_data_dir()
    missing = [f for f in _PROBE_FILES if not (root / f).is_file()]
    if missing:
        pytest.skip(
            f"real data not found: {root} lacks {missing}. Set AUTOREPARAM_DATA to a folder laid out "
            f"like {DEFAULT_DATA_DIR} (radon/, german_credit/, ...) to run the data tests."
        )
    return root

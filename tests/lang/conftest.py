"""Fixtures for the language tests: the real data folder (tests skip without AUTOREPARAM_DATA)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_PROBE_FILES = ("radon/srrs2.dat", "german_credit/german.data", "election88/election88_full.data.json")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``$AUTOREPARAM_DATA``; skips the test, saying why, when it is unset or incomplete."""
    root = os.environ.get("AUTOREPARAM_DATA")
    if not root:
        pytest.skip("AUTOREPARAM_DATA is not set: point it at a folder laid out like shared/data")
    missing = [f for f in _PROBE_FILES if not (Path(root) / f).is_file()]
    if missing:
        pytest.skip(f"real data not found: {root} lacks {missing}")
    return Path(root)


@pytest.fixture(scope="session", autouse=True)
def isolated_user_cache(tmp_path_factory):
    """Loaders may write a parsed-data cache: keep it out of ~/.cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg_cache")))
        yield

"""Fixtures for the graph tests: zoo problems with real data, skipped with a reason when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autoreparam.models import load

_NEEDS_DATA = {"radon_mn": "radon/srrs2.dat", "german_credit": "german_credit/german.data",
               "election88": "election88/election88_full.data.json", "electric": "electric/electric.data.json"}


@pytest.fixture(scope="session", autouse=True)
def isolated_user_cache(tmp_path_factory):
    """Parsed-data caches go to a fresh folder, never to ~/.cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg_cache")))
        yield


@pytest.fixture(scope="session")
def zoo():
    """``zoo(name)``: the zoo problem, or a skip when its data file is not under $AUTOREPARAM_DATA."""

    def get(name):
        needed = _NEEDS_DATA.get(name)
        root = Path(os.environ.get("AUTOREPARAM_DATA") or "/work/shared/data")
        if needed and not (root / needed).is_file():
            pytest.skip(f"real data not found: {root / needed}; set AUTOREPARAM_DATA")
        return load(name, data_dir=root if needed else None)

    return get

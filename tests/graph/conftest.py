"""Fixtures for the graph tests: zoo problems with real data, skipped with a reason when it is absent."""

from __future__ import annotations

import pytest

from tests.models.conftest import load_zoo_or_skip


@pytest.fixture(scope="session", autouse=True)
def isolated_user_cache(tmp_path_factory):
    """Parsed-data caches go to a fresh folder, never to ~/.cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg_cache")))
        yield


@pytest.fixture(scope="session")
def zoo():
    """``zoo(name)``: the zoo problem, or a skip when its data file is not under $AUTOREPARAM_DATA."""
    return load_zoo_or_skip

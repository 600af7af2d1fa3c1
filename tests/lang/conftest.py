"""Fixtures for the language tests: the real data folder, resolved as the model-zoo tests resolve it."""

from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
from tests.models.conftest import _PROBE_FILES, real_data_dir


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real data folder (``$AUTOREPARAM_DATA``, else ``shared/data`` beside the checkout); skips if absent."""
    root = real_data_dir()
    missing = [f for f in _PROBE_FILES if not (root / f).is_file()]
    if missing:
        pytest.skip(f"real data not found: {root} lacks {missing}; set AUTOREPARAM_DATA to a folder laid out like shared/data")
    return root


@pytest.fixture(scope="session", autouse=True)
def isolated_user_cache(tmp_path_factory):
    """Loaders may write a parsed-data cache: keep it out of ~/.cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg_cache")))
        yield

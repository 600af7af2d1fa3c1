"""Fixtures for the meta tests: small graphs and a small random network (fast to compile)."""

from __future__ import annotations

import os
from pathlib import Path

import jax
import numpy as np
import pytest

from autoreparam.graph import model_graph
from autoreparam.meta.network import MetaGNN
from autoreparam.meta.weights import ELEMENT_FEATURE_NAMES, NODE_FEATURE_NAMES
from autoreparam.models.funnels import funnel_with_observation
from autoreparam.models.hierarchical import eight_schools

SIGMA = np.array([15.0, 10, 16, 11, 9, 11, 10, 18], dtype=np.float32)
Y = np.array([28.0, 8, -3, 7, -1, 1, 18, 12], dtype=np.float32)


@pytest.fixture(scope="session")
def graphs():
    return [model_graph(eight_schools, SIGMA, y=Y), model_graph(funnel_with_observation, y=10.0, sigma=0.5)]


def small_network(form: str = "tied", seed: int = 0) -> MetaGNN:
    return MetaGNN(len(NODE_FEATURE_NAMES), len(ELEMENT_FEATURE_NAMES), hidden=16, num_steps=3, form=form,
                   key=jax.random.PRNGKey(seed))


@pytest.fixture(scope="session")
def network():
    return small_network()


_NEEDS_DATA = {"radon": "radon/srrs2.dat", "german_credit": "german_credit/german.data",
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
    from autoreparam.models import load

    def get(name):
        needed = next((f for prefix, f in _NEEDS_DATA.items() if name.startswith(prefix)), None)
        root = Path(os.environ.get("AUTOREPARAM_DATA", ""))
        if needed and not (root / needed).is_file():
            pytest.skip(f"real data not found: {root / needed}; set AUTOREPARAM_DATA")
        return load(name, data_dir=root if needed else None)

    return get

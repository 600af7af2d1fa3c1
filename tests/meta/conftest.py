"""Fixtures for the meta tests: small graphs and a small random network (fast to compile)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from autoreparam.graph import model_graph
from autoreparam.meta.network import MetaGNN
from autoreparam.meta.weights import ELEMENT_FEATURE_NAMES, NODE_FEATURE_NAMES
from autoreparam.models.funnels import funnel_with_observation
from autoreparam.models.hierarchical import eight_schools
from tests.models.conftest import load_zoo_or_skip

SIGMA = np.array([15.0, 10, 16, 11, 9, 11, 10, 18], dtype=np.float32)
Y = np.array([28.0, 8, -3, 7, -1, 1, 18, 12], dtype=np.float32)


@pytest.fixture(scope="session")
def graphs():
    return [model_graph(eight_schools, SIGMA, y=Y), model_graph(funnel_with_observation, y=10.0, sigma=0.5)]


def small_network(form: str = "tied", seed: int = 0, probes: str = "prior") -> MetaGNN:
    return MetaGNN(len(NODE_FEATURE_NAMES), len(ELEMENT_FEATURE_NAMES), hidden=16, num_steps=3, form=form,
                   probes=probes, key=jax.random.PRNGKey(seed))


@pytest.fixture(scope="session")
def network():
    return small_network()


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

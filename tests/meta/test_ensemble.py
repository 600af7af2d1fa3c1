"""The ensemble of networks: the mean of its members' lambda, saved and loaded like one network."""

from __future__ import annotations

import numpy as np
import pytest

from autoreparam.errors import DataError
from autoreparam.meta.ensemble import MetaEnsemble, stack_networks
from autoreparam.meta.predict import network_logits, predict_graph
from autoreparam.meta.weights import load_network, save_ensemble, save_network

from .conftest import small_network


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@pytest.mark.parametrize("form", ["tied", "separate"])
def test_the_ensemble_predicts_the_mean_of_its_members_lambda(graphs, form):
    members = [small_network(form, seed) for seed in (0, 1, 2)]
    ensemble = stack_networks(members)
    assert isinstance(ensemble, MetaEnsemble) and ensemble.size == 3 and ensemble.form == form
    mixed = network_logits(ensemble, graphs)
    each = [network_logits(m, graphs) for m in members]
    for g in range(len(graphs)):
        expected = np.mean([_sigmoid(e[g]) for e in each], axis=0)
        np.testing.assert_allclose(_sigmoid(mixed[g]), expected, rtol=1e-5, atol=1e-6)
        # and it is not simply one member's prediction
        assert not np.allclose(_sigmoid(mixed[g]), _sigmoid(each[0][g]), atol=1e-4)


def test_predict_graph_takes_an_ensemble(graphs):
    ensemble = stack_networks([small_network(seed=s) for s in (0, 1)])
    lam = predict_graph(graphs[0], ensemble).lam
    assert set(lam) >= {"theta"} and np.all((lam["theta"] > 0) & (lam["theta"] < 1))


def test_an_ensemble_saved_and_loaded_predicts_the_same(tmp_path, graphs):
    stems = []
    for seed in (0, 1, 2):
        stems.append(tmp_path / f"seed_{seed}" / "net")
        save_network(stems[-1], small_network(seed=seed), {"corpus": "c", "labels": ["l"], "seed": seed,
                                                            "seconds": {"elbo": 1.0}, "config": {"seed": seed}})
    save_ensemble(tmp_path / "ensemble", stems)
    loaded, card = load_network(tmp_path / "ensemble")
    assert isinstance(loaded, MetaEnsemble) and card["architecture"]["members"] == 3
    assert [m["seed"] for m in card["record"]["members"]] == [0, 1, 2]
    direct = stack_networks([load_network(s)[0] for s in stems])
    for a, b in zip(network_logits(loaded, graphs), network_logits(direct, graphs)):
        np.testing.assert_array_equal(a, b)


def test_members_of_other_architectures_or_runs_are_refused(tmp_path):
    with pytest.raises(ValueError, match="at least two"):
        stack_networks([small_network()])
    with pytest.raises(ValueError, match="another architecture"):
        stack_networks([small_network("tied"), small_network("separate")])
    save_network(tmp_path / "a", small_network(seed=0), {"corpus": "one"})
    save_network(tmp_path / "b", small_network(seed=1), {"corpus": "two"})
    with pytest.raises(DataError, match="different corpus"):
        save_ensemble(tmp_path / "ab", [tmp_path / "a", tmp_path / "b"])



def test_members_reading_their_probes_at_other_points_are_refused():
    with pytest.raises(ValueError, match="probes 'fit'"):
        stack_networks([small_network(seed=0), small_network(seed=1, probes="fit")])
    assert stack_networks([small_network(seed=0, probes="fit"), small_network(seed=1, probes="fit")]).probes == "fit"

"""Weights: save and load give the same network; cards that do not fit are refused with a clear error."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autoreparam.errors import DataError
from autoreparam.meta.predict import network_logits, shipped_stem
from autoreparam.meta.weights import load_network, read_card, save_network

from .conftest import small_network


def test_save_then_load_gives_the_same_outputs(tmp_path, graphs):
    network = small_network(seed=3)
    save_network(tmp_path / "net", network, {"seed": 3})
    loaded, card = load_network(tmp_path / "net")
    assert card["record"] == {"seed": 3} and card["architecture"]["hidden"] == 16
    for a, b in zip(network_logits(network, graphs), network_logits(loaded, graphs)):
        np.testing.assert_array_equal(a, b)


def test_weights_are_plain_arrays_without_pickle(tmp_path):
    save_network(tmp_path / "net", small_network())
    data = (tmp_path / "net.eqx").read_bytes()
    assert data.startswith(b"\x93NUMPY")  # NumPy's .npy format, read back with allow_pickle=False


def test_a_card_for_other_features_is_refused(tmp_path):
    path = save_network(tmp_path / "net", small_network())
    card = json.loads(path.read_text())
    card["element_feature_names"] = card["element_feature_names"][:-1]
    path.write_text(json.dumps(card))
    with pytest.raises(DataError, match="other graph features"):
        load_network(tmp_path / "net")


def test_missing_weights_say_how_to_make_them(tmp_path):
    with pytest.raises(DataError, match="autoreparam meta train"):
        load_network(tmp_path / "absent")


def test_the_shipped_weights_have_a_card_with_their_training_record():
    card = read_card(shipped_stem())
    assert card["architecture"]["form"] == "tied"
    assert card["architecture"]["members"] == len(card["record"]["members"]) == 3  # an ensemble of three seeds
    for key in ("corpus", "machine", "num_models", "combination"):
        assert key in card["record"], key
    assert sorted(m["seed"] for m in card["record"]["members"]) == [0, 1, 2]
    for member in card["record"]["members"]:
        assert member["seconds"] and member["config"]["seed"] == member["seed"]


def test_a_network_keeps_where_it_reads_its_probes_and_old_cards_read_the_prior(tmp_path):
    path = save_network(tmp_path / "fit", small_network(probes="fit"))
    assert load_network(tmp_path / "fit")[0].probes == "fit"
    card = json.loads(path.read_text())
    del card["architecture"]["probes"]  # a card written before the choice existed
    path.write_text(json.dumps(card))
    assert load_network(tmp_path / "fit")[0].probes == "prior"
    with pytest.raises(ValueError, match="probes must be one of"):
        small_network(probes="posterior")

"""Weights: save and load give the same network; cards that do not fit are refused with a clear error."""

from __future__ import annotations

import json

import jax
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
        # exact in float32; a network built under jax_enable_x64 is saved in float32, as the files hold
        np.testing.assert_allclose(a, b, rtol=0 if a.dtype == np.float32 else 1e-6)


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


# Found in review: each of these failed as a bare error from Equinox or Python, or loaded silently.
@pytest.mark.parametrize("damage, says", [
    (lambda eqx_file, card: eqx_file.write_bytes(eqx_file.read_bytes()[:200]), "cannot read the network weights"),
    (lambda eqx_file, card: eqx_file.write_bytes(b""), "cannot read the network weights"),
    (lambda eqx_file, card: card.write_text("[1, 2]"), "is not a version-1 autoreparam network card"),
    (lambda eqx_file, card: card.write_bytes(b"\xff\xfe{"), "is not valid JSON"),
    (lambda eqx_file, card: _edit_card(card, hidden="16"), "has no valid hidden"),
    (lambda eqx_file, card: _edit_card(card, hidden=32), "not the card's architecture"),
    (lambda eqx_file, card: _edit_card(card, form="both"), "has no valid form"),
    (lambda eqx_file, card: _edit_card(card, probes="posterior"), "has no valid probes"),
    (lambda eqx_file, card: _edit_card(card, architecture=None), "has no architecture"),
], ids=["truncated weights", "empty weights", "a list as card", "card not UTF-8", "hidden as text", "other hidden",
        "unknown form", "unknown probes", "no architecture"])
def test_damaged_network_files_are_named(tmp_path, damage, says):
    save_network(tmp_path / "net", small_network())
    damage(tmp_path / "net.eqx", tmp_path / "net.json")
    with pytest.raises(DataError, match=says) as info:
        load_network(tmp_path / "net")
    assert "net." in str(info.value)


def _edit_card(path, architecture="keep", **changes):
    card = json.loads(path.read_text())
    card["architecture"] = None if architecture is None else {**card["architecture"], **changes}
    path.write_text(json.dumps(card))


def test_non_finite_weights_are_refused(tmp_path):
    import equinox as eqx
    import jax.numpy as jnp

    broken = jax.tree.map(lambda x: x * jnp.nan if eqx.is_inexact_array(x) else x, small_network())
    save_network(tmp_path / "net", broken)
    with pytest.raises(DataError, match="hold NaN or infinite values"):
        load_network(tmp_path / "net")


def test_stems_with_dots_keep_their_own_files(tmp_path):
    # Path.with_suffix made run.1 and run.2 both write run.eqx: the second silently replaced the first.
    save_network(tmp_path / "run.1", small_network(seed=1), {"tag": 1})
    save_network(tmp_path / "run.2", small_network(seed=2), {"tag": 2})
    assert load_network(tmp_path / "run.1")[1]["record"] == {"tag": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.1.eqx", "run.1.json", "run.2.eqx", "run.2.json"]
    assert load_network(tmp_path / "run.2.json")[1]["record"] == {"tag": 2}  # either file names the pair


def test_the_shipped_network_loads_and_predicts_with_float64_enabled():
    # The skeleton was built in float64 and refused the float32 files.
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import jax
        jax.config.update("jax_enable_x64", True)
        import numpy as np
        import autoreparam as ar
        from autoreparam.models import eight_schools
        lam = ar.predict_parameterisation(eight_schools, np.full(8, 10.0), y=np.linspace(-5, 5, 8), probes="prior")
        assert np.all((lam["theta"] >= 0) & (lam["theta"] <= 1)), lam
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "JAX_PLATFORMS": "cpu"})
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]

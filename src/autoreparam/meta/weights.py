"""Save and load a network: Equinox's leaf serialisation (NumPy's format, no pickle) and a JSON card.

A network is two files with one stem: ``<stem>.eqx`` holds the arrays (`equinox.tree_serialise_leaves`,
read back with ``allow_pickle=False``) and ``<stem>.json`` the architecture, the graph's feature
columns it was trained on and the training record (corpus, seed, time, metrics). Loading checks that
the feature columns are the ones this version of `autoreparam.graph` produces, so weights never read
features they were not trained on.
"""

from __future__ import annotations

import json
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from autoreparam.errors import DataError
from autoreparam.graph import ELEMENT_FEATURES, NODE_FEATURES
from autoreparam.meta.ensemble import MetaEnsemble, ensemble_skeleton, stack_networks
from autoreparam.meta.files import write_json
from autoreparam.meta.network import PROBES, MetaGNN

FORMAT = "autoreparam.meta.weights"
VERSION = 1
NODE_FEATURE_NAMES = tuple(name for name, _ in NODE_FEATURES)
ELEMENT_FEATURE_NAMES = tuple(name for name, _ in ELEMENT_FEATURES)


def stem_file(stem: str | Path, suffix: str) -> Path:
    """``<stem>.eqx`` or ``<stem>.json``. Not ``Path.with_suffix``, which replaced a dotted stem's last
    part: ``run.1`` and ``run.2`` both wrote ``run.eqx`` (found in review). A stem given with either
    suffix names its pair."""
    stem = Path(stem)
    if stem.suffix in (".eqx", ".json"):
        stem = stem.with_suffix("")
    return stem.with_name(stem.name + suffix)


def weights_finite(network) -> bool:
    """Whether every weight of ``network`` is finite (read when loading and before a checkpoint).

    On the host, in NumPy: ``jnp.all(jnp.isfinite(a))`` compiled two small programs per weight shape,
    1.2 s of a fresh process's first prediction (24 programs for the shipped ensemble)."""
    leaves = jax.tree.leaves(eqx.filter(network, eqx.is_inexact_array))
    return all(bool(np.all(np.isfinite(np.asarray(a)))) for a in leaves)


def _check_architecture(arch, path: Path) -> None:
    """The card's architecture as `build_network` reads it: a bad value failed there, or in Equinox
    as a shape mismatch, with no file named (found in review)."""
    def positive_int(key, default=None):
        value = arch.get(key, default)
        return isinstance(value, int) and not isinstance(value, bool) and value > 0

    problems = [key for key in ("hidden", "num_steps", "num_node_features", "num_element_features")
                if not positive_int(key)]
    problems += [] if positive_int("members", 1) else ["members"]
    problems += [] if arch.get("form") in ("tied", "separate") else ["form"]
    problems += [] if arch.get("probes", "prior") in PROBES else ["probes"]
    if problems:
        raise DataError(f"the network card {path} has no valid {', '.join(problems)} in its architecture; "
                        "the file is damaged: restore it, or retrain with `autoreparam meta train`")


def architecture(network: MetaGNN | MetaEnsemble) -> dict:
    """What `build_network` needs to rebuild ``network``'s shapes; ``members`` > 1 for an ensemble."""
    return {"hidden": network.hidden, "num_steps": network.num_steps, "form": network.form, "probes": network.probes,
            "num_node_features": len(NODE_FEATURE_NAMES), "num_element_features": len(ELEMENT_FEATURE_NAMES),
            "members": network.size if isinstance(network, MetaEnsemble) else 1}


def build_network(arch: dict, key=None) -> MetaGNN | MetaEnsemble:
    """A network (or, with ``members`` > 1, an ensemble) of the given architecture, random weights
    (load_network fills them in). Cards written before ensembles existed have no ``members``: one;
    cards written before probes could be read at a fit have no ``probes``: the prior points."""
    key = jax.random.PRNGKey(0) if key is None else key

    def member(k):
        return MetaGNN(arch["num_node_features"], arch["num_element_features"], hidden=arch["hidden"],
                       num_steps=arch["num_steps"], form=arch["form"], probes=arch.get("probes", "prior"), key=k)

    size = int(arch.get("members", 1))
    return member(key) if size == 1 else ensemble_skeleton(member, size, key)


def save_network(stem: str | Path, network: MetaGNN | MetaEnsemble, record: dict | None = None) -> Path:
    """Write ``<stem>.eqx`` and ``<stem>.json``; returns the JSON path."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    arrays = stem_file(stem, ".eqx")
    tmp = arrays.with_name(arrays.name + ".tmp")
    # float32 on disk whatever JAX's precision, as `load_network` reads them: a network trained under
    # jax_enable_x64 was written in float64 and could not be read back (found running the suite in 64 bits)
    eqx.tree_serialise_leaves(tmp, jax.tree.map(
        lambda leaf: leaf.astype(jnp.float32) if eqx.is_array(leaf) and jnp.issubdtype(leaf.dtype, jnp.floating)
        else leaf, network))
    tmp.replace(arrays)
    card = {"format": FORMAT, "version": VERSION, "architecture": architecture(network),
            "node_feature_names": list(NODE_FEATURE_NAMES), "element_feature_names": list(ELEMENT_FEATURE_NAMES),
            "record": record or {}}
    return write_json(stem_file(stem, ".json"), card)


def read_card(stem: str | Path) -> dict:
    path = stem_file(stem, ".json")
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise DataError(f"no network card at {path}; train one with `autoreparam meta train`") from error
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DataError(f"{path} is not valid JSON: {error}") from error
    except OSError as error:
        raise DataError(f"cannot read the network card {path}: {error.strerror}") from error
    if not isinstance(card, dict) or card.get("format") != FORMAT or card.get("version") != VERSION:
        raise DataError(f"{path} is not a version-{VERSION} autoreparam network card")
    if not isinstance(card.get("architecture"), dict):
        raise DataError(f"the network card {path} has no architecture; restore it, or retrain")
    _check_architecture(card["architecture"], path)
    if tuple(card.get("node_feature_names", ())) != NODE_FEATURE_NAMES or \
            tuple(card.get("element_feature_names", ())) != ELEMENT_FEATURE_NAMES:
        raise DataError(f"the network at {path} was trained on other graph features than this autoreparam "
                        "builds; retrain it with `autoreparam meta train`")
    return card


def load_network(stem: str | Path) -> tuple[MetaGNN | MetaEnsemble, dict]:
    """The network saved under ``stem`` and its card."""
    card = read_card(stem)
    # Shapes only: building real random weights to overwrite them cost 3.3 s of op-by-op compilation
    # on a fresh process (the shipped ensemble), reading the arrays 0.1 s.
    # The files hold float32 (with jax_enable_x64 on, the skeleton's float64 refused them; found in review).
    skeleton = jax.tree.map(lambda leaf: jax.ShapeDtypeStruct(leaf.shape, jnp.float32)
                            if isinstance(leaf, jax.ShapeDtypeStruct) and jnp.issubdtype(leaf.dtype, jnp.floating)
                            else leaf, eqx.filter_eval_shape(build_network, card["architecture"]))
    path = stem_file(stem, ".eqx")
    try:
        network = eqx.tree_deserialise_leaves(path, skeleton)
    except FileNotFoundError as error:
        raise DataError(f"cannot read the network weights {path}: no such file") from error
    except Exception as error:  # noqa: BLE001 -- Equinox's and NumPy's errors for a damaged file, named here
        raise DataError(f"cannot read the network weights {path} (truncated, damaged, or not the card's "
                        f"architecture: {type(error).__name__}: {str(error)[:200]}); restore it, or retrain with "
                        "`autoreparam meta train`") from error
    if not weights_finite(network):
        raise DataError(f"the network weights {path} hold NaN or infinite values; restore them, or retrain")
    return network, card


def save_ensemble(stem: str | Path, member_stems: list[str | Path]) -> Path:
    """Stack the networks saved under ``member_stems`` into one ensemble saved under ``stem``.

    The ensemble's card keeps every member's training record (``record["members"]``) and the first
    member's corpus, labels and families (the members must share them: they are one training run
    with different seeds; a mismatch is an error).
    """
    loaded = [load_network(s) for s in member_stems]
    records = [card["record"] for _, card in loaded]
    shared = ("corpus", "corpus_manifest", "labels", "num_models", "families")
    for key in shared:
        values = {json.dumps(r.get(key), sort_keys=True) for r in records}
        if len(values) > 1:
            raise DataError(f"the networks {[str(s) for s in member_stems]} were trained on different {key}; "
                            "an ensemble combines seeds of one training run")
    try:
        ensemble = stack_networks([network for network, _ in loaded])
    except ValueError as error:
        raise DataError(f"cannot stack {[str(s) for s in member_stems]}: {error}") from error
    record = {**{k: records[0].get(k) for k in shared}, "machine": records[0].get("machine"),
              "combination": "lambda = mean over members of sigmoid(logit) (meta/ensemble.py)",
              "members": [{"stem": str(s), "seed": r.get("seed"), "steps": r.get("steps"),
                           "seconds": r.get("seconds", {}), "config": r.get("config", {})}
                          for s, r in zip(member_stems, records)]}
    return save_network(stem, ensemble, record)

"""`ModelGraph`: the typed graph of one model as flat arrays, ready to batch; saved as JSON, never pickled."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from autoreparam.errors import DataError
from autoreparam.graph.types import LATENT_TYPES, SITE_TYPES, NodeType, reverse_type
from autoreparam.graph.vocabulary import label_id

FORMAT = "autoreparam.model_graph"
VERSION = 1


@dataclass(frozen=True, eq=False)
class ModelGraph:
    """Nodes, forward edges and latent elements of a model's graph (docs/graph.md).

    Nodes: ``node_type`` (`NodeType`), ``node_label`` (primitive or distribution name, "constant",
    "data"), ``node_name`` (site names, "" elsewhere: bookkeeping, never a feature), ``node_shape``
    and ``node_features`` ``(N, F)``. Edges: ``edge_index`` ``(2, E)`` rows source, target, and
    ``edge_type`` (`EdgeType`), data-flow direction only; `message_edges` adds the reverse edges.
    Elements: one row per scalar element of every latent, in program order: ``element_node`` (the
    latent's node), ``element_index`` (flat index within the site) and ``element_features`` ``(M, Fe)``.
    A predictor returns one lambda per element row.
    """

    node_type: np.ndarray
    node_label: tuple[str, ...]
    node_name: tuple[str, ...]
    node_shape: tuple[tuple[int, ...], ...]
    node_features: np.ndarray
    edge_index: np.ndarray
    edge_type: np.ndarray
    element_node: np.ndarray
    element_index: np.ndarray
    element_features: np.ndarray
    node_feature_names: tuple[str, ...]
    element_feature_names: tuple[str, ...]

    def __post_init__(self):
        n, e, m = len(self.node_type), self.edge_index.shape[1], len(self.element_node)
        checks = [
            (len(self.node_label) == len(self.node_name) == len(self.node_shape) == n, "node lists"),
            (self.node_features.shape == (n, len(self.node_feature_names)), "node_features"),
            (self.edge_index.shape == (2, e) and self.edge_type.shape == (e,), "edges"),
            (e == 0 or (self.edge_index.min() >= 0 and self.edge_index.max() < n), "edge_index range"),
            (self.element_index.shape == (m,), "element_index"),
            (self.element_features.shape == (m, len(self.element_feature_names)), "element_features"),
            (bool(np.all(np.isfinite(self.node_features))) and bool(np.all(np.isfinite(self.element_features))),
             "finite features"),
        ]
        for ok, what in checks:
            if not ok:
                raise DataError(f"inconsistent model graph: {what}")

    @property
    def num_nodes(self) -> int:
        return len(self.node_type)

    @property
    def num_edges(self) -> int:
        return int(self.edge_index.shape[1])

    @property
    def num_elements(self) -> int:
        return len(self.element_node)

    @property
    def node_subtype(self) -> np.ndarray:
        """Per node the id of its primitive or distribution (`vocabulary.label_id`)."""
        return np.array([label_id(label) for label in self.node_label], dtype=np.int32)

    @property
    def latent_nodes(self) -> np.ndarray:
        return np.flatnonzero(np.isin(self.node_type, [int(t) for t in LATENT_TYPES]))

    def site_node(self, name: str) -> int:
        """The node of the site called ``name``."""
        for i, (kind, node_name) in enumerate(zip(self.node_type, self.node_name)):
            if node_name == name and NodeType(kind) in SITE_TYPES:
                return i
        raise KeyError(name)

    def element_rows(self, name: str) -> np.ndarray:
        """Rows of the element arrays that belong to latent ``name``, in flat index order."""
        return np.flatnonzero(self.element_node == self.site_node(name))

    def message_edges(self, reverse: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``(edge_index, edge_type)`` for message passing, with the reverse edges appended when asked."""
        if not reverse:
            return self.edge_index, self.edge_type
        flipped = self.edge_index[::-1]
        types = np.array([reverse_type(t) for t in self.edge_type], dtype=np.int32)
        return np.concatenate([self.edge_index, flipped], axis=1), np.concatenate([self.edge_type, types])

    def describe(self) -> str:
        from autoreparam.graph.describe import describe

        return describe(self)

    def to_json(self) -> str:
        """Plain JSON (lists and strings); `from_json` reads it back."""
        payload = {
            "format": FORMAT, "version": VERSION,
            "node_type": self.node_type.tolist(), "node_label": list(self.node_label),
            "node_name": list(self.node_name), "node_shape": [list(s) for s in self.node_shape],
            "node_features": self.node_features.tolist(), "node_feature_names": list(self.node_feature_names),
            "edge_index": self.edge_index.tolist(), "edge_type": self.edge_type.tolist(),
            "element_node": self.element_node.tolist(), "element_index": self.element_index.tolist(),
            "element_features": self.element_features.tolist(),
            "element_feature_names": list(self.element_feature_names),
        }
        return json.dumps(payload, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> "ModelGraph":
        """Read `to_json`'s output; `DataError` if it is not a model graph of this version."""
        try:
            payload = json.loads(text)
        except json.JSONDecodeError as error:
            raise DataError(f"not a model graph: invalid JSON ({error})") from error
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            raise DataError(f"not a model graph: the JSON lacks format '{FORMAT}'")
        if payload.get("version") != VERSION:
            raise DataError(f"model graph version {payload.get('version')!r}; this autoreparam reads {VERSION}")
        try:
            return cls(
                node_type=np.asarray(payload["node_type"], dtype=np.int32),
                node_label=tuple(payload["node_label"]), node_name=tuple(payload["node_name"]),
                node_shape=tuple(tuple(int(d) for d in s) for s in payload["node_shape"]),
                node_features=_matrix(payload["node_features"], len(payload["node_feature_names"])),
                edge_index=np.asarray(payload["edge_index"], dtype=np.int32).reshape(2, -1),
                edge_type=np.asarray(payload["edge_type"], dtype=np.int32),
                element_node=np.asarray(payload["element_node"], dtype=np.int32),
                element_index=np.asarray(payload["element_index"], dtype=np.int32),
                element_features=_matrix(payload["element_features"], len(payload["element_feature_names"])),
                node_feature_names=tuple(payload["node_feature_names"]),
                element_feature_names=tuple(payload["element_feature_names"]),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise DataError(f"model graph JSON is incomplete or malformed: {error!r}") from error


def _matrix(rows, width: int) -> np.ndarray:
    return np.asarray(rows, dtype=np.float32).reshape(-1, width)

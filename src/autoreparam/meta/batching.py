"""Padded batches of model graphs: one jitted network program serves graphs of any size.

`autoreparam.graph.batch_graphs` makes the disjoint union of several graphs; here its arrays are
padded to sizes from a short ladder (powers of two), so the network compiles once per bucket, not
once per batch. Padding adds one *sink* node at the end: padded edges run from the sink to itself
and padded element rows read it, so nothing real receives a message from padding, and masks drop
the padded element rows from every loss and output.

Features are scaled by fixed, documented constants rather than by statistics of a training set:
log-magnitude columns (``log`` in their name, range [-30, 30]) by 1/10, counts of dimensions by 1/3,
signs, fractions and flags as they are. The scaling is part of the network's input format, so it
never drifts with the corpus.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from autoreparam.graph import GraphBatch, ModelGraph, batch_graphs

_MIN_BUCKET = 8


def feature_scale(names: Sequence[str]) -> np.ndarray:
    """Per column the constant a raw feature is multiplied by (see the module docstring)."""
    scale = []
    for name in names:
        if "log" in name:
            scale.append(0.1)
        elif name in ("rank", "event_dim", "exponent"):
            scale.append(1.0 / 3.0)
        else:
            scale.append(1.0)
    return np.asarray(scale, dtype=np.float32)


def bucket(size: int) -> int:
    """The padded size for ``size`` rows: the next power of two, at least ``_MIN_BUCKET``."""
    return max(_MIN_BUCKET, 1 << int(np.ceil(np.log2(max(size, 1)))))


class PaddedBatch(NamedTuple):
    """Arrays of a `GraphBatch` padded to bucket sizes; the last node of the padded node axis is the sink."""

    node_type: np.ndarray  # (N,) int32
    node_subtype: np.ndarray  # (N,) int32
    node_features: np.ndarray  # (N, F) float32, scaled
    node_graph: np.ndarray  # (N,) int32; the sink and padding nodes belong to graph G (a padding graph)
    edge_source: np.ndarray  # (E,) int32
    edge_target: np.ndarray  # (E,) int32
    edge_type: np.ndarray  # (E,) int32
    element_node: np.ndarray  # (M,) int32
    element_features: np.ndarray  # (M, Fe) float32, scaled
    element_graph: np.ndarray  # (M,) int32
    element_mask: np.ndarray  # (M,) float32: 1 for a real row whose element partial centring can rewrite
    graph_mask: np.ndarray  # (G,) float32: 1 for a real graph; its length (a static size) is the padded count

    @property
    def num_graphs(self) -> int:
        return int(self.graph_mask.shape[0])


def pad_batch(batch: GraphBatch, node_feature_names, element_feature_names,
              at_least: tuple[int, int, int, int] = (0, 0, 0, 0)) -> tuple[PaddedBatch, int]:
    """Pad ``batch``; returns the padded batch and the number of real element rows (they come first).

    ``at_least``: minimum padded (nodes, edges, elements, graphs), so that a training loop can give
    every batch the same shapes (one compilation).
    """
    n, m, e = len(batch.node_type), len(batch.element_node), batch.edge_index.shape[1]
    big_n, big_e, big_m = bucket(max(n + 1, at_least[0])), bucket(max(e, at_least[1])), bucket(max(m, at_least[2]))
    sink = big_n - 1
    graphs = bucket(max(batch.num_graphs + 1, at_least[3]))

    def pad(array, size, value):
        width = [(0, size - array.shape[0])] + [(0, 0)] * (array.ndim - 1)
        return np.pad(array, width, constant_values=value)

    reparameterisable = list(element_feature_names).index("reparameterisable")
    mask = (batch.element_features[:, reparameterisable] > 0.5).astype(np.float32)
    padded = PaddedBatch(
        node_type=pad(batch.node_type, big_n, 0),
        node_subtype=pad(batch.node_subtype, big_n, 0),
        node_features=pad(batch.node_features * feature_scale(node_feature_names), big_n, 0.0),
        node_graph=pad(batch.node_graph, big_n, graphs - 1),
        edge_source=pad(batch.edge_index[0], big_e, sink),
        edge_target=pad(batch.edge_index[1], big_e, sink),
        edge_type=pad(batch.edge_type, big_e, 0),
        element_node=pad(batch.element_node, big_m, sink),
        element_features=pad(batch.element_features * feature_scale(element_feature_names), big_m, 0.0),
        element_graph=pad(batch.element_graph, big_m, graphs - 1),
        element_mask=pad(mask, big_m, 0.0),
        graph_mask=(np.arange(graphs) < batch.num_graphs).astype(np.float32),
    )
    return padded, m


def pad_graphs(graphs: Sequence[ModelGraph], at_least=(0, 0, 0, 0)) -> tuple[PaddedBatch, list[slice]]:
    """Batch and pad ``graphs``; returns the batch and, per graph, the slice of its element rows."""
    graphs = list(graphs)
    padded, _ = pad_batch(batch_graphs(graphs), graphs[0].node_feature_names, graphs[0].element_feature_names,
                          at_least)
    offsets = np.cumsum([0] + [g.num_elements for g in graphs])
    return padded, [slice(int(a), int(b)) for a, b in zip(offsets[:-1], offsets[1:])]


def batch_sizes(graphs: Sequence[ModelGraph], batch: int) -> tuple[int, int, int, int]:
    """Padded sizes that hold any ``batch`` of ``graphs``: the sums over the largest ones, per axis."""
    def top(values):
        return int(np.sum(np.sort(np.asarray(values))[::-1][:batch]))

    return (top([g.num_nodes for g in graphs]) + 1, 2 * top([g.num_edges for g in graphs]),
            top([g.num_elements for g in graphs]), batch + 1)

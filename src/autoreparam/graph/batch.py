"""Batch several model graphs into one disjoint graph, the usual input of a message-passing network."""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from autoreparam.errors import ArgumentError
from autoreparam.graph.container import ModelGraph


class GraphBatch(NamedTuple):
    """Disjoint union of graphs: node and element ids are offset, ``*_graph`` says which graph owns a row.

    Edges include the reverse edges (types shifted by ``NUM_EDGE_TYPES``) unless built with
    ``reverse=False``. A predictor's lambdas are ``head(h[element_node], element_features)``.
    """

    node_type: np.ndarray  # (N,) int32
    node_subtype: np.ndarray  # (N,) int32, `vocabulary.label_id`
    node_features: np.ndarray  # (N, F) float32
    node_graph: np.ndarray  # (N,) int32
    edge_index: np.ndarray  # (2, E) int32
    edge_type: np.ndarray  # (E,) int32
    element_node: np.ndarray  # (M,) int32, into the batch's nodes
    element_features: np.ndarray  # (M, Fe) float32
    element_graph: np.ndarray  # (M,) int32
    num_graphs: int


def batch_graphs(graphs: Sequence[ModelGraph], reverse: bool = True) -> GraphBatch:
    """One `GraphBatch` of ``graphs``; their feature columns must agree."""
    graphs = list(graphs)
    if not graphs:
        raise ArgumentError("batch_graphs needs at least one graph")
    for g in graphs[1:]:
        if (g.node_feature_names, g.element_feature_names) != (graphs[0].node_feature_names,
                                                               graphs[0].element_feature_names):
            raise ArgumentError("graphs built with different feature columns cannot be batched; rebuild them")
    offsets = np.cumsum([0] + [g.num_nodes for g in graphs])[:-1]
    edges = [g.message_edges(reverse) for g in graphs]
    return GraphBatch(
        node_type=np.concatenate([g.node_type for g in graphs]).astype(np.int32),
        node_subtype=np.concatenate([g.node_subtype for g in graphs]).astype(np.int32),
        node_features=np.concatenate([g.node_features for g in graphs]).astype(np.float32),
        node_graph=np.concatenate([np.full(g.num_nodes, i) for i, g in enumerate(graphs)]).astype(np.int32),
        edge_index=np.concatenate([index + off for (index, _), off in zip(edges, offsets)], axis=1).astype(np.int32),
        edge_type=np.concatenate([types for _, types in edges]).astype(np.int32),
        element_node=np.concatenate([g.element_node + off for g, off in zip(graphs, offsets)]).astype(np.int32),
        element_features=np.concatenate([g.element_features for g in graphs]).astype(np.float32),
        element_graph=np.concatenate([np.full(g.num_elements, i) for i, g in enumerate(graphs)]).astype(np.int32),
        num_graphs=len(graphs),
    )

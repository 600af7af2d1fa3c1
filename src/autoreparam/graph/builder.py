"""Accumulates nodes and edges while the jaxpr is walked, then drops what feeds no site."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from autoreparam.graph.types import STATIC_TYPES, EdgeType, NodeType


@dataclass
class Node:
    """A node under construction. ``name`` is bookkeeping (site names) and never becomes a feature."""

    type: NodeType
    label: str  # primitive or distribution name; "constant" or "data" for static values
    shape: tuple[int, ...]
    dtype_kind: str  # numpy dtype kind: "f", "i", "u", "b"
    name: str = ""
    value: np.ndarray | None = None  # constant and data nodes only
    attrs: dict = field(default_factory=dict)  # primitive details the features read (see features.py)


class Static:
    """A value that does not depend on the latents; it becomes a node only where a node uses it."""

    __slots__ = ("raw", "node")

    def __init__(self, value):
        self.raw = value  # kept as JAX gave it: PRNG keys, for one, have no NumPy form
        self.node: int | None = None  # set when first materialised, so each use shares one node

    @property
    def value(self) -> np.ndarray:
        return np.asarray(self.raw)


def static_type(value: np.ndarray) -> NodeType:
    """CONSTANT for one distinct value (a scalar, or a broadcast scalar), DATA otherwise."""
    flat = value.reshape(-1)
    if flat.size <= 1 or bool(np.all(flat == flat[0])):
        return NodeType.CONSTANT
    return NodeType.DATA


class GraphBuilder:
    def __init__(self):
        self.nodes: list[Node] = []
        self.edges: list[tuple[int, int, EdgeType]] = []

    def add_node(self, node: Node) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def add_edge(self, source: int, target: int, edge_type: EdgeType) -> None:
        self.edges.append((source, target, EdgeType(edge_type)))

    def node_of(self, value: int | Static) -> int:
        """The node of a walked value: a node id as is, a static value materialised once."""
        if not isinstance(value, Static):
            return value
        if value.node is None:
            array = value.value
            kind = static_type(array)
            label = "constant" if kind == NodeType.CONSTANT else "data"
            value.node = self.add_node(Node(kind, label, array.shape, array.dtype.kind, value=array))
        return value.node

    def pruned(self) -> tuple[list[Node], list[tuple[int, int, EdgeType]]]:
        """Nodes and edges without primitives or static values that reach no site.

        A model may compute latent-dependent values it never uses in a distribution (e.g. a
        ``numpyro.deterministic`` for reporting); they say nothing about the density.
        """
        keep = [True] * len(self.nodes)
        changed = True
        while changed:
            out_degree = [0] * len(self.nodes)
            for source, target, _ in self.edges:
                if keep[source] and keep[target]:
                    out_degree[source] += 1
            changed = False
            for i, node in enumerate(self.nodes):
                prunable = node.type == NodeType.PRIMITIVE or node.type in STATIC_TYPES
                if keep[i] and prunable and out_degree[i] == 0:
                    keep[i] = False
                    changed = True
        new_id = np.cumsum(keep) - 1
        nodes = [n for n, k in zip(self.nodes, keep) if k]
        edges = [(int(new_id[s]), int(new_id[t]), e) for s, t, e in self.edges if keep[s] and keep[t]]
        return nodes, edges

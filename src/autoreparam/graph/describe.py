"""A text summary of a `ModelGraph` a person can read (the ``autoreparam graph`` command prints it)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from autoreparam.graph.types import SITE_TYPES, EdgeType, NodeType

_KIND = {
    NodeType.LATENT_LOC_SCALE: "latent (loc-scale)",
    NodeType.LATENT_OTHER: "latent (other)",
    NodeType.OBSERVED: "observed",
}
_MAX_DEPTH = 3


def _incoming(graph) -> dict[int, list[tuple[int, EdgeType]]]:
    incoming: dict[int, list[tuple[int, EdgeType]]] = {}
    for (source, target), kind in zip(graph.edge_index.T, graph.edge_type):
        incoming.setdefault(int(target), []).append((int(source), EdgeType(int(kind))))
    return incoming


def _shape(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _expression(graph, incoming, node: int, depth: int = 0) -> str:
    kind = NodeType(int(graph.node_type[node]))
    if kind in SITE_TYPES:
        return graph.node_name[node]
    if kind == NodeType.CONSTANT:
        row = dict(zip(graph.node_feature_names, graph.node_features[node]))
        value = row["mean_sign"] * np.exp(row["mean_log_abs"]) if row["mean_sign"] else 0.0
        return f"{value:.3g}" if not graph.node_shape[node] else f"{value:.3g}{_shape(graph.node_shape[node])}"
    if kind == NodeType.DATA:
        return f"data{_shape(graph.node_shape[node])}"
    if depth >= _MAX_DEPTH:
        return f"{graph.node_label[node]}(...)"
    operands = ", ".join(_expression(graph, incoming, s, depth + 1) for s, _ in incoming.get(node, []))
    return f"{graph.node_label[node]}({operands})"


def _counts(values, names) -> str:
    counts = Counter(int(v) for v in values)
    return ", ".join(f"{counts[int(k)]} {names(k)}" for k in sorted(counts))


def describe(graph) -> str:
    incoming = _incoming(graph)
    lines = [
        f"model graph: {graph.num_nodes} nodes, {graph.num_edges} edges (+{graph.num_edges} reverse), "
        f"{graph.num_elements} latent elements",
        "nodes: " + _counts(graph.node_type, lambda k: NodeType(k).name.lower()),
        "edges: " + _counts(graph.edge_type, lambda k: EdgeType(k).name.lower()),
        "sites (program order):",
    ]
    sites = [i for i in range(graph.num_nodes) if NodeType(int(graph.node_type[i])) in SITE_TYPES]
    width = max(len(graph.node_name[i]) for i in sites)
    for i in sites:
        parents = "; ".join(
            f"{kind.name.lower()} <- {_expression(graph, incoming, source)}" for source, kind in incoming.get(i, [])
        )
        kind = _KIND[NodeType(int(graph.node_type[i]))]
        lines.append(f"  {graph.node_name[i]:<{width}}  {kind:<18} {graph.node_label[i]:<16} "
                     f"{_shape(graph.node_shape[i]):<8} {parents}")
    ratio = graph.element_features[:, graph.element_feature_names.index("log_scale2_curvature")]
    lines.append("element probe log(s^2 |c|) at the prior centre, min / median / max "
                 "(paper 000 Section 3; > 0 favours centring):")
    for i in sites:
        rows = np.flatnonzero(graph.element_node == i)
        if NodeType(int(graph.node_type[i])) == NodeType.LATENT_LOC_SCALE and rows.size:
            values = ratio[rows]
            lines.append(f"  {graph.node_name[i]:<{width}}  {values.min():7.2f} {np.median(values):7.2f} "
                         f"{values.max():7.2f}   ({rows.size} element{'s' if rows.size > 1 else ''})")
    return "\n".join(lines)

"""`assert_same_graph`: two models have the same graph up to node order, names and float noise.

Node order is not part of a graph's meaning (two equivalent programs may compute independent terms in
another order), so nodes are matched by Weisfeiler-Lehman colour refinement: a node's colour starts as
``(type, label, shape without its size-1 axes)`` and is refined by the multiset of ``(edge type, direction, neighbour colour)``
until the partition is stable. Same graph means: the same colour multiset, the same coloured edge
multiset, and, within each colour class, the same node features and element features (matched by
sorting, compared with a tolerance). Colour refinement cannot tell apart some non-isomorphic regular
graphs; the model graphs here (typed DAGs rooted at distinct sites) are far from that case.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from autoreparam.graph.container import ModelGraph
from autoreparam.graph.types import LATENT_TYPES


def _layout_free(shape) -> tuple[int, ...]:
    """A shape without its size-1 axes: ``exp(log_tau)`` of shape () or (1,) is the same model."""
    return tuple(int(d) for d in shape if d != 1)


def colour_refinement(graphs: list[ModelGraph]) -> list[np.ndarray]:
    """Stable WL colours of every node of every graph, from one palette shared by all the graphs."""
    colours = []
    palette: dict = {}
    for g in graphs:
        keys = [(int(t), label, _layout_free(shape)) for t, label, shape in zip(g.node_type, g.node_label, g.node_shape)]
        colours.append(np.array([palette.setdefault(k, len(palette)) for k in keys]))
    for _ in range(max(g.num_nodes for g in graphs) + 1):
        palette = {}
        refined = []
        for g, colour in zip(graphs, colours):
            neighbours: list[list] = [[] for _ in range(g.num_nodes)]
            for (source, target), kind in zip(g.edge_index.T, g.edge_type):
                neighbours[target].append((int(kind), "in", int(colour[source])))
                neighbours[source].append((int(kind), "out", int(colour[target])))
            signatures = [(int(colour[i]), tuple(sorted(neighbours[i]))) for i in range(g.num_nodes)]
            refined.append(signatures)
        # Number colours in sorted signature order so the palette does not depend on graph order.
        ordered = sorted({s for signatures in refined for s in signatures})
        palette = {s: i for i, s in enumerate(ordered)}
        new = [np.array([palette[s] for s in signatures]) for signatures in refined]
        if all(len(set(n)) == len(set(c)) for n, c in zip(new, colours)):
            return new
        colours = new
    return colours


def _sorted_rows(rows: np.ndarray) -> np.ndarray:
    return np.lexsort(np.round(rows, 3).T[::-1]) if rows.size else np.arange(len(rows))


def _class_order(graph: ModelGraph, colour: np.ndarray) -> list[int]:
    """Nodes ordered by colour, then (within a colour) by their rounded features."""
    order = []
    for c in sorted(set(colour.tolist())):
        members = np.flatnonzero(colour == c)
        order.extend(members[_sorted_rows(graph.node_features[members])].tolist())
    return order


def graph_differences(first: ModelGraph, second: ModelGraph, rtol: float = 1e-4, atol: float = 1e-4) -> list[str]:
    """What differs between two graphs (empty when they are the same graph)."""
    if first.node_feature_names != second.node_feature_names or \
            first.element_feature_names != second.element_feature_names:
        return ["the graphs have different feature columns"]
    counts = [(g.num_nodes, g.num_edges, g.num_elements) for g in (first, second)]
    if counts[0] != counts[1]:
        return [f"(nodes, edges, latent elements): {counts[0]} != {counts[1]}"]
    c1, c2 = colour_refinement([first, second])
    if Counter(c1.tolist()) != Counter(c2.tolist()):
        labels = [Counter(zip(g.node_label, c.tolist())) for g, c in ((first, c1), (second, c2))]
        only = sorted({label for label, _ in (labels[0] - labels[1]) + (labels[1] - labels[0])})
        return [f"different structure around nodes labelled {only}"]
    edges = [Counter((int(c[s]), int(c[t]), int(k)) for (s, t), k in zip(g.edge_index.T, g.edge_type))
             for g, c in ((first, c1), (second, c2))]
    if edges[0] != edges[1]:
        return ["different typed edges between matching nodes"]
    order1, order2 = _class_order(first, c1), _class_order(second, c2)
    problems = []
    for i, j in zip(order1, order2):
        if not np.allclose(first.node_features[i], second.node_features[j], rtol=rtol, atol=atol):
            bad = np.flatnonzero(~np.isclose(first.node_features[i], second.node_features[j], rtol=rtol, atol=atol))
            columns = [first.node_feature_names[k] for k in bad]
            problems.append(f"node {first.node_label[i]} '{first.node_name[i]}' / '{second.node_name[j]}': "
                            f"features {columns} differ")
        elif first.node_type[i] in [int(t) for t in LATENT_TYPES]:
            rows1, rows2 = np.flatnonzero(first.element_node == i), np.flatnonzero(second.element_node == j)
            e1, e2 = first.element_features[rows1], second.element_features[rows2]
            if not np.allclose(e1, e2, rtol=rtol, atol=atol):
                problems.append(f"latent '{first.node_name[i]}' / '{second.node_name[j]}': element features differ "
                                f"(largest difference {np.max(np.abs(e1 - e2)):.3g})")
    return problems


def assert_same_graph(first: ModelGraph, second: ModelGraph, rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """`AssertionError` listing the differences unless both are the same graph (see module docstring)."""
    problems = graph_differences(first, second, rtol=rtol, atol=atol)
    if problems:
        raise AssertionError("the model graphs differ:\n  " + "\n  ".join(problems) +
                             f"\n\nfirst:\n{first.describe()}\n\nsecond:\n{second.describe()}")

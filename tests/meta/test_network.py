"""The network: output shapes, and invariance to batching, padding and the order of nodes."""

from __future__ import annotations

import numpy as np
import pytest

from autoreparam.graph import ModelGraph
from autoreparam.meta.batching import bucket, pad_graphs
from autoreparam.meta.predict import network_logits

from .conftest import small_network


@pytest.mark.parametrize("form, outputs", [("tied", 1), ("separate", 2)])
def test_one_row_per_element_and_form(graphs, form, outputs):
    logits = network_logits(small_network(form), graphs)
    assert [x.shape for x in logits] == [(g.num_elements, outputs) for g in graphs]
    assert all(np.all(np.isfinite(x)) for x in logits)


def test_padding_keeps_the_sink_last_and_masks_padding(graphs):
    padded, rows = pad_graphs(graphs)
    real = sum(g.num_nodes for g in graphs)
    assert len(padded.node_type) == bucket(real + 1) and padded.node_graph[-1] == padded.num_graphs - 1
    assert rows[-1].stop == sum(g.num_elements for g in graphs)
    assert np.all(padded.element_mask[rows[-1].stop:] == 0) and np.all(padded.element_node[rows[-1].stop:] == len(padded.node_type) - 1)


def test_a_graph_predicts_the_same_alone_and_in_a_batch(graphs, network):
    alone = [network_logits(network, [g])[0] for g in graphs]
    together = network_logits(network, graphs)
    reversed_batch = network_logits(network, graphs[::-1])[::-1]
    for a, b, c in zip(alone, together, reversed_batch):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-5)


def _permuted(graph: ModelGraph, order: np.ndarray) -> ModelGraph:
    """The same graph with node ``order[k]`` stored at position k."""
    position = np.argsort(order)
    return ModelGraph(
        node_type=graph.node_type[order], node_label=tuple(graph.node_label[i] for i in order),
        node_name=tuple(graph.node_name[i] for i in order), node_shape=tuple(graph.node_shape[i] for i in order),
        node_features=graph.node_features[order], edge_index=position[graph.edge_index][:, ::-1],
        edge_type=graph.edge_type[::-1], element_node=position[graph.element_node],
        element_index=graph.element_index, element_features=graph.element_features,
        node_feature_names=graph.node_feature_names, element_feature_names=graph.element_feature_names)


def test_the_order_of_nodes_and_edges_does_not_matter(graphs, network):
    graph = graphs[0]
    order = np.random.default_rng(0).permutation(graph.num_nodes)
    assert not np.array_equal(order, np.arange(graph.num_nodes))
    np.testing.assert_allclose(network_logits(network, [graph])[0], network_logits(network, [_permuted(graph, order)])[0],
                               rtol=1e-5, atol=1e-5)


def test_extra_padding_changes_nothing(graphs, network):
    import equinox as eqx

    from autoreparam.meta.network import as_jax

    small, rows = pad_graphs(graphs)
    large, _ = pad_graphs(graphs, at_least=(4 * len(small.node_type), 4 * len(small.edge_type), 4 * len(small.element_node), 9))
    forward = eqx.filter_jit(lambda net, batch: net(batch))
    a = np.asarray(forward(network, as_jax(small)))[: rows[-1].stop]
    b = np.asarray(forward(network, as_jax(large)))[: rows[-1].stop]
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)

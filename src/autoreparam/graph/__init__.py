"""The typed graph of a NumPyro model, for predictors of its parameterisation (docs/graph.md).

    from autoreparam.graph import model_graph
    graph = model_graph(model, *args, **kwargs)
    print(graph.describe())

This package sits at the site-analysis level: it imports `autoreparam.reparam` and nothing above it.
"""

from autoreparam.graph.batch import GraphBatch, batch_graphs
from autoreparam.graph.build import model_graph
from autoreparam.graph.compare import assert_same_graph, graph_differences
from autoreparam.graph.container import ModelGraph
from autoreparam.graph.features import NODE_FEATURES
from autoreparam.graph.probes import ELEMENT_FEATURES
from autoreparam.graph.types import EdgeType, NodeType

__all__ = [
    "ELEMENT_FEATURES",
    "NODE_FEATURES",
    "EdgeType",
    "GraphBatch",
    "ModelGraph",
    "NodeType",
    "assert_same_graph",
    "batch_graphs",
    "graph_differences",
    "model_graph",
]

"""The typed graph of a NumPyro model, for predictors of its parameterisation (docs/graph.md).

    from autoreparam.graph import model_graph
    graph = model_graph(model, *args, **kwargs)
    print(graph.describe())

This package sits at the site-analysis level: it imports `autoreparam.reparam` and nothing above it.
"""

from autoreparam.graph.build import model_graph
from autoreparam.graph.container import ModelGraph
from autoreparam.graph.features import NODE_FEATURES
from autoreparam.graph.probes import ELEMENT_FEATURES
from autoreparam.graph.types import EdgeType, NodeType

__all__ = ["ELEMENT_FEATURES", "NODE_FEATURES", "EdgeType", "ModelGraph", "NodeType", "model_graph"]

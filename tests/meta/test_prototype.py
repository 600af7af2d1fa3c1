"""Paper 003's prototype (the baseline): its graph keeps constants, sample sites and add/mul/exp only."""

from __future__ import annotations

import jax
import numpy as np

from autoreparam.graph import model_graph
from autoreparam.meta.prototype import EDGE_TYPES, OPS, PrototypeGNN, prototype_graph, prototype_lambda
from autoreparam.models.funnels import funnel_with_observation

from .conftest import SIGMA, Y


def test_the_funnel_graph_is_the_prototypes():
    graph = model_graph(funnel_with_observation, y=10.0, sigma=0.5)
    proto = prototype_graph(graph)
    # z, x, y, exp(z) are sample nodes; the constants 0, 1, 10 (y's value) and 0.5 are const nodes.
    assert sorted(proto.kind.tolist()).count(1) == 4
    assert set(np.round(proto.value[proto.kind == 0], 3).tolist()) == {0.0, 0.5, 1.0, 10.0}
    used = {EDGE_TYPES[t][1] for t in proto.edge_type}
    assert used <= set(OPS) | {"loc", "scale", "obs"} and "exp" in used


def test_primitives_outside_add_mul_exp_are_dropped_and_lambda_is_per_element(graphs):
    from autoreparam.models.hierarchical import eight_schools

    graph = model_graph(eight_schools, SIGMA, y=Y)
    proto = prototype_graph(graph)
    assert proto.element_node.shape == (graph.num_elements,)
    lam = prototype_lambda(PrototypeGNN(key=jax.random.PRNGKey(0)), graph)
    assert lam.shape == (graph.num_elements, 1) and np.all((lam >= 0) & (lam <= 1))

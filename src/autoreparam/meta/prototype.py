"""Paper 003's prototype, re-implemented as the baseline to beat (not its code; its design).

Paper 003 ("Method", steps 2-4) and its public prototype: the graph keeps constants and sample
sites as nodes and only ``add``, ``mul`` and ``exp`` as operations (op results count as sample
nodes); edges are typed by (source kind, operation or distribution slot, target kind), with a
reverse type for edges out of non-constant nodes. A constant c starts as ``[c^0, ..., c^(d-1)]``, a
sample node as zeros. Each of ``num_layers`` rounds computes ``h <- (h + sum_in A_type h_src) / 2``
with one d x d matrix per edge type (the prototype computes an MLP update and then overwrites it
with this average, so its message passing is linear), and a tanh MLP (d, 50, 50, 1) on the
L2-normalised state, then a sigmoid, gives one lambda per sample node. It was trained on 1,000
observed funnels only (z ~ N(0, 1), x ~ N(0, e^z), y ~ N(x, sigma), y ~ U(-20, 20),
sigma ~ U(0.1, 20)) by the summed ELBO of per-model mean-field guides (100 particles, Adam at
1e-2): 1,000 steps with the network frozen, then 2,000 joint steps.

Here the prototype's graph is derived from our `ModelGraph`: other primitives and their edges are
dropped (the prototype records none), a data tensor becomes one constant node holding its mean (the
prototype has one node per element), and every element of a latent gets its node's lambda.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from autoreparam.graph import ModelGraph
from autoreparam.graph.types import EdgeType, NodeType

OPS = ("add", "mul", "exp")
SLOTS = ("obs", "scale", "loc")
KINDS = ("const", "sample")
EDGE_TYPES = [(u, op, v, inv) for inv in (False, True) for u, op, v in itertools.product(KINDS, OPS + SLOTS, KINDS)]
EDGE_ID = {t: i for i, t in enumerate(EDGE_TYPES)}
_SLOT = {int(EdgeType.LOC): "loc", int(EdgeType.SCALE): "scale", int(EdgeType.OBSERVED_OF): "obs"}


class PrototypeGraph(NamedTuple):
    """Nodes (kind 0 const, 1 sample; a constant's value) and typed edges; element rows -> node."""

    kind: np.ndarray  # (N,) int32
    value: np.ndarray  # (N,) float32, constants only
    source: np.ndarray  # (E,) int32
    target: np.ndarray  # (E,) int32
    edge_type: np.ndarray  # (E,) int32
    element_node: np.ndarray  # (M,) int32


def _constant_value(graph: ModelGraph, node: int) -> float:
    names = graph.node_feature_names
    sign = graph.node_features[node, names.index("mean_sign")]
    log_abs = graph.node_features[node, names.index("mean_log_abs")]
    return 0.0 if log_abs <= -30 else float(sign * np.exp(log_abs))


def prototype_graph(graph: ModelGraph) -> PrototypeGraph:
    """The prototype's view of ``graph`` (see the module docstring)."""
    keep = []
    for i, (kind, label) in enumerate(zip(graph.node_type, graph.node_label)):
        if kind in (NodeType.CONSTANT, NodeType.DATA):
            keep.append((i, 0))
        elif kind != NodeType.PRIMITIVE or label in OPS:
            keep.append((i, 1))
    index = {old: new for new, (old, _) in enumerate(keep)}
    kinds = np.array([k for _, k in keep], dtype=np.int32)
    values = np.array([_constant_value(graph, old) if k == 0 else 0.0 for old, k in keep], dtype=np.float32)
    sources, targets, types = [], [], []
    for (s, t), e in zip(graph.edge_index.T, graph.edge_type):
        if s not in index or t not in index:
            continue
        target_label = graph.node_label[t]
        op = _SLOT.get(int(e)) if graph.node_type[t] != NodeType.PRIMITIVE else target_label
        if op is None:
            continue  # other distribution parameters: the prototype has no slot for them
        u, v = KINDS[kinds[index[s]]], KINDS[kinds[index[t]]]
        sources.append(index[s]), targets.append(index[t]), types.append(EDGE_ID[(u, op, v, False)])
        if u != "const":
            sources.append(index[t]), targets.append(index[s]), types.append(EDGE_ID[(v, op, u, True)])
    element_node = np.array([index[n] for n in graph.element_node], dtype=np.int32)
    return PrototypeGraph(kinds, values, np.array(sources, np.int32), np.array(targets, np.int32),
                          np.array(types, np.int32), element_node)


class PrototypeGNN(eqx.Module):
    """The prototype's network: linear typed message passing, then an MLP head on normalised states."""

    edge_weight: jax.Array  # (len(EDGE_TYPES), d, d)
    head: eqx.nn.MLP
    hidden: int = eqx.field(static=True)
    num_layers: int = eqx.field(static=True)

    def __init__(self, hidden: int = 5, num_layers: int = 5, *, key):
        k1, k2 = jax.random.split(key)
        self.hidden, self.num_layers = hidden, num_layers
        self.edge_weight = jax.random.normal(k1, (len(EDGE_TYPES), hidden, hidden))
        self.head = eqx.nn.MLP(hidden, 1, 10 * hidden, depth=2, activation=jnp.tanh, key=k2)

    def __call__(self, graph: PrototypeGraph) -> jax.Array:
        """lambda per node ``(N,)``."""
        powers = graph.value[:, None] ** jnp.arange(self.hidden)[None, :]
        h = jnp.where(graph.kind[:, None] == 0, powers, 0.0)
        for _ in range(self.num_layers):
            messages = jnp.einsum("ei,eij->ej", h[graph.source], self.edge_weight[graph.edge_type])
            h = (h + jax.ops.segment_sum(messages, graph.target, h.shape[0])) / 2.0
        normalised = h / jnp.maximum(jnp.linalg.norm(h, axis=-1, keepdims=True), 1e-12)
        return jax.nn.sigmoid(jax.vmap(self.head)(normalised)[:, 0])


# Module-level: a jit made per call compiled again for every graph, even of a shape seen before.
_per_node = eqx.filter_jit(lambda net, g: net(g))


def prototype_lambda(network: PrototypeGNN, graph: ModelGraph) -> np.ndarray:
    """lambda per element row of ``graph`` (every element of a latent gets its node's value)."""
    proto = prototype_graph(graph)
    per_node = _per_node(network, PrototypeGraph(*(jnp.asarray(a) for a in proto)))
    return np.asarray(per_node)[proto.element_node][:, None].astype(np.float64)

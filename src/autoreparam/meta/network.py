"""The typed message-passing network that reads a model graph and predicts a centring per latent element.

Paper 003 ("Method", step 3) passes messages ``v' = phi(sum_u A_(u,v) u)`` with one learnable matrix
per edge type; its prototype keeps the update linear. Here (docs/meta.md):

- node state ``h0 = W_in x + E_type[type] + E_label[primitive or distribution]`` from the scaled node
  features (`batching.feature_scale`);
- ``num_steps`` rounds, weights shared between rounds (a recurrent network: the finite-iteration form
  of the implicit, fixed-point GNN of paper 003's Discussion, so that one set of weights serves
  graphs of any depth): every edge of type t carries ``A_t LN(h_src) + b_t`` (forward and reverse
  edges have their own types), each node averages what it receives, and a nonlinear residual update
  ``h += MLP([LN(h), messages, graph mean of LN(h)])`` (the graph mean is a virtual node: it gives
  every node the whole model's context in one round);
- a per-element head ``logit = MLP([h[node], e]) + W_skip e`` from the node's state and the element's
  own probe features ``e`` (prior scale against likelihood curvature, paper 000 Section 3); one
  output (tied lambda, paper 000 Section 5.2) or two (a for the location, b for the scale, 004).

Equinox style: sizes are static fields, ``key=`` keyword-only, ``__call__`` takes one padded batch.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from autoreparam.graph.types import NUM_EDGE_TYPES, NodeType
from autoreparam.graph.vocabulary import NUM_LABELS
from autoreparam.meta.batching import PaddedBatch

FORMS = {"tied": 1, "separate": 2}
# Where the graph's per-element probes are read (`autoreparam.graph.probes`): the prior points, or the
# mean and +-1 sd of a short non-centred fit (`autoreparam.meta.fit_points`). A network reads the
# features it was trained on, so it carries its choice.
PROBES = ("prior", "fit")


def _segment_mean(values, segments, num_segments):
    total = jax.ops.segment_sum(values, segments, num_segments)
    count = jax.ops.segment_sum(jnp.ones(values.shape[:1], values.dtype), segments, num_segments)
    return total / jnp.maximum(count, 1.0)[:, None]


class MetaGNN(eqx.Module):
    """Graph -> one logit (tied) or two (separate) per latent element; see the module docstring."""

    node_in: eqx.nn.Linear
    type_embedding: jax.Array
    label_embedding: jax.Array
    message_weight: jax.Array  # (2 * NUM_EDGE_TYPES, hidden, hidden)
    message_bias: jax.Array  # (2 * NUM_EDGE_TYPES, hidden)
    norm: eqx.nn.LayerNorm
    update: eqx.nn.MLP
    head: eqx.nn.MLP
    skip: eqx.nn.Linear
    hidden: int = eqx.field(static=True)
    num_steps: int = eqx.field(static=True)
    form: str = eqx.field(static=True)
    probes: str = eqx.field(static=True)  # where its graphs' probes are read: "prior" or "fit" (graph/probes.py)

    def __init__(self, num_node_features: int, num_element_features: int, *, hidden: int = 64,
                 num_steps: int = 8, form: str = "tied", probes: str = "prior", key: jax.Array):
        if form not in FORMS:
            raise ValueError(f"form must be one of {tuple(FORMS)}, got {form!r}")
        if probes not in PROBES:
            raise ValueError(f"probes must be one of {PROBES}, got {probes!r}")
        keys = jax.random.split(key, 7)
        edge_types = 2 * NUM_EDGE_TYPES
        self.hidden, self.num_steps, self.form, self.probes = int(hidden), int(num_steps), form, probes
        self.node_in = eqx.nn.Linear(num_node_features, hidden, key=keys[0])
        self.type_embedding = 0.1 * jax.random.normal(keys[1], (len(NodeType), hidden))
        self.label_embedding = 0.1 * jax.random.normal(keys[2], (NUM_LABELS, hidden))
        self.message_weight = jax.random.normal(keys[3], (edge_types, hidden, hidden)) / jnp.sqrt(hidden)
        self.message_bias = jnp.zeros((edge_types, hidden))
        self.norm = eqx.nn.LayerNorm(hidden)
        self.update = eqx.nn.MLP(3 * hidden, hidden, hidden, depth=2, activation=jax.nn.gelu, key=keys[4])
        self.head = eqx.nn.MLP(hidden + num_element_features, FORMS[form], hidden, depth=2,
                               activation=jax.nn.gelu, key=keys[5])
        self.skip = eqx.nn.Linear(num_element_features, FORMS[form], key=keys[6])

    def node_states(self, batch: PaddedBatch) -> jax.Array:
        """``(N, hidden)`` node states after ``num_steps`` rounds of typed message passing."""
        n = batch.node_type.shape[0]
        h = (jax.vmap(self.node_in)(batch.node_features) + self.type_embedding[batch.node_type]
             + self.label_embedding[batch.node_subtype])
        in_degree = jax.ops.segment_sum(jnp.ones_like(batch.edge_target, dtype=h.dtype), batch.edge_target, n)
        in_degree = jnp.maximum(in_degree, 1.0)[:, None]

        def round_(_, h):
            x = jax.vmap(self.norm)(h)
            # All edge types' transforms of every node, then one gather: (N, T, d) instead of (E, d, d).
            transformed = jnp.einsum("nd,tde->nte", x, self.message_weight) + self.message_bias[None]
            messages = transformed[batch.edge_source, batch.edge_type]
            received = jax.ops.segment_sum(messages, batch.edge_target, n) / in_degree
            context = _segment_mean(x, batch.node_graph, batch.num_graphs)[batch.node_graph]
            return h + jax.vmap(self.update)(jnp.concatenate([x, received, context], axis=-1))

        return jax.lax.fori_loop(0, self.num_steps, round_, h)

    def __call__(self, batch: PaddedBatch) -> jax.Array:
        """``(M, 1)`` (tied) or ``(M, 2)`` (separate: a, b) logits, one row per (padded) element row."""
        h = self.node_states(batch)
        inputs = jnp.concatenate([jax.vmap(self.norm)(h)[batch.element_node], batch.element_features], axis=-1)
        return jax.vmap(self.head)(inputs) + jax.vmap(self.skip)(batch.element_features)


def as_jax(batch: PaddedBatch) -> PaddedBatch:
    """The batch's arrays as JAX arrays."""
    return PaddedBatch(*(jnp.asarray(a) for a in batch))

"""`model_graph`: trace a NumPyro model and assemble its typed graph (docs/graph.md)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from autoreparam.errors import DataError
from autoreparam.graph.builder import GraphBuilder, Node, Static
from autoreparam.graph.container import ModelGraph
from autoreparam.graph.features import NODE_FEATURE_NAMES, node_feature_matrix
from autoreparam.graph.probes import ELEMENT_FEATURE_NAMES, probe_elements
from autoreparam.graph.program import SiteRecord, parameter_jaxpr, python_branches_refused, trace_sites
from autoreparam.graph.types import EdgeType, NodeType
from autoreparam.graph.walker import walk
from autoreparam.reparam.sites import analyse_model


def _site_node(site: SiteRecord) -> Node:
    if site.observed:
        kind = NodeType.OBSERVED
    else:
        kind = NodeType.LATENT_LOC_SCALE if site.family is not None else NodeType.LATENT_OTHER
    attrs = {"event_dim": site.event_dim, "log_likelihood_scale": site.log_likelihood_scale}
    return Node(kind, site.distribution, site.shape, site.value.dtype.kind, name=site.name, attrs=attrs)


def _link_sites(builder: GraphBuilder, sites: list[SiteRecord], site_nodes: list[int], outputs: list) -> None:
    """Typed parameter edges into every site, and the observed-of edge from its data."""
    position = 0
    for site, node in zip(sites, site_nodes):
        for _, edge_type in site.parameters:
            builder.add_edge(builder.node_of(outputs[position]), node, edge_type)
            position += 1
        if site.observed and site.distribution != "Unit":  # a factor's "observation" is an empty placeholder
            builder.add_edge(builder.node_of(Static(site.value)), node, EdgeType.OBSERVED_OF)


def _check_static_values(nodes: list[Node], edges) -> None:
    """Non-finite data computed inside the model (e.g. log 0) would become NaN features: name where it goes.
    Constants may be infinite: JAX's own code holds -inf and NaN literals (softmax, logsumexp, var; they
    were refused as bad data; found in review), and their features are clipped (`features`)."""
    for i, node in enumerate(nodes):
        if node.type == NodeType.DATA and node.value.dtype.kind == "f" and not np.all(np.isfinite(node.value)):
            target = next(nodes[t] for s, t, _ in edges if s == i)
            where = f"site '{target.name}'" if target.name else f"primitive '{target.label}'"
            raise DataError(f"a value computed from the data and used by {where} contains NaN or infinite "
                            "elements; fix the data or the model's preprocessing")


def model_graph(model: Callable, /, *args, seed: int = 0, probe_points: dict | None = None, **kwargs) -> ModelGraph:
    """The typed graph of ``model(*args, **kwargs)`` with its node features and per-element probes.

    ``probe_points`` (``{latent: (3, *shape)}``, original coordinates) moves the probes from the prior
    points to others (`probe_elements`).

    ``seed`` seeds the one prior draw the model is traced at and Hutchinson's probe vectors (sites of
    more than 256 elements); nothing else in the graph is random. Raises `UnsupportedError` naming any
    primitive, distribution or wrapper it does not cover, and site analysis' errors (no latent,
    discrete latent, non-finite data).
    """
    with python_branches_refused():  # site analysis traces the model too
        analyse_model(model, *args, seed=seed, **kwargs)  # the same validation as every other entry point
    sites = trace_sites(model, args, kwargs, seed)
    closed = parameter_jaxpr(model, args, kwargs, sites)

    builder = GraphBuilder()
    site_nodes = [builder.add_node(_site_node(s)) for s in sites]  # first, so pruning never renumbers them
    latent_nodes = [node for site, node in zip(sites, site_nodes) if not site.observed]
    outputs = walk(builder, closed.jaxpr, closed.consts, latent_nodes)
    _link_sites(builder, sites, site_nodes, outputs)
    nodes, edges = builder.pruned()
    _check_static_values(nodes, edges)

    latents = [s for s in sites if not s.observed]
    per_site = probe_elements(model, args, kwargs, latents, seed, points=probe_points)
    element_features = dict(zip(latent_nodes, per_site))
    return ModelGraph(
        node_type=np.array([int(n.type) for n in nodes], dtype=np.int32),
        node_label=tuple(n.label for n in nodes),
        node_name=tuple(n.name for n in nodes),
        node_shape=tuple(tuple(int(d) for d in n.shape) for n in nodes),
        node_features=node_feature_matrix(nodes, element_features, ELEMENT_FEATURE_NAMES),
        edge_index=np.array([[s for s, _, _ in edges], [t for _, t, _ in edges]], dtype=np.int32).reshape(2, -1),
        edge_type=np.array([int(e) for _, _, e in edges], dtype=np.int32),
        element_node=np.concatenate([np.full(s.size, n, dtype=np.int32) for s, n in zip(latents, latent_nodes)]),
        element_index=np.concatenate([np.arange(s.size, dtype=np.int32) for s in latents]),
        element_features=np.concatenate(per_site, axis=0),
        node_feature_names=NODE_FEATURE_NAMES,
        element_feature_names=ELEMENT_FEATURE_NAMES,
    )

"""Node and edge types of the model graph (docs/graph.md describes each one).

The integer values are part of the saved format and of a trained GNN's embedding tables: append new
members, never renumber.
"""

from __future__ import annotations

from enum import IntEnum


class NodeType(IntEnum):
    """What a node stands for. One node per tensor-level site or primitive, whatever its size."""

    LATENT_LOC_SCALE = 0  # a latent whose family partial centring can rewrite (one lambda per element)
    LATENT_OTHER = 1  # a latent of another family (Gamma, Beta, Dirichlet, ...): left centred
    OBSERVED = 2  # an observed sample site (its log-likelihood term)
    PRIMITIVE = 3  # one JAX primitive applied to at least one latent-dependent operand
    CONSTANT = 4  # a value that does not depend on the latents and has one distinct element
    DATA = 5  # a value that does not depend on the latents and has several distinct elements


LATENT_TYPES = (NodeType.LATENT_LOC_SCALE, NodeType.LATENT_OTHER)
SITE_TYPES = LATENT_TYPES + (NodeType.OBSERVED,)
STATIC_TYPES = (NodeType.CONSTANT, NodeType.DATA)


class EdgeType(IntEnum):
    """What a (forward, data-flow) edge means; every edge points from a value to where it is used."""

    LOC = 0  # value -> site: the site's location parameter
    SCALE = 1  # value -> site: the site's scale parameter (Exponential: 1 / rate)
    PARAM = 2  # value -> site: any other distribution parameter (df, logits, rate, concentration...)
    OBSERVED_OF = 3  # data -> observed site: the observed values
    OPERAND = 4  # value -> primitive, where the position does not matter (unary or commutative ops)
    OPERAND_0 = 5  # value -> primitive: first operand of an ordered op (sub, div, gather, dot_general...)
    OPERAND_1 = 6  # second operand of an ordered op
    OPERAND_2 = 7  # third or later operand of an ordered op (select_n's second case, concatenate...)


NUM_EDGE_TYPES = len(EdgeType)


def reverse_type(edge_type: int) -> int:
    """The type of the reverse edge: forward types shifted by ``NUM_EDGE_TYPES``.

    Message passing in both directions with distinct weights (a site learns both from its parents
    and from the likelihood terms it feeds) needs the direction in the type.
    """
    return int(edge_type) + NUM_EDGE_TYPES


def operand_edge_type(position: int, ordered: bool) -> EdgeType:
    """The edge type of operand ``position`` of a primitive whose operand order does or does not matter."""
    if not ordered:
        return EdgeType.OPERAND
    return (EdgeType.OPERAND_0, EdgeType.OPERAND_1)[position] if position < 2 else EdgeType.OPERAND_2

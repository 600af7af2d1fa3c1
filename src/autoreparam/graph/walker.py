"""Walk a jaxpr into primitive, constant and data nodes (docs/graph.md, "How the graph is built").

Every jaxpr variable is either *latent-dependent* (it has a node) or *static* (its value is known:
data, constants, and anything computed from them alone). Static equations are evaluated, so index
arithmetic such as ``where(i < 0, i + n, i)`` folds into one data node holding the indices actually
used; layout primitives are folded into their operand; calls (jit, custom_jvp, ...) are inlined; every
other equation with a latent-dependent operand becomes one node with one typed edge per operand.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.extend.core import ClosedJaxpr, DropVar, Jaxpr, Literal, jaxprs_in_params

from autoreparam.errors import UnsupportedError
from autoreparam.graph.builder import GraphBuilder, Node, Static
from autoreparam.graph.types import EdgeType, NodeType, operand_edge_type
from autoreparam.graph.vocabulary import primitive_kind

_CALL_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr")


def walk(builder: GraphBuilder, jaxpr: Jaxpr, consts, inputs) -> list:
    """Walk ``jaxpr`` with ``inputs`` (node ids or `Static`); return its outputs the same way."""
    env: dict = {}

    def read(atom):
        return Static(atom.val) if isinstance(atom, Literal) else env[atom]

    for var, const in zip(jaxpr.constvars, consts):
        env[var] = Static(const)
    for var, value in zip(jaxpr.invars, inputs):
        env[var] = value
    for eqn in jaxpr.eqns:
        if all(isinstance(v, DropVar) for v in eqn.outvars):
            continue  # e.g. NumPyro's unused PRNG seeding
        outputs = _apply(builder, eqn, [read(v) for v in eqn.invars])
        for var, value in zip(eqn.outvars, outputs):
            if not isinstance(var, DropVar):
                env[var] = value
    return [read(v) for v in jaxpr.outvars]


def _apply(builder: GraphBuilder, eqn, operands: list) -> list:
    name = eqn.primitive.name
    if all(isinstance(o, Static) for o in operands):
        return _evaluate(eqn, [o.raw for o in operands])
    kind = primitive_kind(name)
    if kind == "inline":
        inner, consts = _called_jaxpr(eqn)
        return walk(builder, inner, consts, operands)
    if kind == "layout":
        return [operands[0]] * len(eqn.outvars)
    if kind == "loop":
        _check_loop_body(eqn)
    aval = eqn.outvars[0].aval
    node = builder.add_node(
        Node(NodeType.PRIMITIVE, name, tuple(aval.shape), np.dtype(aval.dtype).kind, attrs=_attributes(eqn, operands))
    )
    ordered = kind == "ordered"
    for position, operand in enumerate(operands):
        if isinstance(operand, Static) and _is_key(operand.raw):
            continue  # a PRNG key (NumPyro's scan carries one) is no quantity of the model
        edge_type = _scan_role(eqn, position) if kind == "loop" else operand_edge_type(position, ordered)
        builder.add_edge(builder.node_of(operand), node, edge_type)
    # A multi-output primitive (scan) is one node: each of its outputs is that node.
    return [node] * len(eqn.outvars)


def _scan_role(eqn, position: int) -> EdgeType:
    """Scan operands by role: OPERAND_0 loop constants, OPERAND_1 initial carries, OPERAND_2 sequences."""
    num_consts, num_carry = eqn.params["num_consts"], eqn.params["num_carry"]
    if position < num_consts:
        return EdgeType.OPERAND_0
    return EdgeType.OPERAND_1 if position < num_consts + num_carry else EdgeType.OPERAND_2


def _evaluate(eqn, values) -> list:
    """Run one equation on concrete values (any primitive: static code is never checked)."""
    # As jax.core.eval_jaxpr does: call primitives turn their jaxpr parameter into a bindable function.
    result = eqn.primitive.bind(*values, **eqn.primitive.get_bind_params(eqn.params))
    results = result if eqn.primitive.multiple_results else [result]
    return [Static(r) for r in results]


def _called_jaxpr(eqn):
    for key in _CALL_PARAMS:
        inner = eqn.params.get(key)
        if isinstance(inner, ClosedJaxpr):
            return inner.jaxpr, inner.consts
        if isinstance(inner, Jaxpr):
            return inner, ()
    raise UnsupportedError(f"primitive '{eqn.primitive.name}'", "a call whose body the model graph cannot find")


def _is_key(value) -> bool:
    return jax.dtypes.issubdtype(getattr(value, "dtype", None), jax.dtypes.prng_key)


def _is_key_operation(name: str) -> bool:
    """PRNG key plumbing (NumPyro's scan splits its key each step): never a latent's value."""
    return name.startswith("random_") or name == "threefry2x32"


def _check_loop_body(eqn) -> None:
    """A scan is one node; its body is not expanded but must hold only covered primitives."""

    def check(jaxpr):
        for inner in jaxpr.eqns:
            if _is_key_operation(inner.primitive.name):
                continue
            try:
                primitive_kind(inner.primitive.name)
            except UnsupportedError as error:
                raise UnsupportedError(error.what, f"inside a lax.scan: {error.detail}") from None
            for sub in jaxprs_in_params(inner.params):
                check(sub)

    for sub in jaxprs_in_params(eqn.params):
        check(sub)


def _attributes(eqn, operands) -> dict:
    """Primitive details that become features (features.py documents each)."""
    name, params = eqn.primitive.name, eqn.params
    shapes = [tuple(v.aval.shape) for v in eqn.invars]
    if name == "dot_general":
        (contracting, _), _ = params["dimension_numbers"]
        return {"contraction": int(np.prod([shapes[0][d] for d in contracting], dtype=np.int64))}
    if name.startswith("reduce_") or name in ("argmax", "argmin"):
        return {"contraction": int(np.prod([shapes[0][d] for d in params["axes"]], dtype=np.int64))}
    if name.startswith("cum"):
        return {"contraction": int(shapes[0][params["axis"]])}
    if name == "scan":
        return {"contraction": int(params["length"])}
    if name == "integer_pow":
        return {"exponent": int(params["y"])}
    if name == "gather" and isinstance(operands[1], Static):
        return _index_attributes(params, shapes[0], operands[1].value)
    return {}


def _index_attributes(params, operand_shape, indices: np.ndarray) -> dict:
    """Group counts of a gather along one axis with static indices: ``a[county]``.

    ``counts[g]`` is how many gathered elements read group ``g``. Gathers along several axes at once
    get no summary (``index_summarised`` stays 0).
    """
    start_index_map = params["dimension_numbers"].start_index_map
    if len(start_index_map) != 1:
        return {}
    groups = int(operand_shape[start_index_map[0]])
    flat = indices.reshape(-1).astype(np.int64)
    inside = (flat >= 0) & (flat < groups)
    counts = np.bincount(flat[inside], minlength=groups) if groups else np.zeros(0)
    return {
        "groups": groups,
        "counts": counts,
        "fraction_out_of_range": float(1.0 - inside.mean()) if flat.size else 0.0,
    }

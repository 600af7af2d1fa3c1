"""What the graph covers: JAX primitives and NumPyro distributions, each with a stable id.

A primitive's *kind* says how the jaxpr walker treats it:
- ``unary``: one latent-dependent operand, position irrelevant (exp, log, reduce_sum, ...);
- ``commutative``: several operands whose order does not matter (add, mul, max, ...), so ``a * b`` and
  ``b * a`` give the same graph;
- ``ordered``: several operands whose order matters (sub, div, gather, dot_general, select_n, ...);
- ``layout``: moves or retypes elements without computing (reshape, broadcast_in_dim,
  convert_element_type, ...): folded into its operand, no node;
- ``inline``: a call of a sub-jaxpr (jit/pjit, closed_call, custom_jvp_call, ...): its body is walked
  in place, no node;
- ``loop``: ``scan``: one node for the whole loop (see docs/graph.md).

Anything else applied to a latent-dependent value raises `UnsupportedError` naming it. Primitives
applied only to data or constants are evaluated, never checked: data preprocessing inside a model
may use any JAX operation.

Ids are positions in the tuples below and index a GNN's embedding tables: append, never reorder.
"""

from __future__ import annotations

from autoreparam.errors import UnsupportedError
from autoreparam.reparam.families import supported_family_names

_UNARY = (
    "neg", "exp", "log", "log1p", "expm1", "logistic", "sqrt", "rsqrt", "tanh", "abs", "sign",
    "square", "integer_pow", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "cumsum",
    "transpose", "slice", "erf", "lgamma", "digamma", "sin", "cos", "exp2", "cbrt", "is_finite",
    "not", "floor", "ceil", "round", "rev", "erfc", "cumlogsumexp", "cumprod", "argmax", "argmin",
    "tile",
)
_COMMUTATIVE = ("add", "mul", "max", "min", "add_any", "and", "or", "eq", "ne")
_ORDERED = (
    "sub", "div", "pow", "dot_general", "gather", "dynamic_slice", "concatenate", "select_n",
    "lt", "le", "gt", "ge", "clamp", "dynamic_update_slice", "pad", "atan2", "rem", "scatter-add",
    "stack",
)
_LAYOUT = (
    "convert_element_type", "broadcast_in_dim", "reshape", "squeeze", "expand_dims", "copy",
    "copy_p", "stop_gradient", "reduce_precision",
)
_INLINE = ("pjit", "jit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
           "custom_vjp_call_jaxpr", "remat", "checkpoint", "remat2")  # remat2: jax.checkpoint in jax 0.10
_LOOP = ("scan",)

PRIMITIVE_KIND: dict[str, str] = {
    **{p: "unary" for p in _UNARY},
    **{p: "commutative" for p in _COMMUTATIVE},
    **{p: "ordered" for p in _ORDERED},
    **{p: "layout" for p in _LAYOUT},
    **{p: "inline" for p in _INLINE},
    **{p: "loop" for p in _LOOP},
}

# Primitives that can be nodes, in id order (layout and inline ones never are).
NODE_PRIMITIVES: tuple[str, ...] = _UNARY + _COMMUTATIVE + _ORDERED + _LOOP

_ADVICE = {
    "while": "write the loop with a fixed trip count (lax.scan or lax.fori_loop with static bounds)",
    "cond": "use jnp.where (select_n) on both branches instead of lax.cond",
}


def primitive_kind(name: str) -> str:
    """The kind of primitive ``name``, or `UnsupportedError` naming it."""
    kind = PRIMITIVE_KIND.get(name)
    if kind is None:
        advice = _ADVICE.get(name, "rewrite the model with the covered primitives listed in docs/graph.md")
        raise UnsupportedError(f"primitive '{name}'", f"applied to a latent-dependent value, it is not covered "
                               f"by the model graph; {advice}")
    return kind


# Distributions outside the partial-centring families: their parameters, all typed PARAM.
OTHER_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "Gamma": ("concentration", "rate"),
    "InverseGamma": ("concentration", "rate"),
    "Beta": ("concentration1", "concentration0"),
    "Uniform": ("low", "high"),
    "Chi2": ("df",),
    "Weibull": ("scale", "concentration"),
    "Dirichlet": ("concentration",),
    "BernoulliLogits": ("logits",),
    "BernoulliProbs": ("probs",),
    "BinomialLogits": ("logits", "total_count"),
    "BinomialProbs": ("probs", "total_count"),
    "CategoricalLogits": ("logits",),
    "CategoricalProbs": ("probs",),
    "Poisson": ("rate",),
    "GammaPoisson": ("concentration", "rate"),
    "MultivariateNormal": ("loc", "scale_tril"),
    "Unit": ("log_factor",),  # numpyro.factor
}

# Family parameters other than location and scale (typed PARAM).
FAMILY_EXTRA_PARAMETERS: dict[str, tuple[str, ...]] = {"StudentT": ("df",)}

DISTRIBUTIONS: tuple[str, ...] = tuple(supported_family_names()) + tuple(OTHER_DISTRIBUTIONS)


# What a user can do when the graph cannot read a model: only method="meta" (and `graph`) read it.
OTHER_METHODS = "method='meta' reads the graph; the other methods do not (method='auto', the default, handles this model)"


def check_distribution(site: str, name: str) -> None:
    """`UnsupportedError` naming the site and its distribution unless the graph covers it."""
    if name not in DISTRIBUTIONS:
        raise UnsupportedError(
            f"distribution '{name}' of site '{site}'",
            f"not covered by the model graph (covered: {', '.join(DISTRIBUTIONS)}); {OTHER_METHODS}",
        )


NO_LABEL = len(NODE_PRIMITIVES) + len(DISTRIBUTIONS)  # the subtype of constants and data
NUM_LABELS = NO_LABEL + 1


def label_id(label: str) -> int:
    """The subtype id of a node label: a primitive's or a distribution's position, else ``NO_LABEL``.

    Primitives and distributions share one id space (distributions after primitives), so a GNN can
    embed a node's subtype with one table of ``NUM_LABELS`` rows.
    """
    if label in NODE_PRIMITIVES:
        return NODE_PRIMITIVES.index(label)
    if label in DISTRIBUTIONS:
        return len(NODE_PRIMITIVES) + DISTRIBUTIONS.index(label)
    return NO_LABEL

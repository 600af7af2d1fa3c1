"""Which latents does each site's prior location or scale depend on? Found by tracing, not by names.

We trace ``values -> (loc, scale) of every site`` to a jaxpr and ask JAX's dead-code elimination which
inputs each output needs. This is exact for the program as traced (no false positives from names, no
false negatives from a gradient that happens to vanish at the trace point).
"""

from __future__ import annotations

from typing import Callable, Mapping

import jax
import numpyro
from numpyro import handlers

from autoreparam.reparam.families import find_family, unwrap

try:  # JAX's dead-code elimination on jaxprs; private but stable for years.
    from jax._src.interpreters.partial_eval import dce_jaxpr as _dce_jaxpr
except ImportError:  # pragma: no cover - only if a future JAX moves it
    _dce_jaxpr = None


def dce_jaxpr(jaxpr, used_outputs):
    """``(jaxpr keeping only what the used outputs need, used inputs)``; everything when DCE is unavailable."""
    if _dce_jaxpr is None:  # pragma: no cover
        return jaxpr, [True] * len(jaxpr.invars)
    return _dce_jaxpr(jaxpr, used_outputs)


def _site_params(model: Callable, args, kwargs, targets, leaves_of: Callable) -> Callable:
    """``values -> {site: leaves_of(fn)}`` for ``targets`` with every latent fixed to ``values``."""

    def params(values):
        seeded = handlers.seed(handlers.substitute(model, data=values), rng_seed=0)
        with handlers.block():
            trace = handlers.trace(seeded).get_trace(*args, **kwargs)
        return {name: leaves_of(trace[name]["fn"]) for name in targets}

    return params


def _loc_scale(fn) -> list:
    base, _ = unwrap(fn)
    loc, scale = find_family(fn).loc_scale(base)
    return [p for p in (loc, scale) if p is not None]


def _support_bounds(fn) -> list:
    # NumPyro's constraints are pytrees whose leaves are their parameters (an interval's bounds).
    return jax.tree_util.tree_leaves(fn.support)


def prior_dependencies(model, args, kwargs, values: Mapping, targets) -> dict[str, tuple[str, ...]]:
    """For each target site, the latent sites its prior location or scale depends on.

    ``values``: a value for every latent site (e.g. one prior draw); ``targets``: sites whose family
    has a location and/or scale. Falls back to "depends on everything" when JAX's dead-code
    elimination is unavailable, which can only make the default selection larger, never wrong.
    """
    return _dependencies(model, args, kwargs, values, targets, _loc_scale)


def support_dependencies(model, args, kwargs, values: Mapping, targets) -> dict[str, tuple[str, ...]]:
    """For each target site, the latent sites the bounds of its support depend on (``x ~ Uniform(0, s)``:
    ``('s',)``); bounds that are constants or computed from the data depend on none.

    Falls back to "depends on none" when JAX's dead-code elimination is unavailable: site analysis
    refuses a site whose support depends on latents, so guessing "all" would refuse valid models.
    """
    if _dce_jaxpr is None:  # pragma: no cover
        return {t: () for t in targets}
    return _dependencies(model, args, kwargs, values, targets, _support_bounds)


def _dependencies(model, args, kwargs, values: Mapping, targets, leaves_of: Callable) -> dict[str, tuple[str, ...]]:
    """For each target site, the latents that ``leaves_of(its distribution)`` depend on."""
    targets = list(targets)
    if not targets:
        return {}
    names = sorted(values)
    others = {t: tuple(n for n in names if n != t) for t in targets}
    if _dce_jaxpr is None:  # pragma: no cover
        return others
    with numpyro.validation_enabled(False):
        closed, out_shape = jax.make_jaxpr(_site_params(model, args, kwargs, targets, leaves_of), return_shape=True)(
            dict(values)
        )
    leaves_per_target = {t: len(jax.tree_util.tree_leaves(out_shape[t])) for t in targets}
    # Output leaves are flattened in sorted-key order of the dict; so are the input leaves.
    order = sorted(targets)
    input_names = [n for n in names for _ in jax.tree_util.tree_leaves(values[n])]
    result, start = {}, 0
    total = sum(leaves_per_target.values())
    for target in order:
        count = leaves_per_target[target]
        used_outputs = [start <= i < start + count for i in range(total)]
        start += count
        _, used_inputs = _dce_jaxpr(closed.jaxpr, used_outputs)
        deps = {input_names[i] for i, used in enumerate(used_inputs) if used}
        deps.discard(target)
        result[target] = tuple(sorted(deps))
    return result

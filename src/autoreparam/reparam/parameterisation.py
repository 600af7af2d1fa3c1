"""A parameterisation: per-site, per-element centring of the location (a) and of the scale (b).

``a = b = 1`` is centred (CP), ``a = b = 0`` non-centred (NCP), ``a = b = lambda`` the tied partial
centring of the ICML paper (000 Section 5.2) and separate ``a``, ``b`` the workshop form (004 Section 2.2).
Each array has the site's full value shape, also under plates (NumPyro's ``LocScaleReparam`` shares one
value across a plate; we give every element its own).

A ``Parameterisation`` is a JAX pytree, so it can be traced, differentiated (VIP learns it) and vmapped.
"""

from __future__ import annotations

from typing import Mapping

import jax
import jax.numpy as jnp
import numpy as np

from autoreparam.errors import ArgumentError, SiteError
from autoreparam.reparam.selection import ReparamPlan


def _as_numbers(value, what: str, site: str | None = None) -> jax.Array:
    """``value`` as a float array, or an error naming the site (if any) and what was given."""
    if isinstance(value, str):
        problem = (f"{what} must be numbers in [0, 1], not the string {value!r}; for the centred or non-centred "
                   "parameterisation use method='cp' or method='ncp'")
    else:
        try:
            return jnp.asarray(value, dtype=jnp.result_type(float))
        except (TypeError, ValueError) as error:
            problem = f"{what} must be numbers in [0, 1] (a scalar or an array), not {type(value).__name__} ({error})"
    raise SiteError(site, problem) if site is not None else ArgumentError(problem)


def _as_site_arrays(plan: ReparamPlan, value, what: str) -> dict[str, jax.Array]:
    """Broadcast a scalar, or check a per-site mapping, to one array per planned site."""
    if isinstance(value, Mapping):
        unknown = set(value) - set(plan.names)
        if unknown:
            name = sorted(unknown)[0]
            raise SiteError(name, f"{what} given for a site that is not reparameterised (sites: {plan.names})")
        missing = [n for n in plan.names if n not in value]
        if missing:
            raise SiteError(missing[0], f"no {what} given for this reparameterised site")
        out = {}
        for site in plan.sites:
            arr = _as_numbers(value[site.name], what, site.name)
            if arr.ndim and arr.shape != site.shape:
                raise SiteError(site.name, f"{what} has shape {arr.shape} but the site has shape {site.shape}")
            out[site.name] = jnp.broadcast_to(arr, site.shape)
        return out
    arr = _as_numbers(value, what)
    if arr.ndim:
        raise ArgumentError(f"{what} must be a scalar or a mapping from site name to array, got shape {arr.shape}")
    return {s.name: jnp.full(s.shape, arr) for s in plan.sites}


def check_unit_interval(name: str, what: str, value) -> None:
    """Raise if a concrete centring value lies outside [0, 1]; traced values are checked by their source."""
    if isinstance(value, jax.core.Tracer):
        return
    arr = np.asarray(value)
    if not np.all(np.isfinite(arr)):
        raise SiteError(name, f"{what} contains NaN or infinite values")
    if np.any(arr < 0) or np.any(arr > 1):
        raise SiteError(name, f"{what} must lie in [0, 1]; got values in [{arr.min():.3g}, {arr.max():.3g}]")


@jax.tree_util.register_pytree_node_class
class Parameterisation:
    """Per-site centring arrays ``loc_centring`` (a) and ``scale_centring`` (b), keyed by site name."""

    def __init__(self, loc_centring: Mapping[str, jax.Array], scale_centring: Mapping[str, jax.Array]):
        if set(loc_centring) != set(scale_centring):
            raise ArgumentError("loc_centring and scale_centring must name the same sites")
        self.loc_centring = dict(loc_centring)
        self.scale_centring = dict(scale_centring)
        for name in self.names:
            check_unit_interval(name, "loc centring (a)", self.loc_centring[name])
            check_unit_interval(name, "scale centring (b)", self.scale_centring[name])

    # --- constructors -------------------------------------------------------------------------------
    @classmethod
    def tied(cls, plan: ReparamPlan, lam) -> "Parameterisation":
        """``a = b = lambda``; ``lam`` is a scalar for every element or a mapping site -> array."""
        arrays = _as_site_arrays(plan, lam, "lambda")
        return cls(arrays, arrays)

    @classmethod
    def separate(cls, plan: ReparamPlan, loc_centring, scale_centring) -> "Parameterisation":
        return cls(_as_site_arrays(plan, loc_centring, "a"), _as_site_arrays(plan, scale_centring, "b"))

    @classmethod
    def centred(cls, plan: ReparamPlan) -> "Parameterisation":
        return cls.tied(plan, 1.0)

    @classmethod
    def non_centred(cls, plan: ReparamPlan) -> "Parameterisation":
        return cls.tied(plan, 0.0)

    # --- views --------------------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.loc_centring))

    @property
    def is_tied(self) -> bool:
        return all(
            self.loc_centring[n] is self.scale_centring[n]
            or bool(np.array_equal(np.asarray(self.loc_centring[n]), np.asarray(self.scale_centring[n])))
            for n in self.names
        )

    @property
    def lam(self) -> dict[str, np.ndarray]:
        """The tied lambda per site (1 = centred, 0 = non-centred); the scale centring b if untied."""
        return {n: np.asarray(self.scale_centring[n]) for n in self.names}

    def rounded(self) -> "Parameterisation":
        """The "discrete" variant of the paper's code: every element rounded to 0 or 1."""
        a = {n: jnp.round(jnp.asarray(v)) for n, v in self.loc_centring.items()}
        b = {n: jnp.round(jnp.asarray(v)) for n, v in self.scale_centring.items()}
        return Parameterisation(a, b)

    def describe(self) -> str:
        lines = []
        for n in self.names:
            b = np.asarray(self.scale_centring[n]).ravel()
            a = np.asarray(self.loc_centring[n]).ravel()
            vals = " ".join(f"{x:.2f}" for x in b[:12]) + (" ..." if b.size > 12 else "")
            tied = "" if np.array_equal(a, b) else f" (a mean {a.mean():.2f})"
            lines.append(f"{n}: lambda = [{vals}]{tied}")
        return "\n".join(lines)

    # --- pytree -------------------------------------------------------------------------------------
    def tree_flatten(self):
        names = self.names
        return (tuple(self.loc_centring[n] for n in names), tuple(self.scale_centring[n] for n in names)), names

    @classmethod
    def tree_unflatten(cls, names, children):
        obj = object.__new__(cls)  # skip validation: leaves may be tracers or batched
        obj.loc_centring = dict(zip(names, children[0]))
        obj.scale_centring = dict(zip(names, children[1]))
        return obj

    def __repr__(self) -> str:
        return f"Parameterisation({self.describe()})"

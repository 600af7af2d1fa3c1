"""Distribution families that partial centring can rewrite, and how.

Partial centring (Gorinova, Moore & Hoffman 2020, "Automatic Reparameterisation of Probabilistic
Programs", ICML; paper 000 Section 5.2, workshop paper 004 Section 2.2) replaces a latent
``z ~ D(mu, s)`` by an auxiliary ``zt ~ D(a * mu, s ** b)`` and sets ``z = mu + s ** (1 - b) * (zt - a * mu)``.
``a = b = 1`` is the centred program, ``a = b = 0`` the non-centred one, ``a = b = lambda`` the tied form
of the ICML paper and separate ``a``, ``b`` the workshop form.

A family knows three things: whether it matches a (NumPyro) distribution, the distribution's location
and scale (used by site analysis to find latents with a latent-dependent prior), and how to build the
auxiliary distribution together with the transform ``zt -> z``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
from numpyro.distributions import constraints
from numpyro.distributions.transforms import ComposeTransform, ExpTransform, Transform
from numpyro.distributions.util import validate_sample


def _concrete(value) -> np.ndarray | None:
    """``value`` as a NumPy array where it is known at trace time (a constant), else None."""
    return None if isinstance(value, jax.core.Tracer) else np.asarray(value)


def scale_power(scale, exponent):
    """``s ** b`` as ``exp(b log s)``, elementwise, and exactly 1 where ``b`` is 0 and ``log s`` is not finite.

    Non-centring (``b = 0``) must not turn an overflowed or underflowed scale into NaN: a nested
    funnel's scale ``exp(z1)`` is 0 in float32 once ``z1 < -103``, and ``0 * log(0)`` is NaN, so the
    standard-normal density of NCP was NaN there and NUTS diverged (with the overflow side below,
    7-8% of transitions on the prior of ``z3 ~ N(0, exp(z2))``, fuzz programs 709 and 829). Where
    ``b`` is traced (one compiled sampler serves every parameterisation) ``s`` is replaced by 1 before
    its log only at those elements, so every finite ``s`` keeps its value and its derivatives in ``s``
    and ``b``, and an underflowed one gets a zero gradient, not ``0 * 0 / 0``. An overflowed
    ``s = exp(z) = inf`` still has a NaN gradient: JAX's derivative of ``exp`` multiplies the zero
    cotangent by ``inf``, which no handler downstream can undo. A constant ``b`` (a closed-over
    parameterisation, e.g. ``reparameterise(model, ncp)`` under NumPyro's NUTS) that is all 0 does
    not read ``s`` at all, so there neither side can reach the density; all 1 returns ``s`` itself.
    """
    b = _concrete(exponent)
    if b is not None and not b.any():
        return jnp.ones(jnp.broadcast_shapes(jnp.shape(scale), b.shape), dtype=jnp.result_type(scale, float))
    if b is not None and np.all(b == 1):
        return jnp.broadcast_to(scale, jnp.broadcast_shapes(jnp.shape(scale), b.shape))
    # Compared on ``s`` itself: XLA folds ``log(exp(z))`` to ``z``, so a mask on ``log s`` was never set.
    degenerate = (exponent == 0) & ~((scale > 0) & (scale < jnp.inf))
    return jnp.exp(exponent * jnp.log(jnp.where(degenerate, 1.0, scale)))


def shifted_loc(loc, centring):
    """``a * mu``, and exactly 0 where ``a`` is 0 and ``mu`` is not finite (``0 * inf`` is NaN).

    As in `scale_power`, a constant all-zero ``a`` does not read ``mu``; a traced one keeps every
    finite ``mu``'s value and derivatives.
    """
    a = _concrete(centring)
    if a is not None and not a.any():
        return jnp.zeros(jnp.broadcast_shapes(jnp.shape(loc), a.shape), dtype=jnp.result_type(loc, float))
    degenerate = (centring == 0) & ~jnp.isfinite(loc)
    return centring * jnp.where(degenerate, 0.0, loc)


@jax.custom_jvp
def stable_divide(x, y):
    """``x / y``, differentiated as ``(dx - (x / y) dy) / y`` rather than JAX's ``dx / y - x dy y ** -2``.

    JAX's rule for the divisor squares ``y`` first, so ``y ** -2`` underflows to 0 once ``|y|`` passes
    the square root of the float range (1.8e19 in float32) while ``x / y`` is still of order 1: a
    normal density's derivative in its scale then loses its ``((z - mu) / s) ** 2`` term (-1 instead
    of -0.56 at ``z = -0.66 s``). Found by fuzzing iHMC on a depth-3 funnel's prior, where the scale
    ``exp(z2)`` reached 1.4e28 and the wrong centred gradient, carried into the non-centred half by
    the move between them, made 19,896 of 20,000 of its half-steps diverge
    (benchmarks/ihmc_transport_error.py, docs/reliability_findings.md).
    """
    return x / y


@stable_divide.defjvp
def _stable_divide_jvp(primals, tangents):
    x, y = primals
    dx, dy = tangents
    quotient = x / y
    return quotient, (dx - quotient * dy) / y


_STANDARDISED: dict[type, type] = {}


def standardised(cls, shape_params=()):
    """``cls`` with its log density computed as ``log p_1((x - loc) / scale) - log scale``.

    (``log p_1(x / scale) - log scale`` for a scale family.) The same density for every family here (``p_1`` is ``cls`` at loc 0 and scale 1,
    with the shape parameters kept), with the quotient taken by `stable_divide`, so that its
    derivatives stay right where the scale passes sqrt(float max). Used for the auxiliary
    distributions, whose scales are the ones a latent sets; sampling is the parent class's.
    """
    if cls not in _STANDARDISED:

        located = "loc" in cls.arg_constraints  # a pure scale family (HalfNormal) has no location

        def log_prob(self, value):
            unit = cls(**({"loc": jnp.zeros_like(self.loc)} if located else {}), scale=jnp.ones_like(self.scale),
                       **{p: getattr(self, p) for p in shape_params})
            offset = value - self.loc if located else value
            return unit.log_prob(stable_divide(offset, self.scale)) - jnp.log(self.scale)

        _STANDARDISED[cls] = type(f"Standardised{cls.__name__}", (cls,), {
            "log_prob": log_prob, "__doc__": f"{cls.__name__} with a stable scale derivative (`standardised`)."})
    return _STANDARDISED[cls]


class ScaledExponential(dist.Exponential):
    """Exponential of scale ``s`` (rate ``1 / s``), log density ``-x / s - log s`` by `stable_divide`.

    NumPyro's ``log(rate) - rate * x`` differentiates in ``s`` through ``rate = 1 / s``, whose
    derivative ``-s ** -2`` is 0 in float32 once ``s`` passes 1.8e19, so d log p / d s loses its
    ``x / s ** 2`` term as the normal's did (`stable_divide`). The auxiliary of an Exponential latent;
    sampling is NumPyro's, from the rate.
    """

    pytree_data_fields = ("scale",)

    def __init__(self, scale, *, validate_args=None):
        self.scale = scale
        super().__init__(rate=1.0 / scale, validate_args=validate_args)

    @validate_sample
    def log_prob(self, value):
        return -stable_divide(value, self.scale) - jnp.log(self.scale)


_STANDARDISED[dist.Exponential] = ScaledExponential  # so that `_is(dist.Exponential)` knows it


def _exponential_scale(fn):
    """``1 / rate`` by `stable_divide`: its derivative ``-(1 / rate) d rate / rate`` never squares the rate."""
    if isinstance(fn, ScaledExponential):
        return fn.scale
    return stable_divide(jnp.ones_like(fn.rate), fn.rate)


class PartialCentringTransform(Transform):
    """``zt -> mu + s ** (1 - b) * (zt - a * mu)``, elementwise (paper 000 Section 5.2).

    Written as an explicit shift-and-scale rather than a generic affine map so that the inverse
    ``a * mu + (z - mu) / s ** (1 - b)`` subtracts ``mu`` before dividing, which keeps precision when
    ``s`` is tiny (the neck of a funnel).
    """

    domain = constraints.real
    codomain = constraints.real

    def __init__(self, loc, scale, loc_centring, scale_centring):
        self.loc = loc
        self.log_scale_factor = (1.0 - scale_centring) * jnp.log(scale)
        self.loc_centring = loc_centring

    def __call__(self, x):
        return self.loc + jnp.exp(self.log_scale_factor) * (x - self.loc_centring * self.loc)

    def _inverse(self, y):
        return self.loc_centring * self.loc + (y - self.loc) * jnp.exp(-self.log_scale_factor)

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        return jnp.broadcast_to(self.log_scale_factor, jnp.shape(x))


class ScaleCentringTransform(Transform):
    """``zt -> s ** (1 - b) * zt`` for pure scale families on the positive half-line."""

    domain = constraints.positive
    codomain = constraints.positive

    def __init__(self, scale, scale_centring):
        self.log_scale_factor = (1.0 - scale_centring) * jnp.log(scale)

    def __call__(self, x):
        return jnp.exp(self.log_scale_factor) * x

    def _inverse(self, y):
        return y * jnp.exp(-self.log_scale_factor)

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        return jnp.broadcast_to(self.log_scale_factor, jnp.shape(x))


@dataclass(frozen=True)
class Family:
    """How to partially centre one kind of distribution.

    ``loc_scale(fn) -> (loc, scale)`` reads the parameters (``loc`` is ``None`` for pure scale
    families); ``decentre(fn, a, b, shape) -> (aux_fn, transform)`` builds the auxiliary distribution
    with batch shape ``shape`` and the transform from its value to the original value.
    """

    name: str
    matches: Callable[[dist.Distribution], bool] = field(repr=False)
    loc_scale: Callable = field(repr=False)
    decentre: Callable = field(repr=False)
    kind: str = "location-scale"  # "location-scale", "log-location-scale" or "scale"

    def __reduce__(self):
        # Its functions are closures: pickle the registered family by name (a result can be saved).
        return (family_named, (self.name,))


def _is(cls):
    # Exact types (a user's subclass may change the density); an auxiliary built by `standardised`
    # is still its family's distribution.
    return lambda fn: type(fn) is cls or type(fn) is _STANDARDISED.get(cls)


def _loc_scale_family(cls, shape_params=()):
    """A location-scale family on the real line; ``shape_params`` (e.g. StudentT's df) pass through."""

    def loc_scale(fn):
        return fn.loc, fn.scale

    def decentre(fn, a, b, shape):
        loc = jnp.broadcast_to(fn.loc, shape)
        scale = jnp.broadcast_to(fn.scale, shape)
        extra = {p: jnp.broadcast_to(getattr(fn, p), shape) for p in shape_params}
        aux = standardised(cls, shape_params)(loc=shifted_loc(loc, a), scale=scale_power(scale, b), **extra)
        return aux, PartialCentringTransform(loc, scale, a, b)

    return Family(cls.__name__, _is(cls), loc_scale, decentre, "location-scale")


def _log_normal_family():
    """LogNormal through its underlying normal: ``log z`` is partially centred, then exponentiated."""

    def loc_scale(fn):
        return fn.loc, fn.scale

    def decentre(fn, a, b, shape):
        loc = jnp.broadcast_to(fn.loc, shape)
        scale = jnp.broadcast_to(fn.scale, shape)
        aux = standardised(dist.Normal)(shifted_loc(loc, a), scale_power(scale, b))
        transform = ComposeTransform([PartialCentringTransform(loc, scale, a, b), ExpTransform()])
        return aux, transform

    return Family("LogNormal", _is(dist.LogNormal), loc_scale, decentre, "log-location-scale")


def _scale_family(cls, scale_of, build):
    """A pure scale family with positive support: ``z = s ** (1 - b) zt``, ``zt ~ D(s ** b)``."""

    def loc_scale(fn):
        return None, scale_of(fn)

    def decentre(fn, a, b, shape):
        scale = jnp.broadcast_to(scale_of(fn), shape)
        aux = build(scale_power(scale, b))
        return aux, ScaleCentringTransform(scale, b)

    return Family(cls.__name__, _is(cls), loc_scale, decentre, "scale")


def _registry() -> tuple[Family, ...]:
    families = [
        _loc_scale_family(dist.Normal),
        _loc_scale_family(dist.StudentT, shape_params=("df",)),
        _loc_scale_family(dist.Cauchy),
        _loc_scale_family(dist.Laplace),
        _loc_scale_family(dist.Logistic),
        _loc_scale_family(dist.Gumbel),
        _log_normal_family(),
        _scale_family(dist.HalfNormal, lambda fn: fn.scale, standardised(dist.HalfNormal)),
        _scale_family(dist.HalfCauchy, lambda fn: fn.scale, standardised(dist.HalfCauchy)),
        _scale_family(dist.Exponential, _exponential_scale, ScaledExponential),
    ]
    if hasattr(dist, "SoftLaplace"):
        families.append(_loc_scale_family(dist.SoftLaplace))
    return tuple(families)


FAMILIES: tuple[Family, ...] = _registry()


def unwrap(fn: dist.Distribution):
    """Strip ``Independent`` and ``ExpandedDistribution`` wrappers (added by ``.to_event`` and plates).

    Returns ``(base, event_dim)``: the base distribution and the number of event dimensions of the
    wrapped site, so the auxiliary site can be rebuilt with the same shape and event dims.
    """
    event_dim = fn.event_dim
    while isinstance(fn, (dist.Independent, dist.ExpandedDistribution)):
        fn = fn.base_dist
    return fn, event_dim


def find_family(fn: dist.Distribution) -> Family | None:
    """The family of a (possibly wrapped) distribution, or ``None`` when partial centring does not apply."""
    base, _ = unwrap(fn)
    if base.event_dim != 0:  # multivariate base distributions are not elementwise location-scale
        return None
    for family in FAMILIES:
        if family.matches(base):
            return family
    return None


def family_named(name: str) -> Family:
    """The registered family called ``name``."""
    return next(f for f in FAMILIES if f.name == name)


def supported_family_names() -> list[str]:
    return [f.name for f in FAMILIES]

"""Site analysis: the latent sample sites of a centred NumPyro model, their families and dependencies.

This is the first stage of the pipeline (centred model -> site analysis -> parameterisation ->
coordinates -> VI -> samplers). It runs the model forward once and records, per latent site, what
partial centring needs to know; it also rejects models that no gradient-based method can take.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from numpyro import handlers
from numpyro.distributions import Delta, ExpandedDistribution, Independent, MaskedDistribution, biject_to
from numpyro.infer.initialization import init_to_uniform
from numpyro.primitives import Messenger

from autoreparam.errors import DataError, ModelError, SiteError
from autoreparam.precision import float_dtype
from autoreparam.reparam.dependence import dce_jaxpr, prior_dependencies, support_dependencies
from autoreparam.reparam.families import Family, find_family, unwrap
from autoreparam.reparam.in_scan import ScanBodySites
from autoreparam.validation import check_observed_site, model_failure


@dataclass(frozen=True)
class SiteInfo:
    """One latent sample site as the model declares it."""

    name: str
    shape: tuple[int, ...]  # the full value shape (batch + event)
    event_dim: int
    unconstrained_shape: tuple[int, ...]  # shape in unconstrained space (differs e.g. for simplexes)
    distribution: str  # class name of the base distribution, e.g. "Normal"
    family: Family | None  # None: partial centring does not apply
    depends_on: tuple[str, ...]  # latents its prior location/scale depend on
    in_scan: bool = False  # sampled inside numpyro.contrib.control_flow.scan (stacked over its steps)
    in_reversed_scan: bool = False  # inside scan(..., reverse=True), which cannot be reparameterised
    sample_shape_in_scan: bool = False  # sampled with a sample_shape inside a scan body (in_scan.py says why)
    scaled: bool = False  # its log density is multiplied (handlers.scale, a subsampled plate): see selection
    # True where an element has no density (masked out: the observed positions of NumPyro's obs_mask
    # imputation site '<name>_unobserved'); None when every element has one.
    without_density: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=int))

    @property
    def has_latent_prior(self) -> bool:
        return bool(self.depends_on)


@dataclass(frozen=True)
class ModelStructure:
    """The latent sites (in program order) and observed sites of a model bound to its data."""

    latents: tuple[SiteInfo, ...]
    observed: tuple[str, ...]
    prior_draw: dict = field(repr=False, compare=False)  # name -> jax.ShapeDtypeStruct of its value

    def __getitem__(self, name: str) -> SiteInfo:
        for site in self.latents:
            if site.name == name:
                return site
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.latents)

    @property
    def num_latent_dims(self) -> int:
        return sum(s.size for s in self.latents)


def _observed_numbers(name: str, value) -> np.ndarray:
    """An observed value as a NumPy array of numbers, or a `DataError` naming the site and what it got."""
    try:
        array = np.asarray(value)
    except ValueError:  # e.g. a ragged list
        raise DataError(f"observed site '{name}' was given a ragged {type(value).__name__}; observations must be a "
                        "rectangular array of numbers") from None
    if array.dtype.kind not in "biuf":
        held = f"{type(value).__name__}" + (f" of {array.dtype}" if isinstance(value, np.ndarray) else "")
        raise DataError(f"observed site '{name}' was given a {held}, not numbers; obs= takes an array of numbers "
                        "(check what the model was given for it)")
    return array


def _check_finite_arguments(args, kwargs) -> None:
    """Reject NaN, infinite or too large data early, naming the argument, instead of returning NaN densities."""
    named = [(f"positional argument {i}", a) for i, a in enumerate(args)]
    named += [(f"keyword argument '{k}'", v) for k, v in kwargs.items()]
    for label, value in named:
        for leaf in jax.tree_util.tree_leaves(value):
            arr = np.asarray(leaf) if not isinstance(leaf, jax.core.Tracer) else None
            if arr is not None and arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
                bad = int(np.sum(~np.isfinite(arr)))
                raise DataError(f"{label} of the model contains {bad} NaN or infinite value(s)")
            if arr is not None:
                _check_number_range(f"{label} of the model", arr)


def _check_number_range(label: str, arr: np.ndarray) -> None:
    """Refuse finite values that JAX's number types cannot hold, as the language refuses such data
    (``lang.data._check_range``, whose wording this follows; not imported: reparam sits below lang).

    float64 data beyond float32's range (1e39) passed the NaN check, became inf in JAX's float32
    behind NumPy's overflow warnings, and were blamed on the likelihood; int64 data beyond int32
    (2**31 + 5) wrapped around to -2**31 + 5 without a word (both found in review).
    """
    if arr.dtype.kind == "f" and arr.dtype.itemsize > float_dtype().itemsize:
        largest = float(np.finfo(float_dtype()).max)
        beyond = np.abs(arr) > largest  # compared in the data's own precision: casting first would warn
        if np.any(beyond):
            raise DataError(f"{label} holds {arr[beyond].flat[0]:g}, beyond the numbers the model computes with "
                            f"({float_dtype()}: magnitude at most {largest:.3g}): rescale the data, or enable "
                            "64-bit JAX (jax.config.update('jax_enable_x64', True))")
    if arr.dtype.kind in "iu":
        held = np.dtype(jax.dtypes.canonicalize_dtype(arr.dtype))
        if held.itemsize >= arr.dtype.itemsize and held.kind == arr.dtype.kind:
            return
        limits = np.iinfo(held)
        beyond = (arr > limits.max) | (arr < limits.min)
        if np.any(beyond):
            raise DataError(f"{label} holds {arr[beyond].flat[0]}, beyond the integers the model computes with "
                            f"({held}: {limits.min:,} to {limits.max:,}), where it would wrap around: rescale "
                            "the data, or enable 64-bit JAX (jax.config.update('jax_enable_x64', True))")


class _LastSite(Messenger):
    """Records the name of the last site a model reached, so that an error can say where it happened."""

    def __init__(self, fn=None):
        self.name = None
        super().__init__(fn)

    def process_message(self, msg):
        if msg.get("name"):
            self.name = msg["name"]


class _PlateNamesApart(Messenger):
    """Refuses a plate named like a sample site, naming both, as the model reaches the second of them.

    NumPyro keeps plates and sites in one trace by name, so the later of the two overwrote the other:
    the latent vanished ("no latent sample site") or a sampler failed on a bare AssertionError
    (found in review).
    """

    def __init__(self, fn=None):
        self.kinds = {}
        super().__init__(fn)

    def process_message(self, msg):
        name, kind = msg.get("name"), msg["type"]
        if kind not in ("plate", "sample") or not name:
            return
        seen = self.kinds.setdefault(name, kind)
        if seen != kind:
            raise ModelError(f"plate '{name}' has the name of the sample site '{name}' of the model; NumPyro keeps "
                             "plates and sites by name in one trace, so one would hide the other: rename the plate "
                             "or the site")


def _trace(model: Callable, args, kwargs, seed: int):
    """The model's trace, traced abstractly: values are tracers, nothing is computed or compiled.

    Running the model eagerly would compile every primitive it calls, one by one, the first time
    (seconds for a radon model, measured); tracing it costs milliseconds. Only shapes, dtypes,
    distributions and concrete observed values are read from the trace afterwards, and the
    unconstrained shape of each latent (latent name -> shape, third value), which is computed inside
    the trace: ``biject_to(support)`` does arithmetic on the support's bounds, which are tracers of
    this trace whenever the model computes them (``Uniform(0, jnp.max(y))``) and cannot be used after it.
    """
    captured = {}
    scan_sites = ScanBodySites(model)

    def run():
        trace = captured["trace"] = _run_trace(model, scan_sites, args, kwargs, seed)
        # Observed values the model computes (rather than receives) are tracers here; they are
        # returned so that only the operations they need are evaluated below, for the data checks.
        computed = [n for n, m in trace.items() if m["type"] == "sample" and m["is_observed"]
                    and isinstance(m["value"], jax.core.Tracer)]
        captured["computed"] = computed
        captured["unconstrained"] = {n: _unconstrained_shape(m) for n, m in trace.items()
                                     if m["type"] == "sample" and not m["is_observed"]}
        return [trace[n]["value"] for n in computed]

    closed = jax.make_jaxpr(run)()
    trace = captured["trace"]
    if captured["computed"]:
        jaxpr, _ = dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
        values = jax.core.eval_jaxpr(jaxpr, closed.consts)
        for name, value in zip(captured["computed"], values):
            trace[name] = {**trace[name], "value": np.asarray(value)}
    return trace, frozenset(scan_sites.reversed), frozenset(scan_sites.shaped), captured["unconstrained"]


def _unconstrained_shape(msg) -> tuple[int, ...] | None:
    """The shape of a latent's value in unconstrained space; None where its support has no bijection
    (a discrete latent, refused later with a better message)."""
    if msg["fn"].support.is_discrete:
        return None
    try:
        return tuple(biject_to(msg["fn"].support).inverse_shape(tuple(jnp.shape(msg["value"]))))
    except NotImplementedError:
        return None


def _run_trace(model: Callable, recorder: ScanBodySites, args, kwargs, seed: int):
    """The trace of ``model``, run as ``recorder`` (the model under that handler); errors name ``model``."""
    # block: an analysis run must be invisible to handlers the caller may have around us.
    with handlers.block():
        reached = _LastSite(_PlateNamesApart(recorder))
        try:
            return handlers.trace(handlers.seed(reached, rng_seed=seed)).get_trace(*args, **kwargs)
        except NotImplementedError:
            # An improper prior (e.g. ImproperUniform) cannot be sampled: run the model on a random
            # point in its support instead, as NumPyro's own initialisation does.
            pass
        except Exception as error:  # noqa: BLE001 - re-raised as ModelError naming the model and what to do
            raise model_failure(model, error, reached.name) from error
        reached = _LastSite(_PlateNamesApart(recorder))
        substituted = handlers.substitute(handlers.seed(reached, rng_seed=seed), substitute_fn=_uniform_if_improper)
        try:
            return handlers.trace(substituted).get_trace(*args, **kwargs)
        except Exception as error:  # noqa: BLE001
            raise model_failure(model, error, reached.name) from error


def _uniform_if_improper(site):
    """A random point in the support for a latent that cannot be sampled; None (sample as usual) otherwise."""
    if site["type"] != "sample" or site["is_observed"]:
        return None
    try:
        site["fn"](rng_key=site["kwargs"]["rng_key"], sample_shape=site["kwargs"]["sample_shape"])
    except NotImplementedError:
        return init_to_uniform(site)
    return None


def analyse_model(model: Callable, /, *args, seed: int = 0, **kwargs) -> ModelStructure:
    """Trace ``model(*args, **kwargs)`` once and describe its latent sites.

    Raises ``ModelError`` for a model with no latent site, with a subsampled plate or with a plate named
    like a site, ``SiteError`` for a discrete or ``Delta`` latent or one whose support depends on other
    latents, and ``DataError`` for non-finite or non-numeric data (arguments or observed values).
    """
    _check_finite_arguments(args, kwargs)
    trace, in_reversed_scan, shaped_in_scan, unconstrained = _trace(model, args, kwargs, seed)
    latent_msgs, observed = [], []
    for name, msg in trace.items():
        if msg["type"] == "plate" and msg["args"][1] is not None and msg["args"][1] < msg["args"][0]:
            raise ModelError(f"plate '{name}' subsamples {msg['args'][1]} of its {msg['args'][0]} elements "
                             "(subsample_size): HMC and NUTS need the full data at every step; drop subsample_size")
        if msg["type"] != "sample":
            continue
        if msg["is_observed"]:
            value = msg["value"]
            # numpy, not jnp: inside a jit trace jnp would stage the check and return a tracer.
            if not isinstance(value, jax.core.Tracer):
                numbers = _observed_numbers(name, value)
                if not np.all(np.isfinite(numbers)):
                    raise DataError(f"observed site '{name}' contains NaN or infinite values")
                _check_number_range(f"observed site '{name}'", numbers)
            check_observed_site(name, msg)
            observed.append(name)
            continue
        if msg["infer"].get("is_auxiliary"):
            continue
        if msg["fn"].support.is_discrete:
            raise SiteError(
                name,
                f"discrete latent ({type(unwrap(msg['fn'])[0]).__name__}); gradient-based inference "
                "needs continuous latents: marginalise it out or observe it",
            )
        if _is_point_mass(msg["fn"]):
            raise SiteError(
                name,
                "Delta latent: a point mass, whose value no sampler can move (every other value has log "
                f"density -inf); for a value computed from other latents write numpyro.deterministic('{name}', value), "
                "or give the Delta obs= to observe it",
            )
        latent_msgs.append((name, msg))
    if not latent_msgs:
        raise ModelError("the model has no latent sample site: there is nothing to infer")

    prior_draw = {name: jax.ShapeDtypeStruct(jnp.shape(msg["value"]), msg["value"].dtype) for name, msg in latent_msgs}
    with_family = [name for name, msg in latent_msgs if find_family(msg["fn"]) is not None]
    # Only supports with traced bounds can depend on a latent; constant ones need no second trace.
    bounded = [name for name, msg in latent_msgs
               if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(msg["fn"].support))]
    try:  # traced, not run: where the model needs concrete latent values this is where it fails first
        deps = prior_dependencies(model, args, kwargs, prior_draw, with_family)
        bounds_deps = support_dependencies(model, args, kwargs, prior_draw, bounded)
    except Exception as error:  # noqa: BLE001 - re-raised as ModelError naming the model and what to do
        raise model_failure(model, error) from error
    for name, msg in latent_msgs:
        if bounds_deps.get(name):
            raise SiteError(name, _latent_support_message(msg["fn"], bounds_deps[name]))
    latents = []
    for name, msg in latent_msgs:
        base, event_dim = unwrap(msg["fn"])
        shape = tuple(jnp.shape(msg["value"]))
        latents.append(
            SiteInfo(
                name=name,
                shape=shape,
                event_dim=event_dim,
                unconstrained_shape=unconstrained[name],
                distribution=type(base).__name__,
                family=find_family(msg["fn"]),
                depends_on=deps.get(name, ()),
                in_scan="_scan_current_index" in msg["infer"],
                in_reversed_scan=name in in_reversed_scan,
                sample_shape_in_scan=name in shaped_in_scan,
                scaled=msg.get("scale") is not None,
                without_density=_masked_out(msg, shape, event_dim),
            )
        )
    return ModelStructure(tuple(latents), tuple(observed), prior_draw)


def _is_point_mass(fn) -> bool:
    """Whether a site's distribution is a ``Delta``, under any of the wrappers plates, ``.to_event``
    and ``handlers.mask`` put around it."""
    while isinstance(fn, (Independent, ExpandedDistribution, MaskedDistribution)):
        fn = fn.base_dist
    return isinstance(fn, Delta)


def _latent_support_message(fn, depends_on: tuple[str, ...]) -> str:
    """Why a latent whose support moves with other latents is refused, and how to write it instead.

    Every later stage (coordinates, initial values, VIP) maps a latent to unconstrained space by
    ``biject_to(support)`` once, outside the model; a support that moves with other latents would need
    that map rebuilt at every point, which they do not do (found in review: a bare UnexpectedTracerError).
    """
    base, _ = unwrap(fn)
    return (f"the bounds of its support ({type(base).__name__}) depend on the latent(s) {', '.join(depends_on)}, "
            "which autoreparam cannot map to unconstrained space: sample it on a fixed "
            "support and scale it, e.g. for x ~ Uniform(0, s) write u = numpyro.sample('u', dist.Uniform(0, 1)); "
            "x = numpyro.deterministic('x', s * u)")


def _masked_out(msg: dict, shape: tuple[int, ...], event_dim: int) -> np.ndarray | None:
    """Elements a concrete mask removes from the density (True), or None if there are none.

    NumPyro's ``obs_mask`` imputation samples a latent ``<name>_unobserved`` of the full shape under
    ``handlers.mask(~obs_mask)``, which makes its distribution a ``MaskedDistribution``: at the observed
    positions its draws have no density and wander freely.
    """
    fn = msg["fn"]
    if not isinstance(fn, MaskedDistribution):
        return None
    mask = fn._mask  # NumPyro keeps it private; True = the element has its density
    batch = shape[:len(shape) - event_dim]
    if isinstance(mask, (bool, jax.core.Tracer)) or tuple(fn.batch_shape) != batch:
        return None  # all or nothing, traced, or broadcast in a way the elements cannot be read from
    keep = np.broadcast_to(np.asarray(mask, dtype=bool), batch)
    if keep.all():
        return None
    return np.broadcast_to(~keep.reshape(batch + (1,) * event_dim), shape).copy()

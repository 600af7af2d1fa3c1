"""The sites of a model and the function ``latent values -> every site's distribution parameters``.

Site analysis (`autoreparam.reparam.analyse_model`) validates the model and finds its latents; this
module adds the observed sites and, for every site, which parameters become which typed edges. The
jaxpr of `parameter_function` is what the walker turns into primitive, constant and data nodes.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

import jax
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro import handlers

from autoreparam.errors import ModelError, UnsupportedError
from autoreparam.graph.types import EdgeType
from autoreparam.graph.vocabulary import FAMILY_EXTRA_PARAMETERS, OTHER_DISTRIBUTIONS, OTHER_METHODS, check_distribution
from autoreparam.model_data import ModelData
from autoreparam.reparam.families import Family, find_family, unwrap

# Trace message types that carry no site of their own: plates are sizes of sites, deterministic
# values and params flow through the computation (a param is a constant of the traced program).
_PASSIVE_MESSAGES = ("plate", "deterministic", "param")
_WRAPPERS = (dist.Independent, dist.ExpandedDistribution)


@dataclass(frozen=True)
class SiteRecord:
    """One sample site: what it is, and which of its parameters become which edges."""

    name: str
    observed: bool
    distribution: str  # class name of the base distribution, e.g. "Normal", "BernoulliLogits"
    family: Family | None  # the partial-centring family, None if there is none
    parameters: tuple[tuple[str, EdgeType], ...]  # ("loc", LOC), ("scale", SCALE), ("df", PARAM), ...
    shape: tuple[int, ...]  # the value's shape (batch + event)
    event_dim: int
    value: np.ndarray  # a prior draw for a latent, the data for an observed site
    log_likelihood_scale: float  # log of NumPyro's site scale (handlers.scale, subsampling); 0 if none

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=int))


def _parameters(base, family: Family | None) -> tuple[tuple[str, EdgeType], ...]:
    name = type(base).__name__
    if family is None:
        return tuple((p, EdgeType.PARAM) for p in OTHER_DISTRIBUTIONS[name])
    loc, _ = family.loc_scale(base)
    own = ((("loc", EdgeType.LOC),) if loc is not None else ()) + (("scale", EdgeType.SCALE),)
    return own + tuple((p, EdgeType.PARAM) for p in FAMILY_EXTRA_PARAMETERS.get(name, ()))


def _check_wrappers(name: str, fn) -> None:
    # A mask or a truncation changes the density; dropping it silently would misdescribe the model.
    while isinstance(fn, _WRAPPERS):
        fn = fn.base_dist
    if isinstance(fn, (dist.MaskedDistribution,)) or type(fn).__name__.endswith("TruncatedDistribution"):
        raise UnsupportedError(f"wrapper '{type(fn).__name__}' of site '{name}'",
                               f"masked or truncated sites are not covered by the model graph; {OTHER_METHODS}")


def _static_record(name: str, msg) -> dict:
    """The parts of a site's record fixed by the program, not by values: read while tracing."""
    fn = msg["fn"]
    _check_wrappers(name, fn)
    if msg.get("mask") is not None:
        raise UnsupportedError(f"mask of site '{name}'", "masked sites (handlers.mask) are not covered by the "
                               "model graph")
    base, event_dim = unwrap(fn)
    check_distribution(name, type(base).__name__)
    family = find_family(fn)
    return {"name": name, "observed": bool(msg["is_observed"]), "distribution": type(base).__name__,
            "family": family, "parameters": _parameters(base, family), "event_dim": event_dim}


def _site_messages(trace) -> list[tuple[str, dict]]:
    sites = []
    for name, msg in trace.items():
        if msg["type"] in _PASSIVE_MESSAGES:
            continue
        if msg["type"] != "sample":
            raise UnsupportedError(f"'{msg['type']}' statement '{name}'", f"not covered by the model graph; {OTHER_METHODS}")
        if msg["is_observed"] and isinstance(msg["fn"], dist.Unit):
            raise UnsupportedError(f"numpyro.factor '{name}'", f"not covered by the model graph; {OTHER_METHODS}")
        if msg["infer"].get("is_auxiliary"):
            raise UnsupportedError(f"auxiliary site '{name}'", "build the graph of the centred model, before "
                                   "any reparameterisation handler")
        sites.append((name, msg))
    return sites


# Compiled site programs per model and data structure, least recently used dropped.
_SITE_PROGRAMS: OrderedDict = OrderedDict()
MAX_SITE_PROGRAMS = 64


def _site_program(model: Callable, data: ModelData, seed: int) -> tuple[Callable, list[dict]]:
    """``(data arrays, key) -> [(value, scale)]`` of every site, jitted, with the sites' static records.

    One compiled program rather than the model run op by op: in a fresh process every distinct
    operation run eagerly is compiled on its own, which cost electric's graph 1.06 s of its 2.7 s.
    The prior draw is the same either way (the seed handler's keys do not depend on how it runs).
    The seed's key is an argument, so a new seed reuses the compiled program (keyed by the seed, as it
    was, each new seed cost radon MN a compilation).
    """
    key = (model, data.key)
    entry = _SITE_PROGRAMS.get(key)
    if entry is None:
        static: list[dict] = []

        def run(arrays, rng_key):
            bound_args, bound_kwargs = data.rebuild(arrays)
            with handlers.block():
                trace = handlers.trace(handlers.seed(model, rng_seed=rng_key)).get_trace(*bound_args, **bound_kwargs)
            sites = _site_messages(trace)
            static[:] = [_static_record(name, msg) for name, msg in sites]
            return [(msg["value"], msg.get("scale")) for _, msg in sites]

        program = jax.jit(run)
        try:
            program.trace(data.arrays, jax.random.PRNGKey(seed))  # trace now: fills ``static`` and raises the model's errors here
        except NotImplementedError as error:  # NumPyro's, often without a message (ImproperUniform.sample)
            raise UnsupportedError("the model's prior draw", "a distribution in it cannot be sampled (e.g. "
                                   f"ImproperUniform), and the graph reads one prior draw; {OTHER_METHODS}") from error
        entry = _SITE_PROGRAMS[key] = (program, static)
        while len(_SITE_PROGRAMS) > MAX_SITE_PROGRAMS:
            _SITE_PROGRAMS.popitem(last=False)
    _SITE_PROGRAMS.move_to_end(key)
    return entry


def trace_sites(model: Callable, args, kwargs, seed: int = 0) -> list[SiteRecord]:
    """Every sample site of one seeded run of the model, in program order."""
    data = ModelData.for_model(model, tuple(args), dict(kwargs))
    with python_branches_refused():
        program, static = _site_program(model, data, seed)
        outputs = jax.device_get(program(data.arrays, jax.random.PRNGKey(seed)))
    records = []
    for record, (value, scale) in zip(static, outputs, strict=True):
        value = np.asarray(value)
        scale = 0.0 if scale is None else float(np.log(np.mean(np.asarray(scale))))
        records.append(SiteRecord(**record, shape=tuple(value.shape), value=value, log_likelihood_scale=scale))
    return records


def read_parameter(fn, family: Family | None, parameter: str):
    """Parameter ``parameter`` of a (possibly wrapped) distribution; loc and scale through the family."""
    base, _ = unwrap(fn)
    if family is not None and parameter in ("loc", "scale"):
        loc, scale = family.loc_scale(base)
        return loc if parameter == "loc" else scale
    return getattr(base, parameter)


def parameter_function(model: Callable, args, kwargs, sites: list[SiteRecord]) -> Callable:
    """``latent values (tuple, program order) -> [[parameters of site] for each site]``.

    Values are passed as a tuple in program order, not a dict: a dict would be flattened in sorted
    name order, and renaming a variable would then reorder the graph.
    """
    latent_names = [s.name for s in sites if not s.observed]

    def parameters(values):
        seeded = handlers.seed(handlers.substitute(model, data=dict(zip(latent_names, values))), rng_seed=0)
        with handlers.block():
            trace = handlers.trace(seeded).get_trace(*args, **kwargs)
        return [[read_parameter(trace[s.name]["fn"], s.family, p) for p, _ in s.parameters] for s in sites]

    return parameters


@contextmanager
def python_branches_refused():
    """Turn JAX's error for Python control flow on a traced latent into a `ModelError` that says what to do."""
    try:
        yield
    except jax.errors.ConcretizationTypeError as error:
        raise ModelError(
            "the model branches in Python on a latent value, so its graph depends on the values; write the "
            f"branch with jnp.where (JAX said: {str(error).splitlines()[0]})"
        ) from error


def parameter_jaxpr(model: Callable, args, kwargs, sites: list[SiteRecord]):
    """The closed jaxpr of `parameter_function` at the sites' prior draw."""
    values = tuple(s.value for s in sites if not s.observed)
    # Without argument checks: they cannot run on traced values.
    with python_branches_refused(), numpyro.validation_enabled(False):
        closed = jax.make_jaxpr(parameter_function(model, args, kwargs, sites))(values)
    expected = sum(len(s.parameters) for s in sites)
    if len(closed.jaxpr.outvars) != expected:  # pragma: no cover - a parameter that is not one array
        raise ModelError(f"expected {expected} distribution parameters, traced {len(closed.jaxpr.outvars)}")
    return closed

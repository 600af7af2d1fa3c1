"""Initial values of a model's latents, in the original (constrained) coordinates.

Initial values are always given and returned keyed by the original site names; every
parameterisation maps them into its own coordinates (``Coordinates.from_original``). A user's NumPyro
init strategy (``init_to_value(values=...)``, ``init_to_median``, ...) works unchanged.

The model's log density must be finite at the values returned: a start where it is NaN or -inf
would make every later stage (VI, warm-up, sampling) return NaN or stall without saying why. As
NumPyro's ``find_valid_initial_params`` does, the default strategy falls back to random points
(``init_to_uniform``) before giving up with an error that names the offending site.
"""

from __future__ import annotations

import functools
from typing import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
from numpyro import handlers
from numpyro.infer.initialization import init_to_feasible, init_to_median, init_to_uniform, init_to_value
from numpyro.infer.util import log_density, unconstrain_fn

from autoreparam.errors import ArgumentError, ModelError, SiteError
from autoreparam.mcmc.programs import PROGRAMS
from autoreparam.model_data import ModelData, content_key
from autoreparam.validation import model_failure, nonfinite_site

# Random starting points tried after the prior median, when the user gave no init strategy.
_FALLBACK_STARTS = 10
# Module-level strategies: a strategy is part of the compiled program's key, so a fresh partial per
# call would compile anew on every call.
PRIOR_MEDIAN = init_to_median(num_samples=15)
# The origin of the unconstrained space (every scale 1, every location 0), the centre of Stan's and
# NumPyro's uniform(-2, 2) starts. ``auto`` starts there: under vague priors the prior median can sit
# far out (election '88's N(0, 100) coefficients: a median of 15 draws is off by about 30, so every
# logit saturates and the Section 3 rule sees no curvature from the data).
ORIGIN = init_to_feasible


def _values_given(init_strategy) -> dict | None:
    """The values of an ``init_to_value(values=...)`` strategy; None for any other strategy."""
    if isinstance(init_strategy, functools.partial) and init_strategy.func is init_to_value:
        return init_strategy.keywords.get("values") or {}
    return None


def check_init_strategy(init_strategy, latents: Sequence) -> None:
    """A user's ``init_strategy``, checked before anything runs: a NumPyro init strategy, and where it is
    ``init_to_value(values=...)``, values for latent sites (``latents``: `SiteInfo`) of their shapes.

    NumPyro ignores a value for a name that is no latent site, so a misspelt name would silently
    start that site from its default instead.
    """
    if init_strategy is None:
        return
    if not callable(init_strategy):
        raise ArgumentError("init_strategy must be a NumPyro init strategy, e.g. "
                            f"numpyro.infer.init_to_value(values={{...}}), not {type(init_strategy).__name__}")
    values = _values_given(init_strategy)
    if values is None:
        return
    shapes = {site.name: tuple(site.shape) for site in latents}
    for name, value in values.items():
        if name not in shapes:
            raise SiteError(name, "init_to_value gives a value for a name that is not a latent site of the model "
                            f"(latent sites: {', '.join(shapes)})")
        shape = tuple(np.shape(value))
        if shape not in ((), shapes[name]):
            raise SiteError(name, f"init_to_value's value has shape {shape}, but the site has shape {shapes[name]}: "
                            "give an array of the site's shape (or a scalar)")


def initial_values(
    model: Callable, model_args: tuple, model_kwargs: dict, names, init_strategy: Callable | None = None, seed: int = 0,
    unconstrained: bool = False, default: Callable = PRIOR_MEDIAN,
):
    """Latent values chosen by a NumPyro init strategy (default: ``default``, the median of 15 prior
    draws unless a caller such as ``auto`` chooses ``ORIGIN``).

    With ``unconstrained=True`` returns ``(values, unconstrained values)``: the latter in the centred
    program's unconstrained coordinates (``Coordinates``' ``v``), where a sampler can start.
    Raises ``SiteError`` naming the first site whose log density is not finite at the chosen values
    (after ``_FALLBACK_STARTS`` random points, for the default strategy).
    """
    if init_strategy is not None:
        candidates = [(init_strategy, seed)]
    else:
        candidates = [(default, seed)]
        candidates += [(init_to_uniform, seed + 1 + k) for k in range(_FALLBACK_STARTS)]
    # A user's values that break the model (a negative scale fails in a distribution's constructor)
    # are the values' fault, not the model's.
    cause = None if _values_given(init_strategy) is None else (
        "at the values of the init_to_value given: check that each lies inside its site's support, e.g. a scale "
        "must be positive")
    first_problem = None
    for strategy, strategy_seed in candidates:
        values, total, free = _values(model, model_args, model_kwargs, names, strategy, strategy_seed)
        if np.isfinite(total):
            return (values, free) if unconstrained else values
        problem = nonfinite_site(model, model_args, model_kwargs, values, cause=cause)
        if problem is None:
            return (values, free) if unconstrained else values
        first_problem = first_problem or problem
    site, explanation = first_problem
    tried = "" if len(candidates) == 1 else f" (and at {len(candidates) - 1} random starting points)"
    if site == "<model>":
        raise ModelError(explanation + tried)
    raise SiteError(site, explanation + tried)


def _strategy_key(strategy):
    """An init strategy as a cache key: a ``functools.partial`` (NumPyro's ``init_to_value(values=...)``)
    by its function and its arguments' contents, anything else as itself."""
    if isinstance(strategy, functools.partial):
        return ("partial", strategy.func, content_key(strategy.args), content_key(strategy.keywords))
    return strategy


def _values(model, model_args, model_kwargs, names, strategy, seed) -> tuple[dict, float, dict]:
    """The strategy's values, the model's log density there and the values unconstrained, in one
    compiled program.

    Compiled rather than run op by op: the first eager run of a model compiles each primitive it
    calls separately, which took seconds on radon; one program takes a fraction of that.
    """

    data = ModelData.for_model(model, model_args, model_kwargs)

    def values_and_density(arrays, key):
        model_args, model_kwargs = data.rebuild(arrays)
        key, density_key = jax.random.split(key)
        substituted = handlers.substitute(handlers.seed(model, rng_seed=key), substitute_fn=strategy)
        # block: invisible to any handler the caller has around us. Validation off: a bad init value
        # must reach our check below (which names the site), not fail in a distribution's constructor.
        with handlers.block(), numpyro.validation_enabled(False):
            trace = handlers.trace(substituted).get_trace(*model_args, **model_kwargs)
        # A scalar init_to_value for a vector site is substituted as given: broadcast it to the
        # site's shape, or the flat start vector came out short (a bare JAX error; found in review).
        values = {n: jnp.broadcast_to(jnp.asarray(trace[n]["value"]),
                                      trace[n]["fn"].shape(trace[n]["kwargs"].get("sample_shape", ())))
                  for n in names}
        # Seeded: a site the caller left unobserved (y=None) is sampled, not an error.
        seeded = handlers.seed(model, rng_seed=density_key)
        total = log_density(seeded, model_args, model_kwargs, values)[0]
        return values, total, unconstrain_fn(seeded, model_args, model_kwargs, values)

    # One executable per model, strategy and data shapes: a second call compiles nothing. The strategy
    # by content: ``init_to_value``'s values are constants of the program, and keyed by the partial's
    # identity an edited values dict was ignored (found in review).
    program_key = ("initial_values", model, data.key, tuple(names), _strategy_key(strategy))
    try:
        (values, total, free), _, _ = PROGRAMS(program_key, lambda: values_and_density,
                                               (data.arrays, jax.random.PRNGKey(seed)))
    except Exception as error:  # noqa: BLE001 - re-raised as an autoreparam error naming the model
        raise model_failure(model, error) from error
    for n, val in values.items():
        # On the host: jnp.isfinite compiled two small programs per site shape on a first call.
        if not np.all(np.isfinite(np.asarray(val))):
            raise SiteError(n, "the init strategy gave non-finite initial values; give finite values in the support")
    return values, float(total), free

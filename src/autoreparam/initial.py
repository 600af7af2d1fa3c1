"""Initial values of a model's latents, in the original (constrained) coordinates.

Initial values are always given and returned keyed by the original site names; every
parameterisation maps them into its own coordinates (``Coordinates.from_original``). A user's NumPyro
init strategy (``init_to_value(values=...)``, ``init_to_median``, ...) works unchanged.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpyro
from numpyro import handlers
from numpyro.infer.initialization import init_to_median

from autoreparam.errors import ModelError


def initial_values(
    model: Callable, model_args: tuple, model_kwargs: dict, names, init_strategy: Callable | None = None, seed: int = 0
) -> dict[str, jax.Array]:
    """Latent values chosen by a NumPyro init strategy (default: the median of 15 prior draws)."""
    strategy = init_to_median(num_samples=15) if init_strategy is None else init_strategy
    substituted = handlers.substitute(handlers.seed(model, rng_seed=seed), substitute_fn=strategy)
    # block: invisible to any handler the caller has around us. Validation off: a bad init value must
    # reach our check below (which names the site), not fail inside a distribution's constructor.
    with handlers.block(), numpyro.validation_enabled(False):
        trace = handlers.trace(substituted).get_trace(*model_args, **model_kwargs)
    values = {n: jnp.asarray(trace[n]["value"]) for n in names}
    for n, val in values.items():
        if not bool(jnp.all(jnp.isfinite(val))):
            raise ModelError(f"the init strategy gave non-finite initial values for site '{n}'")
    return values

"""Why chains never moved: a check that runs only when the health check found a stuck site.

The health check sees that a site "never changed" (``diagnostics.health``) but not why. One cause it
cannot see is a log density that is finite where the chains are but whose gradient is not: every
gradient-based step from there is NaN and rejected. ``jnp.where(x > 100, jnp.sqrt(x - 100), 0)`` is
such a term: both branches are differentiated, so its gradient is NaN at every x <= 100 (found by a
user-facing probe: the run said only that x never changed, at R-hat 2e7).
"""

from __future__ import annotations

import jax
import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.reparam.parameterisation import Parameterisation


def nonfinite_gradient_warning(coords: Coordinates, samples: dict) -> str | None:
    """A warning naming the latents whose gradient of the (centred) log density is NaN or infinite at the
    first chain's last draw while the density there is finite; None if it is finite, or if the
    density is not (the draws' own checks say that)."""
    last = {name: np.asarray(values)[0, -1] for name, values in samples.items() if name in coords.names}
    try:
        v = coords.from_original(last, Parameterisation.centred(coords.plan))
        value, gradient = jax.value_and_grad(coords.log_density_cp)(v)
    except Exception:  # noqa: BLE001 - an explanation that cannot be computed is left out, the warning stands
        return None
    if not np.isfinite(float(value)):
        return None
    bad = [name for name in coords.names if not np.all(np.isfinite(np.asarray(gradient[name])))]
    if not bad:
        return None
    return (f"the log density's gradient with respect to {', '.join(bad)} is NaN or infinite at the chains' draws, "
            f"where the density itself is finite ({float(value):.4g}), so no gradient-based step could leave them: "
            "a term of the model is not differentiable there, e.g. jnp.sqrt or jnp.log of a negative number inside "
            "jnp.where (both branches are differentiated); make every branch finite, e.g. "
            "jnp.sqrt(jnp.clip(x - 100, 0)).")

"""Where samplers start in a predicted parameterisation when no variational fit is run.

NUTS's window adaptation (Stan's scheme) tunes the step size and a diagonal mass matrix itself, so
q is needed only for starting points and a first guess of the mass matrix. Stan starts from
``uniform(-2, 2)`` in unconstrained space with a unit metric; here every chain starts at the model's
initial values (the prior median of 15 draws, `autoreparam.initial`), moved into the predicted
coordinates, plus a standard normal perturbation, with a unit initial metric (``infer`` passes
``fitted_metric=False``, so NUTS's warm-up takes its first metric from ``NUTSConfig.initial_metric``:
by default the identity, with the elements the gradient at the start shows to be stiff set from it).
This is a `VIFit` in form only: its ``elbo`` is NaN and ``label`` says it is not a fit.
"""

from __future__ import annotations

import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.precision import float_dtype
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.vi.fits import VIFit

START_LABEL = "meta"


def start_without_fit(coords: Coordinates, param: Parameterisation, init_values: dict,
                      label: str = START_LABEL) -> VIFit:
    """A pseudo-fit centred at ``init_values`` (original coordinates) with unit scales (see the docstring)."""
    # `start_vector` raises, naming the site, where the values are not finite in these coordinates.
    loc = np.asarray(coords.start_vector(init_values, param), dtype=float_dtype())
    return VIFit(label=label, parameterisation=param, loc=loc, scale=np.ones_like(loc), elbo=float("nan"),
                 elbo_se=float("nan"), learning_rate=0.0, window_mean=float("nan"), trace=np.zeros(0))


__all__ = ["start_without_fit"]

"""A second start for ``auto`` when its warm-up froze: draws of a short non-centred variational fit.

``auto`` starts its chains near the origin of the centred unconstrained space with no fit. Where the
data lie far from the origin and pull hard, the first windows of the warm-up are a transit, and a
pooled warm-up can freeze there. Found by the invariance fuzzing with ``auto`` as a fourth run:

- generated program 425 (a Student-t hierarchy, 279 observations near -60, noise scale about 5):
  in transit two chains fell into the funnel's neck (log tau -23 and -42); the first slow window's
  pooled variances, between chains in transit, reached 1,300; the step size fell from 2e-3 to 7e-7
  within 150 transitions and to 2e-9 after, and every chain froze (R-hat 2e7; every pilot, and the
  CP and NCP candidates moved from those chains, froze too);
- generated program 218 (a Poisson GLM with ``tau_a ~ half_normal(0.026)`` and ``beta ~ N(0,
  0.04)``): the jittered start puts ``beta`` tens of prior scales out, the gradients there reach the
  first metric's bound (1e8), and the step size was 5e-8 after 50 transitions.

Both are plainly visible in the step size the warm-up adapted: NUTS builds at most 2^10 - 1 leapfrog
steps per transition, so with a step below ``FROZEN_STEP`` a transition moves less than a tenth of the
scale the metric assumes, and the chains cannot mix whatever they do next (on 11 zoo models x 3
seeds every slow window ended at 0.009 to 1.4: ``benchmarks/results/window_end_steps.json``). NUTS in
NCP started from a variational fit (how the fixed methods start) mixed on 218 with 28,000 gradients,
and ``auto`` started at the prior median mixed on 425. So when a slow window (or the warm-up) ends
with the chains frozen, ``auto`` fits a light mean-field normal in NCP (``vi.protocol.FAST``: 400
steps, two learning rates), starts its chains again at draws of q with q's variances as the first
metric (paper 000 Section 6.2's start), and warms up again from the beginning, in NCP until the
rule's first switch. It does so once; the decision says so.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.sampling import draws_from_q
from autoreparam.vi.fits import fit_parameterisations
from autoreparam.vi.protocol import FAST, VIConfig

# 1023 leapfrog steps (NUTS's most, 10 doublings) of this size cover a tenth of one unit of the metric.
FROZEN_STEP = 1e-4


@dataclasses.dataclass(frozen=True)
class FittedStart:
    """Where the chains start again: positions in NCP's unconstrained coordinates and q's variances."""

    param: Parameterisation  # NCP: the coordinates of ``positions``
    positions: np.ndarray  # (chains, dim)
    inverse_mass: np.ndarray  # (dim,) q's variances
    elbo: float
    gradients: int  # the fit's gradient evaluations (every step's Monte Carlo samples, every learning rate)
    seconds: dict  # compile, run


def froze(step_size) -> bool:
    """Whether an adapted step size (one per chain) leaves the chains unable to move (``FROZEN_STEP``)."""
    step = np.asarray(step_size, dtype=float)
    return bool(not np.all(np.isfinite(step)) or np.min(step) < FROZEN_STEP)


def fitted_start(coords: Coordinates, start_values: dict, num_chains: int, seed: int,
                 config: VIConfig | None = None) -> FittedStart | None:
    """Draws of a light mean-field fit in NCP, from ``start_values`` (original coordinates, by site);
    None if the fit's ELBO is not finite (there is then nothing better to start from). ``config``: the
    fit's protocol, ``FAST`` by default (a user's ``infer(..., vi_config=...)``)."""
    ncp = Parameterisation.non_centred(coords.plan)
    config = dataclasses.replace(FAST if config is None else config, progress=False)
    fits, timing = fit_parameterisations(coords, {"ncp": ncp}, start_values, config, seed=seed, label="VI")
    fit = fits["ncp"]
    if not fit.ok:
        return None
    gradients = (config.num_steps * config.num_samples + config.final_num_samples) * len(config.learning_rates)
    return FittedStart(ncp, draws_from_q(fit, num_chains, seed), np.asarray(fit.scale) ** 2, fit.elbo, gradients,
                       {"compile": timing["compile_seconds"], "run": timing["run_seconds"]})

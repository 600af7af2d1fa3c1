"""What a short run of draws says: efficiency per gradient and the health signs that call for another try.

A pilot is the first draws after a warm-up (kept in the result if its parameterisation wins). Its
score is the pooled rank-normalised bulk ESS (min over elements) per 1000 gradient evaluations; its
health says whether the parameterisation, or only the step size, needs another look:

- chains that disagree (R-hat above ``PILOT_MAX_R_HAT``; pilots are short, so looser than the final
  1.01) or fewer than ``MIN_ESS_PER_TRANSITION`` effective draws per transition: the geometry may be
  poor in this parameterisation, try the others (``mixes``);
- divergences in at least ``MAX_DIVERGENT_SHARE`` of transitions: the step is too long for the
  curvature somewhere; adapt again towards a higher acceptance (``RETRY_TARGET_ACCEPTS`` in turn),
  as Stan's advice goes.

Choosing among pilots is a different question from whether to look further. A pilot of 100 draws per
chain has a noisy R-hat (the maximum over every element of bulk and tail R-hat): on radon MN (seed 0)
the rule's pilot scored 136 ESS per 1000 gradients at R-hat 1.067, CP 77 at 1.056 and NCP 8.9 at
1.043, and ranking by ``mixes`` chose NCP, 15 times slower, whose 1000 draws then gave 6 ESS per 1000
gradients. The score is the *pooled* rank-normalised ESS, which already falls when chains disagree,
so pilots compete on it unless they are plainly broken (``usable``: R-hat at most
``PILOT_BROKEN_R_HAT``, the minimum ESS per transition, no divergences to speak of); the chains that
never mixed in issue 8 had R-hat 2.8 to 3.7. The final draws are checked at R-hat 1.01 as always.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from autoreparam.diagnostics.health import r_hat_text
from autoreparam.diagnostics.masked import diagnostic_views
from autoreparam.diagnostics.standard import standard_diagnostics
from autoreparam.mcmc.segments import SegmentDraws
from autoreparam.validation import refuse_nonfinite_draws

PILOT_MAX_R_HAT = 1.05
PILOT_BROKEN_R_HAT = 1.1
MIN_ESS_PER_TRANSITION = 0.05
MAX_DIVERGENT_SHARE = 0.005
RETRY_TARGET_ACCEPTS = (0.95, 0.99)  # tried in turn while the pilot still diverges


@dataclass(frozen=True)
class PilotScore:
    label: str
    ess_per_1000_grads: float  # pooled bulk ESS, min over elements, per 1000 gradients
    ess_per_transition: float
    grads_per_transition: float
    max_r_hat: float
    divergent_share: float
    gradients: float  # everything this candidate cost: re-adaptation and pilot, all chains
    seconds: float

    @property
    def mixes(self) -> bool:
        return (not self.max_r_hat > PILOT_MAX_R_HAT) and self.ess_per_transition >= MIN_ESS_PER_TRANSITION

    @property
    def usable(self) -> bool:
        """Fit to compete on ESS per gradient: not plainly broken (see the module's docstring)."""
        return (not self.max_r_hat > PILOT_BROKEN_R_HAT and self.ess_per_transition >= MIN_ESS_PER_TRANSITION
                and not self.diverges)

    @property
    def diverges(self) -> bool:
        return self.divergent_share >= MAX_DIVERGENT_SHARE

    def describe(self) -> str:
        return (f"{self.label}: {self.ess_per_1000_grads:.2f} ESS per 1000 gradients ({self.ess_per_transition:.2f} per "
                f"transition at {self.grads_per_transition:.1f} gradients each), "
                f"R-hat {r_hat_text(self.max_r_hat)}, {100 * self.divergent_share:.1f}% divergent; "
                f"cost {self.gradients:.3g} gradients, {self.seconds:.1f} s")


def score(label: str, coords, draws: SegmentDraws, gradients: float, seconds: float) -> PilotScore:
    samples = coords.split_original(draws.draws)
    refuse_nonfinite_draws(samples, coords.structure)  # before the diagnostics' bare refusal
    views = diagnostic_views(samples, coords.without_density)
    standard = standard_diagnostics(views.standard)
    transitions = draws.steps.size
    steps = float(np.sum(draws.steps))
    ess = standard.min_ess_bulk if math.isfinite(standard.min_ess_bulk) else 0.0
    return PilotScore(
        label=label,
        ess_per_1000_grads=1000.0 * ess / steps if steps else 0.0,
        ess_per_transition=ess / transitions,
        grads_per_transition=steps / transitions,
        max_r_hat=standard.max_r_hat,
        divergent_share=float(np.mean(draws.divergent)),
        gradients=gradients,
        seconds=seconds,
    )

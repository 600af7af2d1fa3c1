"""What ``auto`` does when its draws are clean but too few: run the chains on, and keep every second.

The health check (``diagnostics.health``, Vehtari et al. 2021, Section 4) asks for rank-normalised
R-hat below 1.01 and bulk and tail ESS of at least 100 per chain. Draws without a divergence that miss
either only by a little are a question of length, not of geometry, and the user's next move would be a
longer run (``num_samples``), paying the warm-up and the compilation again. Here the chains, already
warm, draw as many transitions again and the result keeps every second one, so it has the
``num_samples`` draws asked for: where the draws' autocorrelation is high (the only case in which
their ESS falls short: 400 effective of 4,000 is 0.1 per draw) the thinned draws keep almost all of
the longer chains' ESS (thinning costs efficiency only where successive draws are nearly
independent: Link & Eaton 2012, "On thinning of chains in MCMC").

Once, and only where doubling could reach the line (``RUN_ON_REACH``) and the chains do not plainly
disagree (``PILOT_BROKEN_R_HAT``). Kept only if better (``_better``): no divergence, better on what
fell short (ESS, R-hat) and not over the line on the other. The extra transitions count in the
sampling phase's gradients and seconds. Found by simulation-based calibration: 58 of the 78
auto/nuts runs flagged in 500 (docs/reliability_findings.md) had no divergence, and were flagged for
ESS or R-hat alone.
"""

from __future__ import annotations

import numpy as np

from autoreparam.auto.pilot import PILOT_BROKEN_R_HAT
from autoreparam.diagnostics.health import MAX_R_HAT, MIN_ESS_PER_CHAIN, r_hat_text
from autoreparam.diagnostics.masked import diagnostic_views
from autoreparam.diagnostics.standard import StandardDiagnostics, standard_diagnostics
from autoreparam.mcmc.nuts import join
from autoreparam.mcmc.segments import SegmentDraws, sample_codes
from autoreparam.validation import refuse_nonfinite_draws

# Run on only where the smallest ESS is at least this share of the line: twice the draws then reach
# it at the ESS per draw the chains already show.
RUN_ON_REACH = 0.5


def shortfall(run, draws: SegmentDraws) -> tuple[float, float, StandardDiagnostics]:
    """``(smallest bulk or tail ESS over the line, max R-hat, the diagnostics)``, as the health check
    reads them (``result.compute_diagnostics`` takes the diagnostics of the draws kept, rather than
    computing them again: 0.10 s at 108 elements, 0.29 s at 400 for 4 x 1000 draws,
    benchmarks/results/diagnostics_speed.json).

    Draws that reached NaN or infinity are refused first, with the likely causes and what to do
    (`refuse_nonfinite_draws`), as the pilots' are: the diagnostics' own refusal names only the
    site (found by fuzzing: ``z3 ~ N(0, exp(z2))`` overflows float32 in 1.3% of its prior draws,
    and a chain that went there stopped ``auto`` with that bare error)."""
    samples = run.coords.split_original(draws.draws)
    refuse_nonfinite_draws(samples, run.coords.structure)
    views = diagnostic_views(samples, run.coords.without_density)
    standard = run.diagnosed(standard_diagnostics, views.standard)
    return over_line(standard, draws.draws.shape[0]), standard.max_r_hat, standard


def line_in_reach(num_chains: int, num_samples: int) -> bool:
    """Whether draws of this length can pass the health check's ESS line at all: the ESS estimator
    caps ESS at N log10 N for N draws in all (``diagnostics.rank_normalised``, as ArviZ), below
    ``MIN_ESS_PER_CHAIN`` per chain for fewer than about 50 draws per chain."""
    total = num_chains * num_samples
    return total > 1 and total * np.log10(total) >= MIN_ESS_PER_CHAIN * num_chains


def out_of_reach_note(num_chains: int, num_samples: int) -> str:
    total = num_chains * num_samples
    return (f"{num_chains} chains x {num_samples} draws cannot reach the health check's {MIN_ESS_PER_CHAIN} "
            f"effective draws per chain (ESS is at most N log10 N = {total * np.log10(max(total, 2)):.0f} for N = "
            f"{total} draws), so no other draws were tried; raise num_samples")


def over_line(standard: StandardDiagnostics, num_chains: int) -> float:
    """The smallest bulk or tail ESS over the health check's line (1: just enough)."""
    return min(standard.min_ess_bulk, standard.min_ess_tail) / (MIN_ESS_PER_CHAIN * num_chains)


def every_second(draws: SegmentDraws) -> SegmentDraws:
    """Every second transition's draw, of whole pairs; the gradients and divergences of both
    transitions of a pair stay with it (a pair diverged if either did), so that the result's cost
    counts every transition run, and its acceptance is the pair's mean."""
    even = 2 * (draws.steps.shape[1] // 2)
    first, second = (SegmentDraws(*(a[:, start:even:2] for a in draws)) for start in (0, 1))
    return SegmentDraws(second.draws, first.steps + second.steps, (first.accept + second.accept) / 2,
                        first.divergent | second.divergent)


def _better(reach: float, r_hat: float, longer_reach: float, longer_r_hat: float) -> bool:
    """Better on what fell short, and not over the line on the other (where only R-hat fell short,
    fewer effective draws than before are fine as long as there are enough)."""
    ess_ok = longer_reach > reach if reach < 1.0 else longer_reach >= 1.0
    r_hat_ok = longer_r_hat < r_hat if r_hat > MAX_R_HAT else not longer_r_hat > MAX_R_HAT
    return ess_ok and r_hat_ok


def run_on_if_short(run, param, chains, draws: SegmentDraws, target, num_samples: int):
    """Draws clean but short of the health check's ESS or R-hat: ``num_samples`` transitions more,
    every second kept, if better (``_better``). Returns ``(chains, draws, the draws' standard
    diagnostics or None where they were not computed)``."""
    if np.any(draws.divergent) or draws.draws.shape[1] != num_samples or num_samples < 2:
        return chains, draws, None
    reach, r_hat, standard = shortfall(run, draws)
    if not np.isfinite(reach) or (reach >= 1.0 and not r_hat > MAX_R_HAT):
        return chains, draws, standard
    if not line_in_reach(draws.draws.shape[0], num_samples):
        # No run of this length can pass, so none is paid for (found in review: 45,571 gradients of
        # run-on and redraws for draws that cost 588).
        run.notes.append(out_of_reach_note(draws.draws.shape[0], num_samples))
        return chains, draws, standard
    if reach < RUN_ON_REACH or r_hat > PILOT_BROKEN_R_HAT:
        return chains, draws, standard
    more_chains, more, _ = run.segments("sampling", param, run.branch(chains), sample_codes(num_samples), target=target)
    longer = every_second(join([draws, more], 2 * num_samples))
    longer_reach, longer_r_hat, longer_standard = shortfall(run, longer)
    what = f"{100 * reach:.0f}% of the effective draws the health check asks, R-hat {r_hat_text(r_hat)}"
    if np.any(longer.divergent) or not _better(reach, r_hat, longer_reach, longer_r_hat):
        run.notes.append(f"the draws had {what}: the chains ran on for as many again, which was no better "
                         f"({int(np.sum(longer.divergent))} divergent, {100 * longer_reach:.0f}%, R-hat "
                         f"{r_hat_text(longer_r_hat)}), so the earlier draws were kept")
        return chains, draws, standard
    run.notes.append(f"the draws had {what}: the chains ran on for as many again and every second draw was kept "
                     f"({100 * longer_reach:.0f}%, R-hat {r_hat_text(longer_r_hat)})")
    return more_chains, longer, longer_standard

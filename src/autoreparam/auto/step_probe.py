"""A second pilot at a shorter step: NUTS's efficiency jumps with its step size, and the warm-up cannot see it.

NUTS doubles its trajectory until it turns back (Hoffman & Gelman 2014, Algorithm 3; BlackJAX's
iterative, multinomial variant), so a trajectory is 1, 3, 7, 15, 31, ... leapfrog steps long, and its
ESS per gradient is far from smooth in the step size. Dual averaging (Stan's warm-up) sets the step
size by the acceptance alone. Measured with the warm-up's metric held fixed, 4 chains x 1000 draws per
step size (``benchmarks/results/step_probe/``): where the chains' trajectories mix two lengths (electric,
mean 8.3 steps, a mix of 7 and 15; radon ND, 18.0, a mix of 15 and 31), 0.9 times the adapted step
size settles them on one length and draws 1.2x to 1.3x (electric, two seeds: 78 -> 96 and 72 -> 94
ESS per 1000 gradients) to 2.5x (radon ND: 44 -> 112) the ESS per gradient; where they do not, it
changes little or costs (radon MN 138 -> 106, election '88 64 -> 49), so it must be measured, model
by model.

So after the winning pilot, the same chains run a pilot as long at ``PROBE_FACTOR`` times the step
size. If its ESS per gradient beats the pilot's by ``PROBE_MARGIN`` (two pilots of this length differ
by up to about that much at one step size), the draws go on at the shorter step. Either way the
probe's draws are kept: after the warm-up each step size gives a kernel that leaves the posterior
invariant, so chains that change kernel between draws still sample it, and a probe that loses costs
only its own draws' lower efficiency (one pilot's worth, an eighth of the draws or less).
"""

from __future__ import annotations

from autoreparam.mcmc.nuts import join

PROBE_FACTOR = 0.9
PROBE_MARGIN = 1.15


def probe_shorter_step(run, pilot_fn, label, param, chains, pilot, best, length: int, target):
    """``(chains, pilot draws, probe score or None)``: ``pilot`` followed by a probe's draws at the
    shorter step, and the chains at whichever step size won (``pilot_fn`` is ``auto._pilot``).

    Probed only when the pilot is healthy (it mixes, does not diverge) and the run has room for the
    pilot as drawn, the probe and as many draws again. The pilot as drawn: it may be twice ``length``
    (a pilot that ran on); read from ``length`` alone, the
    probe could fill the draws (its verdict then changed nothing) or pass them (its draws were paid
    for and dropped; found in review)."""
    room = run.config.num_samples - pilot.draws.shape[1] - 2 * length
    if not (best.mixes and best.usable and not best.diverges) or room < 0:
        return chains, pilot, None
    adapted = chains.adapt.step_size
    shorter = chains._replace(adapt=chains.adapt._replace(step_size=adapted * PROBE_FACTOR))
    shorter, probe, probed = pilot_fn(run, f"{label} at {PROBE_FACTOR:g}x the step size", param, shorter, length,
                                      None, target=target)
    kept = probed.ess_per_1000_grads > PROBE_MARGIN * best.ess_per_1000_grads and probed.usable
    # Said either way: a reader of the pilot table otherwise sees a probe and no verdict.
    drew = (f"a pilot at {PROBE_FACTOR:g}x the adapted step size drew {probed.ess_per_1000_grads:.2f} ESS per 1000 "
            f"gradients against {best.ess_per_1000_grads:.2f}")
    if kept:
        run.notes.append(f"{drew}: the draws went on at it")
    else:
        run.notes.append(f"{drew} (it needed {PROBE_MARGIN:g}x{'' if probed.usable else ' and a usable pilot'}): "
                         "the draws went on at the adapted step size")
        shorter = shorter._replace(adapt=shorter.adapt._replace(step_size=adapted))
    return shorter, join([pilot, probe]), probed

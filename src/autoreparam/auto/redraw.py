"""What ``auto`` does when its draws diverge: draw them again at a higher acceptance, and where that
runs out, in CP or NCP.

Any divergence makes the result untrustworthy (``diagnostics.health``), and the user's next moves
would be Stan's advice (a higher ``target_accept``) and then another parameterisation, each paying
warm-up and compilation again. Here both cost a short re-adaptation and the draws, from the chains
already warm; the discarded draws and the re-adaptations' transitions count in the sampling phase's
seconds and gradients (the small program that restarts the adaptation counts as compile and
warm-up, ``SegmentSampler.setup_seconds``).

Draws are kept only if they are better: fewer divergences and chains that agree (``_agree``).
"""

from __future__ import annotations

import numpy as np

from autoreparam.auto.pilot import PILOT_MAX_R_HAT, RETRY_TARGET_ACCEPTS
from autoreparam.auto.run_on import RUN_ON_REACH, line_in_reach, shortfall
from autoreparam.diagnostics.health import MAX_R_HAT, r_hat_text
from autoreparam.mcmc.nuts import join
from autoreparam.mcmc.segments import FAST, FINAL, sample_codes, warmup_codes
from autoreparam.reparam.parameterisation import Parameterisation

# Draws with this many divergent transitions are drawn again at a higher acceptance: any divergence
# flags the result (``diagnostics.health``), whatever the pilot's looser line (``MAX_DIVERGENT_SHARE``).
REDRAWN_DIVERGENCES = 1
# Transitions of re-adaptation after moving chains to another parameterisation (a short Stan schedule:
# fast, one slow window for the mass matrix, fast) and of step-size-only re-adaptation.
READAPT = 150
RETARGET = 200
# A fixed centring's draws (``fixed_if_divergent``) are abandoned once their gradients per transition
# pass this many times the divergent draws': a clean result is worth a few times the cost, not any.
FIXED_COST = 10.0
# Lambdas within this of each other everywhere are one parameterisation (no candidate to try).
SAME_LAMBDA = 0.02


def differs(a: Parameterisation, b: Parameterisation) -> bool:
    return any(np.max(np.abs(np.asarray(a.lam[n]) - np.asarray(b.lam[n])), initial=0.0) > SAME_LAMBDA for n in a.names)


def ran_at(run, target: float | None) -> float:
    """The acceptance the step size adapted to: ``target``, or the user's (``NUTSConfig.target_accept``)."""
    return run.config.target_accept if target is None else target


def retarget_codes(length: int) -> np.ndarray:
    codes = np.full(length, FAST, dtype=np.int32)
    codes[-1] = FINAL
    return codes


def retarget(run, phase: str, param, chains, target: float):
    """The step size adapted again (dual averaging afresh, the metric kept) towards ``target``."""
    chains = run.sampler.restart_adaptation(chains)
    return run.segments(phase, param, chains, retarget_codes(RETARGET), target=target)[0]


def _agree(before: float, after: float) -> bool:
    """Never trade chains that agree (R-hat within health's 1.01) for chains that do not; between two
    that do not, a difference up to the pilot's 1.05 line is noise of this length. With one chain
    R-hat is NaN, and agrees (``diagnostics.standard``'s convention)."""
    return not after > MAX_R_HAT or (before > MAX_R_HAT and after <= max(before, PILOT_MAX_R_HAT))


def redraw_if_divergent(run, param, chains, draws, target, num_samples: int):
    """Draws that diverge where their pilot did not (a pilot is an eighth of them, a quarter with the
    step probe's): adapt the step size again towards a higher acceptance and draw them all again,
    while a higher target is left:
    ``(chains, draws, target)``.

    On a 100-day stochastic volatility model written with scan, NCP's pilots were clean at every seed
    and its draws diverged on 0.6% to 1.5% of their transitions (benchmarks/results/loop_model_compile/).

    Redrawn from the first divergence (``REDRAWN_DIVERGENCES``), not from the pilot's 0.5%: the
    invariance fuzzing found 36 generated programs where ``auto`` was flagged for 1 to 18 divergent
    transitions of 4,000 while a fixed parameterisation's run was trusted.

    Redrawn draws replace the earlier ones only if they diverge less and their chains agree
    (``_agree``): restarting dual averaging first tries steps about ten times longer, and in one SBC
    replication of the random walk written with scan the retarget to 0.99 left a chain stuck, turning
    1 divergence at R-hat 1.03 into 410 at R-hat 1.54.
    """
    before = None  # the kept draws' max R-hat (``run_on.shortfall``), read once per draws
    for retry in RETRY_TARGET_ACCEPTS:
        divergent = int(np.sum(draws.divergent))
        if divergent < REDRAWN_DIVERGENCES:
            break
        if retry <= ran_at(run, target):  # never lower than the draws ran at (a user's 0.99 stays 0.99)
            continue
        run.notes.append(f"{divergent} of the draws' {draws.divergent.size} transitions diverged: the step size "
                         f"adapted again towards acceptance {retry} and the draws were drawn again")
        retargeted = retarget(run, "sampling", param, run.branch(chains), retry)
        retargeted, redrawn, _ = run.segments("sampling", param, retargeted, sample_codes(num_samples), target=retry)
        redrawn = join([redrawn], num_samples)
        before = shortfall(run, draws)[1] if before is None else before
        after = shortfall(run, redrawn)[1]
        if not (int(np.sum(redrawn.divergent)) < divergent and _agree(before, after)):
            run.notes.append(f"the redrawn draws were no better ({int(np.sum(redrawn.divergent))} divergent, R-hat "
                             f"{r_hat_text(after)}, against R-hat {r_hat_text(before)}), so the earlier draws were "
                             "kept")
            break
        chains, draws, target, before = retargeted, redrawn, retry, after
    return chains, draws, target


def fixed_if_divergent(run, label: str, param, chains, draws, target, num_samples: int, tried):
    """Draws that still diverge once the acceptance ladder is spent (or a redraw was no better): draw
    them in CP and NCP in turn (the nearer to the kept lambda first), each from the current chains with
    a short re-adaptation at the ladder's top acceptance, abandoned at its first divergent draw or once
    its transitions cost more than ``FIXED_COST`` times the kept draws'; the first whose draws are clean,
    whose chains agree (``_agree``) and whose ESS is not far lower (``_enough``) replaces them.
    ``tried``: labels whose pilots already competed and lost (at the default acceptance: a candidate
    that lost there is not tried again at the top one). Returns ``(label, param, chains, draws, target)``.

    In the invariance fuzzing at 753a33b, `auto` kept divergences on 11 generated programs where a fixed
    centring's run was trusted; in a plain process 7 of them (44, 62, 80, 124, 250, 393, 422) kept 1 to
    26 in the rule's lambda, after its pilots' ladder reached 0.99 or a redraw.
    Candidates re-adapted at the default acceptance fixed only 4 of the 7 (NCP diverged late on the
    others; benchmarks/results/auto_changes/README.md, section 5). Abandoning at the first divergence
    keeps the cost small where every parameterisation diverges: on German credit, NumPyro's NUTS
    diverged in 16 to 55 of 4,000 non-centred transitions and in 209 to 803 centred ones
    (benchmarks/results/wall_clock_c35eb85/).
    """
    divergent = int(np.sum(draws.divergent))
    if divergent < REDRAWN_DIVERGENCES:
        return label, param, chains, draws, target

    def better(before, after):
        return _agree(before[1], after[1]) and _enough(before[0], after[0])

    top = max(RETRY_TARGET_ACCEPTS[-1], run.config.target_accept)  # a user's 0.995 is not lowered
    return _in_cp_or_ncp(run, label, param, chains, draws, target, num_samples, tried, top,
                         f"{divergent} of the draws' transitions still diverged", better)


def fixed_if_short(run, label: str, param, chains, draws, target, num_samples: int, tried, reach: float,
                   r_hat: float, transitions_per_draw: int = 1):
    """Clean draws still short of the health check's ESS or R-hat after the run-on (``run_on``): draw
    them in CP and NCP in turn, as ``fixed_if_divergent`` does, at the acceptance the draws ran at; the
    first whose draws pass the health check's ESS and R-hat lines with no divergence replaces them (a
    candidate only as short is no reason to move). ``reach``, ``r_hat``: the kept draws' shortfall
    (``run_on.shortfall``); ``transitions_per_draw``: 2 where the run-on kept every second transition
    (``run_on.every_second``: each kept draw carries both transitions' gradients). Returns ``(label,
    param, chains, draws, target)``.

    In the invariance fuzzing at facc8e7 (programs 1 to 547), `auto` was flagged on program 485 (a
    Student-t hierarchy) in the rule's lambda (median 0.55) with no divergence and a tail ESS of 59% of
    the line after the run-on, while NCP's run of the same program was trusted: its pilots had mixed,
    so CP and NCP had not been tried.
    """
    if np.any(draws.divergent) or not np.isfinite(reach) or (reach >= 1.0 and not r_hat > MAX_R_HAT):
        return label, param, chains, draws, target
    if not line_in_reach(draws.draws.shape[0], num_samples):  # said so by ``run_on_if_short``
        return label, param, chains, draws, target

    def healthy(_before, after):
        return after[0] >= 1.0 and not after[1] > MAX_R_HAT

    return _in_cp_or_ncp(run, label, param, chains, draws, target, num_samples, tried, target,
                         f"the draws had {100 * reach:.0f}% of the effective draws the health check asks at R-hat "
                         f"{r_hat:.3f}", healthy, transitions_per_draw)


def _in_cp_or_ncp(run, label, param, chains, draws, target, num_samples, tried, acceptance, why_try: str, keep,
                  transitions_per_draw: int = 1):
    """CP and NCP in turn (the nearer to the kept lambda first, none whose pilot lost or that is the
    kept one), each from the current chains re-adapted for ``READAPT`` transitions towards
    ``acceptance`` (None: the default), abandoned at its first divergent draw or once its transitions
    cost more than ``FIXED_COST`` times the kept draws' per transition (``transitions_per_draw`` of
    them per kept draw), or once its re-adaptation alone costs what its draws may. The first whose
    ``(ESS over the line, R-hat)`` ``keep(before, after)`` accepts replaces the draws: ``(label, param,
    chains, draws, target)``."""
    plan = run.coords.plan
    if not plan.sites:
        return label, param, chains, draws, target
    lam = np.concatenate([np.ravel(v) for v in param.lam.values()])
    candidates = [("cp", Parameterisation.centred(plan)), ("ncp", Parameterisation.non_centred(plan))]
    if np.median(lam) < 0.5:
        candidates.reverse()
    budget = FIXED_COST * float(np.mean(draws.steps)) / transitions_per_draw
    before = None  # the kept draws' (ESS over the line, max R-hat), read once, when a candidate is clean
    at = "" if acceptance is None else f" at acceptance {acceptance}"

    def stop(steps, divergences, _chains):
        if divergences:
            return "diverged"
        return "cost too much" if float(np.mean(steps)) > budget else None

    def readapt_stop(steps, _divergences, _chains):
        # The re-adaptation may spend what the draws may, no more (uncapped, it spent 197,000 gradients
        # where the kept draws cost 3,100; found in review). Its divergences are the adaptation's.
        return "cost too much" if float(np.sum(np.mean(steps, axis=0))) > budget * num_samples else None

    for name, candidate in candidates:
        if name == label or name in tried or not differs(candidate, param):
            continue
        trial = run.sampler.restart_adaptation(run.branch(chains), np.ones(run.coords.dim))
        trial, adapting, why = run.segments("sampling", candidate, trial, warmup_codes(READAPT), source=param,
                                            target=acceptance, fresh_metric=True, stop=readapt_stop)
        if why is not None:
            run.notes.append(f"{why_try}: {name.upper()}'s re-adaptation, tried next{at}, {why} within "
                             f"{adapting.steps.shape[1]} transitions and was abandoned")
            continue
        trial, redrawn, why = run.segments("sampling", candidate, trial, sample_codes(num_samples), target=acceptance,
                                           stop=stop)
        if why is not None:
            run.notes.append(f"{why_try}: {name.upper()}'s draws, tried next{at}, {why} within "
                             f"{redrawn.steps.shape[1]} transitions and were abandoned")
            continue
        redrawn = join([redrawn], num_samples)
        before = shortfall(run, draws)[:2] if before is None else before
        after = shortfall(run, redrawn)[:2]
        if not keep(before, after):
            run.notes.append(f"{why_try}: {name.upper()}'s draws{at} had no divergence, but R-hat "
                             f"{r_hat_text(after[1])} and {100 * after[0]:.0f}% of the effective draws asked (against "
                             f"{r_hat_text(before[1])} and {100 * before[0]:.0f}%), so the earlier draws were kept")
            continue
        run.notes.append(f"{why_try}: the draws were drawn again in {name.upper()}{at} (none diverged, R-hat "
                         f"{after[1]:.3f}, {100 * after[0]:.0f}% of the effective draws asked)")
        return name, candidate, trial, redrawn, acceptance
    return label, param, chains, draws, target


def _enough(before: float, after: float) -> bool:
    """The redrawn draws' smallest ESS (over the health check's line, ``run_on.shortfall``) within
    reach of the line by running on (``run_on.RUN_ON_REACH``), or no lower than the earlier draws'."""
    return not after < min(RUN_ON_REACH, before)

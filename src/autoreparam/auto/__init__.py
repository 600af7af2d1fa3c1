"""``method="auto"``: NUTS in the partial centring the Section 3 rule predicts, learnt during the warm-up.

No separate variational fit. The chains warm up (Stan's windows) in the parameterisation the rule
(``reparam.rule``) predicts at the initial values; at the end of each long slow window
(``rule_switches``) the rule is evaluated again at that window's draws, which come ever closer to
the posterior, the chains move there exactly (``mcmc.spaces``), and the next window adapts the mass
matrix in the new coordinates; the last slow window runs in the lambda sampled in. Re-evaluating
only before the last slow window left election '88's first 450 of 1000 warm-up transitions in the
rule's lambda at the initial values (0 for every state), at 137 gradients per transition against 12
after the switch. Measured with
NUTS (benchmarks/results/rule_lambda.md, one seed), this lambda was within noise of, or better than,
the better of CP and NCP on 9 of 13 models, and 0.3x to 0.7x of it on sparse logistic regression,
German credit, the hierarchical linear model and radon PA: the pilots below are what keep those
cases honest.

Evidence keeps it safe: the first draws are a pilot. If the pilot diverges, the step size adapts
again towards a higher acceptance (0.95, then 0.99). If its chains disagree a little (usable, but
R-hat above 1.05), they first run on for a pilot twice as long: a short pilot's R-hat is noisy, and
on radon AZ, MN, PA and MO this saved a quarter to half of the call's gradients that CP and NCP's
needless pilots cost. If its chains still do not mix (``auto.pilot``), or
still diverge after that, CP and NCP are tried too, each from the rule's chains moved into its
coordinates with a short re-adaptation and its own pilot, and the best ESS per gradient among the
usable pilots wins (``PilotScore.usable``: a short pilot's R-hat is too noisy to rank by); a candidate
is abandoned as soon as its pilot's gradients per transition prove it cannot beat a usable pilot
(``E_MAX``, ``cannot_win``), or once its re-adaptation costs more than the run's draws would at the
best pilot's rate (``readaptation_too_dear``).
A healthy winner then draws a second pilot at a shorter step size and keeps it if it draws clearly
more per gradient (``auto.step_probe``: NUTS's efficiency jumps with the step size).
Draws with any divergence are drawn again at a higher acceptance, and then, if they still diverge,
in CP or NCP, and kept if they are better (``auto.redraw``); clean draws a little short of the
health check's ESS or R-hat run on for as many again, every second kept (``auto.run_on``), and if
still short are drawn in CP or NCP, kept only if those pass the health check (``auto.redraw``). A
warm-up whose step size shows its chains frozen starts again, once, from draws of a light
non-centred variational fit (``auto.rescue``). Every executable is shared: one
NUTS segment program and the rule's program, compiled once per model and data shape
(``mcmc.programs``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np

from autoreparam.auto.pilot import RETRY_TARGET_ACCEPTS, PilotScore, score
from autoreparam.auto.redraw import (READAPT, differs, fixed_if_divergent, fixed_if_short, ran_at,
                                     redraw_if_divergent, retarget)
from autoreparam.auto.rescue import FROZEN_STEP, fitted_start, froze
from autoreparam.auto.rule_lambda import RuleLambda
from autoreparam.auto.run_on import over_line, run_on_if_short
from autoreparam.auto.start import RESOLVABLE, climb_to_resolvable, starts_inside, unresolvable
from autoreparam.auto.step_probe import probe_shorter_step
from autoreparam.coordinates import Coordinates
from autoreparam.diagnostics.standard import StandardDiagnostics
from autoreparam.initial import ORIGIN, initial_values
from autoreparam.mcmc.chains import ChainResult
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.nuts import chain_result, join, no_draws, segment_length
from autoreparam.mcmc.segments import FAST, FINAL, WINDOW_END, SegmentSampler, sample_codes, warmup_codes
from autoreparam.precision import float_dtype
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.validation import MIN_SAMPLES

# Min-over-elements bulk ESS per NUTS transition above which we never expect a candidate to go (the
# issue's "rarely above 1 to 3"; the highest measured in our runs is below 1.5): a candidate spending g
# gradients per transition scores at most 1000 * E_MAX / g per 1000 gradients.
E_MAX = 3.0
# The rule is re-evaluated when at least this many warm-up draws precede the last slow window.
MIN_RULE_DRAWS = 50
MIN_RULE_WINDOW = 100  # earlier slow windows of at least this many transitions re-evaluate the rule too


@dataclass(frozen=True)
class AutoOutcome:
    label: str
    param: Parameterisation
    reason: str
    scores: tuple[PilotScore, ...]
    chains: ChainResult
    timing: dict  # seconds: compile, lambda (the rule), warmup, pilots, sampling
    gradients: dict  # gradient evaluations of all chains run in each phase: warmup, pilots, sampling
    num_compilations: int
    standard: StandardDiagnostics | None = None  # of the draws kept, where ``auto.run_on`` computed them


def pilot_length(num_samples: int, length: int) -> int:
    """Pilot draws: about an eighth of the run, in whole segments, and never fewer than the diagnostics
    that score a pilot need (``validation.MIN_SAMPLES``: a warm-up of 3 made segments, and pilots, of 3
    draws, refused after compiling with no argument named; found in review)."""
    return length * max(1, round(num_samples / 8 / length), -(-MIN_SAMPLES // length))


def rule_switches(codes: np.ndarray, segment: int) -> list[tuple[int, int]]:
    """``(switch, window_start)`` pairs: where the rule is re-evaluated, at the draws of the slow window
    ``codes[window_start:switch]`` that has just ended, and the chains may move to its lambda.

    The start of the last slow window is a switch (if at least ``MIN_RULE_DRAWS`` transitions precede
    it), as are the ends of earlier slow windows of at least ``MIN_RULE_WINDOW`` transitions that fall
    on a segment boundary. Every switch lies on the segment grid, so a last window starting off the
    grid (short segments: ``num_samples`` below 50, or an unusual ``num_warmup``) is switched to at
    the grid point before it, reading the draws up to there. (The grid was needed while a call's
    padding ran as draws, which would have put non-adapting draws in the middle of the warm-up; the
    padding no longer runs, and the grid stays because the switches measured on the zoo lie on it.)
    Shorter windows come too early: their draws have not reached the posterior and the lambda they
    give can be worse than the initial one (measured on election '88).
    """
    ends = [int(e) + 1 for e in np.flatnonzero(codes == WINDOW_END)]
    if len(ends) < 2:
        return []
    starts = [int(np.flatnonzero(codes != FAST)[0])] + ends[:-1]
    last = ends[-2]
    switches = []
    for end, start in zip(ends[:-1], starts):
        if end == last:
            on_grid = end - end % segment
            if on_grid >= MIN_RULE_DRAWS and on_grid > start:
                switches.append((on_grid, start))
        elif end - start >= MIN_RULE_WINDOW and end % segment == 0:
            switches.append((end, start))
    return switches


class _Run:
    """One auto run's state: the sampler, the rule, timings and the text of the decision."""

    def __init__(self, coords: Coordinates, config: NUTSConfig, seed: int, progress, vi_config=None):
        self.coords, self.config, self.seed, self.progress = coords, config, seed, progress
        self.vi_config = vi_config  # of a rescue's fit (``auto.rescue``); None: its light default
        self.sampler = SegmentSampler(coords, config, segment_length(config))
        self.rule = RuleLambda(coords, seed)
        # "diagnostics": the ESS and R-hat that judge pilots and draws (``auto.pilot.score``,
        # ``auto.run_on.shortfall``): 0.1 to 0.3 s a call that no phase claimed (issue 9: every phase).
        self.timing = {"compile": 0.0, "lambda": 0.0, "warmup": 0.0, "pilots": 0.0, "sampling": 0.0,
                       "diagnostics": 0.0}
        self.gradients = {"warmup": 0, "pilots": 0, "sampling": 0}  # every chain's, every transition run
        self.notes: list[str] = []
        self.other_compilations = 0  # programs compiled outside the sampler and the rule (the climb's)
        self.streams = 0  # random streams handed out so far (``next_stream``)

    def segments(self, phase, param, chains, codes, source=None, target=None, stop=None, fresh_metric=False):
        """Run ``codes``; ``stop(gradients per transition so far (chains, n), divergent transitions so far,
        chains) -> reason or None`` may end the run after any segment (it sees no draws: joining every
        segment's draws after each one would copy them over and over on the warm-up's path).

        ``fresh_metric``: the chains start without a metric of their own; the first segment sets it as
        ``NUTSConfig.initial_metric`` says, from the log density's gradient (``mcmc.segments``).
        """
        parts, reason, divergences = [], None, 0
        for start in range(0, len(codes), self.sampler.segment_length):
            part_codes = codes[start:start + self.sampler.segment_length]
            chains, draws, seconds = self.sampler.run(param, chains, part_codes, source=source,
                                                      progress=self.progress, target_accept=target,
                                                      metric_from_gradient=fresh_metric)
            source, fresh_metric = None, False
            self.timing["compile"] += seconds["compile"]
            self.timing[phase] += seconds["run"]
            self.gradients[phase] += int(np.sum(draws.steps))
            parts.append(draws)
            divergences += int(np.sum(draws.divergent[:, :len(part_codes)]))  # not the padding's draws
            if stop is not None and (reason := stop(np.concatenate([p.steps for p in parts], axis=1), divergences,
                                                    chains)):
                break
        if not parts:  # nothing left to run in this phase (e.g. the pilot already gave every draw)
            parts.append(no_draws(int(np.shape(chains.positions)[0]), self.coords.original_dim))
        return chains, join(parts), reason

    def next_stream(self) -> int:
        """A random stream no other part of this run uses (0 is the first start's)."""
        self.streams += 1
        return self.streams

    def branch(self, chains):
        """``chains`` on streams of their own, for a trial that may be thrown away (``SegmentSampler.branch``)."""
        return self.sampler.branch(chains, self.next_stream())

    def diagnosed(self, fn, *args):
        """``fn(*args)``, its seconds counted as the "diagnostics" phase."""
        started = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.timing["diagnostics"] += time.perf_counter() - started

    def lambda_at(self, flat_points) -> Parameterisation:
        return self._timed(self.rule.lambda_at, flat_points)

    def lambda_at_origin(self):
        return self._timed(self.rule.lambda_at_origin)

    def _timed(self, fn, *args):
        before = dict(self.rule.seconds)
        out = fn(*args)
        self.timing["compile"] += self.rule.seconds["compile"] - before["compile"]
        self.timing["lambda"] += self.rule.seconds["run"] - before["run"]
        return out


def _start_positions(run: _Run, coords: Coordinates, free_init: dict | None, num_chains: int, seed: int,
                     walled: bool) -> np.ndarray:
    """The initial values in the centred unconstrained coordinates (None: the origin), jittered
    uniformly in (-1, 1) per chain (Stan draws inits from (-2, 2); half that keeps the early warm-up
    short while still dispersing the chains for R-hat). ``walled``: the origin had no density, so
    every start is checked to have one (``auto.start.starts_inside``); its seconds count as warm-up
    and compilation."""
    centre = np.zeros(coords.dim, float_dtype()) if free_init is None else np.asarray(coords.ravel(free_init),
                                                                                   dtype=float_dtype())
    offsets = np.random.default_rng(seed).uniform(-1.0, 1.0, (num_chains, centre.size))
    if not walled:
        return (centre + offsets).astype(float_dtype())
    positions, seconds = starts_inside(coords, centre, offsets)
    run.timing["compile"] += seconds["compile"]
    run.other_compilations += seconds["compile"] > 0
    run.timing["warmup"] += seconds["run"]
    return positions


def _climb(run: _Run, coords: Coordinates) -> tuple[dict, Parameterisation, dict]:
    """Leave an origin whose log density float32 cannot resolve (``auto.start``): the start Adam
    reaches, the rule's lambda there (the origin's was computed with the data far from fitting) and
    its original values.
    Its gradients count as warm-up, its seconds as warm-up and compilation."""
    origin_density = run.rule.origin_density
    x, original, density, steps, seconds = climb_to_resolvable(coords, np.zeros(coords.dim, float_dtype()))
    run.timing["compile"] += seconds["compile"]
    run.other_compilations += seconds["compile"] > 0
    run.timing["warmup"] += seconds["run"]
    run.gradients["warmup"] += steps
    reached = (f"the chains started where {steps} Adam steps reached ({density:.3g})" if not unresolvable(density) else
               f"{steps} Adam steps reached only {density:.3g}, still beyond it; the chains started there, and if they "
               "do not mix, give init_strategy= (e.g. init_to_value with values of the data's scale)")
    run.notes.append(f"The log density at the origin of the unconstrained space, {origin_density:.3g}, is beyond what "
                     f"float32 resolves (log p < -{RESOLVABLE:.0e}): {reached}")
    return coords.unravel(jnp.asarray(x)), run.lambda_at(original[None]), coords.split_original(original)


def run_auto(coords: Coordinates, free_init: dict | None, init_values: dict | None, num_chains: int,
             config: NUTSConfig, seed: int, progress=None, vi_config=None) -> AutoOutcome:
    """Warm up in the rule's lambda (re-learnt before the last window), pilot, check, and draw.

    ``free_init`` and ``init_values`` None: start at the origin of the unconstrained space
    (``initial.ORIGIN``), whose values and log density the rule's program computes with the first
    lambda, sparing a process's first call a program of its own (``initial.initial_values``, which
    still runs when the density there is not finite, to find another start or name the site).
    ``vi_config``: the protocol of the variational fit a frozen warm-up starts again from
    (``auto.rescue``; None: ``vi.protocol.FAST``), the only fit ``auto`` runs.
    """
    plan, run = coords.plan, _Run(coords, config, seed, progress, vi_config)
    centred = Parameterisation.centred(plan)
    at_origin = walled = False  # walled: the origin has no density, so a jittered start may have none either
    if init_values is None and plan.sites:
        param, origin, at_origin = run.lambda_at_origin()
        if at_origin:
            init_values = coords.split_original(origin)  # where a rescue's fit starts (``auto.rescue``)
    if at_origin and unresolvable(run.rule.origin_density):
        free_init, param, init_values = _climb(run, coords)
    elif not at_origin:
        if init_values is None:
            started = time.perf_counter()
            init_values, free_init = initial_values(coords.model, coords.model_args, coords.model_kwargs, coords.names,
                                                    seed=seed, unconstrained=True, default=ORIGIN)
            run.timing["analysis"] = time.perf_counter() - started  # infer adds it to its own analysis phase
            walled = bool(plan.sites)
        param = run.lambda_at(coords.ravel_original(init_values)[None]) if plan.sites else centred
    chains = run.sampler.start(_start_positions(run, coords, free_init, num_chains, seed, walled), np.ones(coords.dim),
                               1.0, seed)
    chains, param, parts, done, frozen = _warm_up(run, param, chains, source=centred, fresh=True, watch=True)
    if frozen:
        chains, param, parts, done = _start_again(run, param, chains, parts, done, init_values, num_chains, seed)
    warm = join(parts)  # exactly the warm-up's transitions: a segment's padding does not run

    label = "rule" if plan.sites else "cp"
    if frozen and plan.sites and not differs(param, Parameterisation.non_centred(plan)):
        label = "ncp"  # the rescue's start, with no switch left in its warm-up to learn the rule's lambda
    pilot_draws = pilot_length(config.num_samples, run.sampler.segment_length)
    chains, pilot, best = _pilot(run, label, param, chains, pilot_draws)
    scores, target = [best], None
    for retry in RETRY_TARGET_ACCEPTS:
        if not best.diverges:
            break
        if retry <= config.target_accept:  # the ladder only climbs: a user's 0.99 is not lowered to 0.95
            continue
        run.notes.append(f"{100 * best.divergent_share:.1f}% of the pilot's transitions diverged: the step size "
                         f"adapted again towards acceptance {retry}")
        target = retry
        chains = retarget(run, "pilots", param, chains, target)
        chains, pilot, best = _pilot(run, label, param, chains, pilot_draws, target=target)
        scores.append(best)
    if plan.sites and best.usable and not best.mixes:
        # A short pilot's R-hat is noisy: before paying for other candidates, run the same chains on for
        # a pilot twice as long (its draws are kept if it wins) and judge that.
        run.notes.append(f"the {label} pilot's chains had R-hat {best.max_r_hat:.3f} and ran on for a pilot twice as "
                         "long")
        chains, pilot, best = _pilot(run, label, param, chains, 2 * pilot_draws, pilot, target=target)
        scores.append(best)
    winner = (label, param, chains, pilot, best)
    if plan.sites and (not best.mixes or best.diverges):
        # Only the fixed centrings that differ from the pilot's lambda are tried (found in review: the text
        # said "CP and NCP tried too" where the rule's lambda was NCP's).
        fixed = (("cp", centred), ("ncp", Parameterisation.non_centred(plan)))
        others = [(name, candidate) for name, candidate in fixed if differs(candidate, param)]
        tried = (" and ".join(name.upper() for name, _ in others) + " tried too" if others else
                 f"no fixed centring to try (the {label} lambda is one)")
        if not best.mixes:
            run.notes.append(f"the {label} pilot did not mix (R-hat {best.max_r_hat:.3f}, "
                             f"{best.ess_per_transition:.3f} ESS per transition): {tried}")
        else:
            run.notes.append(f"the {label} pilot still diverged ({100 * best.divergent_share:.1f}%) at acceptance "
                             f"{ran_at(run, target)}: {tried}")
        for name, candidate in others:
            trial = _alternative(run, name, candidate, param, chains, pilot_draws, winner[4])
            if trial is not None:
                scores.append(trial[4])
                if _ranking(trial[4]) > _ranking(winner[4]):
                    winner = trial
                    target = None  # the alternative adapted at the default acceptance
    label, param, chains, pilot, best = winner
    chains, pilot, probed = probe_shorter_step(run, _pilot, label, param, chains, pilot, best, pilot_draws, target)
    if probed is not None:
        scores.append(probed)
    remaining = max(0, config.num_samples - pilot.draws.shape[1])
    chains, rest, _ = run.segments("sampling", param, chains, sample_codes(remaining), target=target)
    draws = join([pilot, rest], config.num_samples)
    chains, draws, target = redraw_if_divergent(run, param, chains, draws, target, config.num_samples)
    label, param, chains, draws, target = fixed_if_divergent(run, label, param, chains, draws, target,
                                                             config.num_samples, {s.label for s in scores})
    before_run_on = draws
    chains, draws, standard = run_on_if_short(run, param, chains, draws, target, config.num_samples)
    if standard is not None:
        kept = label
        label, param, chains, draws, target = fixed_if_short(
            run, label, param, chains, draws, target, config.num_samples, {s.label for s in scores},
            over_line(standard, draws.draws.shape[0]), standard.max_r_hat, 1 if draws is before_run_on else 2)
        standard = standard if label == kept else None  # other draws: their diagnostics are computed afresh
    # The small programs that started the chains and restarted their adaptation (``SegmentSampler.setup_seconds``).
    run.timing["compile"] += run.sampler.setup_seconds["compile"]
    run.timing["warmup"] += run.sampler.setup_seconds["run"]
    seconds = {"compile": run.timing["compile"], "warmup": run.timing["warmup"], "sampling": run.timing["sampling"]}
    result = chain_result(warm, draws, chains, seconds)
    reason = _reason(label, param, scores, run.notes)
    return AutoOutcome(label, param, reason, tuple(scores), result, dict(run.timing), dict(run.gradients),
                       run.sampler.num_compilations
                       + int(run.rule.seconds["compile"] > 0) + run.other_compilations, standard)


def _warm_up(run: _Run, param, chains, source=None, fresh=False, done=0, parts=(), watch=False):
    """Stan's windowed warm-up from transition ``done``, the rule re-evaluated at its switches
    (``rule_switches``): ``(chains, lambda, parts run, transitions done, frozen)``.

    ``watch``: stop at the end of the first slow window (or of the warm-up) whose step size shows the
    chains frozen (``rescue.froze``; there the step size is dual averaging's average over the window,
    not its noisy last iterate), with ``frozen`` True. ``source``: the parameterisation ``chains``
    start in.
    """
    codes = warmup_codes(run.config.num_warmup)
    parts = list(parts)
    switches = rule_switches(codes, run.sampler.segment_length) if run.coords.plan.sites else []
    for switch, window_start in [(s, w) for s, w in switches if s > done] + [(len(codes), None)]:
        start = done

        def frozen(steps, _divergences, chains):
            last = codes[min(start + steps.shape[1], len(codes)) - 1]
            return "frozen" if last in (WINDOW_END, FINAL) and froze(chains.adapt.step_size) else None

        chains, part, why = run.segments("warmup", param, chains, codes[done:switch], source=source,
                                         stop=frozen if watch else None, fresh_metric=fresh)
        source, fresh = None, False
        parts.append(part)
        if why is not None:
            return chains, param, parts, done + part.steps.shape[1], True
        if window_start is not None:
            window = join(parts).draws[:, window_start:switch]  # ``parts`` run from the warm-up's start
            learnt = run.lambda_at(window.reshape(-1, run.coords.original_dim))
            source = param if differs(learnt, param) else None
            param = learnt
        done = switch
    return chains, param, parts, done, False


def _start_again(run: _Run, param, chains, parts, done, start_values: dict, num_chains: int, seed: int):
    """The warm-up froze (``auto.rescue``): warm up again from draws of a light NCP fit, once; if that
    fit fails, the frozen warm-up runs to its end as before. The fit's gradients and seconds count as
    warm-up (its compilation as compilation)."""
    step = float(np.min(np.asarray(chains.adapt.step_size)))
    start = fitted_start(run.coords, start_values, num_chains, seed, run.vi_config)
    where = f"after {done} warm-up transitions" if done < run.config.num_warmup else "at the end of the warm-up"
    if start is None:
        run.notes.append(f"the step size was {step:.2g} {where}, too small to move the chains; a variational fit to "
                         "start again from had no finite ELBO, so the warm-up went on")
        return _warm_up(run, param, chains, done=done, parts=parts)[:4]
    run.timing["compile"] += start.seconds["compile"]
    run.timing["warmup"] += start.seconds["run"]
    run.gradients["warmup"] += start.gradients
    run.other_compilations += start.seconds["compile"] > 0
    run.notes.append(f"the step size was {step:.2g} {where}, too small to move the chains (below {FROZEN_STEP:g}); the "
                     f"chains started again from draws of a non-centred variational fit ({start.gradients} gradients, "
                     f"ELBO {start.elbo:.4g}) and warmed up again")
    # Its own stream: the first start's keys would replay the frozen warm-up's numbers (found in review).
    chains = run.sampler.start(start.positions, start.inverse_mass, 1.0, seed, stream=run.next_stream())
    chains, param, parts, done, _ = _warm_up(run, start.param, chains)
    return chains, param, parts, done


def _ranking(score: PilotScore) -> tuple:
    """Usable pilots (not plainly broken, no divergences to speak of) first, then ESS per gradient."""
    return (score.usable, score.ess_per_1000_grads)


def _pilot(run: _Run, label, param, chains, length, before=None, target=None):
    """Pilot draws (``length`` in all, the draws ``before`` counted among them: a pilot that runs on)
    and their score."""
    start = time.perf_counter()
    have = 0 if before is None else before.draws.shape[1]
    chains, draws, _ = run.segments("pilots", param, chains, sample_codes(max(0, length - have)), target=target)
    if before is not None and have:
        draws = join([before, draws])
    gradients = float(np.sum(draws.steps))
    seconds = time.perf_counter() - start
    return chains, draws, run.diagnosed(score, label, run.coords, draws, gradients, seconds)


def cannot_win(best: PilotScore, steps: np.ndarray) -> str | None:
    """Why a candidate whose pilot transitions so far took ``steps`` (chains, n) gradients cannot beat
    ``best``, or None: ESS per transition stays below ``E_MAX``, so at g gradients per transition it
    scores at most 1000 E_MAX / g per 1000 gradients. Only a pilot's own transitions bound its score:
    a re-adaptation's cost 1.3 to 5 times as much per transition (radon MN's CP: 22 in its first
    segment, 7 in its pilot; found in review), so read there the bound pruned candidates that could win."""
    if not _ranking(best)[0]:  # a broken pilot is beaten by any usable one, whatever its score
        return None
    per_transition = float(np.mean(steps))
    if 1000.0 * E_MAX / per_transition < best.ess_per_1000_grads:
        return (f"abandoned after {steps.shape[1]} pilot transitions: {per_transition:.0f} gradients per "
                f"transition cap it at {1000.0 * E_MAX / per_transition:.2f} ESS per 1000 gradients")
    return None


def readaptation_too_dear(best: PilotScore, steps: np.ndarray, num_samples: int) -> str | None:
    """Why a candidate's re-adaptation, ``steps`` (chains, n) gradients so far, is stopped, or None: once
    it has cost each chain more than the run's ``num_samples`` draws would at ``best``'s gradients per
    transition. A cap on cost, not a proof that the candidate loses (``cannot_win`` is that, for its
    pilot): it keeps a hopeless candidate's warm-up (election '88's NCP, about 1000 gradients per
    transition) from costing more than the draws it competes for."""
    if not _ranking(best)[0]:
        return None
    spent = float(np.sum(np.mean(steps, axis=0)))
    allowed = best.grads_per_transition * num_samples
    if spent > allowed:
        return (f"abandoned after {steps.shape[1]} re-adaptation transitions: they cost {spent:.0f} gradients per "
                f"chain, more than {num_samples} draws at the {best.label} pilot's {best.grads_per_transition:.1f} "
                "gradients per transition")
    return None


def _alternative(run: _Run, label, param, source, chains, length, best: PilotScore):
    """Another parameterisation from the current chains: short re-adaptation, then a pilot; abandoned
    once its re-adaptation costs more than the run's draws at ``best``'s rate (``readaptation_too_dear``)
    or as soon as its pilot's gradients per transition cap its possible score below ``best``'s
    (``cannot_win``)."""
    start = time.perf_counter()
    cost = {"gradients": 0.0}
    trial = run.sampler.restart_adaptation(run.branch(chains), np.ones(run.coords.dim))
    trial, adapt, why = run.segments(
        "pilots", param, trial, warmup_codes(READAPT), source=source, fresh_metric=True,
        stop=lambda steps, _divergences, _chains: readaptation_too_dear(best, steps, run.config.num_samples))
    cost["gradients"] += float(np.sum(adapt.steps))
    if why is None:
        trial, pilot, why = run.segments("pilots", param, trial, sample_codes(length),
                                         stop=lambda steps, _divergences, _chains: cannot_win(best, steps))
        cost["gradients"] += float(np.sum(pilot.steps))
    if why is not None:
        run.notes.append(f"{label.upper()} {why}")
        return None
    scored = run.diagnosed(score, label, run.coords, pilot, cost["gradients"], time.perf_counter() - start)
    return label, param, trial, pilot, scored


def _reason(label, param, scores, notes) -> str:
    lam = np.concatenate([np.ravel(v) for v in param.lam.values()]) if param.names else np.zeros(0)
    what = {"rule": "the Section 3 rule's partial centring, learnt at warm-up draws",
            "cp": "centred", "ncp": "non-centred"}[label]
    summary = (f"; lambda median {np.median(lam):.2f}, range {lam.min():.2f} to {lam.max():.2f}" if lam.size else "")
    pilots = "; ".join(s.describe() for s in scores)
    return f"NUTS in {what}{summary}. Pilots: {pilots}" + ("".join(f". {n}" for n in notes))

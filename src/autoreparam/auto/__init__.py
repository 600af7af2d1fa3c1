"""``method="auto"``: NUTS in the partial centring the Section 3 rule predicts, learnt during the warm-up.

No separate variational fit. The chains warm up (Stan's windows) in the parameterisation the rule
(``reparam.rule``) predicts at the initial values; before the last slow window the rule is evaluated
again at that window's draws, which are posterior draws, the chains move there exactly
(``mcmc.spaces``), and the last windows adapt the mass matrix in the new coordinates. Measured with
NUTS, this lambda matched or beat the better of CP and NCP on eight schools, radon and German credit
(8.7 ESS per 1000 gradients against 3.2; docs/auto.md).

Evidence keeps it safe: the first draws are a pilot. If its chains do not mix (``auto.pilot``), CP
and NCP are tried too, each from the rule's chains moved into its coordinates with a short
re-adaptation and its own pilot, and the best ESS per gradient wins; a candidate is abandoned as
soon as its gradients per transition prove it cannot win (``E_MAX``). If the pilot diverges, the step
size adapts again towards a higher acceptance. Every executable is shared: one NUTS segment program
and the rule's program, compiled once per model and data shape (``mcmc.programs``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from autoreparam.auto.pilot import RETRY_TARGET_ACCEPTS, PilotScore, score
from autoreparam.auto.rule_lambda import RuleLambda
from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.chains import ChainResult
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.nuts import chain_result, join, segment_length
from autoreparam.mcmc.segments import FAST, FINAL, SegmentDraws, SegmentSampler, sample_codes, warmup_codes
from autoreparam.reparam.parameterisation import Parameterisation

# Min-over-elements bulk ESS per NUTS transition above which we never expect a candidate to go (the
# issue's "rarely above 1 to 3"; the highest measured in our runs is below 1.5): a candidate spending g
# gradients per transition scores at most 1000 * E_MAX / g per 1000 gradients.
E_MAX = 3.0
# Transitions of re-adaptation after moving chains to another parameterisation (a short Stan schedule:
# fast, one slow window for the mass matrix, fast) and of step-size-only re-adaptation.
READAPT = 150
RETARGET = 200
# The rule is re-evaluated when at least this many warm-up draws precede the last slow window.
MIN_RULE_DRAWS = 50
SAME_LAMBDA = 0.02


@dataclass(frozen=True)
class AutoOutcome:
    label: str
    param: Parameterisation
    reason: str
    scores: tuple[PilotScore, ...]
    chains: ChainResult
    timing: dict  # seconds: compile, lambda (the rule), warmup, pilots, sampling
    num_compilations: int


def pilot_length(num_samples: int, length: int) -> int:
    """Pilot draws: about an eighth of the run, in whole segments."""
    return length * max(1, round(num_samples / 8 / length))


def _last_window_start(codes: np.ndarray) -> int:
    """Index where the last slow window of a warm-up schedule begins (0 if it has none)."""
    ends = np.flatnonzero(codes == 2)
    return int(ends[-2] + 1) if ends.size >= 2 else 0


def _retarget_codes(length: int) -> np.ndarray:
    codes = np.full(length, FAST, dtype=np.int32)
    codes[-1] = FINAL
    return codes


def _differs(a: Parameterisation, b: Parameterisation) -> bool:
    return any(np.max(np.abs(np.asarray(a.lam[n]) - np.asarray(b.lam[n])), initial=0.0) > SAME_LAMBDA for n in a.names)


class _Run:
    """One auto run's state: the sampler, the rule, timings and the text of the decision."""

    def __init__(self, coords: Coordinates, config: NUTSConfig, seed: int, progress):
        self.coords, self.config, self.seed, self.progress = coords, config, seed, progress
        self.sampler = SegmentSampler(coords, config, segment_length(config))
        self.rule = RuleLambda(coords, seed)
        self.timing = {"compile": 0.0, "lambda": 0.0, "warmup": 0.0, "pilots": 0.0, "sampling": 0.0}
        self.notes: list[str] = []

    def segments(self, phase, param, chains, codes, source=None, target=None, stop=None):
        """Run ``codes``; ``stop(draws so far) -> reason or None`` may end the run after any segment."""
        parts, reason = [], None
        for start in range(0, len(codes), self.sampler.segment_length):
            part_codes = codes[start:start + self.sampler.segment_length]
            chains, draws, seconds = self.sampler.run(param, chains, part_codes, source=source,
                                                      progress=self.progress, target_accept=target)
            source = None
            self.timing["compile"] += seconds["compile"]
            self.timing[phase] += seconds["run"]
            parts.append(draws)
            if stop is not None and (reason := stop(join(parts))) is not None:
                break
        return chains, join(parts), reason

    def lambda_at(self, flat_points) -> Parameterisation:
        before = dict(self.rule.seconds)
        lam = self.rule.lambda_at(flat_points)
        self.timing["compile"] += self.rule.seconds["compile"] - before["compile"]
        self.timing["lambda"] += self.rule.seconds["run"] - before["run"]
        return lam


def _start_positions(coords: Coordinates, free_init: dict, num_chains: int, seed: int) -> np.ndarray:
    """The initial values in the centred unconstrained coordinates, jittered uniformly in (-1, 1) per
    chain (Stan draws inits from (-2, 2); half that, around the prior median, keeps the early warm-up
    short while still dispersing the chains for R-hat)."""
    centre = np.asarray(coords.ravel(free_init), dtype=np.float32)
    rng = np.random.default_rng(seed)
    return (centre + rng.uniform(-1.0, 1.0, (num_chains, centre.size))).astype(np.float32)


def run_auto(coords: Coordinates, free_init: dict, init_values: dict, num_chains: int, config: NUTSConfig,
             seed: int, progress=None) -> AutoOutcome:
    """Warm up in the rule's lambda (re-learnt before the last window), pilot, check, and draw."""
    plan, run = coords.plan, _Run(coords, config, seed, progress)
    centred = Parameterisation.centred(plan)
    param = run.lambda_at(coords.ravel_original(init_values)[None]) if plan.sites else centred
    chains = run.sampler.start(_start_positions(coords, free_init, num_chains, seed), np.ones(coords.dim), 1.0, seed)
    codes = warmup_codes(config.num_warmup)
    switch = _last_window_start(codes) if plan.sites else 0
    warm_parts = []
    if switch >= MIN_RULE_DRAWS:
        chains, part, _ = run.segments("warmup", param, chains, codes[:switch], source=centred)
        warm_parts.append(part)
        last_window = part.draws[:, _last_window_start(codes[:switch]):switch]
        learnt = run.lambda_at(last_window.reshape(-1, coords.original_dim))
        source = param if _differs(learnt, param) else None
        param = learnt
        chains, part, _ = run.segments("warmup", param, chains, codes[switch:], source=source)
    else:
        chains, part, _ = run.segments("warmup", param, chains, codes, source=centred)
    warm_parts.append(part)
    warm = join(warm_parts)
    surplus = SegmentDraws(*(a[:, config.num_warmup:] for a in warm))  # whole segments past the warm-up
    warm = SegmentDraws(*(a[:, : config.num_warmup] for a in warm))

    label = "rule" if plan.sites else "cp"
    pilot_draws = pilot_length(config.num_samples, run.sampler.segment_length)
    chains, pilot, best = _pilot(run, label, param, chains, pilot_draws, surplus)
    scores, target = [best], None
    for retry in RETRY_TARGET_ACCEPTS:
        if not best.diverges:
            break
        run.notes.append(f"{100 * best.divergent_share:.1f}% of the pilot's transitions diverged: the step size "
                         f"adapted again towards acceptance {retry}")
        target = retry
        chains = run.sampler.restart_adaptation(chains)
        chains, _, _ = run.segments("pilots", param, chains, _retarget_codes(RETARGET), target=target)
        chains, pilot, best = _pilot(run, label, param, chains, pilot_draws, None, target=target)
        scores.append(best)
    winner = (label, param, chains, pilot, best)
    if plan.sites and not best.mixes:
        run.notes.append(f"the {label} pilot did not mix (R-hat {best.max_r_hat:.3f}, {best.ess_per_transition:.3f} "
                         "ESS per transition): CP and NCP tried too")
        for name, candidate in (("cp", centred), ("ncp", Parameterisation.non_centred(plan))):
            if not _differs(candidate, param):
                continue
            trial = _alternative(run, name, candidate, param, chains, pilot_draws, winner[4])
            if trial is not None:
                scores.append(trial[4])
                if trial[4].ess_per_1000_grads > winner[4].ess_per_1000_grads:
                    winner = trial
    label, param, chains, pilot, best = winner
    remaining = max(0, config.num_samples - pilot.draws.shape[1])
    chains, rest, _ = run.segments("sampling", param, chains, sample_codes(remaining), target=target)
    draws = join([pilot, rest], config.num_samples)
    seconds = {"compile": run.timing["compile"], "warmup": run.timing["warmup"], "sampling": run.timing["sampling"]}
    result = chain_result(warm, draws, chains, seconds)
    reason = _reason(label, param, scores, run.notes)
    return AutoOutcome(label, param, reason, tuple(scores), result, dict(run.timing), run.sampler.num_compilations
                       + int(run.rule.seconds["compile"] > 0))


def _pilot(run: _Run, label, param, chains, length, surplus, target=None):
    """Pilot draws (counting transitions already past the warm-up) and their score."""
    start = time.perf_counter()
    have = 0 if surplus is None else surplus.draws.shape[1]
    chains, draws, _ = run.segments("pilots", param, chains, sample_codes(max(0, length - have)), target=target)
    if surplus is not None and have:
        draws = join([surplus, draws])
    gradients = float(np.sum(draws.steps))
    seconds = time.perf_counter() - start
    return chains, draws, score(label, run.coords, draws, gradients, seconds)


def _alternative(run: _Run, label, param, source, chains, length, best: PilotScore):
    """Another parameterisation from the current chains: short re-adaptation, then a pilot; abandoned as
    soon as its gradients per transition cap its possible score below ``best``'s."""
    start = time.perf_counter()
    cost = {"gradients": 0.0}

    def hopeless(draws):
        per_transition = float(np.mean(draws.steps))
        if 1000.0 * E_MAX / per_transition < best.ess_per_1000_grads:
            return (f"abandoned after {draws.steps.shape[1]} transitions: {per_transition:.0f} gradients per "
                    f"transition cap it at {1000.0 * E_MAX / per_transition:.2f} ESS per 1000 gradients")
        return None

    trial = run.sampler.restart_adaptation(chains, np.ones(run.coords.dim))
    trial, adapt, why = run.segments("pilots", param, trial, warmup_codes(READAPT), source=source, stop=hopeless)
    cost["gradients"] += float(np.sum(adapt.steps))
    if why is None:
        trial, pilot, why = run.segments("pilots", param, trial, sample_codes(length), stop=hopeless)
        cost["gradients"] += float(np.sum(pilot.steps))
    if why is not None:
        run.notes.append(f"{label.upper()} {why}")
        return None
    scored = score(label, run.coords, pilot, cost["gradients"], time.perf_counter() - start)
    return label, param, trial, pilot, scored


def _reason(label, param, scores, notes) -> str:
    lam = np.concatenate([np.ravel(v) for v in param.lam.values()]) if param.names else np.zeros(0)
    what = {"rule": "the Section 3 rule's partial centring, learnt at warm-up draws",
            "cp": "centred", "ncp": "non-centred"}[label]
    summary = (f"; lambda median {np.median(lam):.2f}, range {lam.min():.2f} to {lam.max():.2f}" if lam.size else "")
    pilots = "; ".join(s.describe() for s in scores)
    return f"NUTS in {what}{summary}. Pilots: {pilots}" + ("".join(f". {n}" for n in notes))

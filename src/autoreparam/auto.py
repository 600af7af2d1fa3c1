"""``method="auto"``: choose among CP, NCP and VIP with evidence that tracks sampling efficiency.

The ELBO alone is not enough (on radon PA, NumPyro's VIP workflow is 7x worse than plain CP). So each
candidate whose variational fit is sound is warmed up with NUTS from its own q and sampled for a short
pilot segment; the candidate with the best pilot ESS per gradient (rank-normalised bulk ESS, minimum
over elements, pooled over chains so that chains that disagree are penalised) wins, and its chains
simply continue: the pilot draws are the first draws of the result, nothing is thrown away. All
candidates share two compiled programs (warm-up and a sampling segment), because the
parameterisation is a runtime argument.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.diagnostics.standard import standard_diagnostics
from autoreparam.mcmc.chains import ChainResult
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.nuts import NUTSSampler
from autoreparam.sampling import draws_from_q
from autoreparam.vi.vip import VIPResult

# VIP's lambda this close to all-1 or all-0 is CP or NCP again: no need to pilot it separately.
_SAME_AS_FIXED = 0.05


@dataclass(frozen=True)
class PilotScore:
    label: str
    elbo: float
    ess_per_1000_grads: float
    max_r_hat: float
    divergences: int
    grad_evals: float  # warm-up and pilot, all chains: what the candidate cost
    seconds: float


@dataclass(frozen=True)
class AutoOutcome:
    label: str
    reason: str
    scores: tuple[PilotScore, ...]
    chains: ChainResult
    pilot_seconds: float
    num_compilations: int  # sampler programs compiled for every candidate and the continuation together


def pilot_length(num_samples: int) -> int:
    return max(50, num_samples // 8)


def candidates(vip: VIPResult) -> tuple[list[str], str]:
    """Labels worth a pilot, and a note on any VIP fit dropped because it equals CP or NCP."""
    labels = [label for label in ("cp", "ncp") if vip.fits[label].ok]
    if not vip.vip.ok:
        return labels, "VIP's fit failed"
    lam = np.concatenate([np.ravel(v) for v in vip.lam.values()]) if vip.lam else np.zeros(0)
    for label, value in (("cp", 1.0), ("ncp", 0.0)):
        if label in labels and (lam.size == 0 or np.max(np.abs(lam - value)) < _SAME_AS_FIXED):
            return labels, f"VIP's lambda is {label.upper()} within {_SAME_AS_FIXED}"
    return labels + ["vip"], ""


def run_auto(coords: Coordinates, vip: VIPResult, num_chains: int, config: NUTSConfig, seed: int) -> AutoOutcome:
    """Warm up and pilot every candidate, then continue the best candidate's chains to ``config.num_samples``."""
    labels, note = candidates(vip)
    num_samples = config.num_samples
    sampler = NUTSSampler(coords, config, pilot_length(num_samples))
    pilots, scores, pilot_seconds = {}, [], 0.0
    for label in labels:
        fit = vip.fits[label]
        warm = sampler.warmup(fit.parameterisation, fit.scale**2, draws_from_q(fit, num_chains, seed), seed)
        warm, segment, seconds = sampler.extend(warm)
        spent = sum(warm.seconds.values()) + sum(seconds.values())
        pilot_seconds += spent
        pilots[label] = (warm, segment)
        diag = standard_diagnostics(coords.split_original(segment.draws))
        per_grad = 1000.0 * diag.min_ess_bulk / float(np.sum(segment.steps))
        cost = float(np.sum(warm.warmup_grad_evals) + np.sum(segment.steps))
        scores.append(
            PilotScore(label, fit.elbo, per_grad, diag.max_r_hat, int(np.sum(segment.divergent)), cost, spent)
        )
    best = max(scores, key=lambda s: s.ess_per_1000_grads if np.isfinite(s.ess_per_1000_grads) else -np.inf)
    table = "; ".join(
        f"{s.label.upper()}: ELBO {s.elbo:.1f}, pilot bulk ESS/1000 grads {s.ess_per_1000_grads:.2f}, "
        f"warm-up and pilot {s.grad_evals:.3g} grads in {s.seconds:.1f} s"
        for s in scores
    )
    reason = f"best pilot ESS per gradient ({table})" + (f"; {note}" if note else "")
    warm, segment = pilots[best.label]
    warm = warm._replace(seconds={"compile": 0.0, "warmup": 0.0})  # already counted in the pilot phase
    chains = sampler.sample(warm, num_samples, first=segment)
    return AutoOutcome(best.label, reason, tuple(scores), chains, pilot_seconds, sampler.num_compilations)

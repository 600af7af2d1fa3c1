"""Step-size adaptation rules with one interface: ``init(log_step) -> state``, ``update(state, accept)``,
``current(state) -> log_step`` (the value to use while adapting) and ``final(state) -> log_step``.

- ``sign``: ``log s_{t+1} = log s_t + rate * sign(alpha_t - target)`` (paper 002 Appendix C, after
  Andrieu & Thoms 2008 Section 4.2).
- ``dual_averaging``: BlackJAX's implementation of Hoffman & Gelman (2014) Section 3.2.1.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
from blackjax.adaptation.step_size import dual_averaging_adaptation

from autoreparam.mcmc.config import HMCConfig


class StepSizeRule(NamedTuple):
    init: callable
    update: callable
    current: callable
    final: callable


def sign_rule(rate: float, target: float) -> StepSizeRule:
    def update(log_step, accept):
        # NaN acceptance (a failed proposal) counts as a rejection.
        accept = jnp.where(jnp.isfinite(accept), accept, 0.0)
        return log_step + rate * jnp.sign(accept - target)

    return StepSizeRule(lambda log_step: log_step, update, lambda s: s, lambda s: s)


# Dual averaging (Hoffman & Gelman 2014, Section 3.2.1) explores first: its first iterates after a
# (re)start aim at 10 times the step size it started from (mu = log(10 eps)), and its running average
# leans on them for the first few updates. Ended after fewer updates than this (a warm-up under 100
# transitions leaves Stan's last fast window 2 to 9 long), the average was 3 to 6 times a stable step
# and most chains then accepted nothing (found in review: 6 of 8 chains frozen at num_warmup=20). So
# the average is not trusted above the step size it started from until it has had this many updates.
MIN_SETTLED_UPDATES = 10


def settled_log_step_size(state):
    """The log step size a dual-averaging run ends with: its running average, capped at the step size
    it (re)started from while it has had fewer than ``MIN_SETTLED_UPDATES`` updates. With no update at
    all (``adapt_fraction=0``, a warm-up of one transition) the initial step size: BlackJAX starts the
    average at log 1 = 0, which made it 1 whatever the initial one (found in review)."""
    updates = state.step - 1
    average = jnp.where(updates > 0, state.log_step_size_avg, state.log_step_size)
    started_from = state.mu - jnp.log(10.0)
    return jnp.where(updates < MIN_SETTLED_UPDATES, jnp.minimum(average, started_from), average)


def dual_averaging_rule(target: float) -> StepSizeRule:
    da_init, da_update, _ = dual_averaging_adaptation(target)

    def update(state, accept):
        return da_update(state, jnp.where(jnp.isfinite(accept), accept, 0.0))

    return StepSizeRule(
        lambda log_step: da_init(jnp.exp(log_step)),
        update,
        lambda state: state.log_step_size,
        settled_log_step_size,
    )


def make_rule(config: HMCConfig) -> StepSizeRule:
    if config.step_size_rule == "sign":
        return sign_rule(config.sign_rate, config.acceptance_target)
    return dual_averaging_rule(config.acceptance_target)

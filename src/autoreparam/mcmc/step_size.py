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


def dual_averaging_rule(target: float) -> StepSizeRule:
    da_init, da_update, _ = dual_averaging_adaptation(target)

    def update(state, accept):
        return da_update(state, jnp.where(jnp.isfinite(accept), accept, 0.0))

    def final(state):
        # BlackJAX starts the running average at log 1 = 0 with ``step`` 1: with no update at all
        # (``num_adapt`` 0: ``adapt_fraction=0`` or a warm-up of one transition) the initial step size
        # stands, not exp(0) = 1.
        return jnp.where(state.step > 1, state.log_step_size_avg, state.log_step_size)

    return StepSizeRule(
        lambda log_step: da_init(jnp.exp(log_step)),
        update,
        lambda state: state.log_step_size,
        final,
    )


def make_rule(config: HMCConfig) -> StepSizeRule:
    if config.step_size_rule == "sign":
        return sign_rule(config.sign_rate, config.acceptance_target)
    return dual_averaging_rule(config.acceptance_target)

"""NUTS in any parameterisation, for everyday use: BlackJAX's NUTS and window adaptation, vmapped over chains.

The window adaptation (Stan's scheme, as BlackJAX implements it) tunes one step size and a diagonal
inverse mass matrix per chain; we seed the mass matrix with q's variances when a fit is available.
Gradient evaluations are the integrator steps BlackJAX reports for every transition.

Two compiled programs serve every call for a model: warm-up, and a sampling segment of fixed length
that can be called repeatedly to extend chains. The parameterisation is a runtime argument, so
several candidate parameterisations (``auto``) share the programs too.
"""

from __future__ import annotations

from typing import NamedTuple

import blackjax
import jax
import jax.numpy as jnp
import numpy as np
from blackjax.adaptation.base import get_filter_adapt_info_fn

from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.chains import ChainResult
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.programs import ProgramCache
from autoreparam.mcmc.sharding import shard_chains
from autoreparam.mcmc.spaces import flat_log_density
from autoreparam.reparam.parameterisation import Parameterisation


class WarmState(NamedTuple):
    """Adapted chains, ready to sample: state, tuned kernel parameters, keys and warm-up counters."""

    param: Parameterisation
    states: object
    step_size: jax.Array
    inverse_mass: jax.Array
    keys: jax.Array
    warmup_grad_evals: np.ndarray
    warmup_divergences: np.ndarray
    seconds: dict


class Segment(NamedTuple):
    draws: np.ndarray  # (chains, length, original_dim)
    steps: np.ndarray  # (chains, length) integrator steps = gradient evaluations
    accept: np.ndarray
    divergent: np.ndarray


class NUTSSampler:
    """NUTS for one model; the compiled programs are reused across seeds and parameterisations."""

    def __init__(self, coords: Coordinates, config: NUTSConfig, segment_length: int | None = None):
        self.coords, self.config = coords, config
        self.segment_length = config.num_samples if segment_length is None else int(segment_length)
        self._warmup = jax.jit(self._warmup_program)
        self._sample = jax.jit(self._sample_program)
        self._programs = ProgramCache()

    def _warmup_program(self, param, inverse_mass, positions, keys):
        config = self.config
        log_density = flat_log_density(self.coords, param)

        def one_chain(position, key, imm):
            warmup = blackjax.window_adaptation(
                blackjax.nuts,
                log_density,
                initial_inverse_mass_matrix=imm,
                target_acceptance_rate=config.target_accept,
                adaptation_info_fn=get_filter_adapt_info_fn(info_keys={"num_integration_steps", "is_divergent"}),
                max_num_doublings=config.max_num_doublings,
            )
            (state, tuned), info = warmup.run(key, position, num_steps=config.num_warmup)
            counts = (jnp.sum(info.info.num_integration_steps), jnp.sum(info.info.is_divergent))
            return state, tuned["step_size"], tuned["inverse_mass_matrix"], counts

        return jax.vmap(one_chain)(positions, keys, inverse_mass)

    def _sample_program(self, param, states, step_sizes, inverse_masses, keys):
        coords, config = self.coords, self.config
        log_density = flat_log_density(coords, param)

        def original(x):
            return coords.ravel_original(coords.to_original(coords.unravel(x), param))

        def one_chain(state, step_size, imm, key):
            kernel = blackjax.nuts(log_density, step_size, imm, max_num_doublings=config.max_num_doublings)

            def body(state, key):
                state, info = kernel.step(key, state)
                return state, (original(state.position), info.num_integration_steps, info.acceptance_rate, info.is_divergent)

            next_key, key = jax.random.split(key)
            state, out = jax.lax.scan(body, state, jax.random.split(key, self.segment_length))
            return (state, next_key) + out

        return jax.vmap(one_chain)(states, step_sizes, inverse_masses, keys)

    @property
    def num_compilations(self) -> int:
        return self._programs.num_compilations

    def warmup(self, param: Parameterisation, inverse_mass, init_positions, seed: int) -> WarmState:
        """Window adaptation from ``init_positions`` (chains, dim), mass matrix seeded by ``inverse_mass``."""
        positions = jnp.asarray(init_positions)
        num_chains = positions.shape[0]
        imm = jnp.broadcast_to(jnp.asarray(inverse_mass, dtype=positions.dtype), positions.shape)
        warm_key, sample_key = jax.random.split(jax.random.PRNGKey(seed))
        warm_keys = jax.random.split(warm_key, num_chains)
        sample_keys = jax.random.split(sample_key, num_chains)
        positions, imm, warm_keys, sample_keys = shard_chains((positions, imm, warm_keys, sample_keys), num_chains)
        (states, step, tuned_imm, (grads, div)), c, t = self._programs("warmup", self._warmup, (param, imm, positions, warm_keys))
        return WarmState(
            param, states, step, tuned_imm, sample_keys, np.asarray(grads, float) + 1, np.asarray(div),
            {"compile": c, "warmup": t},
        )

    def extend(self, warm: WarmState) -> tuple[WarmState, Segment, dict]:
        """One sampling segment of ``segment_length`` draws per chain, continuing from ``warm``."""
        args = (warm.param, warm.states, warm.step_size, warm.inverse_mass, warm.keys)
        (states, keys, draws, steps, accept, divergent), c, t = self._programs("sample", self._sample, args)
        segment = Segment(np.asarray(draws), np.asarray(steps), np.asarray(accept), np.asarray(divergent))
        return warm._replace(states=states, keys=keys), segment, {"compile": c, "sampling": t}

    def sample(self, warm: WarmState, num_samples: int, first: Segment | None = None) -> ChainResult:
        """``num_samples`` draws per chain (segments, truncated), optionally counting an earlier segment."""
        segments = [] if first is None else [first]
        seconds = dict(warm.seconds)
        seconds.setdefault("sampling", 0.0)
        while sum(s.draws.shape[1] for s in segments) < num_samples:
            warm, segment, t = self.extend(warm)
            segments.append(segment)
            seconds["compile"] += t["compile"]
            seconds["sampling"] += t["sampling"]
        cat = Segment(*(np.concatenate(parts, axis=1)[:, :num_samples] for parts in zip(*segments)))
        return ChainResult(
            kernel="nuts",
            draws=cat.draws,
            grad_evals=cat.steps.sum(axis=1).astype(float),
            warmup_grad_evals=warm.warmup_grad_evals,
            acceptance=cat.accept.mean(axis=1)[:, None],
            divergences=cat.divergent.sum(axis=1),
            warmup_divergences=warm.warmup_divergences,
            step_size=np.asarray(warm.step_size)[:, None],
            num_leapfrog=None,
            seconds=seconds,
            draw_stats={"acceptance_rate": cat.accept, "diverging": cat.divergent, "n_steps": cat.steps},
        )

    def run(self, param: Parameterisation, inverse_mass, init_positions, seed: int) -> ChainResult:
        """Warm up and draw ``config.num_samples`` per chain."""
        return self.sample(self.warmup(param, inverse_mass, init_positions, seed), self.config.num_samples)

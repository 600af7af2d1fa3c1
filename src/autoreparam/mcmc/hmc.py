"""Fixed-L HMC (and iHMC) over many chains: one compiled warm-up program and one sampling program.

Chains are ``vmap``-ed, steps ``lax.scan``-ned; L, step sizes, mass matrices, the parameterisation
and the seed are runtime arguments, so an oracle grid over L, several seeds or a new lambda reuse the
compiled programs (BlackJAX's HMC integrates with ``fori_loop``, which accepts a traced L). The
warm-up follows the authors' protocol (REFERENCE.md): start from draws of q, adapt one step size per
chain (and per space) for the first part of the burn-in, then let the chains mix.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.errors import ArgumentError
from autoreparam.mcmc.chains import ChainResult
from autoreparam.mcmc.config import HMCConfig, initial_step_size
from autoreparam.mcmc.cycle import build_cycle_kernel
from autoreparam.mcmc.programs import PROGRAMS
from autoreparam.mcmc.sharding import shard_chains
from autoreparam.mcmc.step_size import make_rule
from autoreparam.mcmc.warmup import schedule, window_adaptation
from autoreparam.precision import float_dtype
from autoreparam.reparam.parameterisation import Parameterisation


def _count(divergent):
    """(iterations, spaces) flags -> (iterations with any divergent half, divergent half-steps per space)."""
    return jnp.sum(divergent.any(axis=-1)), jnp.sum(divergent, axis=0)


def per_space_leapfrog(num_leapfrog, num_spaces: int) -> tuple[int, ...]:
    """``L`` or ``(L_1, ..., L_K)`` as one positive integer per space."""
    values = tuple(int(L) for L in np.atleast_1d(np.asarray(num_leapfrog)).ravel())
    if len(values) == 1:
        values = values * num_spaces
    if len(values) != num_spaces or any(L <= 0 for L in values):
        raise ArgumentError(f"num_leapfrog must be a positive integer or one per space ({num_spaces}), "
                            f"got {num_leapfrog}")
    return values


class CycleSampler:
    """HMC (one space) or iHMC (several spaces) for one model; compile once, run many times."""

    def __init__(self, coords: Coordinates, num_spaces: int, config: HMCConfig, chunk: int | None = None):
        """``chunk``: draws per call of the sampling program (default: all ``config.num_samples`` in one
        call); it must divide ``num_samples``. Samplers whose chunks are equal share one sampling
        program, as samplers with equal warm-ups share one warm-up program: the oracle's pilots and the
        final run compile each program once (``sampling.sample_hmc``), not twice.
        """
        chunk = config.num_samples if chunk is None else int(chunk)
        if chunk <= 0 or config.num_samples % chunk:
            raise ValueError(f"chunk must divide num_samples ({config.num_samples}), got {chunk}")
        self.coords, self.num_spaces, self.config, self.chunk = coords, num_spaces, config, chunk
        self.num_compilations = 0
        # Each program is keyed by what it reads: the warm-up never reads num_samples, the sampling
        # program reads it only as its chunk's length.
        self._warmup_key = ("hmc_warmup", coords.program_key, num_spaces, dataclasses.replace(config, num_samples=1))
        self._sample_key = ("hmc_sample", coords.program_key, num_spaces, dataclasses.replace(config, num_samples=chunk))

    # --- programs -----------------------------------------------------------------------------
    def _warmup_program(self, data, params, inverse_mass, positions, num_leapfrog, keys, log_steps):
        """Burn-in of every chain; returns states, log step sizes and inverse mass matrices per space,
        and warm-up divergences per space."""
        coords = self.coords.with_data(data)
        init, step = build_cycle_kernel(coords, params, self.config.divergence_threshold, self.config.jitter)
        if self.config.step_size_rule == "window":
            one_chain = self._window_chain(init, step, num_leapfrog)
        else:
            one_chain = self._paper_chain(init, step, num_leapfrog)
        return jax.vmap(one_chain)(positions, keys, log_steps, inverse_mass)

    def _window_chain(self, init, step, num_leapfrog):
        """Stan's windowed adaptation, one per space (``mcmc.warmup``)."""
        adapt_init, adapt_update, adapt_final = window_adaptation(self.config.acceptance_target)
        stages = schedule(self.config.num_warmup)
        update_spaces = jax.vmap(adapt_update, in_axes=(0, None, None, 0, 0))

        def one_chain(position, key, log_step0, imm0):
            state = init(position)
            adapt = jax.vmap(adapt_init)(imm0, jnp.exp(log_step0))

            def body(carry, stage):
                state, adapt, key = carry
                key, sub = jax.random.split(key)
                state, info = step(sub, state, jnp.log(adapt.step_size), adapt.inverse_mass, num_leapfrog)
                adapt = update_spaces(adapt, stage[0], stage[1], info.positions, info.acceptance_rate)
                return (state, adapt, key), info.is_divergent

            (state, adapt, _), divergent = jax.lax.scan(body, (state, adapt, key), stages)
            step_size, imm = jax.vmap(adapt_final)(adapt)
            return state, jnp.log(step_size), imm, _count(divergent)

        return one_chain

    def _paper_chain(self, init, step, num_leapfrog):
        """The authors' burn-in: q's scales as a fixed mass matrix, one step size per space adapted by
        the sign rule (or dual averaging) for the first ``adapt_fraction`` of the steps."""
        config = self.config
        rule = make_rule(config)
        num_adapt = config.num_adapt

        def one_chain(position, key, log_step0, imm):
            state = init(position)
            adapt = jax.vmap(rule.init)(log_step0)

            def body(carry, t):
                state, adapt, key = carry
                key, sub = jax.random.split(key)
                adapting = t < num_adapt
                log_steps = jnp.where(adapting, jax.vmap(rule.current)(adapt), jax.vmap(rule.final)(adapt))
                state, info = step(sub, state, log_steps, imm, num_leapfrog)
                updated = jax.vmap(rule.update)(adapt, info.acceptance_rate)
                adapt = jax.tree_util.tree_map(lambda new, old: jnp.where(adapting, new, old), updated, adapt)
                return (state, adapt, key), info.is_divergent

            (state, adapt, _), divergent = jax.lax.scan(body, (state, adapt, key), jnp.arange(config.num_warmup))
            return state, jax.vmap(rule.final)(adapt), imm, _count(divergent)

        return one_chain

    def _sample_program(self, data, params, inverse_mass, states, num_leapfrog, keys, log_steps):
        coords = self.coords.with_data(data)
        _, step = build_cycle_kernel(coords, params, self.config.divergence_threshold, self.config.jitter)

        def original(x):
            return coords.ravel_original(coords.to_original(coords.unravel(x), params[0]))

        def one_chain(state, key, log_step, imm):
            def body(carry, _):
                state, key = carry
                key, sub = jax.random.split(key)
                state, info = step(sub, state, log_step, imm, num_leapfrog)
                return (state, key), (original(state.position), info.acceptance_rate, info.is_divergent)

            # The state and key come back out, so that the next chunk continues the same chain and the
            # same random stream: a run in chunks draws exactly what one call would have drawn.
            (state, key), (draws, accept, divergent) = jax.lax.scan(body, (state, key), None, length=self.chunk)
            return draws, accept, divergent, state, key

        return jax.vmap(one_chain)(states, keys, log_steps, inverse_mass)

    # --- running ------------------------------------------------------------------------------
    def run(
        self,
        params: Sequence[Parameterisation],
        inverse_mass: jax.Array,
        init_positions: jax.Array,
        num_leapfrog: int | Sequence[int],
        seed: int,
        init_log_step: jax.Array | None = None,
    ) -> ChainResult:
        """Warm up and sample ``init_positions.shape[0]`` chains from positions in ``params[0]``'s coordinates.

        ``num_leapfrog``: one L for every space, or one per space (iHMC with a cheap half).
        """
        params = tuple(params)
        if len(params) != self.num_spaces:
            raise ValueError(f"expected {self.num_spaces} parameterisation(s), got {len(params)}")
        per_space = per_space_leapfrog(num_leapfrog, self.num_spaces)
        positions = jnp.asarray(init_positions, dtype=float_dtype())  # as `SegmentSampler.start`
        num_chains = positions.shape[0]
        inverse_mass = jnp.asarray(inverse_mass, dtype=positions.dtype)
        inverse_mass = jnp.broadcast_to(inverse_mass.reshape(-1, self.num_spaces, positions.shape[1]),
                                        (num_chains, self.num_spaces, positions.shape[1]))
        if init_log_step is None:
            first = [initial_step_size(L) for L in per_space]
            if self.config.step_size_rule == "window":  # dual averaging finds its own; start no larger than 1
                first = [min(1.0, e) for e in first]
            init_log_step = jnp.log(jnp.array([first] * num_chains))
        warm_key, sample_key = jax.random.split(jax.random.PRNGKey(seed))
        warm_keys = jax.random.split(warm_key, num_chains)
        sample_keys = jax.random.split(sample_key, num_chains)
        positions, inverse_mass, warm_keys, sample_keys, init_log_step = shard_chains(
            (positions, inverse_mass, warm_keys, sample_keys, jnp.asarray(init_log_step, dtype=positions.dtype)),
            num_chains,
        )
        L = jnp.asarray(per_space, dtype=jnp.int32)
        data = self.coords.data
        (states, log_steps, inverse_mass, (warm_div, _)), c1, t_warm = PROGRAMS(
            self._warmup_key, lambda: self._warmup_program,
            (data, params, inverse_mass, positions, L, warm_keys, init_log_step),
        )
        chunks, c2, t_sample = [], 0.0, 0.0
        for _ in range(self.config.num_samples // self.chunk):
            (*chunk, states, sample_keys), compiled, seconds = PROGRAMS(
                self._sample_key, lambda: self._sample_program,
                (data, params, inverse_mass, states, L, sample_keys, log_steps),
            )
            chunks.append([np.asarray(a) for a in chunk])
            c2, t_sample = c2 + compiled, t_sample + seconds
        draws, accept, divergent = (np.concatenate(parts, axis=1) for parts in zip(*chunks))
        self.num_compilations += (c1 > 0) + (c2 > 0)
        # divergent: (chains, draws, spaces)
        per_iteration = sum(per_space)
        ones = np.ones(num_chains)
        return ChainResult(
            kernel="hmc" if self.num_spaces == 1 else "ihmc",
            draws=draws,
            grad_evals=ones * per_iteration * self.config.num_samples,
            warmup_grad_evals=ones * (per_iteration * self.config.num_warmup + 1),
            acceptance=np.asarray(accept).mean(axis=1),
            divergences=divergent.any(axis=-1).sum(axis=1),
            warmup_divergences=np.asarray(warm_div),
            step_size=np.exp(np.asarray(log_steps)),
            num_leapfrog=per_space[0] if len(set(per_space)) == 1 else per_space,
            seconds={"compile": c1 + c2, "warmup": t_warm, "sampling": t_sample},
            draw_stats={
                "acceptance_rate": np.asarray(accept).mean(axis=-1),
                "diverging": divergent.any(axis=-1),
                "n_steps": np.full(divergent.shape[:2], per_iteration),
            },
            space_divergences=divergent.sum(axis=1),
            inverse_mass=np.asarray(inverse_mass),
        )

"""Fixed-L HMC (and iHMC) over many chains: one compiled program runs the warm-up and the draws.

Chains are ``vmap``-ed, iterations looped in segments of equal length; each iteration's code (a
warm-up step, a draw, or padding, which is not run) and warm-up stage, L, step sizes, mass matrices, the
parameterisation and the seed are runtime arguments, so the warm-up, the draws, an oracle grid over L,
several seeds or a new lambda reuse one compiled program (BlackJAX's HMC integrates with
``fori_loop``, which accepts a traced L). The warm-up follows the authors' protocol (REFERENCE.md):
start from draws of q, adapt one step size per chain (and per space) for the first part of the
burn-in, then let the chains mix; or Stan's windowed adaptation (the default).
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Sequence

import blackjax.mcmc.hmc as bj_hmc
import jax
import jax.numpy as jnp
import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.errors import ArgumentError
from autoreparam.mcmc.chains import ChainResult
from autoreparam.mcmc.config import HMCConfig, initial_step_size
from autoreparam.mcmc.cycle import CycleState, build_cycle_kernel
from autoreparam.mcmc.programs import PROGRAMS
from autoreparam.mcmc.sharding import shard_chains
from autoreparam.mcmc.step_size import make_rule
from autoreparam.mcmc.warmup import stan_schedule, window_adaptation
from autoreparam.precision import float_dtype
from autoreparam.reparam.parameterisation import Parameterisation


def _like(tree, like):
    """``tree`` in the dtypes of ``like`` (a ``cond``'s two branches, and a loop's carry, must agree exactly)."""
    return jax.tree_util.tree_map(lambda x, y: jnp.asarray(x, dtype=y.dtype), tree, like)


def per_space_leapfrog(num_leapfrog, num_spaces: int) -> tuple[int, ...]:
    """``L`` or ``(L_1, ..., L_K)`` as one positive integer per space."""
    values = tuple(int(L) for L in np.atleast_1d(np.asarray(num_leapfrog)).ravel())
    if len(values) == 1:
        values = values * num_spaces
    if len(values) != num_spaces or any(L <= 0 for L in values):
        raise ArgumentError(f"num_leapfrog must be a positive integer or one per space ({num_spaces}), "
                            f"got {num_leapfrog}")
    return values


# What one iteration of the segment program does (a runtime argument per iteration, unbatched).
WARM, DRAW, SKIP = 0, 1, 2


def segment_plan(codes: np.ndarray, stages: np.ndarray, length: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``codes`` (n,) and ``stages`` (n, 2) cut into segments of ``length`` iterations, the last padded
    with `SKIP` (not run; its rows of the outputs are dropped): every segment of every run has the
    same shape, so one program serves a warm-up of any length and any number of draws."""
    pad = -len(codes) % length
    codes = np.concatenate([codes, np.full(pad, SKIP, np.int32)]).astype(np.int32)
    stages = np.concatenate([stages, np.zeros((pad, 2), np.int32)]).astype(np.int32)
    return [(codes[i:i + length], stages[i:i + length]) for i in range(0, len(codes), length)]


@partial(jax.jit, static_argnums=1)
def _chain_keys(key, num_chains: int):
    """The warm-up's and the draws' key per chain, as one small program: run op by op, its splits
    compiled one by one on a process's first call (0.25 s). The same keys as the ops would give."""
    warm_key, sample_key = jax.random.split(key)
    return jax.random.split(warm_key, num_chains), jax.random.split(sample_key, num_chains)


class CycleSampler:
    """HMC (one space) or iHMC (several spaces) for one model; compile once, run many times."""

    def __init__(self, coords: Coordinates, num_spaces: int, config: HMCConfig, chunk: int | None = None):
        """``chunk``: iterations per call of the one compiled program (default: ``config.num_samples``);
        it must divide ``num_samples``. The warm-up runs in calls of the same length (its last padded),
        so the oracle's pilots and its final run (``sampling.sample_hmc``) share one program.

        The program runs a *segment* of iterations, each with a code (warm-up with Stan's windowed or
        the paper's step-size adaptation, a draw, or nothing) and its warm-up stage as runtime
        arguments, like NUTS's segments (``mcmc.segments``): the warm-up and the draws compile once,
        not as two programs.
        """
        chunk = config.num_samples if chunk is None else int(chunk)
        if chunk <= 0 or config.num_samples % chunk:
            raise ValueError(f"chunk must divide num_samples ({config.num_samples}), got {chunk}")
        self.coords, self.num_spaces, self.config, self.chunk = coords, num_spaces, config, chunk
        self.num_compilations = 0
        # Keyed by what the program reads: not the lengths of the warm-up or the draws (their codes and
        # stages are arguments), only its segment's length.
        lengths_apart = dataclasses.replace(config, num_warmup=1, num_samples=1)
        self._segment_key = ("hmc_segment", coords.program_key, num_spaces, lengths_apart, chunk)

    # --- the program ------------------------------------------------------------------------
    def _adaptation(self):
        """The warm-up's adaptation per chain, one per space: ``(init(imm (K, dim), log_step (K,)),
        update(state, stage, positions, acceptance), warm(state, imm, stage) -> (log_steps, imm),
        final(state, imm) -> (log_steps, imm))``; ``warm`` gives the step sizes and metric of a warm-up
        iteration, ``final`` those of the draws."""
        if self.config.step_size_rule == "window":  # Stan's windowed adaptation (``mcmc.warmup``)
            adapt_init, adapt_update, adapt_final = window_adaptation(self.config.acceptance_target)
            update_spaces = jax.vmap(adapt_update, in_axes=(0, None, None, 0, 0))

            def final(adapt, _imm):
                step_size, inverse_mass = jax.vmap(adapt_final)(adapt)
                return jnp.log(step_size), inverse_mass

            return (lambda imm, log_step: jax.vmap(adapt_init)(imm, jnp.exp(log_step)),
                    lambda adapt, stage, positions, accept: update_spaces(adapt, stage[0], stage[1], positions, accept),
                    lambda adapt, _imm, _stage: (jnp.log(adapt.step_size), adapt.inverse_mass), final)
        # The authors' burn-in: q's scales as a fixed mass matrix, one step size per space adapted by the
        # sign rule (or dual averaging) while stage[0] is 1 (the first ``adapt_fraction`` of the steps).
        rule = make_rule(self.config)

        def update(adapt, stage, _positions, accept):
            updated = jax.vmap(rule.update)(adapt, accept)
            return jax.tree_util.tree_map(lambda new, old: jnp.where(stage[0] == 1, new, old), updated, adapt)

        def warm(adapt, imm, stage):
            return jnp.where(stage[0] == 1, jax.vmap(rule.current)(adapt), jax.vmap(rule.final)(adapt)), imm

        return (lambda _imm, log_step: jax.vmap(rule.init)(log_step), update, warm,
                lambda adapt, imm: (jax.vmap(rule.final)(adapt), imm))

    def _segment_program(self, data, params, first, positions, states, adapt, log_steps, inverse_mass,
                         num_leapfrog, keys, codes, stages):
        """``len(codes)`` iterations of every chain. ``first``: start the chains at ``positions`` (and
        the adaptation at ``log_steps``, ``inverse_mass``) instead of ``states``, ``adapt``. Warm-up
        iterations step with the adaptation's step sizes and metric and update it; draws step with
        ``log_steps`` and ``inverse_mass``. Returns the draws (original coordinates), acceptance and
        divergences per iteration and space, the chains' states, adaptation and keys to go on from,
        and the step sizes and metric the adaptation ends with."""
        coords = self.coords.with_data(data)
        init, step = build_cycle_kernel(coords, params, self.config.divergence_threshold, self.config.jitter)
        adapt_init, adapt_update, warm_step, adapt_final = self._adaptation()

        def original(x):
            return coords.ravel_original(coords.to_original(coords.unravel(x), params[0]))

        def one_chain(position, state, adapt, log_step, imm, key):
            # The chains' first call starts them (a gradient at the start, the adaptation's state); the
            # predicate is one flag for all chains, so this is a branch, not both computed.
            def start():
                return _like(init(position), state), _like(adapt_init(imm, log_step), adapt)

            state, adapt = jax.lax.cond(first, start, lambda: (state, adapt))

            def move(carry, code, stage):
                state, adapt, key = carry
                key, sub = jax.random.split(key)
                warming = code == WARM
                warm_log, warm_imm = warm_step(adapt, imm, stage)
                state, info = step(sub, state, jnp.where(warming, warm_log, log_step),
                                   jnp.where(warming, warm_imm, imm), num_leapfrog)
                adapt = jax.lax.cond(warming, lambda: adapt_update(adapt, stage, info.positions, info.acceptance_rate),
                                     lambda: adapt)
                return (state, adapt, key), (original(state.position), info.acceptance_rate, info.is_divergent)

            # Padding (`SKIP`, only at a segment's end) is not run: the loop's trip count is the segment's
            # active iterations, a runtime value, and padded rows of the outputs stay zero. Padding that
            # stepped and was put back by a select cost up to a segment of wasted steps per phase (a
            # warm-up of 1,000 in segments of 2,000 ran 2,000; found in review); a cond around the step
            # cost radon MN's draws 4 to 5% of their gradients per second
            # (benchmarks/results/hmc_segment_throughput.json).
            length = codes.shape[0]
            active = jnp.sum(codes != SKIP)
            blank = (jnp.zeros((length, coords.original_dim), positions.dtype),
                     jnp.zeros((length, self.num_spaces), positions.dtype), jnp.zeros((length, self.num_spaces), bool))

            def body(i, loop):
                carry, outputs = loop
                moved, row = move(carry, codes[i], stages[i])
                outputs = jax.tree_util.tree_map(
                    lambda out, new: jax.lax.dynamic_update_index_in_dim(out, new.astype(out.dtype), i, 0), outputs, row)
                return _like(moved, carry), outputs

            # The state and key come back out, so that the next segment continues the same chain and
            # the same random stream.
            (state, adapt, key), (draws, accept, divergent) = jax.lax.fori_loop(0, active, body,
                                                                                ((state, adapt, key), blank))
            final_log, final_imm = adapt_final(adapt, imm)
            return draws, accept, divergent, state, adapt, key, final_log, final_imm

        return jax.vmap(one_chain)(positions, states, adapt, log_steps, inverse_mass, keys)

    def _blank_chains(self, positions, inverse_mass, log_steps):
        """Zeros shaped as the chains' states and adaptation, for the first call (which replaces them)."""
        num_chains, dim = positions.shape
        zeros = partial(jnp.zeros, dtype=positions.dtype)
        state = bj_hmc.HMCState(zeros((num_chains, dim)), zeros((num_chains,)), zeros((num_chains, dim)))
        states = CycleState(tuple(state for _ in range(self.num_spaces)))
        adapt_init = self._adaptation()[0]
        shapes = jax.eval_shape(jax.vmap(adapt_init), inverse_mass, log_steps)
        return states, jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)

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
            starts = [initial_step_size(L) for L in per_space]
            if self.config.step_size_rule == "window":  # dual averaging finds its own; start no larger than 1
                starts = [min(1.0, e) for e in starts]
            init_log_step = jnp.log(jnp.array([starts] * num_chains))
        warm_keys, sample_keys = _chain_keys(jax.random.PRNGKey(seed), num_chains)
        log_steps = jnp.asarray(init_log_step, dtype=positions.dtype)
        states, adapt = self._blank_chains(positions, inverse_mass, log_steps)
        positions, inverse_mass, warm_keys, sample_keys, log_steps, states, adapt = shard_chains(
            (positions, inverse_mass, warm_keys, sample_keys, log_steps, states, adapt), num_chains)
        L = jnp.asarray(per_space, dtype=jnp.int32)
        data = self.coords.data
        config = self.config
        if config.step_size_rule == "window":
            warm_stages = stan_schedule(config.num_warmup)
        else:  # stage[0]: whether the step size still adapts
            warm_stages = np.zeros((config.num_warmup, 2), np.int32)
            warm_stages[:config.num_adapt, 0] = 1
        warm_plan = segment_plan(np.full(config.num_warmup, WARM, np.int32), warm_stages, self.chunk)
        draw_plan = segment_plan(np.full(config.num_samples, DRAW, np.int32),
                                 np.zeros((config.num_samples, 2), np.int32), self.chunk)
        seconds = {"compile": 0.0, "warmup": 0.0, "sampling": 0.0}
        compiled = 0
        warm_div, chunks, first = [], [], True
        for phase, plan in (("warmup", warm_plan), ("sampling", draw_plan)):
            keys = warm_keys if phase == "warmup" else sample_keys
            for codes, stages in plan:
                (draws, accept, divergent, states, adapt, keys, final_log, final_imm), c, t = PROGRAMS(
                    self._segment_key, lambda: self._segment_program,
                    (data, params, jnp.asarray(first), positions, states, adapt, log_steps, inverse_mass, L, keys,
                     jnp.asarray(codes), jnp.asarray(stages)),
                )
                first = False
                compiled += c > 0
                seconds["compile"] += c
                seconds[phase] += t
                kept = codes != SKIP
                if phase == "warmup":
                    warm_div.append(np.asarray(divergent)[:, kept])
                else:
                    chunks.append([np.asarray(a)[:, kept] for a in (draws, accept, divergent)])
            if phase == "warmup":
                # The draws step with what the warm-up ended with.
                log_steps, inverse_mass = final_log, final_imm
        draws, accept, divergent = (np.concatenate(parts, axis=1) for parts in zip(*chunks))
        self.num_compilations += compiled
        warm_divergent = np.concatenate(warm_div, axis=1).any(axis=-1).sum(axis=1)
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
            warmup_divergences=warm_divergent,
            step_size=np.exp(np.asarray(log_steps)),
            num_leapfrog=per_space[0] if len(set(per_space)) == 1 else per_space,
            seconds=seconds,
            draw_stats={
                "acceptance_rate": np.asarray(accept).mean(axis=-1),
                "diverging": divergent.any(axis=-1),
                "n_steps": np.full(divergent.shape[:2], per_iteration),
            },
            space_divergences=divergent.sum(axis=1),
            inverse_mass=np.asarray(inverse_mass),
        )

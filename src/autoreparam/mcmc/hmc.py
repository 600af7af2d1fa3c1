"""Fixed-L HMC (and iHMC) over many chains: one compiled warm-up program and one sampling program.

Chains are ``vmap``-ed, steps ``lax.scan``-ned; L, step sizes, mass matrices, the parameterisation
and the seed are runtime arguments, so an oracle grid over L, several seeds or a new lambda reuse the
compiled programs (BlackJAX's HMC integrates with ``fori_loop``, which accepts a traced L). The
warm-up follows the authors' protocol (REFERENCE.md): start from draws of q, adapt one step size per
chain (and per space) for the first part of the burn-in, then let the chains mix.
"""

from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.chains import ChainResult
from autoreparam.mcmc.config import HMCConfig, initial_step_size
from autoreparam.mcmc.cycle import build_cycle_kernel
from autoreparam.mcmc.programs import ProgramCache
from autoreparam.mcmc.sharding import shard_chains
from autoreparam.mcmc.step_size import make_rule
from autoreparam.reparam.parameterisation import Parameterisation


class CycleSampler:
    """HMC (one space) or iHMC (several spaces) for one model; compile once, run many times."""

    def __init__(self, coords: Coordinates, num_spaces: int, config: HMCConfig):
        self.coords, self.num_spaces, self.config = coords, num_spaces, config
        self._warmup = jax.jit(self._warmup_program)
        self._sample = jax.jit(self._sample_program)
        self._programs = ProgramCache()

    # --- programs -----------------------------------------------------------------------------
    def _warmup_program(self, params, inverse_mass, positions, num_leapfrog, keys, log_steps):
        config = self.config
        init, step = build_cycle_kernel(self.coords, params, config.divergence_threshold)
        rule = make_rule(config)
        num_adapt = config.num_adapt

        def one_chain(position, key, log_step0):
            state = init(position)
            adapt = jax.vmap(rule.init)(log_step0)

            def body(carry, t):
                state, adapt, key = carry
                key, sub = jax.random.split(key)
                adapting = t < num_adapt
                log_steps = jnp.where(adapting, jax.vmap(rule.current)(adapt), jax.vmap(rule.final)(adapt))
                state, info = step(sub, state, log_steps, inverse_mass, num_leapfrog)
                updated = jax.vmap(rule.update)(adapt, info.acceptance_rate)
                adapt = jax.tree_util.tree_map(lambda new, old: jnp.where(adapting, new, old), updated, adapt)
                return (state, adapt, key), info

            (state, adapt, _), info = jax.lax.scan(body, (state, adapt, key), jnp.arange(config.num_warmup))
            return state, jax.vmap(rule.final)(adapt), jnp.sum(info.is_divergent.any(axis=-1))

        return jax.vmap(one_chain)(positions, keys, log_steps)

    def _sample_program(self, params, inverse_mass, states, num_leapfrog, keys, log_steps):
        coords = self.coords
        _, step = build_cycle_kernel(coords, params, self.config.divergence_threshold)

        def original(x):
            return coords.ravel_original(coords.to_original(coords.unravel(x), params[0]))

        def one_chain(state, key, log_step):
            def body(carry, _):
                state, key = carry
                key, sub = jax.random.split(key)
                state, info = step(sub, state, log_step, inverse_mass, num_leapfrog)
                return (state, key), (original(state.position), info)

            _, (draws, info) = jax.lax.scan(body, (state, key), None, length=self.config.num_samples)
            return draws, info.acceptance_rate, info.is_divergent.any(axis=-1)

        return jax.vmap(one_chain)(states, keys, log_steps)

    @property
    def num_compilations(self) -> int:
        return self._programs.num_compilations

    # --- running ------------------------------------------------------------------------------
    def run(
        self,
        params: Sequence[Parameterisation],
        inverse_mass: jax.Array,
        init_positions: jax.Array,
        num_leapfrog: int,
        seed: int,
        init_log_step: jax.Array | None = None,
    ) -> ChainResult:
        """Warm up and sample ``init_positions.shape[0]`` chains from positions in ``params[0]``'s coordinates."""
        params = tuple(params)
        if len(params) != self.num_spaces:
            raise ValueError(f"expected {self.num_spaces} parameterisation(s), got {len(params)}")
        positions = jnp.asarray(init_positions)
        num_chains = positions.shape[0]
        inverse_mass = jnp.asarray(inverse_mass, dtype=positions.dtype).reshape(self.num_spaces, -1)
        if init_log_step is None:
            init_log_step = jnp.full((num_chains, self.num_spaces), jnp.log(initial_step_size(num_leapfrog)))
        warm_key, sample_key = jax.random.split(jax.random.PRNGKey(seed))
        warm_keys = jax.random.split(warm_key, num_chains)
        sample_keys = jax.random.split(sample_key, num_chains)
        positions, warm_keys, sample_keys, init_log_step = shard_chains(
            (positions, warm_keys, sample_keys, jnp.asarray(init_log_step, dtype=positions.dtype)), num_chains
        )
        L = jnp.asarray(num_leapfrog, dtype=jnp.int32)
        (states, log_steps, warm_div), c1, t_warm = self._programs(
            "warmup", self._warmup, (params, inverse_mass, positions, L, warm_keys, init_log_step)
        )
        (draws, accept, divergent), c2, t_sample = self._programs(
            "sample", self._sample, (params, inverse_mass, states, L, sample_keys, log_steps)
        )
        per_iteration = self.num_spaces * int(num_leapfrog)
        ones = np.ones(num_chains)
        return ChainResult(
            kernel="hmc" if self.num_spaces == 1 else "ihmc",
            draws=np.asarray(draws),
            grad_evals=ones * per_iteration * self.config.num_samples,
            warmup_grad_evals=ones * (per_iteration * self.config.num_warmup + 1),
            acceptance=np.asarray(accept).mean(axis=1),
            divergences=np.asarray(divergent).sum(axis=1),
            warmup_divergences=np.asarray(warm_div),
            step_size=np.exp(np.asarray(log_steps)),
            num_leapfrog=int(num_leapfrog),
            seconds={"compile": c1 + c2, "warmup": t_warm, "sampling": t_sample},
            draw_stats={
                "acceptance_rate": np.asarray(accept).mean(axis=-1),
                "diverging": np.asarray(divergent),
                "n_steps": np.full(np.asarray(divergent).shape, per_iteration),
            },
        )

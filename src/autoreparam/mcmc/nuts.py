"""NUTS in any parameterisation, for everyday use: BlackJAX's NUTS and window adaptation, vmapped over chains.

The window adaptation (Stan's scheme, as BlackJAX implements it) tunes one step size and a diagonal
inverse mass matrix per chain; we seed the mass matrix with q's variances when a fit is available.
Gradient evaluations are the integrator steps BlackJAX reports for every transition.
"""

from __future__ import annotations

import time

import blackjax
import jax
import jax.numpy as jnp
import numpy as np
from blackjax.adaptation.base import get_filter_adapt_info_fn

from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.chains import ChainResult
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.sharding import shard_chains
from autoreparam.mcmc.spaces import flat_log_density
from autoreparam.reparam.parameterisation import Parameterisation


class NUTSSampler:
    """NUTS for one model; the compiled programs are reused across seeds and parameterisations."""

    def __init__(self, coords: Coordinates, config: NUTSConfig):
        self.coords, self.config = coords, config
        self._warmup = jax.jit(self._warmup_program)
        self._sample = jax.jit(self._sample_program)
        self._compiled: dict = {}
        self.num_compilations = 0

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

            _, (draws, steps, accept, divergent) = jax.lax.scan(body, state, jax.random.split(key, config.num_samples))
            return draws, steps, accept, divergent

        return jax.vmap(one_chain)(states, step_sizes, inverse_masses, keys)

    def _call(self, which: str, jitted, args):
        signature = (which,) + tuple((tuple(x.shape), str(x.dtype)) for x in jax.tree_util.tree_leaves(args))
        compile_seconds = 0.0
        if signature not in self._compiled:
            start = time.perf_counter()
            self._compiled[signature] = jitted.lower(*args).compile()
            compile_seconds = time.perf_counter() - start
            self.num_compilations += 1
        start = time.perf_counter()
        out = jax.block_until_ready(self._compiled[signature](*args))
        return out, compile_seconds, time.perf_counter() - start

    def run(self, param: Parameterisation, inverse_mass, init_positions, seed: int) -> ChainResult:
        positions = jnp.asarray(init_positions)
        num_chains = positions.shape[0]
        imm = jnp.broadcast_to(jnp.asarray(inverse_mass, dtype=positions.dtype), positions.shape)
        warm_key, sample_key = jax.random.split(jax.random.PRNGKey(seed))
        warm_keys = jax.random.split(warm_key, num_chains)
        sample_keys = jax.random.split(sample_key, num_chains)
        positions, imm, warm_keys, sample_keys = shard_chains((positions, imm, warm_keys, sample_keys), num_chains)
        (states, step, tuned_imm, (warm_grads, warm_div)), c1, t_warm = self._call(
            "warmup", self._warmup, (param, imm, positions, warm_keys)
        )
        (draws, grads, accept, div), c2, t_sample = self._call(
            "sample", self._sample, (param, states, step, tuned_imm, sample_keys)
        )
        return ChainResult(
            kernel="nuts",
            draws=np.asarray(draws),
            grad_evals=np.asarray(grads, dtype=float).sum(axis=1),
            warmup_grad_evals=np.asarray(warm_grads, dtype=float) + 1,
            acceptance=np.asarray(accept).mean(axis=1)[:, None],
            divergences=np.asarray(div).sum(axis=1),
            warmup_divergences=np.asarray(warm_div),
            step_size=np.asarray(step)[:, None],
            num_leapfrog=None,
            seconds={"compile": c1 + c2, "warmup": t_warm, "sampling": t_sample},
            draw_stats={"acceptance_rate": np.asarray(accept), "diverging": np.asarray(div), "n_steps": np.asarray(grads)},
        )

"""NUTS in segments: one compiled program runs the warm-up, pilots and sampling of every parameterisation.

A segment is ``segment_length`` NUTS transitions of all chains (BlackJAX's NUTS kernel, vmapped over
chains, scanned over transitions). Each transition carries a *stage code* that says what the
adaptation does after it (Stan's windowed warm-up, ``mcmc.warmup``):

====  ==========================================================================================
code  after the transition
====  ==========================================================================================
-2    padding: no transition is run (a run shorter than whole segments ends with it)
-1    nothing: a draw (sampling, pilots)
 0    fast window: dual averaging of the step size
 1    slow window: dual averaging, and the position joins the Welford estimate of the variances
 2    end of a slow window: as 1, then a new diagonal mass matrix and dual averaging restarts
 3    last warm-up transition: as 0, then the step size freezes at its dual-averaging average
====  ==========================================================================================

The codes, the parameterisation, the data and the chains' states are runtime arguments, so one
executable serves a full warm-up, a short re-adaptation after moving chains into another
parameterisation, pilot draws and the final draws, for every candidate parameterisation ``auto``
tries: compilation is paid once per model and shape (``mcmc.programs``). A segment can also start by
moving its chains from another parameterisation (an exact bijection, ``mcmc.spaces``), which is how
candidates share one warm-up.

With ``NUTSConfig.adaptation="pooled"`` (the default) the chains adapt together: dual averaging sees
their mean acceptance and each window's mass matrix is the variances of all chains' draws, through
collectives over the ``vmap``'s chain axis (and the device axis when the chains are split across
devices: each device runs its own chains' trajectories, ``sharding.run_sharded``). Every chain then
has the same step size and mass matrix.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import blackjax.mcmc.hmc as bj_hmc
import blackjax.mcmc.nuts as bj_nuts
import jax
import jax.numpy as jnp
import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.programs import PROGRAMS
from autoreparam.mcmc.sharding import chain_axes, run_sharded, shard_chains
from autoreparam.mcmc.spaces import flat_log_density, position_map
from autoreparam.mcmc.warmup import WindowState, stan_schedule, window_adaptation
from autoreparam.precision import float_dtype
from autoreparam.reparam.parameterisation import Parameterisation

SKIP, SAMPLE, FAST, SLOW, WINDOW_END, FINAL = -2, -1, 0, 1, 2, 3


class Chains(NamedTuple):
    """Every chain's position (in the current parameterisation's coordinates), adaptation and key."""

    positions: jax.Array  # (chains, dim)
    adapt: WindowState  # batched over chains
    keys: jax.Array  # (chains, 2)


class SegmentDraws(NamedTuple):
    draws: np.ndarray  # (chains, length, original_dim), original coordinates
    steps: np.ndarray  # (chains, length) integrator steps = gradients (and one per segment: nuts.chain_result)
    accept: np.ndarray  # (chains, length)
    divergent: np.ndarray  # (chains, length)


def warmup_codes(num_warmup: int) -> np.ndarray:
    """Stan's schedule (fast window, doubling slow windows, fast window) as stage codes."""
    stages = stan_schedule(num_warmup)
    codes = np.where(stages[:, 0] == 0, FAST, np.where(stages[:, 1] == 1, WINDOW_END, SLOW)).astype(np.int32)
    codes[-1] = FINAL
    return codes


def sample_codes(length: int) -> np.ndarray:
    return np.full(length, SAMPLE, dtype=np.int32)


# Dual averaging is built for this target; another target is reached by shifting the acceptance it
# sees (it adapts on ``target - acceptance``), so the target is a runtime argument, not a recompile.
BUILT_TARGET = 0.8


# The name of the chain axis of the program's ``vmap``, for the pooled adaptation's collectives.
CHAINS = "chains"


def pool_variances(mass, axes=CHAINS):
    """One Welford estimate from every chain's: the variances of all chains' draws of the window.

    Chan, Golub & LeVeque (1979): with n draws per chain, the pooled sum of squared deviations is the
    chains' sums plus n times the squared deviations of their means from the pooled mean.
    """
    welford = mass.wc_state
    mean = jax.lax.pmean(welford.mean, axes)
    m2 = jax.lax.psum(welford.m2 + welford.sample_size * (welford.mean - mean) ** 2, axes)
    count = jax.lax.psum(welford.sample_size, axes)
    return mass._replace(wc_state=welford._replace(mean=mean, m2=m2, sample_size=count))


# Bounds of the gradient-based initial variances: |gradient| in [1e-4, 1e8], so variances in [1e-8, 1e4].
GRADIENT_METRIC_BOUNDS = (1e-4, 1e8)


# ``initial_metric="stiff"``: only elements whose 1 / |gradient| at the start is below this bound take it
# as their first inverse mass; the others keep the identity. 1 / |gradient| = s^2 / D for a Gaussian
# coordinate of scale s whose start lies D from its mean (D of order one at the origin), so the bound
# picks coordinates about 100 times narrower than the identity assumes: with the identity they force
# a step size that needs trajectories of hundreds of leapfrog steps to cross the unit-scale ones.
STIFF_INVERSE_MASS = 1e-4


def metric_bound(initial_metric: str) -> float:
    """Elements of the gradient's first inverse mass below this replace the given metric's."""
    return {"unit": 0.0, "gradient": float("inf"), "stiff": STIFF_INVERSE_MASS}[initial_metric]


def gradient_inverse_mass(gradient, pooled: bool, axes=CHAINS):
    """A first diagonal inverse mass matrix from the log density's gradient at the start: 1 / |gradient|.

    nutpie's initial mass matrix (nuts-rs, ``transform/adapt/diagonal.rs``: ``init`` calls
    ``update_diag_grad``, variance = 1 / |gradient|). For a Gaussian coordinate of scale s whose start
    lies D from its mean, |gradient| = D / s^2, so 1 / |gradient| = s^2 / D: the variance itself when
    D is about 1 (a start near the origin of the unconstrained space, means of order one), and s when
    the start lies within the typical set (D about s), halfway on a log scale between the identity and
    s^2. Either way a stiff coordinate no longer sets a tiny step size for every other one, as with
    the identity (electric's grade means, posterior sd about 0.002, made its first 100 warm-up
    transitions cost 650 to 1023 gradients each). ``pooled``: one matrix for every chain, from the
    chains' mean |gradient| (``pmean`` over the chain axis). A non-finite gradient gives 1.
    """
    size = jnp.abs(gradient)
    if pooled:
        size = jax.lax.pmean(size, axes)
    size = jnp.clip(size, *GRADIENT_METRIC_BOUNDS)
    return jnp.where(jnp.isfinite(size), 1.0 / size, 1.0)


def _update(adapt_update, adapt_final, pool_step: bool, axes=CHAINS):
    """The per-chain adaptation step for one stage code (a ``lax.switch`` over the codes).

    ``pool_step``: dual averaging sees the chains' mean acceptance, so every chain, started from one
    step size, keeps the same one. (Pooling the mass matrix is ``adapt_update``'s, through
    ``window_adaptation(pool_variances=...)``.)
    """

    def update(adapt: WindowState, code, position, acceptance, target):
        acceptance = jnp.where(jnp.isfinite(acceptance), acceptance, 0.0) + (BUILT_TARGET - target)
        if pool_step:
            acceptance = jax.lax.pmean(acceptance, axes)
        def sample():
            return adapt

        def fast():
            return adapt_update(adapt, 0, 0, position, acceptance)

        def slow():
            return adapt_update(adapt, 1, 0, position, acceptance)

        def window_end():
            return adapt_update(adapt, 1, 1, position, acceptance)

        def final():
            tuned = adapt_update(adapt, 0, 0, position, acceptance)
            step_size, inverse_mass = adapt_final(tuned)
            return tuned._replace(step_size=step_size, inverse_mass=inverse_mass)

        return jax.lax.switch(code + 1, (sample, fast, slow, window_end, final))

    return update


def _fresh_chains(positions, inverse_mass, step_size, key):
    """Chains at ``positions`` with a fresh window adaptation and a key each, as one small compiled
    program (``PROGRAMS``): run op by op, its dozen operations compiled one by one on a process's
    first call (0.49 to 0.56 s, against 0.24 to 0.32 s so)."""
    num_chains = positions.shape[0]
    adapt = _fresh_adaptation(inverse_mass, step_size, positions.shape[0])
    return positions, adapt, jax.random.split(key, num_chains)


def _branched_keys(keys, stream):
    return jax.vmap(jax.random.fold_in, in_axes=(0, None))(keys, stream)


def _fresh_adaptation(inverse_mass, step_size, num_chains: int) -> WindowState:
    imm = jnp.broadcast_to(inverse_mass, (num_chains, inverse_mass.shape[-1]))
    steps = jnp.broadcast_to(step_size, (num_chains,)).astype(imm.dtype)
    return jax.vmap(window_adaptation(BUILT_TARGET)[0])(imm, steps)


def _restarted_adaptation(inverse_mass, step_size):
    """A fresh window adaptation per chain from each chain's inverse mass (chains, dim) and step size."""
    return _fresh_adaptation(inverse_mass, step_size, inverse_mass.shape[0])


class SegmentSampler:
    """NUTS for one model in segments of ``segment_length`` transitions; one executable for every use."""

    def __init__(self, coords: Coordinates, config: NUTSConfig, segment_length: int):
        self.coords, self.config = coords, config
        self.segment_length = int(segment_length)
        self.num_compilations = 0
        # Seconds of the small programs that start chains and restart their adaptation (compiled on a
        # process's first call, 0.2 to 0.3 s, which no phase claimed): callers add them to their phases.
        self.setup_seconds = {"compile": 0.0, "run": 0.0}
        self._key = ("nuts_segment", coords.program_key, config.max_num_doublings, config.adaptation,
                     config.step_jitter, self.segment_length)

    # --- the program ----------------------------------------------------------------------------
    def _build(self):
        coords, config = self.coords, self.config
        kernel = bj_nuts.build_kernel()
        pool_mass = config.adaptation == "pooled"
        pool_step = config.adaptation in ("pooled", "pooled_step")

        def program(data, param, source, move, chains: Chains, codes, target, metric_below):
            bound = coords.with_data(data)
            # Chains given in ``source``'s coordinates are moved into ``param``'s first (exactly).
            positions = jax.lax.cond(
                move,
                lambda x: jax.vmap(lambda p: position_map(bound, source, param)(p)[0])(x),
                lambda x: x,
                chains.positions,
            )
            num_chains = positions.shape[0]
            # Collectives of the pooled adaptation reduce over every chain, on every device.
            axes = chain_axes(CHAINS, num_chains)
            pool = partial(pool_variances, axes=axes) if pool_mass else None
            adapt_update = _update(*window_adaptation(BUILT_TARGET, pool)[1:], pool_step, axes)

            def per_device(shared, chained):
                data, param, codes, target, metric_below = shared
                bound = coords.with_data(data)
                log_density = flat_log_density(bound, param)

                def original(x):
                    return bound.ravel_original(bound.to_original(bound.unravel(x), param))

                def one_chain(position, adapt, key):
                    state = bj_hmc.init(position, log_density)
                    # A select: the gradient is at hand (``init`` computed it). The program compiles in
                    # the same time as without it (electric, fresh processes: 3.8 s either way).
                    # ``metric_below``: 0 keeps the given metric, inf replaces it (``initial_metric``),
                    # a finite bound replaces only the elements the gradient says are stiffer ("stiff").
                    from_gradient = gradient_inverse_mass(state.logdensity_grad, pool_mass, axes)
                    adapt = adapt._replace(inverse_mass=jnp.where(
                        from_gradient < metric_below, from_gradient, adapt.inverse_mass))

                    def transition(carry, code):
                        state, adapt, key = carry
                        step_size = adapt.step_size
                        if config.step_jitter > 0.0:
                            key, sub, jitter_key = jax.random.split(key, 3)
                            step_size = step_size * (1.0 + config.step_jitter * jax.random.uniform(
                                jitter_key, minval=-1.0, maxval=1.0))
                        else:
                            key, sub = jax.random.split(key)
                        state, info = kernel(sub, state, log_density, step_size, adapt.inverse_mass,
                                             config.max_num_doublings)
                        adapt = adapt_update(adapt, code, state.position, info.acceptance_rate, target)
                        out = (original(state.position), info.num_integration_steps, info.acceptance_rate,
                               info.is_divergent)
                        return (state, adapt, key), out

                    # Padding (`SKIP`, only at a segment's end) is not run: the loop's trip count is the
                    # segment's active transitions, a runtime value shared by every chain (so no chain
                    # waits on a select), and padded rows of the outputs stay zero. Padding with draws
                    # ran up to a segment of transitions that were thrown away and whose gradients no
                    # count held (e.g. 200 transitions run for 60 + 100 asked; found in review), as in
                    # HMC's segments (`mcmc.hmc`).
                    length = codes.shape[0]
                    active = jnp.sum(codes != SKIP)
                    dtype = position.dtype
                    blank = (jnp.zeros((length, coords.original_dim), dtype), jnp.zeros((length,), jnp.int32),
                             jnp.zeros((length,), dtype), jnp.zeros((length,), bool))

                    def body(i, loop):
                        carry, outputs = loop
                        carry, row = transition(carry, codes[i])
                        outputs = jax.tree_util.tree_map(
                            lambda out, new: jax.lax.dynamic_update_index_in_dim(out, new.astype(out.dtype), i, 0),
                            outputs, row)
                        return carry, outputs

                    (state, adapt, key), out = jax.lax.fori_loop(0, active, body, ((state, adapt, key), blank))
                    return (state.position, adapt, key), out

                return jax.vmap(one_chain, axis_name=CHAINS)(*chained)

            # Each device runs its own chains' trajectories (``sharding.run_sharded`` says why).
            (pos, adapt, keys), out = run_sharded(per_device, num_chains,
                                                  (data, param, codes, target, metric_below),
                                                  (positions, chains.adapt, chains.keys))
            return Chains(pos, adapt, keys), out

        return program

    # --- running ---------------------------------------------------------------------------------
    def start(self, positions, inverse_mass, step_size: float, seed: int, stream: int = 0) -> Chains:
        """Chains at ``positions`` (chains, dim) with a fresh adaptation seeded by ``inverse_mass``; their
        keys come from ``seed``, folded with ``stream`` when it is not 0 (a second start in one run,
        which must not replay the first's random numbers)."""
        # JAX's default float, as the adaptation's own state is: float32 positions under jax_enable_x64
        # made the warm-up's branches disagree in type (found running the suite in 64 bits)
        positions = jnp.asarray(positions, dtype=float_dtype())
        num_chains = positions.shape[0]
        key = jax.random.fold_in(jax.random.PRNGKey(seed), stream) if stream else jax.random.PRNGKey(seed)
        args = (positions, jnp.asarray(inverse_mass, dtype=positions.dtype), jnp.asarray(step_size, dtype=positions.dtype),
                key)
        chains = self._setup(("nuts_fresh_chains",), lambda: _fresh_chains, args)
        return Chains(*shard_chains(tuple(chains), num_chains))

    def _setup(self, key, build, args):
        out, compile_seconds, run_seconds = PROGRAMS(key, build, args)
        self.num_compilations += compile_seconds > 0
        self.setup_seconds["compile"] += compile_seconds
        self.setup_seconds["run"] += run_seconds
        return out

    def branch(self, chains: Chains, stream: int) -> Chains:
        """The same chains on random streams of their own (each chain's key folded with ``stream``).

        A trial that may be thrown away (another parameterisation, a redraw, a run-on) runs on a
        branch: run on the chains' own keys, it consumed the random numbers the kept chains then went
        on with, so the kept draws reused numbers that had decided the trial's fate (found in review).
        """
        keys = self._setup(("nuts_branched_keys",), lambda: _branched_keys,
                           (chains.keys, jnp.asarray(stream, jnp.uint32)))
        return chains._replace(keys=shard_chains(keys, chains.positions.shape[0]))

    def restart_adaptation(self, chains: Chains, inverse_mass=None) -> Chains:
        """Fresh dual averaging from each chain's step size (e.g. after moving to a new parameterisation)."""
        num_chains, dim = chains.positions.shape
        imm = chains.adapt.inverse_mass if inverse_mass is None else jnp.asarray(inverse_mass,
                                                                                 dtype=chains.positions.dtype)
        # One placement for the metric whether it is the chains' (sharded) or a new one (a unit
        # metric for CP or NCP): the program compiled for one refused the other on a host with two
        # devices (found in review).
        imm = shard_chains(jnp.broadcast_to(imm, (num_chains, dim)), num_chains)
        adapt = self._setup(("nuts_restarted_adaptation",), lambda: _restarted_adaptation,
                            (imm, chains.adapt.step_size))
        # Placed across devices as ``start`` places the chains: the fresh state came back replicated,
        # and the program compiled for sharded chains refused it (every ``auto`` run on a host with
        # more than one device; found in review).
        return chains._replace(adapt=shard_chains(adapt, chains.positions.shape[0]))

    def run(self, param: Parameterisation, chains: Chains, codes: np.ndarray,
            source: Parameterisation | None = None, progress=None,
            target_accept: float | None = None,
            metric_from_gradient: bool = False) -> tuple[Chains, SegmentDraws, dict]:
        """Run the transitions ``codes`` from ``chains``, in segments of one compiled program.

        A length that is not a multiple of ``segment_length`` is completed with padding (`SKIP`) that
        does not run: the output holds exactly the transitions of ``codes``.
        ``source``: the parameterisation ``chains`` are in, when it differs from ``param``.
        ``progress(transitions, draws)`` is called after every segment (e.g. a progress bar's update).
        ``target_accept``: the mean acceptance the step size adapts to (default: the config's).
        ``metric_from_gradient``: a start without a fitted metric: before the first transition, replace
        the elements of the adaptation's inverse mass matrix that ``config.initial_metric`` picks
        (``metric_bound``) by ``gradient_inverse_mass`` at the chains' positions.
        Returns the chains after the last transition, the draws, and compile / run seconds.
        """
        codes = np.asarray(codes, dtype=np.int32)
        if codes.size == 0:
            num_chains = chains.positions.shape[0]
            empty = SegmentDraws(np.zeros((num_chains, 0, self.coords.original_dim), float_dtype()),
                                 *(np.zeros((num_chains, 0), dtype) for dtype in (np.int32, float_dtype(), bool)))
            return chains, empty, {"compile": 0.0, "run": 0.0}
        length = self.segment_length
        padded = -(-codes.size // length) * length
        wanted = codes.size
        codes = np.concatenate([codes, np.full(padded - codes.size, SKIP, np.int32)])
        move = source is not None
        source = param if source is None else source
        target = jnp.asarray(self.config.target_accept if target_accept is None else target_accept, float_dtype())
        parts, seconds = [], {"compile": 0.0, "run": 0.0}
        metric_below = metric_bound(self.config.initial_metric) if metric_from_gradient else 0.0
        for start in range(0, padded, length):
            args = (self.coords.data, param, source, jnp.asarray(move), chains,
                    jnp.asarray(codes[start:start + length]), target, jnp.asarray(metric_below, float_dtype()))
            (chains, out), c, t = PROGRAMS(self._key, self._build, args)
            self.num_compilations += c > 0
            seconds["compile"] += c
            seconds["run"] += t
            ran = min(length, wanted - start)
            parts.append((out, ran))
            move, source, metric_below = False, param, 0.0
            if progress is not None:
                progress(ran, out)  # padded rows are zeros: no divergence among them
        draws = SegmentDraws(*(np.concatenate([np.asarray(out[i])[:, :ran] for out, ran in parts], axis=1)
                               for i in range(4)))
        return chains, draws, seconds

"""NUTS one leapfrog step at a time, so that vectorised chains stop waiting for each other.

BlackJAX's NUTS (``blackjax.mcmc.nuts``: multinomial sampling, Betancourt 2017; iterative trajectory
expansion with NumPyro's checkpointed U-turn test, Phan et al. 2019) builds a transition in two
nested ``while`` loops: doublings, and leapfrog steps within a doubling. ``vmap`` over chains runs
each loop until the *last* chain is done, so every transition costs every chain the longest
trajectory among them (issue 9 measured 27-50% of the model's raw gradient throughput on 16 chains).

Here the same algorithm is a state machine whose one move is a single leapfrog step (after
Radul et al. 2020, "Automatically batching control-flow intensive programs"): a step either extends
the current subtrajectory, or also closes it (merges it into the trajectory, draws from it, tests
the U-turn), or also ends the transition (records the draw, adapts, and begins the next transition
by drawing a momentum). Each chain keeps its own count of transitions, so chains drift apart freely
and wait only once, at the end of a segment of many transitions.

It is the same Markov chain as BlackJAX's kernel, key for key: every random number is derived from
the chain's key exactly as ``blackjax.mcmc.nuts.build_kernel``, ``trajectory.dynamic_*`` and the
proposal samplers derive theirs, and the pieces that do the arithmetic (integrator, metric,
proposals, U-turn checkpoints) are BlackJAX's own. ``tests/mcmc/test_nuts_steps.py`` checks that the
draws, step counts and acceptance statistics equal the scanned kernel's.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
from blackjax.mcmc import integrators, metrics
from blackjax.mcmc.integrators import IntegratorState
from blackjax.mcmc.proposal import Proposal, progressive_uniform_sampling, proposal_generator
from blackjax.mcmc.termination import IterativeUTurnState, iterative_uturn_numpyro
from blackjax.mcmc.trajectory import Trajectory, append_to_trajectory, hmc_energy, merge_trajectories
from blackjax.util import linear_map

DIVERGENCE_THRESHOLD = 1000.0  # BlackJAX's default for NUTS


class Randomness(NamedTuple):
    """One chain's random numbers for a segment's transitions, drawn before its loop.

    Derived from the chain's key as BlackJAX derives them (so the chain is the scanned kernel's), but
    in bulk: drawn inside the step-wise loop they would be drawn at every step for every chain and
    discarded by all but the few chains that begin a transition or a doubling there.
    """

    noise: jax.Array  # (transitions, dim) standard normals of each transition's momentum
    direction: jax.Array  # (transitions, max doublings) +1 or -1
    trajectory_key: jax.Array  # (transitions, max doublings, 2): keys of the uniform draws inside a doubling
    proposal_uniform: jax.Array  # (transitions, max doublings): the uniform of the biased draw closing a doubling


def draw_randomness(key, length: int, dim: int, max_num_doublings: int, dtype) -> tuple[Randomness, jax.Array]:
    """A chain's ``Randomness`` for ``length`` transitions, and its key after them."""

    def transition(key, _):
        key, sub = jax.random.split(key)  # the caller of the kernel (``mcmc.segments``)
        key_momentum, key_integrator = jax.random.split(sub, 2)  # nuts.build_kernel.kernel
        noise = jax.random.normal(key_momentum, (dim,), dtype)  # util.generate_gaussian_noise

        def expansion(e):  # trajectory.dynamic_multiplicative_expansion.expand_once
            direction_key, trajectory_key, proposal_key = jax.random.split(jax.random.fold_in(key_integrator, e), 3)
            # ``jax.random.bernoulli(key, p)`` is ``uniform(key, (), dtype(p)) < p``: the uniform is drawn here
            return (jnp.where(jax.random.bernoulli(direction_key), 1, -1).astype(jnp.int32), trajectory_key,
                    jax.random.uniform(proposal_key, (), dtype))

        return key, (noise, *jax.vmap(expansion)(jnp.arange(max_num_doublings)))

    key, drawn = jax.lax.scan(transition, key, None, length=length)
    return Randomness(*drawn), key


class Walk(NamedTuple):
    """Where one chain is inside its current transition."""

    initial_energy: jax.Array  # H at the transition's start
    proposal: Proposal  # the draw so far, from the merged subtrajectories
    trajectory: Trajectory  # the merged trajectory so far
    expansion: jax.Array  # doublings completed
    direction: jax.Array  # +1 or -1, of the subtrajectory being built
    trajectory_key: jax.Array
    proposal_uniform: jax.Array
    step: jax.Array  # leapfrog steps taken in the subtrajectory being built
    sub_proposal: Proposal
    sub_trajectory: Trajectory


class Position(NamedTuple):
    """A chain's state between transitions (BlackJAX's ``HMCState``)."""

    position: jax.Array
    logdensity: jax.Array
    logdensity_grad: jax.Array


def _biased_sampling(uniform, proposal: Proposal, new_proposal: Proposal) -> Proposal:
    """``blackjax.mcmc.proposal.progressive_biased_sampling`` with its Bernoulli's uniform given."""
    p_accept = jnp.clip(jnp.exp(new_proposal.weight - proposal.weight), max=1)
    kept = _select(uniform < p_accept, new_proposal, proposal)
    return Proposal(kept.state, kept.energy, jnp.logaddexp(proposal.weight, new_proposal.weight),
                    jnp.logaddexp(proposal.sum_log_p_accept, new_proposal.sum_log_p_accept))


def _select(flag, on_true, on_false):
    return jax.tree.map(lambda a, b: jnp.where(flag, a, b), on_true, on_false)


def build(log_density: Callable, max_num_doublings: int):
    """Functions to begin a transition and to advance a chain by one leapfrog step.

    ``begin(state, randomness, transition, inverse_mass) -> walk`` gives transition number
    ``transition`` (of the segment whose ``Randomness`` is given) its momentum and sets up its first
    doubling. ``advance(walk, termination, randomness, transition, step_size, inverse_mass) -> (walk,
    termination, done, (state, steps, acceptance, divergent))`` takes one step; when ``done``, the
    transition ended and the tuple is its result (BlackJAX's new ``HMCState`` and ``NUTSInfo``
    fields), else it is junk. The U-turn checkpoints (``termination``) are kept apart from the walk:
    within a subtrajectory every checkpoint is written before it is read, so they never need
    resetting, and the step-wise loop updates them in place instead of copying them at every
    branch (copies that grew with the dimension and dominated the cost of a step).
    """
    new_termination, update_termination, is_turning_subtree = iterative_uturn_numpyro(None)

    def parts(inverse_mass):
        metric = metrics.default_metric(inverse_mass)
        integrator = integrators.velocity_verlet(log_density, metric.kinetic_energy)
        _, generate_proposal = proposal_generator(hmc_energy(metric.kinetic_energy))

        _, _, criterion = iterative_uturn_numpyro(metric.check_turning)
        return metric, integrator, generate_proposal, criterion

    def begin_expansion(walk: Walk, generate_proposal, randomness: Randomness, transition) -> Walk:
        # trajectory.dynamic_multiplicative_expansion.expand_once
        e = jnp.minimum(walk.expansion, max_num_doublings - 1)
        direction = randomness.direction[transition, e]
        trajectory_key, proposal_uniform = randomness.trajectory_key[transition, e], randomness.proposal_uniform[transition, e]
        start = _select(direction > 0, walk.trajectory.rightmost_state, walk.trajectory.leftmost_state)
        return walk._replace(
            direction=direction, trajectory_key=trajectory_key, proposal_uniform=proposal_uniform,
            step=jnp.zeros_like(walk.step),
            sub_proposal=generate_proposal(walk.initial_energy, start),
            sub_trajectory=Trajectory(start, start, start.momentum, jnp.zeros_like(walk.trajectory.num_states)),
        )

    def begin(state: Position, randomness: Randomness, transition, inverse_mass) -> Walk:
        metric, _, generate_proposal, _ = parts(inverse_mass)
        # nuts.build_kernel.kernel and iterative_nuts_proposal.propose; the momentum as
        # metrics.gaussian_euclidean draws it (0 + M^(1/2) z)
        mass_matrix_sqrt, _, _ = metrics._format_covariance(inverse_mass, is_inv=True)
        momentum = 0.0 + linear_map(mass_matrix_sqrt, randomness.noise[jnp.minimum(transition, randomness.noise.shape[0] - 1)])
        initial = IntegratorState(state.position, momentum, state.logdensity, state.logdensity_grad)
        energy = -state.logdensity + metric.kinetic_energy(momentum)
        dtype = energy.dtype
        proposal = Proposal(initial, energy, jnp.zeros((), dtype), jnp.full((), -jnp.inf, dtype))
        trajectory = Trajectory(initial, initial, momentum, jnp.zeros((), jnp.int32))
        blank_key = randomness.trajectory_key[0, 0]
        walk = Walk(energy, proposal, trajectory, jnp.zeros((), jnp.int32), jnp.ones((), jnp.int32), blank_key,
                    jnp.zeros((), dtype), jnp.zeros((), jnp.int32), proposal, trajectory)
        return begin_expansion(walk, generate_proposal, randomness, jnp.minimum(transition, randomness.noise.shape[0] - 1))

    def new_checkpoints(position) -> IterativeUTurnState:
        blank = new_termination(IntegratorState(position, position, None, None), max_num_doublings)
        return blank._replace(idx_min=jnp.zeros((), jnp.int32), idx_max=jnp.zeros((), jnp.int32))

    def advance(walk: Walk, termination: IterativeUTurnState, randomness: Randomness, transition, step_size,
                inverse_mass):
        metric, integrator, generate_proposal, criterion = parts(inverse_mass)
        # trajectory.dynamic_progressive_integration.add_one_state
        k = walk.step
        new_state = integrator(walk.sub_trajectory.rightmost_state, walk.direction * step_size)
        new_proposal = generate_proposal(walk.initial_energy, new_state)
        is_diverging = -new_proposal.weight > DIVERGENCE_THRESHOLD
        first = k == 0
        sub_trajectory = _select(first, Trajectory(new_state, new_state, new_state.momentum,
                                                   jnp.ones_like(walk.sub_trajectory.num_states)),
                                 append_to_trajectory(walk.sub_trajectory, new_state))
        sub_proposal = _select(first, new_proposal, progressive_uniform_sampling(
            jax.random.fold_in(walk.trajectory_key, k), walk.sub_proposal, new_proposal))
        termination = update_termination(termination, sub_trajectory.momentum_sum, new_state.momentum, k)
        has_terminated = criterion(termination, sub_trajectory.momentum_sum, new_state.momentum)
        k = k + 1
        subtree_done = (k >= 2 ** walk.expansion) | has_terminated | is_diverging

        # the end of the subtrajectory: expand_once after trajectory_integrator returns
        oriented = _select(walk.direction > 0, sub_trajectory, Trajectory(
            sub_trajectory.rightmost_state, sub_trajectory.leftmost_state, sub_trajectory.momentum_sum,
            sub_trajectory.num_states))
        rejected = walk.proposal._replace(sum_log_p_accept=jnp.logaddexp(walk.proposal.sum_log_p_accept,
                                                                         sub_proposal.sum_log_p_accept))
        proposal = _select(is_diverging | has_terminated, rejected,
                           _biased_sampling(walk.proposal_uniform, walk.proposal, sub_proposal))
        left, right = _select(walk.direction > 0, (walk.trajectory, oriented), (oriented, walk.trajectory))
        merged = merge_trajectories(left, right)
        is_turning = metric.check_turning(merged.leftmost_state.momentum, merged.rightmost_state.momentum,
                                          merged.momentum_sum)
        expansion = walk.expansion + 1
        done = subtree_done & ((expansion >= max_num_doublings) | is_diverging | has_terminated | is_turning)

        within = walk._replace(step=k, sub_proposal=sub_proposal, sub_trajectory=sub_trajectory)
        closed = within._replace(proposal=proposal, trajectory=merged, expansion=expansion)
        walk = _select(subtree_done & ~done, begin_expansion(closed, generate_proposal, randomness, transition),
                       _select(subtree_done, closed, within))
        # iterative_nuts_proposal.propose: the acceptance statistic over the whole trajectory
        acceptance = jnp.exp(proposal.sum_log_p_accept) / merged.num_states
        result = (Position(proposal.state.position, proposal.state.logdensity, proposal.state.logdensity_grad),
                  merged.num_states, acceptance, is_diverging)
        return walk, termination, done, result

    return begin, advance, new_checkpoints


def run_transitions(log_density: Callable, max_num_doublings: int, adapt_update: Callable,
                    positions, adapts, keys, codes, target):
    """``len(codes)`` NUTS transitions of every chain, with adaptation after each (``mcmc.segments``).

    ``positions`` (chains, dim), ``adapts`` (a batched ``WindowState``) and ``keys`` (chains, 2) are
    the chains' states; ``adapt_update(adapt, code, position, acceptance, target)`` is the stage-code
    adaptation step. One ``while`` loop runs until every chain has made ``len(codes)`` transitions;
    each iteration advances every unfinished chain by one leapfrog step. Returns the positions,
    adaptations and keys after the last transition and, per chain and transition, the position
    (unconstrained), integrator steps, acceptance statistic and divergence flag.
    """
    begin, advance, new_checkpoints = build(log_density, max_num_doublings)
    length = codes.shape[0]
    num_chains, dim = positions.shape
    chain_index = jnp.arange(num_chains)
    randomness, keys = jax.vmap(lambda key: draw_randomness(key, length, dim, max_num_doublings, positions.dtype))(keys)

    def start(position, adapt, randomness):
        logdensity, grad = jax.value_and_grad(log_density)(position)
        state = Position(position, logdensity, grad)
        return state, begin(state, randomness, 0, adapt.inverse_mass), new_checkpoints(position)

    def step(walk, termination, adapt, count, randomness):
        return advance(walk, termination, randomness, count, adapt.step_size, adapt.inverse_mass)

    def finish(state, walk, adapt, count, randomness, done, new_state, acceptance):
        new_adapt = adapt_update(adapt, codes[jnp.minimum(count, length - 1)], new_state.position, acceptance, target)
        next_walk = begin(new_state, randomness, count + 1, new_adapt.inverse_mass)
        return _select(done, (new_state, next_walk, new_adapt, count + 1), (state, walk, adapt, count))

    def body(carry):
        chains, terminations, buffers = carry
        states, walks, adapts, counts = chains
        active = counts < length
        walks, terminations, done, result = jax.vmap(step)(walks, terminations, adapts, counts, randomness)
        done = done & active
        new_states, steps, acceptance, divergent = result
        # Ending a transition (adaptation, the next momentum) is skipped in the steps where no chain ends one.
        stepped = jax.lax.cond(
            jnp.any(done), lambda: jax.vmap(finish)(states, walks, adapts, counts, randomness, done, new_states,
                                                    acceptance),
            lambda: (states, walks, adapts, counts))
        # A chain that has made its transitions stands still.
        chains = _select_chains(active, stepped, chains)
        # Each ended transition writes its row; the others aim past the end and are dropped (no copy).
        row = jnp.where(done, counts, length)
        buffers = tuple(b.at[chain_index, row].set(r, mode="drop")
                        for b, r in zip(buffers, (new_states.position, steps, acceptance, divergent)))
        return chains, terminations, buffers

    states, walks, terminations = jax.vmap(start)(positions, adapts, randomness)
    buffers = (jnp.zeros((num_chains, length, dim), positions.dtype), jnp.zeros((num_chains, length), jnp.int32),
               jnp.zeros((num_chains, length), positions.dtype), jnp.zeros((num_chains, length), bool))
    chains = (states, walks, adapts, jnp.zeros((num_chains,), jnp.int32))
    (states, _, adapts, _), _, buffers = jax.lax.while_loop(
        lambda carry: jnp.any(carry[0][3] < length), body, (chains, terminations, buffers))
    return states.position, adapts, keys, buffers


def _select_chains(mask, on_true, on_false):
    """Per chain (the leading axis), ``on_true`` where ``mask`` else ``on_false``."""
    def pick(a, b):
        return jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), a, b)

    return jax.tree.map(pick, on_true, on_false)

"""Stan's windowed warm-up per space, per-space L, and iHMC's exactness deep in a funnel's neck."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.config import HMCConfig
from autoreparam.mcmc.cycle import build_cycle_kernel
from autoreparam.mcmc.hmc import CycleSampler
from autoreparam.mcmc.programs import PROGRAMS
from autoreparam.models import eight_schools
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model

from mcmc_helpers import SCALES


def test_window_adaptation_learns_the_posterior_variances_from_a_wrong_seed(gaussian_coords):
    coords = gaussian_coords
    param = Parameterisation.centred(coords.plan)
    config = HMCConfig(num_warmup=1000, num_samples=500, step_size_rule="window")
    seed_variances = np.ones(3)  # wrong by 100x for the first and last coordinate
    start = np.zeros((4, 3), np.float32)
    result = CycleSampler(coords, 1, config).run((param,), seed_variances, start, 4, seed=0)
    adapted = result.inverse_mass[:, 0, :]  # (chains, dim)
    # Stan's regularised Welford estimate from the last slow window (~500 draws at L=4, ESS in the
    # hundreds): within 35% of the true variance on every chain and coordinate.
    assert np.all(np.abs(adapted / SCALES**2 - 1.0) < 0.35), adapted
    assert 0.7 < result.acceptance.mean() < 0.99  # dual averaging towards a mean of 0.8 (Stan ends above it)
    assert result.divergences.sum() == 0


def test_the_sign_rule_keeps_q_as_the_mass_matrix(gaussian_coords):
    coords = gaussian_coords
    param = Parameterisation.centred(coords.plan)
    config = HMCConfig(num_warmup=200, num_samples=50, step_size_rule="sign")
    result = CycleSampler(coords, 1, config).run((param,), SCALES**2, np.zeros((2, 3), np.float32), 2, seed=0)
    assert np.allclose(result.inverse_mass[:, 0, :], SCALES**2)


@pytest.fixture(scope="module")
def schools():
    sigma = jnp.array([15, 10, 16, 11, 9, 11, 10, 18.0])
    y = jnp.array([28, 8, -3, 7, -1, 1, 18, 12.0])
    coords = Coordinates(eight_schools, (sigma,), {"y": y}, select_sites(analyse_model(eight_schools, sigma, y=y), "default"))
    return coords, (Parameterisation.centred(coords.plan), Parameterisation.non_centred(coords.plan))


def test_ihmc_spends_the_sum_of_each_halfs_leapfrog_steps(schools):
    coords, params = schools
    config = HMCConfig(num_warmup=30, num_samples=20)
    x0 = np.zeros((2, coords.dim), np.float32)
    result = CycleSampler(coords, 2, config).run(params, np.ones((2, coords.dim)), x0, (1, 4), seed=0)
    assert result.num_leapfrog == (1, 4)
    assert np.all(result.grad_evals == 5 * 20)
    assert result.space_divergences.shape == (2, 2)


def _neck_state(coords, params, init):
    """A CycleState at log_tau = -16: theta - mu is far below float32's resolution at mu = 5."""
    ncp = {"mu": jnp.array(5.0), "log_tau": jnp.array(-16.0), "theta": jnp.linspace(-1.5, 1.5, 8)}
    v, _, _ = coords.to_cp(ncp, params[1])
    return init(coords.ravel(v)), coords.ravel(ncp)


@pytest.mark.float32
def test_a_round_trip_through_the_centred_coordinates_loses_the_neck_in_float32(schools):
    # Why the cycle keeps each space's own representation: moving NCP -> CP -> NCP is not exact here.
    coords, params = schools
    ncp = {"mu": jnp.array(5.0), "log_tau": jnp.array(-16.0), "theta": jnp.linspace(-1.5, 1.5, 8)}
    v, _, _ = coords.to_cp(ncp, params[1])
    back, _, _ = coords.from_cp(v, params[1])
    assert not np.allclose(np.asarray(back["theta"]), np.asarray(ncp["theta"]), atol=1e-2)


def test_a_rejected_half_step_leaves_the_other_spaces_representation_exact(schools):
    coords, params = schools
    init, step = build_cycle_kernel(coords, params)
    state = init(coords.ravel(coords.from_cp(coords.to_cp(
        {"mu": jnp.array(5.0), "log_tau": jnp.array(-16.0), "theta": jnp.linspace(-1.5, 1.5, 8)}, params[1])[0],
        params[0])[0]))
    # Give the NCP half the exact neck point (as it would hold after its own accepted move).
    exact = {"mu": jnp.array(5.0), "log_tau": jnp.array(-16.0), "theta": jnp.linspace(-1.5, 1.5, 8)}
    ncp_state = state.spaces[1]._replace(position=coords.ravel(exact))
    state = state._replace(spaces=(state.spaces[0], ncp_state))
    # A huge CP step size: the CP half diverges and is rejected; the NCP step size is ~0 so the NCP
    # half's own move is negligible. The NCP representation must survive the CP half bit for bit.
    log_steps = jnp.log(jnp.array([50.0, 1e-30]))
    inverse_mass = jnp.ones((2, coords.dim))
    new, info = jax.jit(step)(jax.random.PRNGKey(0), state, log_steps, inverse_mass, jnp.array([3, 1]))
    assert bool(info.is_divergent[0])
    np.testing.assert_allclose(np.asarray(new.spaces[1].position), np.asarray(coords.ravel(exact)), rtol=1e-6)


@pytest.mark.float32
def test_a_window_whose_variance_overflows_keeps_the_metric_in_force():
    """Generated program 425: a chain at 1e19 in a funnel's neck made a window's variance inf, every
    step length 0, and every chain froze."""
    from autoreparam.mcmc.warmup import window_adaptation

    init, update, _ = window_adaptation(0.8)
    state = init(jnp.asarray([1.0, 2.0, 3.0]), 0.5)
    for position in ([0.0, 0.0, 1.0], [1.0, -1.0, 2e19], [2.0, 1.0, -3e19]):
        state = update(state, 1, 0, jnp.asarray(position), 0.8)
    state = update(state, 1, 1, jnp.asarray([1.0, 0.0, 1e19]), 0.8)
    imm = np.asarray(state.inverse_mass)
    assert np.all(np.isfinite(imm)) and imm[2] == 3.0  # the overflowed element keeps its metric
    assert imm[0] != 1.0 and imm[1] != 2.0  # the others take the window's estimate
    assert np.array_equal(np.asarray(state.mass.inverse_mass_matrix), imm)


def test_dual_averaging_with_no_update_keeps_the_initial_step_size():
    """BlackJAX's running average starts at log 1 = 0: with no adaptation step (adapt_fraction 0, or one
    warm-up transition) the final step size was 1 whatever the initial one (found in review)."""
    from autoreparam.mcmc.step_size import dual_averaging_rule

    rule = dual_averaging_rule(0.8)
    state = rule.init(jnp.log(1.0 / 16))
    assert float(jnp.exp(rule.final(state))) == pytest.approx(1.0 / 16)
    adapted = rule.update(state, 0.9)  # after an update, the running average is the step size used
    assert float(rule.final(adapted)) == pytest.approx(float(adapted.log_step_size_avg))


def test_a_short_warm_up_from_a_good_metric_ends_at_a_step_size_the_chains_can_use(gaussian_coords):
    """num_warmup=20 leaves 2 dual-averaging updates after the last window's restart, whose average sat
    3 to 6 times above a stable step: 6 of 8 chains accepted almost nothing (found in review)."""
    param = Parameterisation.centred(gaussian_coords.plan)
    config = HMCConfig(num_warmup=20, num_samples=200, step_size_rule="window")
    result = CycleSampler(gaussian_coords, 1, config).run((param,), SCALES**2, np.zeros((8, 3), np.float32), 4,
                                                          seed=3)
    assert np.all(result.acceptance.mean(axis=-1) > 0.3), result.acceptance.mean(axis=-1)
    assert np.sum(result.divergences) == 0


def test_young_dual_averaging_is_not_trusted_above_its_start():
    from autoreparam.mcmc.step_size import MIN_SETTLED_UPDATES, dual_averaging_rule

    rule = dual_averaging_rule(0.8)
    state = rule.init(jnp.log(0.5))
    for _ in range(2):
        state = rule.update(state, 1.0)  # all accepted: the exploration aims at 10x the start
    assert float(state.log_step_size_avg) > float(jnp.log(0.5)) + 0.5  # what BlackJAX would end with
    assert float(rule.final(state)) == pytest.approx(float(jnp.log(0.5)))
    for _ in range(MIN_SETTLED_UPDATES):
        state = rule.update(state, 1.0)
    assert float(rule.final(state)) == pytest.approx(float(state.log_step_size_avg))


def test_stan_schedule_is_blackjaxs_value_for_value():
    from blackjax.adaptation.staged_adaptation import build_schedule

    from autoreparam.mcmc.warmup import stan_schedule

    # Every length below 160 (no adaptation below 20, resized windows below 150), then lengths around
    # each place where the slow windows' layout changes (the 25-step steps of the windows' ends) and a
    # stride between them: BlackJAX builds its schedule op by op, 18 ms a length, and all 400 lengths
    # took 8 s of the suite.
    boundaries = [n + d for n in range(175, 425, 25) for d in (-1, 0, 1)]
    lengths = sorted({*range(0, 160), *range(160, 400, 7), *boundaries, 499, 500, 501, 999, 1000, 1001, 1234, 2000, 5000})
    for num_warmup in lengths:
        expected = np.asarray(build_schedule(num_warmup), dtype=np.int32).reshape(num_warmup, 2)
        got = stan_schedule(num_warmup)
        assert got.dtype == np.int32 and got.shape == (num_warmup, 2)
        np.testing.assert_array_equal(got, expected, err_msg=f"num_warmup={num_warmup}")


def test_a_run_in_chunks_draws_what_one_call_draws_and_shares_the_pilots_programs(schools):
    """The oracle's pilots and its final run differ only in their number of draws; in chunks of the
    pilots' length the final run compiles nothing new and its draws are bit for bit those of one call.
    One program runs the warm-up and the draws: the pilot compiles it once. The run in one call pads
    its warm-up's second segment (30 iterations in segments of 20) with iterations that are not run,
    and still draws what the run in segments of 10 draws."""
    coords, params = schools
    x0 = np.zeros((2, coords.dim), np.float32)
    # Another test may have compiled segments of 10 already: start from an empty cache, so that the
    # count below does not depend on which tests ran before this one.
    PROGRAMS.clear()
    pilot = CycleSampler(coords, 2, HMCConfig(num_warmup=30, num_samples=10))
    pilot.run(params, np.ones((2, coords.dim)), x0, (1, 4), seed=0)
    assert pilot.num_compilations == 1
    chunked = CycleSampler(coords, 2, HMCConfig(num_warmup=30, num_samples=20), chunk=10)
    in_chunks = chunked.run(params, np.ones((2, coords.dim)), x0, (1, 4), seed=1)
    assert chunked.num_compilations == 0
    # Segments of 20 (the programs of test_ihmc_spends_the_sum_of_each_halfs_leapfrog_steps, if it ran first).
    whole = CycleSampler(coords, 2, HMCConfig(num_warmup=30, num_samples=20)).run(
        params, np.ones((2, coords.dim)), x0, (1, 4), seed=1)
    assert in_chunks.draws.shape == whole.draws.shape == (2, 20, coords.original_dim)
    np.testing.assert_array_equal(in_chunks.draws, whole.draws)
    np.testing.assert_array_equal(in_chunks.draw_stats["diverging"], whole.draw_stats["diverging"])
    with pytest.raises(ValueError, match="chunk must divide"):
        CycleSampler(coords, 2, HMCConfig(num_warmup=30, num_samples=30), chunk=7)


def test_pilots_and_final_run_share_a_chunk_only_when_it_is_long_enough():
    from autoreparam.sampling import MIN_SHARED_CHUNK, pilot_length, shared_chunk

    assert shared_chunk(1000, pilot_length(1000)) == 125  # the final run: 8 calls of the pilots' program
    assert shared_chunk(2000, pilot_length(2000)) == 250
    assert shared_chunk(150, pilot_length(150)) == 50  # pilots of 100 draws run in 2 calls
    assert shared_chunk(101, pilot_length(101)) is None  # 101 calls of one draw would cost more than a compile
    assert all(shared_chunk(n, pilot_length(n)) is None or shared_chunk(n, pilot_length(n)) >= MIN_SHARED_CHUNK
               for n in range(1, 3000, 7))


def test_segments_pad_the_last_one_with_iterations_that_do_nothing():
    from autoreparam.mcmc.hmc import DRAW, SKIP, WARM, segment_plan

    codes, stages = np.full(7, WARM, np.int32), np.arange(14, dtype=np.int32).reshape(7, 2)
    plan = segment_plan(codes, stages, 3)
    assert [c.tolist() for c, _ in plan] == [[WARM] * 3, [WARM] * 3, [WARM, SKIP, SKIP]]
    assert plan[2][1].tolist() == [[12, 13], [0, 0], [0, 0]]
    assert [c.tolist() for c, _ in segment_plan(np.full(4, DRAW, np.int32), np.zeros((4, 2), np.int32), 2)] == \
        [[DRAW] * 2] * 2

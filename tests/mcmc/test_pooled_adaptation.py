"""NUTS whose chains share one adapted step size and mass matrix (``NUTSConfig(adaptation="pooled")``),
or only the step size (``"pooled_step"``)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from blackjax.adaptation.mass_matrix import mass_matrix_adaptation

from autoreparam.errors import ArgumentError
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.nuts import NUTSSampler
from autoreparam.mcmc.segments import CHAINS, pool_variances
from autoreparam.reparam.parameterisation import Parameterisation

from mcmc_helpers import SCALES


def test_pooled_variances_are_those_of_all_chains_draws_together():
    # Chains whose draws differ in mean and spread: the pooled estimate must include the spread
    # between the chains' means, which averaging the chains' own variances would miss.
    draws = np.random.default_rng(0).normal(size=(4, 50, 3)) * [[[1.0]], [[2.0]], [[0.5]], [[1.0]]]
    draws += np.arange(4.0)[:, None, None]
    init, update, _ = mass_matrix_adaptation(is_diagonal_matrix=True)

    def welford(chain_draws):
        return jax.lax.fori_loop(0, chain_draws.shape[0], lambda i, m: update(m, chain_draws[i]), init(3))

    pooled = jax.vmap(lambda d: pool_variances(welford(d)), axis_name=CHAINS)(jnp.asarray(draws))
    welford_state = pooled.wc_state
    assert np.all(np.asarray(welford_state.sample_size) == 200)
    variances = np.asarray(welford_state.m2) / (200 - 1)
    expected = draws.reshape(200, 3).var(axis=0, ddof=1)
    np.testing.assert_allclose(variances, np.broadcast_to(expected, (4, 3)), rtol=1e-4)


@pytest.mark.parametrize("adaptation", ["per_chain", "pooled", "pooled_step"])
def test_pooled_chains_share_one_step_size_and_mass_matrix(gaussian_coords, adaptation):
    coords = gaussian_coords
    config = NUTSConfig(num_warmup=1000, num_samples=100, adaptation=adaptation)
    start = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    result = NUTSSampler(coords, config).run(Parameterisation.centred(coords.plan), np.ones(3), start, seed=0)
    step_sizes, inverse_mass = result.step_size[:, 0], result.inverse_mass[:, 0, :]
    assert np.allclose(step_sizes, step_sizes[0]) == (adaptation != "per_chain"), step_sizes
    assert np.allclose(inverse_mass, inverse_mass[0]) == (adaptation == "pooled"), inverse_mass
    # Either way the adapted variances are the posterior's (Stan's regularised estimate, within 35%).
    assert np.all(np.abs(inverse_mass / SCALES**2 - 1.0) < 0.35), inverse_mass


def test_an_unknown_adaptation_or_a_jitter_outside_0_1_is_refused_by_name():
    with pytest.raises(ArgumentError, match="adaptation must be one of"):
        NUTSConfig(adaptation="shared")
    with pytest.raises(ArgumentError, match="step_jitter must lie in"):
        NUTSConfig(step_jitter=1.0)


def test_the_programs_that_start_chains_count_as_compilation_once(gaussian_coords):
    """Starting chains and restarting their adaptation are small compiled programs (0.2 to 0.3 s on a
    process's first call); their seconds reach the phases (``setup_seconds``) instead of none."""
    from autoreparam.mcmc.programs import PROGRAMS
    from autoreparam.mcmc.segments import SegmentSampler

    PROGRAMS.clear()
    config = NUTSConfig(num_warmup=20, num_samples=20)
    sampler = SegmentSampler(gaussian_coords, config, 10)
    x = np.zeros((3, gaussian_coords.dim), np.float32)
    chains = sampler.start(x, np.ones(gaussian_coords.dim), 1.0, seed=0)
    first = sampler.setup_seconds["compile"]
    assert first > 0.0 and sampler.num_compilations == 1
    chains = sampler.restart_adaptation(chains)
    sampler.restart_adaptation(chains, np.ones(gaussian_coords.dim))  # the same program, given a metric
    assert sampler.num_compilations == 2
    sampler.start(x + 1.0, np.ones(gaussian_coords.dim), 0.5, seed=1)
    assert sampler.num_compilations == 2 and sampler.setup_seconds["run"] > 0.0
    result = NUTSSampler(gaussian_coords, config).run(Parameterisation.centred(gaussian_coords.plan),
                                                      np.ones(gaussian_coords.dim), x, seed=0)
    assert result.seconds["compile"] > 0.0  # the segment program; the start program was compiled above


def test_a_segments_padding_runs_no_transition(gaussian_coords):
    """A run shorter than whole segments ends in padding that does not run: 25 draws and then 10 more
    are, transition for transition, the first 35 of 40 drawn in one run. (Padding that ran as draws
    put 15 transitions between the two, thrown away and in no gradient count; found in review.)"""
    from autoreparam.mcmc.segments import SegmentSampler, sample_codes

    dim = gaussian_coords.dim
    sampler = SegmentSampler(gaussian_coords, NUTSConfig(num_warmup=20, num_samples=20), 20)
    param = Parameterisation.centred(gaussian_coords.plan)
    x = np.random.default_rng(2).normal(size=(2, dim)).astype(np.float32)

    def start():
        return sampler.start(x, np.ones(dim), 0.1, seed=3)  # a step at which the chains move

    chains, first, _ = sampler.run(param, start(), sample_codes(25))
    chains, second, _ = sampler.run(param, chains, sample_codes(10))
    _, whole, _ = sampler.run(param, start(), sample_codes(40))
    assert first.draws.shape[1] == 25 and second.draws.shape[1] == 10
    for name in ("draws", "steps", "accept"):
        joined = np.concatenate([getattr(first, name), getattr(second, name)], axis=1)
        np.testing.assert_array_equal(joined, getattr(whole, name)[:, :35], err_msg=name)
    assert np.all(whole.steps > 0) and np.all(np.any(np.diff(whole.draws, axis=1) != 0, axis=-1))  # they moved


def test_a_branch_draws_other_numbers_than_the_chains_it_leaves(gaussian_coords):
    """A trial that may be thrown away runs on a branch of the chains (``SegmentSampler.branch``): on the
    chains' own keys its draws were, number for number, the kept chains' next ones (found in review)."""
    from autoreparam.mcmc.segments import SegmentSampler, sample_codes

    coords = gaussian_coords
    sampler = SegmentSampler(coords, NUTSConfig(num_warmup=20, num_samples=20), 20)
    param = Parameterisation.centred(coords.plan)
    x = np.random.default_rng(2).normal(size=(2, coords.dim)).astype(np.float32)
    chains = sampler.start(x, np.ones(coords.dim), 0.1, seed=3)  # a step at which the chains move
    _, kept, _ = sampler.run(param, chains, sample_codes(20))
    _, again, _ = sampler.run(param, chains, sample_codes(20))
    _, trial, _ = sampler.run(param, sampler.branch(chains, 1), sample_codes(20))
    _, other, _ = sampler.run(param, sampler.branch(chains, 2), sample_codes(20))
    np.testing.assert_array_equal(kept.draws, again.draws)  # the same keys draw the same numbers
    assert not np.any(np.all(trial.draws == kept.draws, axis=-1))  # no transition of the trial replays one
    assert not np.array_equal(trial.draws, other.draws)
    # A second start of one run (auto's rescue) takes a stream of its own; stream 0 is the plain start.
    np.testing.assert_array_equal(sampler.start(x, np.ones(coords.dim), 0.1, seed=3, stream=0).keys, chains.keys)
    assert not np.array_equal(sampler.start(x, np.ones(coords.dim), 0.1, seed=3, stream=1).keys, chains.keys)

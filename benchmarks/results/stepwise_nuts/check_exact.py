"""The step-wise NUTS of this experiment (``nuts_steps.py``) is BlackJAX's NUTS, key for key.

    python -m pytest -q benchmarks/results/stepwise_nuts/check_exact.py    (passes at the commit that adds it)


The reference is the segment program's other batching: BlackJAX's kernel scanned over transitions
and vmapped over chains, with the same stage-code adaptation after every transition. In float64, on
targets whose trajectories do not amplify rounding, the two must agree on every discrete outcome
(trajectory lengths, divergences, the chains' keys) and on every position to rounding.
"""

import blackjax.mcmc.hmc as bj_hmc
import blackjax.mcmc.nuts as bj_nuts
import jax
import jax.numpy as jnp
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from nuts_steps import run_transitions  # noqa: E402
from autoreparam.mcmc.segments import BUILT_TARGET, _update, sample_codes, warmup_codes
from autoreparam.mcmc.warmup import window_adaptation

SCALES = np.array([0.1, 1.0, 3.0, 10.0])


def gaussian(x):
    """Independent normals whose scales span two orders of magnitude: tree depths differ by chain."""
    return -0.5 * jnp.sum((x / SCALES) ** 2)


def logistic_tails(x):
    """A smooth non-Gaussian target (logistic marginals) with one correlated pair."""
    z = x.at[1].add(0.8 * x[0])
    return -jnp.sum(jnp.logaddexp(z / 2.0, -z / 2.0) * 2.0)


def scanned(log_density, positions, adapts, keys, codes, target, max_doublings=10):
    kernel = bj_nuts.build_kernel()
    adapt_update = _update(*window_adaptation(BUILT_TARGET)[1:])

    def one_chain(position, adapt, key):
        def body(carry, code):
            state, adapt, key = carry
            key, sub = jax.random.split(key)
            state, info = kernel(sub, state, log_density, adapt.step_size, adapt.inverse_mass, max_doublings)
            adapt = adapt_update(adapt, code, state.position, info.acceptance_rate, target)
            return (state, adapt, key), (state.position, info.num_integration_steps, info.acceptance_rate,
                                         info.is_divergent)

        (state, adapt, key), out = jax.lax.scan(body, (bj_hmc.init(position, log_density), adapt, key), codes)
        return (state.position, adapt, key), out

    return jax.vmap(one_chain)(positions, adapts, keys)


def stepwise(log_density, positions, adapts, keys, codes, target, max_doublings=10):
    adapt_update = _update(*window_adaptation(BUILT_TARGET)[1:])
    return run_transitions(log_density, max_doublings, adapt_update, positions, adapts, keys, codes, target)


def _chains(num_chains, dim, step_size):
    init = window_adaptation(BUILT_TARGET)[0]
    positions = jax.random.normal(jax.random.PRNGKey(1), (num_chains, dim))
    adapts = jax.vmap(init)(jnp.ones((num_chains, dim)), jnp.full((num_chains,), step_size))
    return positions, adapts, jax.random.split(jax.random.PRNGKey(2), num_chains)


@pytest.mark.parametrize("log_density, codes, max_doublings", [
    (gaussian, warmup_codes(150)[:80], 10),  # adaptation after every transition, windows included
    (logistic_tails, sample_codes(60), 10),
    (gaussian, sample_codes(40), 3),  # trajectories cut at the doubling cap
])
def test_same_chain_as_blackjax_kernel_key_for_key(log_density, codes, max_doublings):
    with jax.enable_x64(True):
        positions, adapts, keys = _chains(6, 4, 0.3)
        codes, target = jnp.asarray(codes), jnp.asarray(0.8)
        (p_ref, a_ref, k_ref), out_ref = jax.jit(scanned, static_argnums=(0, 6))(
            log_density, positions, adapts, keys, codes, target, max_doublings)
        p, a, k, out = jax.jit(stepwise, static_argnums=(0, 6))(
            log_density, positions, adapts, keys, codes, target, max_doublings)
        steps_ref, steps = np.asarray(out_ref[1]), np.asarray(out[1])
        assert steps.shape == steps_ref.shape == (6, len(codes))
        np.testing.assert_array_equal(steps, steps_ref)
        np.testing.assert_array_equal(np.asarray(out[3]), np.asarray(out_ref[3]))
        np.testing.assert_array_equal(np.asarray(k), np.asarray(k_ref))
        np.testing.assert_allclose(np.asarray(out[0]), np.asarray(out_ref[0]), rtol=0, atol=1e-8)
        np.testing.assert_allclose(np.asarray(out[2]), np.asarray(out_ref[2]), rtol=0, atol=1e-8)
        np.testing.assert_allclose(np.asarray(p), np.asarray(p_ref), rtol=0, atol=1e-8)
        np.testing.assert_allclose(np.asarray(a.step_size), np.asarray(a_ref.step_size), rtol=1e-8)
        np.testing.assert_allclose(np.asarray(a.inverse_mass), np.asarray(a_ref.inverse_mass), rtol=1e-8)
        # The chains drifted apart: trajectory lengths differ between chains at one transition.
        assert len(np.unique(steps[:, -1])) > 1 or len(np.unique(steps[:, -2])) > 1
        if max_doublings == 3:
            assert steps.max() <= 2 ** 3 - 1


def test_divergences_end_a_transition_as_blackjax_does():
    # A step size far too large for the narrowest scale: most transitions diverge at once.
    with jax.enable_x64(True):
        positions, adapts, keys = _chains(4, 4, 5.0)
        codes, target = jnp.asarray(sample_codes(20)), jnp.asarray(0.8)
        _, out_ref = scanned(gaussian, positions, adapts, keys, codes, target)
        *_, out = stepwise(gaussian, positions, adapts, keys, codes, target)
        assert np.asarray(out_ref[3]).mean() > 0.5
        np.testing.assert_array_equal(np.asarray(out[3]), np.asarray(out_ref[3]))
        np.testing.assert_array_equal(np.asarray(out[1]), np.asarray(out_ref[1]))

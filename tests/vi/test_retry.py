"""A variational fit whose ELBO ends non-finite is fitted again once at a tenth of the learning rates
(`vi.fits.fit_or_retry`): a deep funnel's fit diverged at the fast protocol's rates on one machine
(fuzzing program 235, RELIABILITY.md), where a user would otherwise get an error for a valid model."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

import autoreparam as ar
from autoreparam.errors import ModelError


def deep_funnel():
    z0 = numpyro.sample("z0", dist.Normal(0, 1))
    z1 = numpyro.sample("z1", dist.Normal(0, jnp.exp(z0)))
    z2 = numpyro.sample("z2", dist.Normal(0, jnp.exp(z1)))
    numpyro.sample("z3", dist.Normal(0, jnp.exp(z2)))


def _given(learning_rate, method="given"):
    config = ar.VIConfig(num_steps=50, num_samples=4, learning_rates=(learning_rate,), final_num_samples=16,
                         progress=False)
    options = {"parameterisation": 0.5} if method == "given" else {}
    return ar.infer(deep_funnel, method=method, **options, num_chains=2, num_warmup=30, num_samples=30,
                    progress=False, seed=0, vi_config=config)


def test_a_diverged_fit_is_fitted_again_at_a_tenth_of_the_rate_and_says_so():
    # At learning rate 20 this fit's ELBO is -inf (seed 0); at 2 it is finite.
    result = _given(20.0)
    assert "fitted again at a tenth of them (kept: 2)" in result.decision
    assert "ended with a non-finite ELBO at learning rates (20.0,)" in result.decision
    assert np.isfinite(result.samples["z3"]).all()


def test_a_fit_that_diverges_again_is_an_error_naming_both_tries():
    with pytest.raises(ModelError, match=r"fit given ended with a non-finite ELBO at learning rates \(1000\.0,\) "
                                         r"and then \(100\.0,\): lower VIConfig.learning_rates"):
        _given(1000.0)


def test_a_fit_that_did_not_diverge_is_not_fitted_again():
    assert "fitted again" not in _given(0.05).decision


def test_the_kept_run_has_a_finite_elbo_and_moved_unless_none_did():
    # By the window alone, a learning rate whose final ELBO was -inf beat a finite one, and a run that
    # skipped every step for NaN gradients (q never left its start) passed as fitted (found in review).
    from autoreparam.vi.fits import _best_run

    assert _best_run([-10.0, -9.0], [-10.05, -np.inf], [0, 0], 100) == 0
    assert _best_run([-10.0, -9.0], [-10.05, -9.1], [0, 100], 100) == 0
    assert _best_run([-10.0, -9.0], [-10.05, -9.1], [0, 50], 100) == 1  # half skipped: still a fit
    assert _best_run([-10.0, -9.0, np.nan], [-np.inf, -np.inf, -1.0], [0, 0, 0], 100) == 1  # none sound: as before

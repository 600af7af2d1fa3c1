"""ArviZ wrappers: per-site routing, no spurious warnings, and the diagnostics' verdicts."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

from autoreparam.diagnostics import bulk_ess, rank_rhat, standard_diagnostics, tail_ess
from autoreparam.errors import ArgumentError, DataError


def arviz():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    return az


def test_each_element_gets_arviz_own_numbers():
    az = arviz()
    rng = np.random.default_rng(0)
    draws = {"mu": rng.normal(size=(4, 300)), "b": np.cumsum(rng.normal(size=(4, 300, 2, 3)), 1)}
    result = standard_diagnostics(draws)
    assert result.ess_bulk["mu"].shape == () and result.r_hat["b"].shape == (2, 3)
    for (i, j) in [(0, 0), (1, 2), (0, 2)]:
        series = draws["b"][:, :, i, j]
        assert result.ess_bulk["b"][i, j] == pytest.approx(az.ess(series, method="bulk"))
        assert result.ess_tail["b"][i, j] == pytest.approx(az.ess(series, method="tail"))
        assert result.r_hat["b"][i, j] == pytest.approx(az.rhat(series, method="rank"))
    assert result.ess_bulk["mu"] == pytest.approx(az.ess(draws["mu"], method="bulk"))
    everything = np.concatenate([result.ess_bulk["b"].ravel(), [result.ess_bulk["mu"]]])
    assert result.min_ess_bulk == everything.min()
    assert result.max_r_hat == max(result.r_hat["b"].max(), result.r_hat["mu"])


def test_verdicts_on_good_and_stuck_chains():
    rng = np.random.default_rng(1)
    good = rng.normal(size=(4, 1000))
    stuck = good.copy()
    stuck[0] += 3.0  # one chain in another place
    assert rank_rhat({"x": good})["x"] < 1.01
    assert rank_rhat({"x": stuck})["x"] > 1.1
    # Independent draws: bulk ESS near the 4000 draws; a random walk: far fewer.
    assert 3000 < bulk_ess({"x": good})["x"] < 5000
    assert tail_ess({"x": np.cumsum(good, axis=1)})["x"] < 100


def test_more_chains_than_draws_raises_no_warning():
    # ArviZ's own converter warns here; pytest turns warnings into errors.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = standard_diagnostics({"x": np.random.default_rng(2).normal(size=(20, 8))})
    assert np.isfinite(result.min_ess_bulk)


def test_one_chain_has_no_rhat_but_has_ess():
    result = standard_diagnostics({"x": np.random.default_rng(3).normal(size=(1, 200, 2))})
    assert np.all(np.isnan(result.r_hat["x"])) and np.isnan(result.max_r_hat)
    assert np.all(result.ess_bulk["x"] > 50)


@pytest.mark.parametrize(
    "draws, error",
    [
        ({"x": np.zeros((2, 3))}, ArgumentError),  # ArviZ needs 4 draws
        ({"x": np.full((2, 10), np.inf)}, DataError),
    ],
)
def test_invalid_input_is_refused(draws, error):
    with pytest.raises(error):
        standard_diagnostics(draws)


def test_import_loads_neither_arviz_nor_matplotlib():
    # ArviZ writes a stamp file on import; the library must not do that when merely imported.
    code = (
        "import sys, autoreparam.diagnostics; "
        "loaded = [m for m in ('arviz', 'xarray', 'matplotlib') if m in sys.modules]; "
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_infer_imports_neither_arviz_nor_xarray():
    # The diagnostics of every call run without ArviZ (``diagnostics.rank_normalised``), whose import
    # took about 1.5 s of a process's first call.
    code = (
        "import sys, numpyro, numpyro.distributions as dist, autoreparam as ar\n"
        "def model():\n"
        "    numpyro.sample('x', dist.Normal(0.0, 1.0))\n"
        "r = ar.infer(model, method='auto', num_chains=2, num_warmup=100, num_samples=100, progress=False)\n"
        "assert r.diagnostics.standard.min_ess_bulk > 0\n"
        "loaded = [m for m in ('arviz', 'xarray') if m in sys.modules]; assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_stuck_chain_gives_no_warning_and_an_unmistakable_rhat():
    """A chain that never moves (e.g. a centred sampler stuck in a funnel) must not raise warnings."""
    import numpy as _np

    from autoreparam.diagnostics.standard import standard_diagnostics as _diag

    rng = _np.random.default_rng(0)
    draws = rng.normal(size=(3, 100, 2))
    draws[:, :, 1] = 0.7  # every chain stuck at the same point (e.g. identical starts, all rejected)
    result = _diag({"x": draws})
    assert _np.isfinite(result.r_hat["x"][0])
    assert not (result.r_hat["x"][1] < 1.1)  # inf or NaN: never a reassuring value


def test_mean_and_mcse_match_iid_theory():
    """For independent draws the MC standard error of a mean is sd/sqrt(n)."""
    import numpy as _np

    from autoreparam.diagnostics.standard import mean_and_mcse

    rng = _np.random.default_rng(3)
    draws = {"b": rng.normal(2.0, 3.0, size=(4, 2500, 2)), "a": rng.normal(size=(4, 2500))}
    mean, mcse = mean_and_mcse(draws)
    assert mean.shape == mcse.shape == (3,)  # sorted: a, then b[0], b[1]
    _np.testing.assert_allclose(mcse, [1 / 100, 3 / 100, 3 / 100], rtol=0.1)
    assert abs(mean[1] - 2.0) < 3.29 * 3 / 100


def test_an_element_without_rhat_does_not_hide_chains_that_disagree():
    """A constant element (an LKJ factor's fixed entry) has R-hat 0/0; the worst R-hat must still be
    the disagreeing element's, or every ``not max_r_hat > limit`` check (auto's pilots, the oracle)
    would pass chains that never mixed."""
    rng = np.random.default_rng(1)
    draws = rng.normal(size=(4, 200, 3))
    draws[:, :, 0] = 1.0  # fixed by its support
    draws[:, :, 2] += np.arange(4)[:, None] * 3.0  # chains in different places
    result = standard_diagnostics({"x": draws})
    assert np.isnan(result.r_hat["x"][0])
    assert result.max_r_hat > 2.0
    assert result.max_r_hat == pytest.approx(float(np.nanmax(result.r_hat["x"])))

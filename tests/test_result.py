"""What a result reports: its summary against ArviZ, its ArviZ conversion, and compare's columns.
Each test failed before its fix (found in review, 2026-11-29)."""

from __future__ import annotations

import warnings

import arviz as az
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro import handlers

import autoreparam as ar
from autoreparam.compare import compare
from autoreparam.models import eight_schools
from autoreparam.vi.protocol import VIConfig

TINY_VI = VIConfig(num_steps=200, num_samples=16, learning_rates=(0.1,), final_num_samples=64, progress=False)
SIGMA = jnp.array([15, 10, 16, 11, 9, 11, 10, 18.0])
Y = jnp.array([28, 8, -3, 7, -1, 1, 18, 12.0])


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ar.ConvergenceWarning)  # short runs: only the reporting is checked
        return fn(*args, **kwargs)


def _partly_masked(y):
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    with handlers.mask(mask=np.array([True, False, True])):
        numpyro.sample("m", dist.Normal(mu, 1.0).expand([3]))
    numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)


def test_the_summary_agrees_with_arviz_and_says_nothing_of_a_masked_element():
    result = _quiet(ar.infer, _partly_masked, np.array([0.3, -0.2, 1.0]), method="cp", kernel="nuts", num_chains=2,
                    num_warmup=100, num_samples=150, progress=False, vi_config=TINY_VI)
    rows = {line.split()[0]: line.split() for line in result.summary().splitlines() if line.startswith(("mu", "m["))}
    # The masked element's ESS read as the number of draws (300), as if perfectly mixed.
    assert rows["m[1]"][-2:] == ["-", "-"] and rows["m[0]"][-2] != "-"
    assert np.isnan(result.diagnostics.standard.ess_tail["m"][1])
    # sd with ddof 1, as ArviZ's (it divided by n).
    expected = az.summary(az.from_dict(posterior={"mu": result.samples["mu"]}), kind="stats")
    assert float(rows["mu"][2]) == round(float(expected.loc["mu", "sd"]), 3)
    acceptance = next(line for line in result.summary().splitlines() if line.startswith("acceptance"))
    assert len(acceptance) < 40, acceptance  # 0.7900000214576721 where 0.790 was meant


def test_arviz_gets_the_step_size_and_a_separate_centring_is_reported_whole():
    from autoreparam.reparam import analyse_model, select_sites
    from autoreparam.reparam.parameterisation import Parameterisation

    plan = select_sites(analyse_model(eight_schools, SIGMA, y=Y), "default")
    centring = Parameterisation.separate(plan, 0.1, 0.9)
    result = _quiet(ar.infer, eight_schools, SIGMA, y=Y, method="given", parameterisation=centring, num_chains=2,
                    num_warmup=100, num_samples=50, num_leapfrog=4, progress=False, vi_config=TINY_VI)
    data = result.to_arviz()
    assert data.sample_stats["step_size"].shape == (2, 50)
    assert np.allclose(data.sample_stats["step_size"].values[:, 0], np.ravel(result.chains.step_size))
    # b alone was reported, as if lambda were 0.9 for the location too.
    np.testing.assert_allclose(result.centring.loc_centring["theta"], 0.1)
    np.testing.assert_allclose(result.centring.scale_centring["theta"], 0.9)
    line = next(line for line in result.summary().splitlines() if line.strip().startswith("theta:"))
    assert "a [0.10" in line and "b [0.90" in line


def test_compare_keeps_compilation_apart_and_names_auto_s_search():
    result = _quiet(compare, eight_schools, SIGMA, y=Y, methods=["ncp", "auto"], num_chains=2, num_warmup=100,
                    num_samples=100, vi_config=TINY_VI, progress=False)
    # (0 when an earlier test of the process compiled these programs)
    assert result.seconds["compile"] >= 0 and all(result.seconds[m] >= 0 for m in ("ncp", "auto"))
    report = result.report()
    assert "compiling took" in report
    if result.search_gradients["auto"] > 0:
        assert "its search after the warm-up ran" in report
    header, first = result.table().splitlines()[:2]
    end_of_l = 9 + 9 + 21 + 7 - 1  # the L column's last character: under its heading (it was one to the right)
    assert header[end_of_l] == "L" and first[end_of_l] != " " and first[end_of_l + 1] == " "

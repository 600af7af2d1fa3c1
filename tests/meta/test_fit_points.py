"""Data-informed probe points (`autoreparam.meta.fit_points`): a short non-centred mean-field fit.

In Section 3's Gaussian model (paper 000 Appendix A) the posterior is Gaussian and a mean-field q in
the non-centred coordinates recovers its mean exactly (the ELBO's optimum puts q's mean at the
posterior mean for a Gaussian target), so the fit's centre can be checked against the closed form.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from autoreparam.errors import ArgumentError
from autoreparam.meta.fit_points import fit_points
from autoreparam.meta.predict import SHIPPED_FIT, SHIPPED_PRIOR, default_network, predict
from autoreparam.models import gaussian_section3, gaussian_section3_data
from tests.conftest import XlaCompilations


def _posterior_mean_of_mu(y, sigma, sigma_mu):
    # theta ~ N(0, 1), mu | theta ~ N(theta, sigma_mu): marginally mu ~ N(0, 1 + sigma_mu^2); y_n ~ N(mu, sigma).
    prior_precision = 1.0 / (1.0 + sigma_mu**2)
    data_precision = len(y) / sigma**2
    return data_precision * np.mean(y) / (prior_precision + data_precision)


@pytest.mark.parametrize("q", [0.1, 10.0])
def test_the_fit_centre_is_the_posterior_mean_in_section3(q):
    y, sigma = gaussian_section3_data(q, n=10, sigma_mu=1.0)
    points, seconds = fit_points(gaussian_section3, (), {"y": y, "sigma": sigma, "sigma_mu": 1.0})
    assert points["mu"].shape == (3,) and seconds > 0
    posterior_sd = np.sqrt(1.0 / (1.0 / 2.0 + len(y) / sigma**2))
    # 500 steps of 8 draws leave Monte Carlo noise in q's mean: a tenth of a posterior sd.
    assert points["mu"][0] == pytest.approx(_posterior_mean_of_mu(np.asarray(y), sigma, 1.0), abs=0.1 * posterior_sd)
    assert points["mu"][1] < points["mu"][0] < points["mu"][2]


def test_predict_with_fit_probes_reports_the_fit_and_refuses_unknown_probes():
    y, sigma = gaussian_section3_data(1.0, n=10, sigma_mu=1.0)
    kwargs = {"y": y, "sigma": sigma, "sigma_mu": 1.0}
    shipped = default_network(SHIPPED_PRIOR)
    prediction = predict(gaussian_section3, network=shipped, probes="fit", **kwargs)
    assert set(prediction.seconds) == {"fit", "graph", "network", "total"}
    # Section 3's curvature is the same at every point: one network's prediction cannot depend on
    # where it is read.
    assert prediction.lam["mu"] == pytest.approx(predict(gaussian_section3, network=shipped, **kwargs).lam["mu"],
                                                 abs=1e-3)
    with pytest.raises(ArgumentError, match="probes must be one of 'prior', 'fit', got 'posterior'"):
        predict(gaussian_section3, probes="posterior", **kwargs)


def test_steps_whose_draws_overflow_are_skipped_not_taken():
    """A Poisson rate exp(1000 x) overflows for some of q's draws: such steps used to turn q into NaN
    (9 of 205 generated training programs); now they are skipped and the points stay finite."""
    import numpyro
    import numpyro.distributions as dist

    def model(y):
        x = numpyro.sample("x", dist.Normal(0.0, 0.01))
        numpyro.sample("y", dist.Poisson(jnp.exp(1000.0 * x)), obs=y)

    points, _ = fit_points(model, (np.array([3, 1, 2]),), {})
    assert np.all(np.isfinite(points["x"]))


def test_new_data_of_the_same_shapes_reuses_the_fit_program_and_is_read():
    import autoreparam.meta.fit_points as module

    y, sigma = gaussian_section3_data(10.0, n=10, sigma_mu=1.0)
    first, _ = fit_points(gaussian_section3, (), {"y": y, "sigma": sigma, "sigma_mu": 1.0})
    programs = len(module._FIT_PROGRAMS)
    shifted, _ = fit_points(gaussian_section3, (), {"y": np.asarray(y) + 5.0, "sigma": sigma, "sigma_mu": 1.0})
    assert len(module._FIT_PROGRAMS) == programs  # the data are arguments, not constants of the program
    assert shifted["mu"][0] > first["mu"][0] + 3.0  # ... and they are the new data


def test_without_a_network_predict_takes_the_shipped_network_trained_where_it_reads():
    y, sigma = gaussian_section3_data(1.0, n=10, sigma_mu=1.0)
    kwargs = {"y": y, "sigma": sigma, "sigma_mu": 1.0}
    at_fit, at_prior = default_network(SHIPPED_FIT), default_network(SHIPPED_PRIOR)
    assert at_fit.probes == "fit" and at_prior.probes == "prior" and default_network() is at_fit
    for probes, network in ((None, at_fit), ("fit", at_fit), ("prior", at_prior)):
        assert predict(gaussian_section3, probes=probes, **kwargs).lam["mu"] == pytest.approx(
            predict(gaussian_section3, network=network, **kwargs).lam["mu"], abs=1e-6), probes


def test_predict_parameterisation_takes_the_probes():
    import autoreparam as ar

    y, sigma = gaussian_section3_data(1.0, n=10, sigma_mu=1.0)
    lam = ar.predict_parameterisation(gaussian_section3, probes="fit", y=y, sigma=sigma, sigma_mu=1.0)
    assert 0.0 <= float(lam["mu"]) <= 1.0


def test_a_new_models_fit_compiles_its_program_and_runs_nothing_eagerly():
    # The fit's start (the prior centre, in the non-centred coordinates) was once computed eagerly:
    # two passes through the model, each primitive compiled on its own in every new process (about
    # 1 s of a first prediction on radon). Shapes no other test uses, so eager operations would compile here.
    import numpyro
    import numpyro.distributions as dist

    def model(x, y):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        tau = numpyro.sample("tau", dist.HalfNormal(1.0))
        with numpyro.plate("groups", 29):
            theta = numpyro.sample("theta", dist.Normal(mu + jnp.mean(x), tau))
        with numpyro.plate("data", 53):
            numpyro.sample("y", dist.Normal(theta[jnp.arange(53) % 29] * x, 1.0), obs=y)

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(53).astype(np.float32), rng.standard_normal(53).astype(np.float32)
    with XlaCompilations() as compiled:
        fit_points(model, (x, y), {})
    programs = [m for m in compiled.messages if "jit(program)" in m]
    assert len(programs) == 1
    # Besides the program: the coordinates' flat layout and the random key (a few tiny programs).
    assert len(compiled.messages) <= 12, "\n".join(compiled.messages)

"""Predictions of the shipped network: every zoo model gets a finite lambda in [0, 1] for every element of
every location-scale latent, and the Section 3 closed form is matched (paper 000 Appendix A)."""

from __future__ import annotations

import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

import autoreparam as ar
from autoreparam.graph import model_graph
from autoreparam.meta.predict import predict_graph
from autoreparam.models.funnels import funnel_with_observation
from autoreparam.reparam import analyse_model

# german_credit and election88 (16 s of the suite) run with -m slow; the other four keep every path in CI
ZOO = ["eight_schools", "radon_mn", "radon_stddvs_mn", pytest.param("german_credit", marks=pytest.mark.slow),
       pytest.param("election88", marks=pytest.mark.slow), "electric"]


@pytest.mark.parametrize("name", ZOO)
def test_every_zoo_model_gets_a_finite_lambda_in_the_unit_interval(zoo, name):
    problem = zoo(name)
    lam = ar.predict_parameterisation(problem.model, *problem.args, **problem.kwargs)
    structure = analyse_model(problem.model, *problem.args, **problem.kwargs)
    expected = {s.name: s.shape for s in structure.latents if s.family is not None}
    assert {n: v.shape for n, v in lam.items()} == expected
    values = np.concatenate([v.ravel() for v in lam.values()])
    assert np.all(np.isfinite(values)) and np.all((values >= 0) & (values <= 1))


def test_the_prediction_restricts_to_a_plan_and_times_itself():
    from autoreparam.meta.predict import predict
    from autoreparam.reparam import select_sites

    prediction = predict(funnel_with_observation, y=10.0, sigma=0.5)
    plan = select_sites(analyse_model(funnel_with_observation, y=10.0, sigma=0.5))
    param = prediction.parameterisation(plan)
    assert param.names == ("x",) and param.is_tied
    assert set(prediction.seconds) == {"fit", "graph", "network", "total"}  # the default network reads at a fit
    assert set(predict(funnel_with_observation, y=10.0, sigma=0.5, probes="prior").seconds) == {"graph", "network",
                                                                                              "total"}


@pytest.mark.slow  # 19 s of the suite; META.md's Section 3 table measures the same, and test_infer_meta runs the weights
def test_section3_closed_form_on_the_shipped_weights():
    """Mean |lambda(mu) - lambda*| over q in 1e-2..1e2 and sigma_mu in {0.3, 1, 3}.

    The issue's target is 0.05; the shipped weights measure 0.068 (META.md says it is missed). This
    guards against a regression beyond that, not the target itself."""
    from autoreparam.analysis import best_lambda
    from autoreparam.models.gaussian import gaussian_section3, gaussian_section3_data

    errors = []
    for sigma_mu in (0.3, 1.0, 3.0):
        for q in np.logspace(-2, 2, 9):
            y, sigma = gaussian_section3_data(q, 10, sigma_mu=sigma_mu, seed=0)
            graph = model_graph(gaussian_section3, y, sigma, sigma_mu)
            errors.append(abs(float(predict_graph(graph).lam["mu"]) - best_lambda(q, sigma_mu)))
    assert np.mean(errors) <= 0.075, f"mean error {np.mean(errors):.3f}"


def _model_with_a_model_argument(y, model="normal"):
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    theta = numpyro.sample("theta", dist.Normal(mu, 1.0).expand([3]).to_event(1))
    numpyro.sample("y", dist.Normal(theta, 1.0).to_event(1), obs=y)


def test_a_model_argument_named_model_reaches_the_model_and_a_network_must_be_a_network():
    # Found in review: predict(m, y, model="b") failed as "got multiple values for argument 'model'",
    # and network="meta_gnn" as "'str' object is not callable".
    from autoreparam.errors import ArgumentError
    from autoreparam.meta.predict import predict

    lam = predict(_model_with_a_model_argument, np.zeros(3, np.float32), model="b", probes="prior").lam
    assert set(lam) == {"theta"} or set(lam) == {"mu", "theta"}
    with pytest.raises(ArgumentError, match="network must be a loaded network"):
        predict(_model_with_a_model_argument, np.zeros(3, np.float32), network="meta_gnn")

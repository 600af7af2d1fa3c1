"""The training objective: dELBO/dlambda points from NCP towards CP when the data are strong (and back
when they are weak), paper 000 Section 3; and the label normalisation."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from autoreparam.graph import model_graph
from autoreparam.meta.objective import ModelObjective, ObjectiveConfig, normalisation
from autoreparam.models.gaussian import gaussian_section3, gaussian_section3_data


@pytest.mark.parametrize("q, towards", [(100.0, 1.0), (0.01, -1.0)])
def test_the_gradient_points_to_the_better_centring(q, towards):
    y, sigma = gaussian_section3_data(q, 10, seed=0)
    graph = model_graph(gaussian_section3, y, sigma)
    objective = ModelObjective(gaussian_section3, (y, sigma), {}, graph,
                               config=ObjectiveConfig(burn_in_steps=400, gradient_samples=256))
    values = np.full((graph.num_elements, 1), 0.5)
    _, gradient, ok = objective(values, jax.random.PRNGKey(0))
    rows = objective.rows["mu"]
    assert ok and np.sign(gradient[rows, 0][0]) == towards
    others = np.setdiff1d(np.arange(graph.num_elements), rows)
    assert np.all(gradient[others] == 0)  # theta is not planned: its centring cannot change the ELBO here


def test_normalisation_is_regret_in_units_of_the_cp_ncp_gap():
    label = {"fits": {"cp": {"elbo": -100.0}, "ncp": {"elbo": -40.0}}}
    assert normalisation(label) == (-40.0, 60.0)
    assert normalisation({"fits": {"cp": {"elbo": -1.0}, "ncp": {"elbo": -1.2}}}) == (-1.0, 1.0)
    assert normalisation(None) == (0.0, 1.0)

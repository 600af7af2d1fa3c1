"""Elements without density are left out of the diagnostics (`diagnostics.masked`)."""

from __future__ import annotations

import numpy as np

from autoreparam.diagnostics import paper_metric, standard_diagnostics
from autoreparam.diagnostics.masked import diagnostic_views


def test_masked_elements_leave_the_worst_r_hat_and_the_paper_ess_and_a_fully_masked_site_is_dropped():
    rng = np.random.default_rng(0)
    good = rng.normal(size=(4, 300, 3))
    good[..., 1] = np.cumsum(rng.normal(size=(4, 300)), axis=1)  # wanders: no density there
    samples = {"y": good, "all_masked": np.cumsum(rng.normal(size=(4, 300, 2)), axis=1),
               "mu": rng.normal(size=(4, 300))}
    masks = {"y": np.array([False, True, False]), "all_masked": np.ones(2, dtype=bool)}
    views = diagnostic_views(samples, masks)
    assert set(views.standard) == {"y", "mu"}
    assert list(views.efficiency) == ["y[0]", "y[2]", "mu"] and views.efficiency["y[2]"].shape == (4, 300)
    standard = standard_diagnostics(views.standard)
    assert np.isnan(standard.r_hat["y"][1]) and standard.max_r_hat < 1.05
    assert standard_diagnostics(samples).max_r_hat > 1.1  # what they would have read
    assert paper_metric(views.efficiency, np.full(4, 300.0)).mean > paper_metric(samples, np.full(4, 300.0)).mean
    assert diagnostic_views(samples, {}).standard["y"] is samples["y"]


def test_the_worst_element_of_a_partly_masked_site_is_named_by_its_index_in_the_site():
    """Flattened to its kept elements, x[3] was reported as x[1] (its position among them)."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 400, 2, 3))
    x[..., 1, 2] = np.cumsum(rng.normal(size=(4, 400)), axis=1)  # kept, and the worst
    mask = np.zeros((2, 3), dtype=bool)
    mask[0, 0] = mask[1, 0] = True
    metric = paper_metric(diagnostic_views({"x": x}, {"x": mask}).efficiency, np.full(4, 400.0))
    assert metric.min_element_name == "x[1,2]"
    assert "x[0,0]" not in metric.element_names and len(metric.element_names) == 4

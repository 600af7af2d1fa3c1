"""What must not change the graph: names, row order, how data are passed, how a model is written."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

from autoreparam.graph import assert_same_graph, graph_differences, model_graph
from autoreparam.models import eight_schools

from .models import (
    eight_schools_rewritten,
    german_credit_rewritten,
    grouped,
    grouped_data,
    make_election88_rewritten,
    radon_rewritten,
)

SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0], dtype=np.float32)
Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0], dtype=np.float32)


def _renamed_eight_schools(s, y=None):
    # Same statements in the same order; every name differs (and sorts differently).
    zz = numpyro.sample("zz", dist.Normal(0.0, 5.0))
    aa = numpyro.sample("aa", dist.Normal(0.0, 5.0))
    with numpyro.plate("k", s.shape[0]):
        mm = numpyro.sample("mm", dist.Normal(zz, jnp.exp(aa)))
        numpyro.sample("b", dist.Normal(mm, s), obs=y)


def _same_arrays(first, second):
    for field in ("node_type", "edge_index", "edge_type", "element_node", "element_index"):
        np.testing.assert_array_equal(getattr(first, field), getattr(second, field), err_msg=field)
    assert first.node_label == second.node_label and first.node_shape == second.node_shape


def test_renaming_changes_nothing_but_names():
    original = model_graph(eight_schools, SIGMA, y=Y)
    renamed = model_graph(_renamed_eight_schools, SIGMA, y=Y)
    _same_arrays(original, renamed)
    np.testing.assert_array_equal(original.node_features, renamed.node_features)
    np.testing.assert_array_equal(original.element_features, renamed.element_features)
    assert renamed.node_name[:4] == ("zz", "aa", "mm", "b")


def test_permuting_data_rows_changes_no_feature():
    group, x, y = grouped_data(num_rows=60, num_groups=5)
    permutation = np.random.default_rng(1).permutation(len(group))
    original = model_graph(grouped, group, x, 5, y=y)
    permuted = model_graph(grouped, group[permutation], x[permutation], 5, y=y[permutation])
    _same_arrays(original, permuted)
    # Sums over rows in another order differ in the last float32 bits only.
    np.testing.assert_allclose(original.node_features, permuted.node_features, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(original.element_features, permuted.element_features, rtol=1e-5, atol=1e-5)
    # The empty last group is visible to the predictor: no curvature from the likelihood on a[4].
    curvature = original.element_features[original.element_rows("a"), original.element_feature_names.index(
        "log_abs_curvature")]
    assert curvature[-1] < -10 < curvature[:-1].min()


def test_eight_schools_hand_rewritten():
    rewritten = model_graph(eight_schools_rewritten, data={"stderr": SIGMA, "score": Y})
    assert_same_graph(model_graph(eight_schools, SIGMA, y=Y), rewritten)


def test_radon_hand_rewritten(zoo):
    problem = zoo("radon_mn")
    county, floor, log_uranium, num_counties = problem.args
    data = {"county": np.asarray(county), "floor": np.asarray(floor), "u": np.asarray(log_uranium),
            "n_county": num_counties, "y": problem.kwargs["y"]}
    assert_same_graph(model_graph(problem.model, *problem.args, **problem.kwargs), model_graph(radon_rewritten, data))


def test_election88_hand_rewritten(zoo):
    problem = zoo("election88")
    rewritten = make_election88_rewritten(*problem.args)
    assert_same_graph(model_graph(problem.model, *problem.args, **problem.kwargs),
                      model_graph(rewritten, problem.kwargs["y"]))


def test_german_credit_hand_rewritten(zoo):
    problem = zoo("german_credit")
    (x,), y = problem.args, problem.kwargs["y"]
    assert_same_graph(model_graph(problem.model, x, y=y),
                      model_graph(german_credit_rewritten, design=np.asarray(x, np.float64), labels=y))


def test_assert_same_graph_can_fail():
    original = model_graph(eight_schools, SIGMA, y=Y)
    other_data = model_graph(eight_schools, SIGMA * 3.0, y=Y)
    with pytest.raises(AssertionError, match="features"):
        assert_same_graph(original, other_data)

    def swapped(sigma, y=None):  # exp(log_tau) as the loc of theta and mu as its scale: another model
        mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
        log_tau = numpyro.sample("log_tau", dist.Normal(0.0, 5.0))
        with numpyro.plate("schools", sigma.shape[0]):
            theta = numpyro.sample("theta", dist.Normal(jnp.exp(log_tau), jnp.abs(mu) + 1.0))
            numpyro.sample("y", dist.Normal(theta, sigma), obs=y)

    assert graph_differences(original, model_graph(swapped, SIGMA, y=Y))


def test_assert_same_graph_sees_a_different_edge_type():
    def loc_edge(y):
        a = numpyro.sample("a", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(jnp.exp(a), 2.0), obs=y)

    def scale_edge(y):
        a = numpyro.sample("a", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(2.0, jnp.exp(a)), obs=y)

    problems = graph_differences(model_graph(loc_edge, 1.0), model_graph(scale_edge, 1.0))
    assert problems and ("structure" in problems[0] or "edges" in problems[0])

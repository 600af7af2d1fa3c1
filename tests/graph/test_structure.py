"""The graph's nodes and edges: eight schools by hand, plates, folding, inlining, pruning, scan."""

from __future__ import annotations

from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

from autoreparam.graph import EdgeType, NodeType, assert_same_graph, model_graph
from autoreparam.models import eight_schools

from .models import eight_schools_jitted_helper, wide_schools

SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0], dtype=np.float32)
Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0], dtype=np.float32)


def _edges(graph):
    """Forward edges as readable triples ``(source, type, target)``; sites by name, others by label."""

    def name(i):
        return graph.node_name[i] or graph.node_label[i]

    return Counter((name(s), EdgeType(int(k)).name, name(t)) for (s, t), k in zip(graph.edge_index.T, graph.edge_type))


@pytest.fixture(scope="module")
def schools():
    return model_graph(eight_schools, SIGMA, y=Y)


def test_eight_schools_nodes(schools):
    types = [NodeType(int(t)) for t in schools.node_type]
    assert Counter(types) == {
        NodeType.LATENT_LOC_SCALE: 3, NodeType.OBSERVED: 1, NodeType.PRIMITIVE: 1,
        NodeType.CONSTANT: 4, NodeType.DATA: 2,
    }
    # Sites first, in program order; then the walk's nodes.
    assert schools.node_name[:4] == ("mu", "log_tau", "theta", "y")
    assert schools.node_label[:4] == ("Normal",) * 4
    assert schools.node_shape[:4] == ((), (), (8,), (8,))
    assert [schools.node_label[i] for i in np.flatnonzero(schools.node_type == NodeType.PRIMITIVE)] == ["exp"]


def test_eight_schools_edges(schools):
    assert _edges(schools) == Counter({
        ("constant", "LOC", "mu"): 1, ("constant", "SCALE", "mu"): 1,
        ("constant", "LOC", "log_tau"): 1, ("constant", "SCALE", "log_tau"): 1,
        ("mu", "LOC", "theta"): 1, ("log_tau", "OPERAND", "exp"): 1, ("exp", "SCALE", "theta"): 1,
        ("theta", "LOC", "y"): 1, ("data", "SCALE", "y"): 1, ("data", "OBSERVED_OF", "y"): 1,
    })
    # The data nodes hold sigma (scale of y) and y (observed): check by their summaries.
    columns = schools.node_feature_names
    for edge_type, values in ((EdgeType.SCALE, SIGMA), (EdgeType.OBSERVED_OF, Y)):
        source = next(s for (s, t), k in zip(schools.edge_index.T, schools.edge_type)
                      if k == edge_type and schools.node_name[t] == "y")
        row = dict(zip(columns, schools.node_features[source]))
        assert row["max_log_abs"] == pytest.approx(np.log(np.abs(values).max()), abs=1e-5)
        assert row["mean_sign"] == np.sign(values.mean())
        assert row["std_log"] == pytest.approx(np.log(values.std()), abs=1e-4)


def test_eight_schools_constants_hold_the_prior_parameters(schools):
    row = {n: i for i, n in enumerate(schools.node_feature_names)}
    constants = np.flatnonzero(schools.node_type == NodeType.CONSTANT)
    magnitudes = sorted(float(schools.node_features[c, row["mean_log_abs"]]) for c in constants)
    assert magnitudes == pytest.approx([-30.0, -30.0, np.log(5.0), np.log(5.0)])  # log|0| clips to -30


def test_reverse_edges_and_elements(schools):
    index, types = schools.message_edges()
    e = schools.num_edges
    assert index.shape == (2, 2 * e)
    np.testing.assert_array_equal(index[:, e:], schools.edge_index[::-1])
    np.testing.assert_array_equal(types[e:], schools.edge_type + len(EdgeType))
    theta = schools.site_node("theta")
    assert schools.num_elements == 10
    np.testing.assert_array_equal(schools.element_index[schools.element_rows("theta")], np.arange(8))
    assert set(schools.element_node[schools.element_rows("theta")]) == {theta}


def test_a_plate_is_one_node_whatever_its_size():
    small = model_graph(wide_schools, SIGMA[:3], y=Y[:3])
    rng = np.random.default_rng(0)
    sigma, y = rng.uniform(5, 20, 20_000).astype(np.float32), rng.normal(0, 10, 20_000).astype(np.float32)
    large = model_graph(wide_schools, sigma, y=y)
    assert (small.num_nodes, small.num_edges) == (large.num_nodes, large.num_edges) == (11, 10)
    np.testing.assert_array_equal(small.node_type, large.node_type)
    assert large.num_elements == 20_002


def test_jit_helpers_are_inlined_and_layout_ops_folded(schools):
    assert_same_graph(schools, model_graph(eight_schools_jitted_helper, SIGMA, y=Y))


def test_unused_latent_computations_are_pruned():
    def model(y):
        a = numpyro.sample("a", dist.Normal(0.0, 1.0))
        numpyro.deterministic("report", jnp.tanh(a) * 3.0)  # feeds no distribution
        numpyro.sample("y", dist.Normal(a, 1.0), obs=y)

    graph = model_graph(model, 0.5)
    assert "tanh" not in graph.node_label and "mul" not in graph.node_label
    assert graph.num_nodes == 2 + 2 + 1 + 1  # a, y; a's loc and scale; y's scale; y's observed value


def test_static_index_arithmetic_folds_into_one_data_node():
    def model(idx, y):
        alpha = numpyro.sample("alpha", dist.Normal(jnp.zeros(3), 1.0).to_event(1))
        with numpyro.plate("obs", idx.shape[0]):
            numpyro.sample("y", dist.Normal(alpha[idx], 1.0), obs=y)

    graph = model_graph(model, np.array([0, 2, 2, 1]), np.zeros(4, np.float32))
    assert [graph.node_label[i] for i in np.flatnonzero(graph.node_type == NodeType.PRIMITIVE)] == ["gather"]
    row = dict(zip(graph.node_feature_names, graph.node_features[graph.node_label.index("gather")]))
    assert row["index_summarised"] == 1.0
    assert row["index_log_groups"] == pytest.approx(np.log(3))
    assert row["index_log_max_count"] == pytest.approx(np.log1p(2))
    assert row["index_fraction_empty"] == 0.0
    assert graph.element_features.shape[0] == 3


def test_commutative_operands_have_no_position():
    def model_a(x, y):
        b = numpyro.sample("b", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(b * x - 1.0, 1.0), obs=y)

    def model_b(x, y):
        b = numpyro.sample("b", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(x * b - 1.0, 1.0), obs=y)

    x, y = np.linspace(-1, 1, 5, dtype=np.float32), np.zeros(5, np.float32)
    graph = model_graph(model_a, x, y)
    assert_same_graph(graph, model_graph(model_b, x, y))
    kinds = Counter(EdgeType(int(k)).name for k in graph.edge_type)
    assert kinds["OPERAND"] == 2 and kinds["OPERAND_0"] == 1 and kinds["OPERAND_1"] == 1  # mul; sub


def test_scan_is_one_node():
    def model(y):
        rho = numpyro.sample("rho", dist.Normal(0.0, 0.5))
        level = jax.lax.scan(lambda carry, _: (carry * jnp.tanh(rho) + 1.0, carry), 0.0, None, length=20)[1]
        with numpyro.plate("t", 20):
            numpyro.sample("y", dist.Normal(level, 1.0), obs=y)

    graph = model_graph(model, np.zeros(20, np.float32))
    labels = [graph.node_label[i] for i in np.flatnonzero(graph.node_type == NodeType.PRIMITIVE)]
    assert labels == ["scan"]  # tanh(rho) is computed inside the loop body, which is not expanded
    edges = _edges(graph)
    assert edges[("rho", "OPERAND_0", "scan")] == 1  # a loop constant (closed over by the body)
    assert edges[("constant", "OPERAND_1", "scan")] == 1  # the initial carry
    row = dict(zip(graph.node_feature_names, graph.node_features[graph.node_label.index("scan")]))
    assert row["log_contraction"] == pytest.approx(np.log(20))


def test_other_latent_families_are_typed_and_keep_their_parameters():
    def model(y):
        rate = numpyro.sample("rate", dist.Gamma(2.0, 1.0))
        scale = numpyro.sample("scale", dist.HalfNormal(1.0))
        nu = numpyro.sample("nu", dist.Exponential(0.1))
        numpyro.sample("y", dist.StudentT(nu + 1.0, rate, scale), obs=y)

    graph = model_graph(model, np.array([0.3, 1.2], np.float32))
    types = {graph.node_name[i]: NodeType(int(graph.node_type[i])) for i in range(4)}
    assert types == {"rate": NodeType.LATENT_OTHER, "scale": NodeType.LATENT_LOC_SCALE,
                     "nu": NodeType.LATENT_LOC_SCALE, "y": NodeType.OBSERVED}
    edges = _edges(graph)
    assert edges[("constant", "PARAM", "rate")] == 2  # Gamma's concentration and rate
    assert edges[("rate", "LOC", "y")] == 1 and edges[("scale", "SCALE", "y")] == 1
    assert edges[("add", "PARAM", "y")] == 1  # StudentT's df
    # Exponential's scale is 1 / rate: evaluated, since the rate is a constant.
    scale_of_nu = next(s for (s, t), k in zip(graph.edge_index.T, graph.edge_type)
                       if graph.node_name[t] == "nu" and k == EdgeType.SCALE)
    row = dict(zip(graph.node_feature_names, graph.node_features[scale_of_nu]))
    assert row["mean_log_abs"] == pytest.approx(np.log(10.0))
    reparameterisable = graph.element_features[:, graph.element_feature_names.index("reparameterisable")]
    np.testing.assert_array_equal(reparameterisable, [0.0, 1.0, 1.0])


# The primitives the issue lists, each written the way a modeller would; the label must appear as a node.
_COVERED = {
    "add": lambda x, d: x + d, "sub": lambda x, d: d - x, "mul": lambda x, d: x * d, "div": lambda x, d: x / d,
    "neg": lambda x, d: -x, "exp": lambda x, d: jnp.exp(x), "log": lambda x, d: jnp.log(jnp.exp(x)),
    "log1p": lambda x, d: jnp.log1p(jnp.exp(x)), "logistic": lambda x, d: jax.nn.sigmoid(x),
    "dot_general": lambda x, d: jnp.outer(d, d) @ x, "gather": lambda x, d: x[jnp.array([2, 0, 0])],
    "concatenate": lambda x, d: jnp.concatenate([x[:1], x[1:] * d[1:]]),
    "select_n": lambda x, d: jnp.where(d > 1.5, x, d), "reduce_sum": lambda x, d: jnp.sum(x) * d,
    "integer_pow": lambda x, d: x**3, "pow": lambda x, d: jnp.exp(x) ** d, "sqrt": lambda x, d: jnp.sqrt(jnp.exp(x)),
    "tanh": lambda x, d: jnp.tanh(x), "max": lambda x, d: jnp.maximum(x, d), "min": lambda x, d: jnp.minimum(x, d),
    "abs": lambda x, d: jnp.abs(x), "dynamic_slice": lambda x, d: jax.lax.dynamic_slice(jnp.tile(x, 2), (1,), (3,)),
}


def test_covered_primitives_become_nodes():
    # One observed site per primitive, in one model: one build instead of twenty-two.
    def model(d, y):
        x = numpyro.sample("x", dist.Normal(jnp.zeros(3), 1.0).to_event(1))
        for primitive, op in _COVERED.items():
            numpyro.sample(primitive, dist.Normal(op(x, d), 1.0).to_event(1), obs=y)

    graph = model_graph(model, np.array([1.0, 2.0, 3.0], np.float32), np.zeros(3, np.float32))
    labels = set(graph.node_label)
    assert sorted(p for p in _COVERED if p not in labels) == []


def test_layout_primitives_leave_no_node():
    def plain(y):
        x = numpyro.sample("x", dist.Normal(jnp.zeros(3), 1.0).to_event(1))
        numpyro.sample("y", dist.Normal(jnp.exp(x), 1.0).to_event(1), obs=y)

    def reshaped(y):
        x = numpyro.sample("x", dist.Normal(jnp.zeros(3), 1.0).to_event(1))
        moved = jnp.squeeze(jnp.expand_dims(x, 0).reshape(1, 3).astype(jnp.float32), 0)
        numpyro.sample("y", dist.Normal(jnp.exp(moved), 1.0).to_event(1), obs=y)

    y = np.zeros(3, np.float32)
    assert_same_graph(model_graph(plain, y), model_graph(reshaped, y))


def test_a_numpyro_scan_with_a_site_in_its_body_builds_without_its_key_plumbing():
    """NumPyro's scan splits a PRNG key every step: skipped in the body, and the key gets no node."""
    from numpyro.contrib.control_flow import scan

    def model(y):
        sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))

        def step(level, y_t):
            level = numpyro.sample("level", dist.Normal(level, sigma))
            numpyro.sample("y", dist.Normal(level, 1.0), obs=y_t)
            return level, None

        scan(step, 0.0, y)

    graph = model_graph(model, np.zeros(20, np.float32))
    assert "level" in graph.node_name and "sigma" in graph.node_name
    assert "scan" in graph.node_label
    edges = _edges(graph)
    # The carries: NumPyro's step counter and the initial level; its PRNG key carry has no node.
    assert edges[("constant", "OPERAND_1", "scan")] == 2
    assert edges[("sigma", "OPERAND_0", "scan")] == 1 and edges[("scan", "LOC", "level")] == 1

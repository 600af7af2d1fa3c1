"""ModelGraph as data: JSON round trip, refusal of bad files, batching, describe and the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autoreparam.cli import main
from autoreparam.errors import ArgumentError, DataError
from autoreparam.graph import ModelGraph, NodeType, batch_graphs, model_graph
from autoreparam.graph.types import NUM_EDGE_TYPES
from autoreparam.graph.vocabulary import NO_LABEL, label_id
from autoreparam.models import eight_schools, gaussian_section3, gaussian_section3_data

SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0], dtype=np.float32)
Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0], dtype=np.float32)


@pytest.fixture(scope="module")
def schools():
    return model_graph(eight_schools, SIGMA, y=Y)


@pytest.fixture(scope="module")
def section3():
    y, sigma = gaussian_section3_data(1.0, n=10)
    return model_graph(gaussian_section3, y=y, sigma=sigma)


def test_json_round_trip_is_exact(schools):
    back = ModelGraph.from_json(schools.to_json())
    for field in ("node_type", "node_features", "edge_index", "edge_type", "element_node", "element_index",
                  "element_features"):
        np.testing.assert_array_equal(getattr(back, field), getattr(schools, field), err_msg=field)
        assert getattr(back, field).dtype == getattr(schools, field).dtype
    assert (back.node_label, back.node_name, back.node_shape) == (schools.node_label, schools.node_name,
                                                                  schools.node_shape)
    assert back.describe() == schools.describe()


def test_from_json_refuses_what_is_not_a_graph(schools):
    payload = json.loads(schools.to_json())
    with pytest.raises(DataError, match="invalid JSON"):
        ModelGraph.from_json("{not json")
    with pytest.raises(DataError, match="lacks format"):
        ModelGraph.from_json(json.dumps({**payload, "format": "pickle"}))
    with pytest.raises(DataError, match="version 99"):
        ModelGraph.from_json(json.dumps({**payload, "version": 99}))
    with pytest.raises(DataError, match="incomplete"):
        ModelGraph.from_json(json.dumps({k: v for k, v in payload.items() if k != "edge_type"}))
    with pytest.raises(DataError, match="edge_index range"):
        ModelGraph.from_json(json.dumps({**payload, "edge_index": [[0], [len(payload["node_type"])]],
                                         "edge_type": [0]}))


def test_subtypes_index_one_vocabulary(schools):
    subtype = schools.node_subtype
    assert subtype[schools.node_label.index("exp")] == label_id("exp")
    assert subtype[schools.site_node("theta")] == label_id("Normal") != label_id("exp")
    assert set(subtype[np.isin(schools.node_type, [NodeType.CONSTANT, NodeType.DATA])]) == {NO_LABEL}


def test_batch_offsets_nodes_edges_and_elements(schools, section3):
    batch = batch_graphs([schools, section3])
    n1 = schools.num_nodes
    assert batch.num_graphs == 2
    assert len(batch.node_type) == n1 + section3.num_nodes
    np.testing.assert_array_equal(batch.node_graph, [0] * n1 + [1] * section3.num_nodes)
    e1, e2 = 2 * schools.num_edges, 2 * section3.num_edges  # with reverse edges
    assert batch.edge_index.shape == (2, e1 + e2)
    np.testing.assert_array_equal(batch.edge_index[:, e1:], section3.message_edges()[0] + n1)
    assert batch.edge_type.max() < 2 * NUM_EDGE_TYPES
    np.testing.assert_array_equal(batch.element_node[schools.num_elements:], section3.element_node + n1)
    np.testing.assert_array_equal(batch.element_graph, [0] * schools.num_elements + [1] * section3.num_elements)
    # Every element row points at a latent node of its own graph.
    assert np.all(batch.node_graph[batch.element_node] == batch.element_graph)
    assert set(batch.node_type[batch.element_node]) <= {NodeType.LATENT_LOC_SCALE, NodeType.LATENT_OTHER}
    with pytest.raises(ArgumentError):
        batch_graphs([])


def test_describe_shows_each_site_and_its_parameters(schools):
    text = schools.describe()
    assert "11 nodes, 10 edges (+10 reverse), 10 latent elements" in text
    assert "loc <- mu; scale <- exp(log_tau)" in text
    assert "observed_of <- data[8]" in text


def test_cli_prints_the_graph_and_writes_json(tmp_path, capsys):
    path = tmp_path / "graph.json"
    assert main(["graph", "eight_schools", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "theta" in out and "scale <- exp(log_tau)" in out
    assert ModelGraph.from_json(path.read_text()).num_nodes == 11
    assert main(["graph", "no_such_model"]) == 2
    assert "unknown problem" in capsys.readouterr().err


def test_docs_document_every_type_and_feature():
    from pathlib import Path

    from autoreparam.graph import ELEMENT_FEATURES, NODE_FEATURES, EdgeType

    text = (Path(__file__).resolve().parents[2] / "docs" / "graph.md").read_text()
    names = [n for n, _ in NODE_FEATURES] + [n for n, _ in ELEMENT_FEATURES]
    names += [t.name for t in NodeType] + [t.name for t in EdgeType]
    assert [n for n in names if f"`{n}`" not in text] == []


def test_graph_imports_nothing_above_site_analysis():
    import ast
    from pathlib import Path

    import autoreparam.graph

    # ``model_data`` (a model's arguments split into arrays and the rest) and ``validation`` (checks of
    # a call and of a model's log density) import nothing of ours but ``errors``.
    allowed = ("autoreparam.errors", "autoreparam.graph", "autoreparam.reparam", "autoreparam.model_data",
               "autoreparam.validation")
    found = []
    for path in Path(autoreparam.graph.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            found += [(path.name, n) for n in names if n.startswith("autoreparam") and not n.startswith(allowed)]
    assert found == []

"""The hand-written zoo models and their programs in the language (examples/) give the same typed graph."""

from __future__ import annotations

import pytest

from autoreparam.graph import model_graph
from autoreparam.graph.compare import assert_same_graph
from autoreparam.lang import compile_program
from autoreparam.lang.export import write_problem_data
from autoreparam.models import load
from tests.lang.conftest import EXAMPLES
from tests.lang.test_zoo_programs import ZOO


@pytest.mark.parametrize("name", list(ZOO))
def test_program_and_numpyro_model_have_the_same_graph(name, data_dir, tmp_path):
    problem = load(name, data_dir=data_dir)
    data_file = tmp_path / f"{name}.json"
    write_problem_data(problem, data_file)
    model, args, kwargs = compile_program(EXAMPLES / f"{ZOO[name]}.arp", data_file)
    assert_same_graph(model_graph(problem.model, *problem.args, **problem.kwargs), model_graph(model, *args, **kwargs))

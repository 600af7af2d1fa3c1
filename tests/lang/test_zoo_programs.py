"""The zoo models written in the language (examples/) give the NumPyro models' log joint."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro import handlers
from numpyro.infer.util import log_density

from autoreparam.errors import ArgumentError
from autoreparam.lang import compile_program
from autoreparam.lang.export import export_problem_data, write_problem_data
from autoreparam.models import load
from tests.lang.conftest import EXAMPLES

ZOO = {  # problem -> program file
    "eight_schools": "eight_schools",
    "radon_mn": "radon",
    "german_credit": "german_credit",
    "election88": "election88",
    "electric": "electric",
}


def _latent_shapes(model, args, kwargs):
    trace = handlers.trace(handlers.seed(model, 0)).get_trace(*args, **kwargs)
    return {k: v["value"].shape for k, v in trace.items() if v["type"] == "sample" and not v["is_observed"]}, \
        {k for k, v in trace.items() if v["type"] == "sample" and v["is_observed"]}


@pytest.mark.parametrize("name", list(ZOO))
def test_program_matches_the_numpyro_model(name, data_dir, tmp_path):
    problem = load(name, data_dir=data_dir)
    data_file = tmp_path / f"{name}.json"
    write_problem_data(problem, data_file)  # through the JSON file format, as a user would
    model, args, kwargs = compile_program(EXAMPLES / f"{ZOO[name]}.arp", data_file)

    shapes, observed = _latent_shapes(problem.model, problem.args, problem.kwargs)
    assert _latent_shapes(model, args, kwargs) == (shapes, observed)  # same site names and shapes

    def ours(params):
        return log_density(model, args, kwargs, params)[0]

    def theirs(params):
        return log_density(problem.model, problem.args, problem.kwargs, params)[0]

    # Four random points, inside the prior's typical set and well away from it; values and gradients.
    keys = jax.random.split(jax.random.PRNGKey(7), len(shapes))
    points = {k: 2.0 * jax.random.normal(key, (4, *s)) for key, (k, s) in zip(keys, shapes.items())}
    evaluate = jax.jit(jax.vmap(lambda p: (jax.value_and_grad(ours)(p), jax.value_and_grad(theirs)(p))))
    (value, grad), (ref_value, ref_grad) = evaluate(points)
    assert np.all(np.isfinite(ref_value))
    np.testing.assert_allclose(value, ref_value, rtol=2e-5)
    for k in shapes:
        scale = float(jnp.abs(ref_grad[k]).max())
        np.testing.assert_allclose(grad[k], ref_grad[k], rtol=1e-3, atol=1e-4 * scale)


def test_quirks_data_are_refused(data_dir):
    with pytest.raises(ArgumentError, match="quirks"):
        export_problem_data(load("election88", data_dir=data_dir, quirks=True))


def test_eight_schools_needs_no_data_folder():
    problem = load("eight_schools")
    data = export_problem_data(problem)
    assert data["J"] == 8 and data["y"][0] == 28.0

"""``quirks=True`` changes what REFERENCE.md says it changes, and nothing else."""

from __future__ import annotations

import numpy as np
import pytest
from jax import random
from numpyro import handlers

import autoreparam.models as zoo
from autoreparam.models import data
from autoreparam.models.indexing import take_or_zero


def _observed_fn(problem, values):
    """The distribution of the observed site ``y`` with the latents set to `values`."""
    model = handlers.substitute(handlers.seed(problem.model, random.PRNGKey(0)), data=values)
    return handlers.trace(model).get_trace(*problem.args, **problem.kwargs)["y"]["fn"]


def test_take_or_zero():
    np.testing.assert_array_equal(take_or_zero(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 3])), [1.0, 3.0, 0.0])


def test_election_quirk_leaves_the_last_state_without_effect(data_dir):
    ours, original = (zoo.load("election88", data_dir=data_dir, quirks=q) for q in (False, True))
    np.testing.assert_array_equal(original.args[0], ours.args[0] + 1)
    a = np.arange(1.0, 52.0)  # a_s = s + 1 (0-based s), all nonzero
    values = {"mu_a": 0.0, "log_sigma_a": 0.0, "a": a, "b1": 0.0, "b2": 0.0}
    logits_ours = np.asarray(_observed_fn(ours, values).logits)
    logits_original = np.asarray(_observed_fn(original, values).logits)
    np.testing.assert_array_equal(logits_ours, a[ours.args[0]])
    last = ours.args[0] == 50
    assert last.any()
    np.testing.assert_array_equal(logits_original[last], 0.0)  # no state effect
    np.testing.assert_array_equal(logits_original[~last], a[ours.args[0][~last] + 1])  # shifted by one


def test_electric_quirk_leaves_last_pair_and_grade_without_effect(data_dir):
    ours, original = (zoo.load("electric", data_dir=data_dir, quirks=q) for q in (False, True))
    values = {"mu": np.ones(4), "log_sigma_y": np.full(4, 0.5), "a": np.arange(1.0, 97.0), "b": np.full(4, 10.0)}
    fn = _observed_fn(original, values)
    pair, grade, treatment = ours.args[0], ours.args[1], ours.args[3]
    loc, scale = np.asarray(fn.loc), np.asarray(fn.scale)
    last_pair, last_grade = pair == 95, grade == 3
    # Pair 96: no intercept; grade 4: no treatment effect and unit noise scale.
    np.testing.assert_array_equal(loc[last_pair], 10.0 * treatment[last_pair] * ~last_grade[last_pair])
    np.testing.assert_allclose(scale[last_grade], 1.0)
    np.testing.assert_allclose(scale[~last_grade], np.exp(0.5))
    fn_ours = _observed_fn(ours, values)
    np.testing.assert_allclose(np.asarray(fn_ours.loc), values["a"][pair] + 10.0 * treatment)
    np.testing.assert_allclose(np.asarray(fn_ours.scale), np.exp(0.5))
    # Pairs of grade 4 get prior mean 0 instead of 100 mu_4.
    trace = handlers.trace(handlers.substitute(handlers.seed(original.model, 0), data=values)).get_trace(
        *original.args, **original.kwargs)
    a_loc = np.asarray(trace["a"]["fn"].loc)
    np.testing.assert_array_equal(a_loc[ours.args[2] == 3], 0.0)
    np.testing.assert_array_equal(a_loc[ours.args[2] != 3], 100.0)


def test_radon_quirk_changes_uranium_and_floor(data_dir):
    ours, original = (zoo.load("radon_az", data_dir=data_dir, quirks=q) for q in (False, True))
    assert np.max(original.args[1]) == 9.0 and np.max(ours.args[1]) < 9.0
    np.testing.assert_array_equal(original.kwargs["y"], ours.kwargs["y"])  # same houses, same order


@pytest.mark.parametrize("name", ["eight_schools", "german_credit", "neals_funnel", "gaussian_section3"])
def test_quirks_change_nothing_else(name, data_dir):
    a, b = (zoo.load(name, data_dir=data_dir, quirks=q) for q in (False, True))
    for x, y in zip(a.args, b.args):
        np.testing.assert_array_equal(x, y)
    assert a.kwargs.keys() == b.kwargs.keys()
    for key in a.kwargs:
        np.testing.assert_array_equal(a.kwargs[key], b.kwargs[key])


def test_quirk_indices_stay_one_based(data_dir):
    d = data.load_electric(data_dir, quirks=True)
    assert d.pair.min() == 1 and d.pair.max() == 96 and d.grade.max() == 4

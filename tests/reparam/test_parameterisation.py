"""Parameterisation: per-site, per-element centring arrays; constructors, views and the pytree."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from autoreparam.errors import ArgumentError
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model

from .zoo import EIGHT_SCHOOLS_SIGMA, EIGHT_SCHOOLS_Y, eight_schools


@pytest.fixture(scope="module")
def plan():
    return select_sites(analyse_model(eight_schools, EIGHT_SCHOOLS_SIGMA, y=EIGHT_SCHOOLS_Y), "all")


def test_constructors_broadcast_to_every_element(plan):
    for param, value in ((Parameterisation.centred(plan), 1.0), (Parameterisation.non_centred(plan), 0.0),
                         (Parameterisation.tied(plan, 0.3), 0.3)):
        assert param.names == ("log_tau", "mu", "theta") and param.is_tied
        assert param.lam["theta"].shape == (8,) and param.lam["mu"].shape == ()
        np.testing.assert_allclose(param.lam["theta"], value)


def test_separate_form_keeps_a_and_b_apart(plan):
    param = Parameterisation.separate(plan, 0.2, 0.7)
    assert not param.is_tied
    np.testing.assert_allclose(param.loc_centring["theta"], 0.2)
    np.testing.assert_allclose(param.lam["theta"], 0.7)  # lam reports b when untied
    assert "(a mean 0.20)" in param.describe()
    same = Parameterisation.separate(plan, 0.4, 0.4)
    assert same.is_tied


def test_rounded_is_the_discrete_variant(plan):
    lam = jnp.array([0.0, 0.2, 0.49, 0.51, 0.9, 1.0, 0.01, 0.99])
    rounded = Parameterisation.tied(plan, {"mu": 0.7, "log_tau": 0.3, "theta": lam}).rounded()
    np.testing.assert_array_equal(rounded.lam["theta"], [0, 0, 0, 1, 1, 1, 0, 1])
    assert float(rounded.lam["mu"]) == 1.0 and float(rounded.lam["log_tau"]) == 0.0
    assert rounded.is_tied


def test_is_a_pytree_that_jit_and_vmap_accept(plan):
    param = Parameterisation.tied(plan, {"mu": 0.1, "log_tau": 0.2, "theta": jnp.linspace(0, 1, 8)})
    leaves, treedef = jax.tree_util.tree_flatten(param)
    assert len(leaves) == 6
    back = jax.tree_util.tree_unflatten(treedef, leaves)
    np.testing.assert_array_equal(back.lam["theta"], param.lam["theta"])
    doubled = jax.jit(lambda p: jax.tree_util.tree_map(lambda x: x / 2, p))(param)
    np.testing.assert_allclose(doubled.lam["theta"], np.linspace(0, 0.5, 8), rtol=1e-6)
    stacked = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), param, Parameterisation.centred(plan))
    means = jax.vmap(lambda p: jnp.mean(p.scale_centring["theta"]))(stacked)
    np.testing.assert_allclose(means, [0.5, 1.0], rtol=1e-6)


def test_mismatched_site_names_are_an_argument_error():
    with pytest.raises(ArgumentError, match="same sites"):
        Parameterisation({"theta": 0.0}, {"mu": 0.0})

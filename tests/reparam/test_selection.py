"""Site analysis and site policies: which latents get reparameterised, found by tracing, with reasons."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from autoreparam.errors import ArgumentError, SiteError
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model

from .zoo import EIGHT_SCHOOLS_SIGMA, EIGHT_SCHOOLS_Y, arithmetic, eight_schools, indexed, misleading_names


@pytest.fixture(scope="module")
def schools():
    return analyse_model(eight_schools, EIGHT_SCHOOLS_SIGMA, y=EIGHT_SCHOOLS_Y)


@pytest.fixture(scope="module")
def arith():
    return analyse_model(arithmetic, jnp.asarray(1.0))


def decisions(plan) -> dict[str, tuple[bool, str]]:
    return {d.name: (d.reparameterise, d.reason) for d in plan.decisions}


def test_structure_of_eight_schools(schools):
    assert schools.names == ("mu", "log_tau", "theta")
    assert schools.observed == ("y",)
    assert schools["theta"].shape == (8,) and schools["theta"].event_dim == 0
    assert schools["mu"].shape == () and schools.num_latent_dims == 10
    assert {s.name: s.depends_on for s in schools.latents} == {"mu": (), "log_tau": (), "theta": ("log_tau", "mu")}
    assert all(s.family.name == "Normal" for s in schools.latents)


def test_default_picks_only_theta_in_eight_schools(schools):
    plan = select_sites(schools, "default")
    assert plan.policy == "default" and plan.names == ("theta",)
    made = decisions(plan)
    assert made["theta"][0] and "log_tau" in made["theta"][1] and "mu" in made["theta"][1]
    for name in ("mu", "log_tau"):
        assert made[name] == (False, "left centred: prior location and scale are constants")


def test_all_picks_every_location_scale_latent(schools, arith):
    assert select_sites(schools, "all").names == ("mu", "log_tau", "theta")
    plan = select_sites(arith, "all")
    assert plan.names == ("a", "b", "x", "s", "w")  # everything but the Gamma
    assert decisions(plan)["g"][0] is False


def test_explicit_list_picks_exactly_those(schools):
    plan = select_sites(schools, ["mu"])
    assert plan.policy == "explicit" and plan.names == ("mu",)
    made = decisions(plan)
    assert made["mu"] == (True, "requested by name")
    assert made["theta"] == (False, "not requested") and made["log_tau"] == (False, "not requested")
    assert select_sites(schools, []).names == ()


def test_dependence_through_arithmetic_deterministic_select_and_scale(arith):
    deps = {s.name: s.depends_on for s in arith.latents}
    assert deps == {"a": (), "b": (), "x": ("a",), "g": (), "s": ("b",), "w": ("a",)}
    plan = select_sites(arith, "default")
    assert plan.names == ("x", "s", "w")
    assert arith["s"].family.kind == "scale" and arith["g"].family is None


def test_gamma_latent_is_recorded_as_left_centred_under_default_and_all(arith):
    for policy in ("default", "all"):
        reparameterised, reason = decisions(select_sites(arith, policy))["g"]
        assert reparameterised is False
        assert reason.startswith("left centred") and "Gamma" in reason
        assert "g" in select_sites(arith, policy).report()


def test_names_do_not_mislead_the_default_policy():
    structure = analyse_model(misleading_names, jnp.zeros(4))
    assert {s.name: s.depends_on for s in structure.latents} == {
        "loc_of_theta": (), "tau_scale": (), "weight": (), "theta": (), "c": ("weight",)
    }
    assert select_sites(structure, "default").names == ("c",)


def test_dependence_through_an_integer_index():
    structure = analyse_model(indexed, jnp.array([0, 2, 2, 1]), jnp.zeros(4))
    assert structure["alpha"].shape == (3,) and structure["alpha"].event_dim == 1
    assert structure["m"].depends_on == ("alpha",)
    assert select_sites(structure, "default").names == ("m",)


def test_report_has_a_line_per_latent(schools):
    text = select_sites(schools, "default").report().splitlines()
    assert len(text) == 1 + 3
    assert [line.split()[0] for line in text[1:]] == ["mu", "log_tau", "theta"]
    assert text[3].split()[1] == "yes" and text[1].split()[1] == "no"


def test_plan_sites_carry_the_analysis(schools):
    plan = select_sites(schools, "default")
    assert plan.site("theta") is schools["theta"]
    assert np.shape(schools.prior_draw["theta"]) == (8,)


@pytest.mark.parametrize("bad", ["everything", "Default", ""])
def test_unknown_policy_string_is_an_argument_error(schools, bad):
    with pytest.raises(ArgumentError, match="default"):
        select_sites(schools, bad)


def test_explicit_list_rejects_observed_unknown_and_unsupported_names(schools, arith):
    with pytest.raises(SiteError, match="'y'.*observed") as info:
        select_sites(schools, ["y"])
    assert info.value.site == "y"
    with pytest.raises(SiteError, match="'tau'.*not a latent") as info:
        select_sites(schools, ["theta", "tau"])
    assert info.value.site == "tau"
    with pytest.raises(SiteError, match="'g'.*Gamma") as info:
        select_sites(arith, ["x", "g"])
    assert info.value.site == "g"

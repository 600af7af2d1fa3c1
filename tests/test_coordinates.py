"""Coordinates: the log-density identity, the Jacobian and the round trips of every family's map.

For every family of ``families.FAMILIES``, under five site shapes (scalar, batch vector, plate, event
dim, 2-D plate pair) and five centrings (CP, NCP, lambda = 0.3, separate a != b, one lambda per
element), with the family's location and scale depending on upstream latents:

- ``log p_u(u) == log p_v(v(u)) + log|det dv/du|`` (paper 000 Section 5.2; STYLE.md habit 3);
- ``log p_v(v)`` is NumPyro's own ``log_density`` of the original model at ``z`` plus the
  log-Jacobian of ``biject_to(support)`` (an oracle independent of ``Coordinates``);
- the ``ldj`` that ``to_cp`` returns equals ``slogdet`` of the Jacobian of the flat map computed by
  ``jax.jacfwd`` (an oracle independent of every hand-written ``log_abs_det_jacobian``).

Cases are dispatched through dicts and each test asserts that the family it names was found on the
traced site, so a parametrised case cannot silently test less (STYLE.md, "Patterns to avoid").
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from jax.flatten_util import ravel_pytree
from numpyro import handlers
from numpyro.distributions import biject_to
from numpyro.infer import init_to_value
from numpyro.infer.util import log_density

from autoreparam.coordinates import Coordinates
from autoreparam.errors import ArgumentError, ModelError, SiteError
from autoreparam.initial import initial_values
from autoreparam.models import eight_schools
from autoreparam.reparam.families import FAMILIES, find_family
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model

TOL = 1e-6  # the identity is exact; in float64 only round-off remains (values are O(10))

# family name -> distribution built from a location and a scale (scale families ignore the location)
FAMILY_BUILDERS = {
    "Normal": lambda loc, scale: dist.Normal(loc, scale),
    "StudentT": lambda loc, scale: dist.StudentT(3.5, loc, scale),
    "Cauchy": lambda loc, scale: dist.Cauchy(loc, scale),
    "Laplace": lambda loc, scale: dist.Laplace(loc, scale),
    "Logistic": lambda loc, scale: dist.Logistic(loc, scale),
    "Gumbel": lambda loc, scale: dist.Gumbel(loc, scale),
    "SoftLaplace": lambda loc, scale: dist.SoftLaplace(loc, scale),
    "LogNormal": lambda loc, scale: dist.LogNormal(loc, scale),
    "HalfNormal": lambda loc, scale: dist.HalfNormal(scale),
    "HalfCauchy": lambda loc, scale: dist.HalfCauchy(scale),
    "Exponential": lambda loc, scale: dist.Exponential(1.0 / scale),
}


def test_every_registered_family_has_a_case():
    assert set(FAMILY_BUILDERS) == {f.name for f in FAMILIES}
    assert len(FAMILIES) == 11


# --- site shapes: each draws x from the family with loc/scale depending on mu and log_s ---------------
def _offsets(n):
    return jnp.linspace(-1.0, 1.0, n)


def _scalar(make, mu, s):
    x = numpyro.sample("x", make(mu, s))
    numpyro.sample("y", dist.Normal(x, 1.0), obs=jnp.asarray(0.7))


def _vector(make, mu, s):  # batch shape (3,) from vector parameters, no plate
    x = numpyro.sample("x", make(mu + _offsets(3), s * jnp.array([0.5, 1.0, 2.0])))
    numpyro.sample("y", dist.Normal(x, 1.0).to_event(1), obs=jnp.array([0.3, 1.1, 2.0]))


def _plate(make, mu, s):
    with numpyro.plate("items", 3):
        x = numpyro.sample("x", make(mu, s))
        numpyro.sample("y", dist.Normal(x, 1.0), obs=jnp.array([0.3, 1.1, 2.0]))


def _event(make, mu, s):  # one site with event dim 1
    x = numpyro.sample("x", make(mu + _offsets(3), s * jnp.array([0.5, 1.0, 2.0])).to_event(1))
    numpyro.sample("y", dist.Normal(x, 1.0).to_event(1), obs=jnp.array([0.3, 1.1, 2.0]))


def _plate2d(make, mu, s):
    with numpyro.plate("rows", 2, dim=-2), numpyro.plate("cols", 3, dim=-1):
        x = numpyro.sample("x", make(mu, s))
        numpyro.sample("y", dist.Normal(x, 1.0), obs=jnp.arange(6.0).reshape(2, 3) / 3)


# shape name -> (site builder, expected value shape of x, expected event_dim of x)
SHAPES = {
    "scalar": (_scalar, (), 0),
    "vector": (_vector, (3,), 0),
    "plate": (_plate, (3,), 0),
    "event": (_event, (3,), 1),
    "plate2d": (_plate2d, (2, 3), 0),
}


def make_model(family: str, shape: str):
    make = FAMILY_BUILDERS[family]
    site = SHAPES[shape][0]

    def model():
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        log_s = numpyro.sample("log_s", dist.Normal(0.0, 1.0))
        site(make, mu, jnp.exp(log_s))

    return model


def build(family: str, shape: str) -> Coordinates:
    """Coordinates of the model with x reparameterised, after checking the case is what it claims."""
    model = make_model(family, shape)
    structure = analyse_model(model)
    site = structure["x"]
    assert site.family is not None and site.family.name == family
    assert site.shape == SHAPES[shape][1] and site.event_dim == SHAPES[shape][2]
    trace = handlers.trace(handlers.seed(model, rng_seed=1)).get_trace()
    assert find_family(trace["x"]["fn"]).name == family
    # x's prior depends on upstream latents (location families on mu and log_s, scale families on log_s)
    expected_deps = ("log_s",) if site.family.kind == "scale" else ("log_s", "mu")
    assert site.depends_on == expected_deps
    plan = select_sites(structure, "default")
    assert plan.names == ("x",)
    return Coordinates(model, (), {}, plan)


def _elementwise(shape):
    size = int(np.prod(shape, dtype=int))
    return jnp.linspace(0.1, 0.9, size).reshape(shape) if shape else jnp.asarray(0.6)


# centring name -> Parameterisation of the plan
CENTRINGS = {
    "cp": lambda plan: Parameterisation.tied(plan, 1.0),
    "ncp": lambda plan: Parameterisation.tied(plan, 0.0),
    "lambda=0.3": lambda plan: Parameterisation.tied(plan, 0.3),
    "a=0.2,b=0.7": lambda plan: Parameterisation.separate(plan, 0.2, 0.7),
    "elementwise": lambda plan: Parameterisation.tied(plan, {"x": _elementwise(plan.site("x").shape)}),
}


def position(coords: Coordinates) -> dict:
    shape = coords.structure["x"].shape
    size = int(np.prod(shape, dtype=int))
    x = jnp.linspace(-0.8, 0.9, size).reshape(shape) if shape else jnp.asarray(-0.35)
    return {"mu": jnp.asarray(0.3), "log_s": jnp.asarray(-0.4), "x": x}


CASES = [(f, s) for f in FAMILY_BUILDERS for s in SHAPES]


@pytest.mark.parametrize("family, shape", CASES)
def test_log_density_identity(family, shape):
    with jax.enable_x64(True):
        coords = build(family, shape)
        u = position(coords)
        for label, make_param in CENTRINGS.items():
            param = make_param(coords.plan)
            v, z, ldj = coords.to_cp(u, param)
            lhs = coords.log_density(u, param)
            rhs = coords.log_density_cp(v) + ldj
            assert lhs.dtype == jnp.float64
            assert np.isfinite(float(lhs)), label
            assert abs(float(lhs - rhs)) < TOL, (label, float(lhs), float(rhs))
            if label == "cp":  # the identity map (up to round-off in mu + (x - mu)): v == u, ldj == 0
                np.testing.assert_allclose(v["x"], u["x"], rtol=0, atol=1e-12)
                assert abs(float(ldj)) < 1e-12
            if label == "ncp":  # a real change of coordinates, so the identity above is not vacuous
                assert not np.allclose(np.asarray(v["x"]), np.asarray(u["x"]))
                if coords.structure["x"].family.kind != "scale":  # scale families: v = u + const, ldj = 0
                    assert abs(float(ldj)) > 1e-3


@pytest.mark.parametrize("family, shape", CASES)
def test_cp_density_is_numpyro_log_density_plus_support_jacobian(family, shape):
    with jax.enable_x64(True):
        coords = build(family, shape)
        u = position(coords)
        for label, make_param in CENTRINGS.items():
            v, z, _ = coords.to_cp(u, make_param(coords.plan))
            oracle, trace = log_density(coords.model, (), {}, z)
            for name in coords.names:
                fn = trace[name]["fn"]
                oracle = oracle + jnp.sum(biject_to(fn.support).log_abs_det_jacobian(v[name], z[name]))
            assert abs(float(coords.log_density_cp(v) - oracle)) < TOL, label


@pytest.mark.parametrize("family, shape", CASES)
def test_log_jacobian_matches_slogdet_of_jacfwd(family, shape):
    with jax.enable_x64(True):
        coords = build(family, shape)
        u = position(coords)
        flat_u, unravel_u = ravel_pytree(u)
        for label, make_param in CENTRINGS.items():
            param = make_param(coords.plan)

            def flat_map(flat, param=param):
                return ravel_pytree(coords.to_cp(unravel_u(flat), param)[0])[0]

            jacobian = jax.jacfwd(flat_map)(flat_u)
            assert jacobian.shape == (flat_u.size, flat_u.size)
            sign, logdet = jnp.linalg.slogdet(jacobian)
            _, _, ldj = coords.to_cp(u, param)
            assert float(sign) != 0.0, label
            assert abs(float(logdet - ldj)) < TOL, (label, float(logdet), float(ldj))
            # from_cp returns the log-Jacobian of the inverse map
            _, _, ldj_back = coords.from_cp(coords.to_cp(u, param)[0], param)
            assert abs(float(ldj + ldj_back)) < TOL, label


# --- round trips, vectorised over chains -------------------------------------------------------------
ROUND_TRIP_FAMILIES = ["Normal", "StudentT", "LogNormal", "HalfNormal", "Exponential", "Gumbel"]


@pytest.mark.parametrize("family", ROUND_TRIP_FAMILIES)
@pytest.mark.parametrize("shape", ["plate", "event", "plate2d"])
def test_round_trips_vmapped_over_chains(family, shape):
    with jax.enable_x64(True):
        coords = build(family, shape)
        chains = 5
        keys = jax.random.split(jax.random.PRNGKey(3), 3)
        u = {
            "mu": jax.random.normal(keys[0], (chains,)),
            "log_s": 0.5 * jax.random.normal(keys[1], (chains,)),
            "x": jax.random.normal(keys[2], (chains,) + coords.structure["x"].shape),
        }
        for label, make_param in CENTRINGS.items():
            param = make_param(coords.plan)
            v = jax.vmap(lambda one: coords.to_cp(one, param)[0])(u)
            back = jax.vmap(lambda one: coords.from_cp(one, param)[0])(v)
            z = jax.vmap(lambda one: coords.to_original(one, param))(u)
            back_from_z = jax.vmap(lambda one: coords.from_original(one, param))(z)
            for name in coords.names:
                assert v[name].shape == u[name].shape
                np.testing.assert_allclose(back[name], u[name], rtol=0, atol=1e-10, err_msg=f"{label} {name}")
                np.testing.assert_allclose(back_from_z[name], u[name], rtol=0, atol=1e-10, err_msg=f"{label} {name}")
            # the chains really differ and the map acts per chain: chain i alone gives row i
            single = coords.to_cp({k: val[2] for k, val in u.items()}, param)[0]
            np.testing.assert_allclose(single["x"], v["x"][2], rtol=0, atol=1e-12)


# --- a model with sites the plan leaves alone (constrained, simplex) ----------------------------------
def mixed_model():
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    rate = numpyro.sample("rate", dist.Gamma(2.0, 2.0))  # not a location-scale family
    weights = numpyro.sample("weights", dist.Dirichlet(jnp.ones(3)))  # unconstrained shape (2,)
    with numpyro.plate("items", 3):
        x = numpyro.sample("x", dist.Normal(mu + weights, 1.0 / rate))
        numpyro.sample("y", dist.Normal(x, 1.0), obs=jnp.array([0.1, 0.4, -0.3]))


def test_sites_left_centred_pass_through_the_maps():
    with jax.enable_x64(True):
        structure = analyse_model(mixed_model)
        plan = select_sites(structure, "all")
        assert plan.names == ("mu", "x")  # Gamma and Dirichlet are left centred
        coords = Coordinates(mixed_model, (), {}, plan)
        assert coords.dim == 1 + 1 + 2 + 3 and coords.original_dim == 1 + 1 + 3 + 3
        u = {"mu": jnp.asarray(0.2), "rate": jnp.asarray(-0.3), "weights": jnp.array([0.4, -0.1]),
             "x": jnp.array([0.5, -1.0, 0.25])}
        for label, make_param in {"ncp": Parameterisation.non_centred, "half": lambda p: Parameterisation.tied(p, 0.5)}.items():
            param = make_param(plan)
            v, z, ldj = coords.to_cp(u, param)
            np.testing.assert_array_equal(v["rate"], u["rate"])
            np.testing.assert_array_equal(v["weights"], u["weights"])
            assert z["weights"].shape == (3,) and abs(float(jnp.sum(z["weights"])) - 1.0) < 1e-12
            assert abs(float(coords.log_density(u, param) - coords.log_density_cp(v) - ldj)) < TOL, label
            flat, unravel = ravel_pytree(u)
            jac = jax.jacfwd(lambda f: ravel_pytree(coords.to_cp(unravel(f), param)[0])[0])(flat)
            assert abs(float(jnp.linalg.slogdet(jac)[1] - ldj)) < TOL, label
            back = coords.from_original(z, param)
            for name in coords.names:
                np.testing.assert_allclose(back[name], u[name], rtol=0, atol=1e-10)


# --- initial values keyed by the original names --------------------------------------------------------
def test_init_values_by_original_name_map_into_every_parameterisation():
    with jax.enable_x64(True):
        sigma = jnp.array([15.0, 10, 16, 11, 9, 11, 10, 18])
        y = jnp.array([28.0, 8, -3, 7, -1, 1, 18, 12])
        structure = analyse_model(eight_schools, sigma, y)
        plan = select_sites(structure, "all")
        coords = Coordinates(eight_schools, (sigma, y), {}, plan)
        given = {"mu": 4.0, "log_tau": 1.2, "theta": jnp.linspace(-3.0, 12.0, 8)}
        init = initial_values(eight_schools, (sigma, y), {}, structure.names, init_to_value(values=given))
        for name, value in given.items():
            np.testing.assert_allclose(init[name], value, rtol=0, atol=1e-12)
        tau = np.exp(1.2)
        for lam in (0.0, 0.3, 1.0):
            param = Parameterisation.tied(plan, lam)
            u = coords.from_original(init, param)
            # the closed form of paper 000 Section 5.2: zt = lam mu + (z - mu) / s^(1 - lam)
            expected_theta = lam * 4.0 + (np.asarray(given["theta"]) - 4.0) / tau ** (1 - lam)
            np.testing.assert_allclose(u["theta"], expected_theta, rtol=1e-12)
            np.testing.assert_allclose(u["mu"], lam * 0.0 + 4.0 / 5.0 ** (1 - lam), rtol=1e-12)
            back = coords.to_original(u, param)
            for name in coords.names:
                np.testing.assert_allclose(back[name], init[name], rtol=1e-12, atol=1e-12)


def test_the_compiled_start_vector_is_the_map_and_serves_every_centring_and_data():
    from autoreparam.mcmc.programs import PROGRAMS

    sigma = jnp.array([15.0, 10, 16, 11, 9, 11, 10, 18])
    y = jnp.array([28.0, 8, -3, 7, -1, 1, 18, 12])
    plan = select_sites(analyse_model(eight_schools, sigma, y), "all")
    coords = Coordinates(eight_schools, (sigma, y), {}, plan)
    given = {"mu": jnp.asarray(4.0), "log_tau": jnp.asarray(1.2), "theta": jnp.linspace(-3.0, 12.0, 8)}
    coords.start_vector(given, Parameterisation.centred(plan))
    first = PROGRAMS.num_compilations  # after the first call (another test may have compiled it already)
    for lam in (0.0, 0.3, 1.0):
        param = Parameterisation.tied(plan, lam)
        np.testing.assert_allclose(coords.start_vector(given, param), coords.ravel(coords.from_original(given, param)),
                                   rtol=1e-6)
    # Other centrings and new data of the same shapes run the same executable.
    Coordinates(eight_schools, (sigma * 2, y), {}, plan).start_vector(given, Parameterisation.tied(plan, 0.5))
    assert PROGRAMS.num_compilations == first
    with pytest.raises(ArgumentError, match="'log_tau'"):
        coords.start_vector({"mu": 1.0, "theta": given["theta"]}, Parameterisation.centred(plan))
    # Traced, NumPyro checks no argument: a NaN came back as a NaN start instead of an error.
    with pytest.raises(SiteError, match="'mu'.*not finite"):
        coords.start_vector({**given, "mu": jnp.nan}, Parameterisation.centred(plan))


def test_init_to_value_for_some_sites_keeps_them():
    sigma = jnp.array([15.0, 10, 16, 11, 9, 11, 10, 18])
    structure = analyse_model(eight_schools, sigma)
    init = initial_values(eight_schools, (sigma,), {}, structure.names, init_to_value(values={"mu": 2.5}))
    assert float(init["mu"]) == 2.5
    assert init["theta"].shape == (8,) and np.all(np.isfinite(init["theta"]))


# --- flat layouts ------------------------------------------------------------------------------------
def test_flat_layouts_round_trip_and_label_every_element():
    structure = analyse_model(mixed_model)
    coords = Coordinates(mixed_model, (), {}, select_sites(structure, "all"))
    u = {"mu": jnp.asarray(0.2), "rate": jnp.asarray(-0.3), "weights": jnp.array([0.4, -0.1]),
         "x": jnp.array([0.5, -1.0, 0.25])}
    flat = coords.ravel(u)
    assert flat.shape == (coords.dim,)
    back = coords.unravel(flat)
    for name in coords.names:
        np.testing.assert_array_equal(back[name], u[name])
    labels = coords.element_names()
    assert len(labels) == coords.dim and len(set(labels)) == coords.dim
    param = Parameterisation.non_centred(coords.plan)
    z = coords.to_original(u, param)
    flat_z = np.asarray(coords.ravel_original(z))
    assert len(coords.original_element_names()) == coords.original_dim == flat_z.size
    split = coords.split_original(np.stack([flat_z, flat_z]))
    for name in coords.names:
        np.testing.assert_allclose(split[name][1], z[name], rtol=1e-6)
    # vectorised flat map over (chains, draws, dim)
    batch = jnp.stack([jnp.stack([flat, flat + 0.1])] * 3)
    out = coords.to_original_flat(param)(batch)
    assert out["x"].shape == (3, 2, 3) and out["weights"].shape == (3, 2, 3)
    np.testing.assert_allclose(out["x"][1, 0], z["x"], rtol=1e-6)


def test_position_missing_a_site_names_it():
    structure = analyse_model(mixed_model)
    coords = Coordinates(mixed_model, (), {}, select_sites(structure, "all"))
    u = {"mu": jnp.asarray(0.2), "rate": jnp.asarray(-0.3), "x": jnp.zeros(3)}
    param = Parameterisation.non_centred(coords.plan)
    for call in (lambda: coords.to_cp(u, param), lambda: coords.log_density(u, param),
                 lambda: coords.from_original(u, param)):
        with pytest.raises(ArgumentError, match="'weights'"):
            call()


def test_non_finite_init_value_is_a_model_error_naming_the_site():
    sigma = jnp.array([15.0, 10, 16, 11, 9, 11, 10, 18])
    with pytest.raises(ModelError, match="'mu'"):
        initial_values(eight_schools, (sigma,), {}, ("mu", "log_tau", "theta"), init_to_value(values={"mu": jnp.nan}))

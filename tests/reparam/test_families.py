"""The family registry: matching, the auxiliary distribution, and the transforms zt -> z."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
import pytest

from autoreparam.reparam.families import (
    FAMILIES,
    PartialCentringTransform,
    ScaleCentringTransform,
    find_family,
    scale_power,
    shifted_loc,
    supported_family_names,
    unwrap,
)
from autoreparam.reparam.handlers import decentre_site

# family name -> (builder from (loc, scale), the standard member: the family at loc 0, scale 1)
BUILDERS = {
    "Normal": lambda m, s: dist.Normal(m, s),
    "StudentT": lambda m, s: dist.StudentT(4.0, m, s),
    "Cauchy": lambda m, s: dist.Cauchy(m, s),
    "Laplace": lambda m, s: dist.Laplace(m, s),
    "Logistic": lambda m, s: dist.Logistic(m, s),
    "Gumbel": lambda m, s: dist.Gumbel(m, s),
    "SoftLaplace": lambda m, s: dist.SoftLaplace(m, s),
    "LogNormal": lambda m, s: dist.LogNormal(m, s),
    "HalfNormal": lambda m, s: dist.HalfNormal(s),
    "HalfCauchy": lambda m, s: dist.HalfCauchy(s),
    "Exponential": lambda m, s: dist.Exponential(1.0 / s),
}
LOC, SCALE = jnp.array([0.7, -1.2, 2.0]), jnp.array([0.5, 1.3, 3.0])


def test_registry_is_the_documented_list():
    assert set(BUILDERS) == set(supported_family_names()) == {f.name for f in FAMILIES}
    kinds = {f.name: f.kind for f in FAMILIES}
    assert kinds["LogNormal"] == "log-location-scale"
    assert {n for n, k in kinds.items() if k == "scale"} == {"HalfNormal", "HalfCauchy", "Exponential"}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_find_family_sees_through_plates_expand_and_to_event(name):
    base = BUILDERS[name](LOC, SCALE)
    for wrapped in (base, base.expand([4, 3]), base.to_event(1), base.expand([2, 3]).to_event(2)):
        family = find_family(wrapped)
        assert family is not None and family.name == name
    inner, event_dim = unwrap(base.expand([2, 3]).to_event(1))
    assert inner is base and event_dim == 1


@pytest.mark.parametrize(
    "fn",
    [
        dist.Gamma(2.0, 1.0),
        dist.Beta(2.0, 2.0),
        dist.Dirichlet(jnp.ones(3)),
        dist.MultivariateNormal(jnp.zeros(2), jnp.eye(2)),
        dist.Poisson(2.0),
        dist.TruncatedNormal(0.0, 1.0, low=0.0),
        dist.Normal(0.0, 1.0).mask(False),
    ],
    ids=lambda fn: type(fn).__name__,
)
def test_other_distributions_have_no_family(fn):
    assert find_family(fn) is None


def _points(name):
    positive = BUILDERS[name](0.0, 1.0).support is not dist.constraints.real
    return jnp.array([[0.3, 1.7, 4.0], [2.2, 0.05, 0.9]]) if positive else jnp.array([[-1.4, 0.3, 2.5], [0.1, -0.6, 5.0]])


@pytest.mark.parametrize("name", list(BUILDERS))
@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_auxiliary_distribution_and_transform(name, lam):
    """zt ~ D(lam mu, s^lam) and z = mu + s^(1 - lam) (zt - lam mu) (paper 000 Section 5.2)."""
    with jax.enable_x64(True):
        loc, scale = LOC.astype(jnp.float64), SCALE.astype(jnp.float64)
        fn = BUILDERS[name](loc, scale)
        family = find_family(fn)
        assert family.name == name
        aux, transform = decentre_site("x", fn, lam, lam)
        zt = _points(name).astype(jnp.float64)
        power = scale**lam
        if family.kind == "location-scale":
            expected_aux = BUILDERS[name](lam * loc, power)
            expected_z = loc + scale ** (1 - lam) * (zt - lam * loc)
        elif family.kind == "log-location-scale":  # the underlying normal is partially centred
            expected_aux = dist.Normal(lam * loc, power)
            expected_z = jnp.exp(loc + scale ** (1 - lam) * (zt - lam * loc))
        else:
            expected_aux = BUILDERS[name](None, power)
            expected_z = scale ** (1 - lam) * zt
        assert isinstance(unwrap(aux)[0], type(unwrap(expected_aux)[0]))  # location-scale: `standardised`
        np.testing.assert_allclose(aux.log_prob(zt), expected_aux.log_prob(zt), rtol=1e-12)
        np.testing.assert_allclose(transform(zt), expected_z, rtol=1e-12)
        np.testing.assert_allclose(transform.inv(transform(zt)), zt, rtol=1e-10, atol=1e-12)
        if lam == 1.0 and family.kind != "log-location-scale":  # the identity: the site as written
            np.testing.assert_allclose(aux.log_prob(zt), fn.log_prob(zt), rtol=1e-12)
            np.testing.assert_allclose(transform(zt), zt, rtol=1e-12)


def test_student_t_keeps_its_degrees_of_freedom():
    aux, _ = decentre_site("x", dist.StudentT(jnp.array([2.0, 5.0, 9.0]), LOC, SCALE), 0.0, 0.0)
    np.testing.assert_array_equal(aux.df, [2.0, 5.0, 9.0])
    np.testing.assert_array_equal(aux.loc, 0.0)
    np.testing.assert_allclose(aux.scale, 1.0)


def test_separate_centring_uses_a_for_the_location_and_b_for_the_scale():
    a, b = 0.2, 0.7
    aux, transform = decentre_site("x", dist.Normal(LOC, SCALE), a, b)
    np.testing.assert_allclose(aux.loc, a * LOC, rtol=1e-6)
    np.testing.assert_allclose(aux.scale, SCALE**b, rtol=1e-6)
    zt = jnp.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(transform(zt), LOC + SCALE ** (1 - b) * (zt - a * LOC), rtol=1e-6)


def test_site_shape_and_event_dims_are_kept():
    fn = dist.Normal(LOC, 1.0).expand([2, 3]).to_event(1)
    aux, _ = decentre_site("x", fn, jnp.full((2, 3), 0.4), 0.4)
    assert aux.batch_shape == (2,) and aux.event_shape == (3,)


@pytest.mark.parametrize(
    "make",
    [
        lambda: PartialCentringTransform(jnp.array([0.5, -2.0]), jnp.array([0.3, 4.0]), jnp.array([0.2, 0.9]), jnp.array([0.6, 0.1])),
        lambda: ScaleCentringTransform(jnp.array([0.3, 4.0]), jnp.array([0.6, 0.1])),
    ],
    ids=["partial-centring", "scale-centring"],
)
def test_transform_jacobian_matches_autodiff(make):
    with jax.enable_x64(True):
        transform = make()
        x = jnp.array([0.8, 1.9])
        y = transform(x)
        derivative = jax.vmap(jax.grad(lambda xi, i: transform(jnp.full(2, xi))[i]))(x, jnp.arange(2))
        np.testing.assert_allclose(transform.log_abs_det_jacobian(x, y), jnp.log(jnp.abs(derivative)), rtol=1e-12)
        np.testing.assert_allclose(transform.inv(y), x, rtol=1e-12)


# --- non-centring where the model's own scale over- or underflows (fuzz programs 709 and 829) ----------

def _ncp_log_prob(z, x, b):
    """log N(x; a mu, s^b) of a site whose scale is exp(z) and whose location is -z, at a = b."""
    return dist.Normal(shifted_loc(-z, b), scale_power(jnp.exp(z), b)).log_prob(x)


@pytest.mark.parametrize("z", [-120.0, 100.0], ids=["scale underflows to 0", "scale overflows to inf"])
def test_non_centring_does_not_read_a_degenerate_scale(z):
    """``0 * log(0)`` and ``0 * log(inf)`` are NaN: the standard-normal density of NCP was NaN there."""
    standard = float(dist.Normal(0.0, 1.0).log_prob(0.5))
    for b in (0.0, jnp.zeros(())):  # a traced 0 (one compiled sampler for every parameterisation), and a constant
        value = jax.jit(_ncp_log_prob)(z, 0.5, b) if isinstance(b, float) else _ncp_log_prob(z, 0.5, b)
        assert float(value) == pytest.approx(standard)
    # Traced: an underflowed scale gets a zero gradient; an overflowed one keeps JAX's NaN from
    # d exp(z) = inf * 0, which no handler can undo (the docstring says so; this pins it).
    grad_z, grad_x, _ = jax.jit(jax.grad(_ncp_log_prob, argnums=(0, 1, 2)))(z, 0.5, 0.0)
    assert float(grad_x) == pytest.approx(-0.5)
    assert (float(grad_z) == 0.0) if z < 0 else np.isnan(float(grad_z))
    # A constant 0 (a closed-over parameterisation) does not read the scale: finite on both sides.
    constant = jnp.zeros(())  # made outside the trace: inside ``jit`` even ``jnp.zeros`` is a tracer
    assert float(jax.jit(jax.grad(lambda z: _ncp_log_prob(z, 0.5, constant)))(z)) == 0.0


def test_degenerate_scale_guard_keeps_finite_values_and_their_derivatives():
    """Away from 0 and inf the guarded ``s^b`` and ``a mu`` are ``exp(b log s)`` and ``a mu``, derivatives included."""
    def plain(z, x, b):
        return dist.Normal(b * -z, jnp.exp(b * jnp.log(jnp.exp(z)))).log_prob(x)

    for b in (0.0, 0.3, 1.0):
        got = jax.jit(jax.grad(_ncp_log_prob, argnums=(0, 1, 2)))(0.8, 0.5, b)
        want = jax.jit(jax.grad(plain, argnums=(0, 1, 2)))(0.8, 0.5, b)
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(BUILDERS))
def test_auxiliary_scale_derivative_is_right_past_the_square_root_of_the_float_range(name):
    """JAX's derivative of ``x / s`` in ``s`` is ``-x * s ** -2``, 0 in float32 once ``s`` > 1.8e19; the
    auxiliary densities take their quotient by `stable_divide`, so d log p / d log s matches float64
    at ``s = 1e28`` (NumPyro's own densities give -1 for a normal's -0.56; found by fuzzing iHMC).
    The Exponential is written by its rate ``exp(-log s)``, as a program would, and its scale
    ``1 / rate`` is taken stably too (NumPyro's rate derivative squares the rate)."""
    def d_log_density_d_log_scale(scale, dtype):
        scale = jnp.asarray(scale, dtype)
        sign = 1.0 if find_family(BUILDERS[name](LOC, SCALE)).kind == "scale" else -1.0  # positive support
        value = scale * jnp.asarray([sign * 0.66, 0.3, 1.7], dtype)  # the auxiliary's value (LogNormal: of log z)

        def log_density(log_s):
            log_s = jnp.full(3, log_s)
            fn = (dist.Exponential(jnp.exp(-log_s)) if name == "Exponential"
                  else BUILDERS[name](jnp.zeros(3, dtype), jnp.exp(log_s)))
            aux, _ = decentre_site("x", fn, 1.0, 1.0)
            return aux.log_prob(value).sum()

        return jax.grad(log_density)(jnp.log(scale))

    with jax.enable_x64(True):
        want = d_log_density_d_log_scale(1e28, jnp.float64)
    got = d_log_density_d_log_scale(1e28, jnp.float32)
    np.testing.assert_allclose(got, want, rtol=1e-4)

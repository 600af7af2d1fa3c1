"""Moving an HMC state between parameterisations is exact: same point, density and gradient as a fresh
evaluation in the target coordinates, with no model gradient spent (mcmc/spaces.py)."""

import blackjax.mcmc.hmc as bj_hmc
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.spaces import flat_log_density, make_transport
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model


def model(y):
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    scale = numpyro.sample("scale", dist.HalfNormal(2.0))
    with numpyro.plate("groups", 4):
        theta = numpyro.sample("theta", dist.StudentT(5.0, mu, scale))
        numpyro.sample("y", dist.Normal(theta, 1.0), obs=y)
    numpyro.sample("w", dist.LogNormal(mu, scale))


@pytest.fixture(scope="module")
def coords():
    y = jnp.array([1.0, -2.0, 0.5, 3.0])
    return Coordinates(model, (y,), {}, select_sites(analyse_model(model, y), "all"))


@pytest.mark.parametrize(
    "source,target",
    [(1.0, 0.0), (0.0, 1.0), (0.3, 0.8), ({"mu": 1.0, "scale": 0.0, "theta": [0.0, 0.2, 0.7, 1.0], "w": 0.5}, 0.0)],
)
def test_transport_matches_fresh_evaluation(coords, source, target):
    with jax.enable_x64(True):
        p_source = Parameterisation.tied(coords.plan, source)
        p_target = Parameterisation.tied(coords.plan, target)
        x = jnp.asarray(np.random.default_rng(0).normal(size=coords.dim))
        state = bj_hmc.init(x, flat_log_density(coords, p_source))
        moved = make_transport(coords, p_source, p_target)(state)
        fresh = bj_hmc.init(moved.position, flat_log_density(coords, p_target))
        np.testing.assert_allclose(moved.logdensity, fresh.logdensity, rtol=1e-12, atol=1e-10)
        np.testing.assert_allclose(moved.logdensity_grad, fresh.logdensity_grad, rtol=1e-10, atol=1e-10)
        back = make_transport(coords, p_target, p_source)(moved)
        np.testing.assert_allclose(back.position, x, atol=1e-12)
        # Same point in the original coordinates.
        z_source = coords.to_original(coords.unravel(x), p_source)
        z_target = coords.to_original(coords.unravel(moved.position), p_target)
        for name in z_source:
            np.testing.assert_allclose(z_source[name], z_target[name], rtol=1e-10)


def test_transport_does_not_evaluate_the_likelihood(coords):
    """The compiled transport needs no observation: its jaxpr does not depend on y."""
    p0, p1 = Parameterisation.tied(coords.plan, 1.0), Parameterisation.tied(coords.plan, 0.0)

    def moved_position(y, x):
        c = Coordinates(model, (y,), {}, coords.plan)
        state = bj_hmc.HMCState(x, jnp.zeros(()), jnp.zeros_like(x))
        return make_transport(c, p0, p1)(state).position

    jaxpr = jax.make_jaxpr(moved_position)(jnp.ones(4), jnp.ones(coords.dim))
    from jax._src.interpreters.partial_eval import dce_jaxpr

    _, used_inputs = dce_jaxpr(jaxpr.jaxpr, [True])
    assert used_inputs == [False, True]


def _funnel(depth=3):
    z = numpyro.sample("z0", dist.Normal(0.0, 1.0))
    for level in range(1, depth + 1):
        z = numpyro.sample(f"z{level}", dist.Normal(0.0, jnp.exp(z)))


def test_transport_stays_exact_where_the_scale_passes_the_square_root_of_the_float_range():
    """Found by fuzzing iHMC on a depth-3 funnel's prior: JAX differentiates ``x / s`` in ``s`` as
    ``-x * s ** -2``, which underflows once ``s`` passes sqrt(float max) (1.8e19 in float32), so the
    centred gradient of ``z3 ~ N(0, exp(z2))`` at ``exp(z2) = 1.4e28`` lost a term and the move into the
    non-centred half multiplied the error to about 148 (19,896 of 20,000 non-centred half-steps
    diverged). The auxiliary densities divide stably (``families.standardised``); NumPyro's own
    ``Normal`` still does not, which the first two lines pin."""
    def d_log_density_d_scale(s):
        z = -0.66 * s  # held fixed: the derivative in the scale alone
        return jax.grad(lambda s: dist.Normal(0.0, s).log_prob(z))(s) * s

    assert float(d_log_density_d_scale(jnp.float32(1e10))) == pytest.approx(0.66**2 - 1.0, rel=1e-5)
    assert float(d_log_density_d_scale(jnp.float32(1e20))) == pytest.approx(-1.0, rel=1e-5)  # JAX's rule

    coords = Coordinates(_funnel, (), {}, select_sites(analyse_model(_funnel), "default"))
    cp, ncp = Parameterisation.centred(coords.plan), Parameterisation.non_centred(coords.plan)
    to_ncp = make_transport(coords, cp, ncp)
    for z2 in (20.0, 64.8):  # the funnel's last scale exp(z2): 4.9e8, 1.4e28
        z = {"z0": jnp.float32(1.18), "z1": jnp.float32(5.19), "z2": jnp.float32(z2),
             "z3": jnp.float32(-0.66) * jnp.exp(jnp.float32(z2))}
        x_cp = coords.ravel(coords.from_original(z, cp))
        moved = to_ncp(bj_hmc.init(x_cp, flat_log_density(coords, cp)))
        fresh = bj_hmc.init(moved.position, flat_log_density(coords, ncp))
        np.testing.assert_allclose(moved.logdensity_grad, fresh.logdensity_grad, atol=1e-3, err_msg=f"z2 = {z2}")

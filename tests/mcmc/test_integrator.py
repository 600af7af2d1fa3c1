"""The leapfrog integrator our HMC kernels use (BlackJAX's velocity Verlet), tested against physics.

We do not write an integrator; these tests pin down that the one we build on, with the diagonal
inverse mass matrix we pass it, is the leapfrog map the paper's per-coordinate step sizes describe.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from blackjax.mcmc import integrators, metrics


def _integrate(log_density, x, p, step, inverse_mass, num_steps):
    metric = metrics.default_metric(inverse_mass)
    integrator = integrators.velocity_verlet(log_density, metric.kinetic_energy)
    logdensity, grad = jax.value_and_grad(log_density)(x)
    state = integrators.IntegratorState(x, p, logdensity, grad)
    for _ in range(num_steps):
        state = integrator(state, step)
    return state


def _oscillator(x):
    return -0.5 * jnp.sum(x**2)


def test_harmonic_oscillator_end_point_matches_the_exact_leapfrog_rotation():
    # For H = x^2/2 + p^2/2 one leapfrog step of size h is the linear map
    # [x, p] -> [[1 - h^2/2, h], [-h (1 - h^2/4), 1 - h^2/2]] [x, p]; n steps are its n-th power.
    with jax.enable_x64(True):
        h, n = 0.3, 17
        x0, p0 = jnp.array([1.0]), jnp.array([0.5])
        state = _integrate(_oscillator, x0, p0, h, jnp.ones(1), n)
        step = np.array([[1 - h**2 / 2, h], [-h * (1 - h**2 / 4), 1 - h**2 / 2]])
        expected = np.linalg.matrix_power(step, n) @ np.array([1.0, 0.5])
        np.testing.assert_allclose([state.position[0], state.momentum[0]], expected, rtol=1e-12)


def test_energy_error_is_second_order_and_does_not_drift():
    with jax.enable_x64(True):
        x0, p0 = jnp.array([1.0, -0.3]), jnp.array([0.2, 0.8])

        def energy_errors(h, n):
            metric = metrics.default_metric(jnp.ones(2))
            integrator = jax.jit(integrators.velocity_verlet(_oscillator, metric.kinetic_energy))
            state = integrators.IntegratorState(x0, p0, *jax.value_and_grad(_oscillator)(x0))
            h0 = -_oscillator(x0) + 0.5 * jnp.sum(p0**2)
            errors = []
            for _ in range(n):
                state = integrator(state, h)
                errors.append(float(-state.logdensity + 0.5 * jnp.sum(state.momentum**2) - h0))
            return np.abs(errors)

        coarse, fine = energy_errors(0.2, 1000), energy_errors(0.1, 2000)
        # Halving h quarters the (bounded) energy error: a second-order, symplectic method.
        assert 3.5 < coarse.max() / fine.max() < 4.5
        # No drift: the error over the last tenth is no larger than over the first tenth (+ roundoff).
        assert coarse[-100:].max() <= coarse[:100].max() * 1.01 + 1e-12


def test_time_reversibility():
    with jax.enable_x64(True):
        def log_density(x):  # a non-quadratic target
            return -0.25 * jnp.sum(x**4) - 0.5 * jnp.sum(x**2)

        x0, p0 = jnp.array([0.7, -1.2, 0.1]), jnp.array([0.3, 0.4, -1.0])
        inverse_mass = jnp.array([0.5, 2.0, 1.0])
        forward = _integrate(log_density, x0, p0, 0.05, inverse_mass, 40)
        back = _integrate(log_density, forward.position, -forward.momentum, 0.05, inverse_mass, 40)
        np.testing.assert_allclose(back.position, x0, atol=1e-12)
        np.testing.assert_allclose(-back.momentum, p0, atol=1e-12)


@pytest.mark.parametrize("num_steps", [1, 5])
def test_inverse_mass_equals_per_coordinate_step_sizes(num_steps):
    """Scalar step eps with inverse mass diag(m) == unit mass with step eps*sqrt(m) (mcmc/spaces.py)."""
    with jax.enable_x64(True):
        def log_density(x):
            return -0.5 * jnp.sum((x / jnp.array([0.1, 3.0])) ** 2) - 0.1 * jnp.sum(x**4)

        m, eps = jnp.array([0.01, 9.0]), 0.2
        x0, p_unit = jnp.array([0.05, 2.0]), jnp.array([0.7, -0.4])
        state = _integrate(log_density, x0, p_unit / jnp.sqrt(m), eps, m, num_steps)
        # The paper's form: per-coordinate step sizes s = eps * sqrt(m), identity mass.
        s, x, p = eps * jnp.sqrt(m), x0, p_unit
        grad = jax.grad(log_density)
        for _ in range(num_steps):
            p = p + 0.5 * s * grad(x)
            x = x + s * p
            p = p + 0.5 * s * grad(x)
        np.testing.assert_allclose(state.position, x, rtol=1e-12)
        np.testing.assert_allclose(state.momentum * jnp.sqrt(m), p, rtol=1e-12)

"""A start that float32 can sample from: ``auto`` leaves the origin when the log density there is too large.

``auto`` starts its chains at the origin of the centred unconstrained space (``initial.ORIGIN``:
every scale 1, every location 0). Where the data's scale is far from 1, the log density there can be
of order 1e7: generated program 6 of the corpus (190 observations of scale 380, a noise scale
``sigma ~ half_normal(815)``) has -log p = 1.4e7 at the origin. float32 carries 24 bits, so a log
density of magnitude M is known to about M * 2^-24 per operation (1 nat at 1.4e7), while the
Metropolis test of NUTS and the step size's dual averaging act on its changes of a few tenths of a
nat. There, rounding alone rejected proposals however small the step: the step size fell to 1e-10
within 100 transitions, every chain froze where it started (1,023 gradients per transition, R-hat
3e7), and so did the CP and NCP pilots moved from those chains; NUTS in NCP started from a
variational fit mixed. Stan and nutpie compute in float64 and do not meet this; NumPyro's float32
NUTS does.

So when the origin's log p lies below -`RESOLVABLE`, Adam (optax) climbs the log density from the
origin until log p rises above -`TARGET` or `MAX_STEPS` pass, and the chains start there (jittered
as before). One compiled program per model, run only in that case. (A log density far *above* zero
cannot be climbed out of; such a start is left as it is.)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.programs import PROGRAMS
from autoreparam.precision import float_dtype
from autoreparam.reparam.parameterisation import Parameterisation

# 1e6 is resolved to 0.06 nat per float32 operation, already a noticeable share of the energy errors
# the step size adapts on (acceptance 0.8 is errors of a few tenths); beyond it rounding dominates.
RESOLVABLE = 1e6
TARGET = 1e5  # where the climb stops: rounding 0.006 nat per operation
MAX_STEPS = 1000
# Adam's step is about the learning rate per coordinate while the gradient keeps its size. Along this
# climb it does not: log sigma's gradient falls from 2.8e7 (program 6's origin) by orders of
# magnitude, and with optax's default second-moment decay (0.999) the first gradients kept the steps
# tiny for a thousand steps (data of scale 4,000 to 400,000 stalled at log sigma 4; found in review).
# A decay of 0.9 forgets them within tens of steps: those scales reach the target in 143 to 319 steps.
LEARNING_RATE = 0.1
SECOND_MOMENT_DECAY = 0.9


def unresolvable(log_density: float) -> bool:
    """Whether a start with this log density lies too far below the posterior for float32 (finite and
    below -`RESOLVABLE`)."""
    return bool(np.isfinite(log_density) and log_density < -RESOLVABLE)


def _build(coords: Coordinates):
    optimiser = optax.adam(LEARNING_RATE, b2=SECOND_MOMENT_DECAY)

    def climb(data, start):
        bound = coords.with_data(data)

        def potential(x):
            return -bound.log_density_cp(bound.unravel(x))

        def step(carry):
            x, state, best_x, best_u, k = carry
            u, grad = jax.value_and_grad(potential)(x)
            better = jnp.isfinite(u) & (u < best_u)
            best_x, best_u = jnp.where(better, x, best_x), jnp.where(better, u, best_u)
            updates, state = optimiser.update(jnp.where(jnp.isfinite(grad), grad, 0.0), state)
            return optax.apply_updates(x, updates), state, best_x, best_u, k + 1

        def going(carry):
            _, _, _, best_u, k = carry
            return (k < MAX_STEPS) & ~(best_u < TARGET)  # best_u is -log p: stop once log p > -TARGET

        u0 = potential(start)
        carry = (start, optimiser.init(start), start, jnp.where(jnp.isfinite(u0), u0, jnp.inf), jnp.asarray(0))
        _, _, best_x, best_u, steps = jax.lax.while_loop(going, step, carry)
        # The point's original values too, traced here: computed eagerly, every operation of the map
        # would compile on its own in each new process.
        original = bound.ravel_original(bound.to_original(bound.unravel(best_x), Parameterisation.centred(bound.plan)))
        return best_x, original, -best_u, steps

    return climb


def climb_to_resolvable(coords: Coordinates, start: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, int, dict]:
    """Adam from ``start`` (centred unconstrained, flat) towards higher log density, until log p >
    -`TARGET` or `MAX_STEPS`: the highest point seen (never below the start), its original values
    (flat), its log density, the steps taken, and compile / run seconds. Each step is one gradient evaluation. Adam: Kingma & Ba
    (2015), Algorithm 1, with beta2 = `SECOND_MOMENT_DECAY` (optax's ``adam``)."""
    key = ("resolvable_start", coords.program_key)
    (x, original, density, steps), compile_seconds, run_seconds = PROGRAMS(
        key, lambda: _build(coords), (coords.data, jnp.asarray(start, float_dtype())))
    return (np.asarray(x), np.asarray(original), float(density), int(steps),
            {"compile": compile_seconds, "run": run_seconds})


# A jittered start with no density halves its offset from the centre this many times, then sits at it.
MAX_HALVINGS = 5


def _densities(coords: Coordinates):
    def densities(data, positions):
        bound = coords.with_data(data)
        return jax.vmap(lambda x: bound.log_density_cp(bound.unravel(x)))(positions)

    return densities


def starts_inside(coords: Coordinates, centre: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, dict]:
    """Chains at ``centre + offsets`` (centred unconstrained), each with a finite log density, and compile /
    run seconds.

    For models whose origin has no density (``initial.initial_values`` found the centre elsewhere), the
    space has walls (a ``factor`` of -inf, a support that moves with a latent), and a jittered start could
    land behind one: NUTS cannot leave a start of log density -inf, its step size fell to 4e-20 and the
    chain stayed there (found running the suite in 64 bits, where the jitter crossed a wall at x = 0.25).
    So a chain whose start has no density halves its offset, up to `MAX_HALVINGS` times, then starts at
    the centre, whose density is finite. Stan redraws such an init (up to 100 times) instead."""
    key = ("start_densities", coords.program_key)
    scale = np.ones(len(offsets))
    seconds = {"compile": 0.0, "run": 0.0}
    for _ in range(MAX_HALVINGS + 1):
        positions = (centre + scale[:, None] * offsets).astype(float_dtype())
        density, compile_seconds, run_seconds = PROGRAMS(key, lambda: _densities(coords),
                                                         (coords.data, jnp.asarray(positions)))
        seconds["compile"] += compile_seconds
        seconds["run"] += run_seconds
        outside = ~np.isfinite(np.asarray(density))
        if not outside.any():
            return positions, seconds
        scale[outside] /= 2.0
    scale[outside] = 0.0
    return (centre + scale[:, None] * offsets).astype(float_dtype()), seconds

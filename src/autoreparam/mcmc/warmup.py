"""Stan's windowed warm-up for a cycle of HMC kernels, one adaptation per space.

BlackJAX's ``window_adaptation`` tunes one kernel. iHMC cycles through several spaces (CP, NCP), each
with its own step size and diagonal mass matrix, so each space gets its own copy of the same scheme,
fed with the positions and acceptance rates of its own half-steps. The scheme is Stan's (Stan
Reference Manual, "HMC algorithm parameters"; Hoffman & Gelman 2014, Section 3.2.1), built from
BlackJAX's public pieces: Stan's window schedule (``stan_schedule``, BlackJAX's ``build_schedule``
in NumPy), ``dual_averaging_adaptation`` (step size, towards a target *mean* acceptance) and
``mass_matrix_adaptation`` (Welford variances, regularised, recomputed at the end of each slow
window, when the step size restarts from the window's average).

Why not the paper's sign rule (002 Appendix C) by default: it moves the log step size by a constant
towards the target, so it settles where the *median* acceptance meets the target. When acceptance
is bimodal (funnels: near 1 in the mouth, near 0 in the neck) the mean acceptance ends far below the
target (0.40 to 0.68 against 0.75 on eight schools, measured) and most divergences follow. With q's
scales as a fixed mass matrix it also cannot correct a variational fit that underestimates
variances. The sign rule stays available (``step_size_rule="sign"``) for the paper's protocol.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from blackjax.adaptation.mass_matrix import mass_matrix_adaptation
from blackjax.adaptation.step_size import dual_averaging_adaptation

from autoreparam.mcmc.step_size import settled_log_step_size


class WindowState(NamedTuple):
    """One space's adaptation: dual averaging, Welford accumulator, and the values in force."""

    step: object  # DualAveragingAdaptationState
    mass: object  # MassMatrixAdaptationState
    step_size: jax.Array
    inverse_mass: jax.Array  # (dim,)


# Stan's default window sizes (Stan Reference Manual, "Automatic parameter tuning"), as BlackJAX's.
INITIAL_BUFFER, FIRST_WINDOW, FINAL_BUFFER = 75, 25, 50


def stan_schedule(num_warmup: int) -> np.ndarray:
    """``(num_warmup, 2)`` int32 array of (stage: 0 fast / 1 slow, end of a slow window), Stan's layout.

    Stan Reference Manual, "Automatic parameter tuning": a fast window of 75 transitions, slow
    windows of 25, 50, 100, ... (the last one stretched to the final buffer when the next would not
    fit twice), and a fast window of 50; under 20 transitions every one is fast, and a warm-up
    shorter than the three windows scales them to 15%, the rest and 10%. This is BlackJAX's
    ``build_schedule`` value for value (``tests/mcmc/test_warmup.py`` compares them), written with
    NumPy: BlackJAX builds a Python list of pairs and converts it with ``jnp.array``, which took 0.17
    to 0.19 s per call, at every warm-up and re-adaptation (a fifth of a repeated ``auto`` call on
    radon MN, measured with cProfile).
    """
    num_warmup = int(num_warmup)
    stages = np.zeros((num_warmup, 2), dtype=np.int32)
    if num_warmup < 20:
        return stages
    initial, first, final = INITIAL_BUFFER, FIRST_WINDOW, FINAL_BUFFER
    if initial + first + final > num_warmup:
        initial, final = int(0.15 * num_warmup), int(0.1 * num_warmup)
        first = num_warmup - initial - final
    final_start = num_warmup - final
    start, size = initial, first
    while start < final_start:
        if 3 * size <= final_start - start:
            following = 2 * size
        else:
            size = following = final_start - start
        stages[start:start + size, 0] = 1
        stages[start + size - 1, 1] = 1
        start, size = start + size, following
    return stages


def schedule(num_warmup: int) -> jax.Array:
    """``stan_schedule`` as a JAX array (the HMC samplers scan over it)."""
    return jnp.asarray(stan_schedule(num_warmup))


def window_adaptation(target_accept: float, pool_variances=None):
    """``(init, update, final)`` of Stan's windowed adaptation for one space.

    ``init(inverse_mass (dim,), step_size) -> WindowState``; ``update(state, stage, window_end,
    position, acceptance) -> WindowState``; ``final(state) -> (step_size, inverse_mass)``.
    A non-finite acceptance (a failed trajectory) counts as a rejection.
    ``pool_variances(mass_state) -> mass_state``, if given, replaces a window's Welford estimate
    just before it becomes the new mass matrix (e.g. by the estimate over all chains' draws).
    """
    mm_init, mm_update, mm_final = mass_matrix_adaptation(is_diagonal_matrix=True)
    da_init, da_update, _ = dual_averaging_adaptation(target_accept)

    def init(inverse_mass, step_size):
        mass = mm_init(inverse_mass.shape[-1], inverse_mass)
        return WindowState(da_init(step_size), mass, jnp.asarray(step_size), inverse_mass)

    def update(state: WindowState, stage, window_end, position, acceptance):
        acceptance = jnp.where(jnp.isfinite(acceptance), acceptance, 0.0)
        step = da_update(state.step, acceptance)
        mass = jax.lax.cond(jnp.asarray(stage) == 1, lambda: mm_update(state.mass, position), lambda: state.mass)

        def end_of_window():
            # New mass matrix from the window's draws; dual averaging restarts at the window's average.
            new_mass = mm_final(mass if pool_variances is None else pool_variances(mass))
            # A variance that overflowed (a chain at 1e19 in a funnel's neck, generated program 425 of
            # the corpus) would make every step length 0: such an element keeps the metric in force.
            estimate = new_mass.inverse_mass_matrix
            inverse_mass = jnp.where(jnp.isfinite(estimate) & (estimate > 0), estimate, state.inverse_mass)
            step_size = jnp.exp(settled_log_step_size(step))
            return WindowState(da_init(step_size), new_mass._replace(inverse_mass_matrix=inverse_mass), step_size,
                               inverse_mass)

        def within_window():
            return WindowState(step, mass, jnp.exp(step.log_step_size), state.inverse_mass)

        return jax.lax.cond(jnp.asarray(window_end, dtype=bool), end_of_window, within_window)

    def final(state: WindowState):
        # Capped while the last window's dual averaging is young (``step_size.settled_log_step_size``).
        return jnp.exp(settled_log_step_size(state.step)), state.inverse_mass

    return init, update, final

"""Many variational fits at once: one compiled program, ``vmap`` over runs, ``lax.scan`` over steps.

A run is one (parameterisation, learning rate) pair. Fixed parameterisations (CP, NCP, a given or
rounded lambda) and learned ones (VIP) share the program: a run's centring is
``learn * sigmoid(w) + (1 - learn) * fixed``, so for a fixed run the gradient with respect to ``w`` is
exactly zero and Adam leaves ``w`` alone. This is how the paper's five learning rates, and the CP and
NCP baselines "under the same protocol", run in parallel (paper 002 Appendix C; 000 Section 6.3 notes
that "a deep PPL can often run multiple such optimizations in parallel at minimal cost").
"""

from __future__ import annotations

import dataclasses

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.programs import PROGRAMS
from autoreparam.precision import float_dtype
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.vi.meanfield import MeanField, elbo_terms, init_meanfield
from autoreparam.progress import progress_reporter
from autoreparam.vi.protocol import VIConfig


class Runs(NamedTuple):
    """A batch of R runs; every leaf has a leading axis of size R."""

    fixed: Parameterisation  # centring used where learn == 0
    learn: jax.Array  # (R,) 1.0: learn the centring, 0.0: keep it fixed
    learning_rate: jax.Array  # (R,)
    init_loc: jax.Array  # (R, dim) initial mean of q
    init_logit: Parameterisation  # initial logit of the learned centring (0 -> lambda = 0.5)


class Params(NamedTuple):
    q: MeanField
    logit: Parameterisation  # unconstrained centring; sigmoid gives a and b


class RunResults(NamedTuple):
    """Per-run outcome, numpy arrays with a leading axis of size R."""

    loc: np.ndarray
    scale: np.ndarray
    centring: Parameterisation
    trace: np.ndarray  # (R, num_steps) ELBO estimate at every step
    window_mean: np.ndarray  # mean ELBO over the last ``select_window`` steps
    elbo: np.ndarray  # final ELBO from fresh draws
    elbo_se: np.ndarray
    nonfinite_steps: np.ndarray
    compile_seconds: float
    run_seconds: float


def _centring(logit: Parameterisation, run: Runs, tied: bool) -> Parameterisation:
    def mix(w, fixed):
        return run.learn * jax.nn.sigmoid(w) + (1.0 - run.learn) * fixed

    a = {n: mix(logit.loc_centring[n], run.fixed.loc_centring[n]) for n in logit.names}
    source = logit.loc_centring if tied else logit.scale_centring
    b = {n: mix(source[n], run.fixed.scale_centring[n]) for n in logit.names}
    return Parameterisation.tree_unflatten(logit.names, (tuple(a[n] for n in logit.names), tuple(b[n] for n in logit.names)))


def _final_elbo(log_density, q: MeanField, key, config: VIConfig, has_density=None):
    """Mean and standard error of ``log p - log q`` over fresh draws, in chunks to bound memory."""
    chunk = min(config.num_samples, config.final_num_samples)
    num_chunks = -(-config.final_num_samples // chunk)
    keys = jax.random.split(key, num_chunks)
    def chunk_terms(k):
        return elbo_terms(log_density, q, k, chunk, stl=False, has_density=has_density)

    terms = jax.lax.map(chunk_terms, keys).reshape(-1)
    # Exactly ``final_num_samples`` draws (the remainder of the last chunk was dropped before), and the
    # sample standard deviation (ddof 1): with few draws ddof 0 understated the error.
    terms = terms[: config.final_num_samples]
    return jnp.mean(terms), jnp.std(terms, ddof=1) / jnp.sqrt(terms.size)


# The progress callback compiled into a fit program forwards to whichever reporter is current, so
# that one executable serves every call (a callback closed over per call would be a new program).
_CURRENT_REPORT = {"report": None}


def _report(step, elbo):
    report = _CURRENT_REPORT["report"]
    if report is not None:
        report(step, elbo)


@jax.jit
def _run_keys(key, ids):
    return jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, ids)


def window_score(window: jax.Array) -> jax.Array:
    """The mean of the finite ELBO estimates of the last steps (the selection criterion between
    learning rates), or -inf when fewer than half are finite.

    A step whose estimate is not finite is skipped (``build_fit_program``); a window holding one such
    step once scored -inf, so the run with the best learning rate lost the selection for one extreme
    Monte Carlo draw. A run that skips most of its last steps is not converging and still loses.
    """
    finite = jnp.isfinite(window)
    count = jnp.sum(finite)
    mean = jnp.sum(jnp.where(finite, window, 0.0)) / jnp.maximum(count, 1)
    return jnp.where(2 * count >= window.shape[0], mean, -jnp.inf)


def build_fit_program(coords: Coordinates, config: VIConfig, tied: bool, report=None):
    """A function ``(data, runs, keys) -> per-run outputs`` that fits every run; compile it once.

    ``report``: anything true-ish compiles a progress callback into the program (``_report``), which
    reports to the reporter current while the program runs.
    """
    optimiser = optax.scale_by_adam()
    report_every = max(1, config.num_steps // 100)

    def fit_one(coords: Coordinates, run: Runs, key, has_density):
        def log_density_at(logit):
            param = _centring(logit, run, tied)
            return lambda x: coords.log_density(coords.unravel(x), param)

        def loss(params, step_key):
            terms = elbo_terms(log_density_at(params.logit), params.q, step_key, config.num_samples, config.stl,
                               has_density)
            elbo = jnp.mean(terms)
            return -elbo, elbo

        params = Params(init_meanfield(run.init_loc, config.init_scale), run.init_logit)
        opt_state = optimiser.init(params)

        def step(carry, t):
            params, opt_state, key = carry
            key, step_key = jax.random.split(key)
            (_, elbo), grads = jax.value_and_grad(loss, has_aux=True)(params, step_key)
            direction, new_opt_state = optimiser.update(grads, opt_state, params)
            rate = run.learning_rate * config.learning_rate_factor(t)
            new_params = jax.tree_util.tree_map(lambda p, d: p - rate * d, params, direction)
            # Adam's state and the new parameters must be finite too: a finite gradient whose square
            # overflows float32 (above about 1.8e19) left an infinite second moment that froze those
            # coordinates for good, in a fit reported as healthy (found in review).
            leaves = jax.tree_util.tree_leaves((grads, new_opt_state, new_params))
            finite = jnp.isfinite(elbo) & jnp.all(jnp.array([jnp.all(jnp.isfinite(g)) for g in leaves]))
            # A non-finite step (e.g. an overflow at an extreme draw) is skipped, not propagated.
            keep = lambda new, old: jnp.where(finite, new, old)  # noqa: E731
            params = jax.tree_util.tree_map(keep, new_params, params)
            opt_state = jax.tree_util.tree_map(keep, new_opt_state, opt_state)
            if report is not None:
                jax.lax.cond(t % report_every == 0, lambda: jax.debug.callback(_report, t, elbo), lambda: None)
            return (params, opt_state, key), (elbo, finite)

        key, final_key = jax.random.split(key)
        (params, _, _), (trace, finite) = jax.lax.scan(step, (params, opt_state, key), jnp.arange(config.num_steps))
        window_mean = window_score(trace[-config.select_window :])
        centring = _centring(params.logit, run, tied)
        elbo, elbo_se = _final_elbo(log_density_at(params.logit), params.q, final_key, config, has_density)
        return dict(
            loc=params.q.loc,
            scale=params.q.scale,
            centring=centring,
            trace=trace,
            window_mean=window_mean,
            elbo=elbo,
            elbo_se=elbo_se,
            nonfinite_steps=jnp.sum(~finite),
        )

    def program(data, runs, keys, has_density):
        bound = coords.with_data(data)
        return jax.vmap(lambda run, key: fit_one(bound, run, key, has_density))(runs, keys)

    return program


def density_marks(coords: Coordinates) -> jax.Array:
    """(dim,) 1.0 where a flat coordinate has a density, 0.0 where it has none (`elbo_terms`).

    A runtime argument of the fit program, not a constant compiled into it: obs_mask is data, and a
    compiled program serves other data of the same shapes (`Coordinates.with_data`)."""
    marks = coords.flat_has_density
    marks = np.ones(coords.dim, dtype=bool) if marks is None else marks
    return jnp.asarray(marks, dtype=float_dtype())


def run_fits(coords: Coordinates, runs: Runs, config: VIConfig, tied: bool, seed: int, label: str = "VI",
             run_ids=None) -> RunResults:
    """Fit every run of ``runs`` in one compiled program and return per-run results.

    ``run_ids``: one integer per run naming what it fits (its target and start, `fits.run_id`); run i
    draws its Monte Carlo samples from ``fold_in(PRNGKey(seed), run_ids[i])``, so a fit does not change
    with the other fits of its batch (by position, NCP's fit differed between ``method="ncp"`` and
    ``"ihmc"`` at one seed), and its learning rates share random numbers. Default: the run's position.
    """
    num_runs = int(runs.learn.shape[0])
    ids = np.arange(num_runs) if run_ids is None else np.asarray(run_ids)
    keys = _run_keys(jax.random.PRNGKey(seed), jnp.asarray(ids, dtype=jnp.uint32))
    # The learning rates are runtime arguments (``runs.learning_rate``): one program serves any rates of
    # the same count, so `fits.fit_or_retry`'s retry at a tenth of them compiles nothing new.
    program_config = dataclasses.replace(config, learning_rates=(1.0,) * len(config.learning_rates))
    key = ("vi_fit", coords.program_key, program_config, tied)
    with progress_reporter(config.num_steps, label, enabled=config.progress) as report:
        _CURRENT_REPORT["report"] = report
        try:
            out, compile_seconds, run_seconds = PROGRAMS(
                key, lambda: build_fit_program(coords, program_config, tied, config.progress or None),
                (coords.data, runs, keys, density_marks(coords))
            )
        finally:
            _CURRENT_REPORT["report"] = None
    out = jax.tree_util.tree_map(np.asarray, out)
    return RunResults(**out, compile_seconds=compile_seconds, run_seconds=run_seconds)

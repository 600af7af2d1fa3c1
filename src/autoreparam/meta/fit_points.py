"""Data-informed probe points: a short mean-field fit of the non-centred model, its mean and +-1 sd.

The graph's probes (`autoreparam.graph.probes`) weigh each element's prior scale against the curvature
the rest of the model puts on it, ``log(s^2 c)``, paper 000 Section 3's ``log(s^2 q)``. At the prior
points that evidence can be far from the posterior's: on electric the pair intercepts look
well-informed at the prior centre (share 0.67) and weakly informed at the posterior (0.02), because
the noise scale the data imply (5 to 9) is far from its prior centre (about 1)
(`benchmarks/meta_probe_points.py`, META.md).

This module gives the probes three other points, found from the data at a small, fixed cost: a
mean-field normal ``q(u) = N(m, diag(s^2))`` over the *non-centred* model's unconstrained coordinates
``u``, fitted by the reparameterised ELBO (paper 000 Section 4's objective at lambda = 0) for
``FIT_STEPS`` Adam steps of ``FIT_DRAWS`` draws, from the prior centre (the graph's, every latent at
its prior location given its parents) with ``s = INIT_SCALE``. In those coordinates the prior points
are exactly ``u = 0, -1, +1`` for every non-centred location-scale latent (``z~ ~ N(0, 1)``), so the
fit's points ``m, m - s, m + s`` generalise them: the prior points are those of q = the prior. A step whose
ELBO or gradient is not finite (a draw that overflows, e.g. ``exp`` of a Poisson rate) is skipped,
not taken: starting at ``u = 0`` with ``s = 1`` and taking such steps left 9 of the 260 generated
training programs with a NaN q (hierarchical Poisson regressions with group scales of
0.02, where ``u = 0`` means a scale of 1). Non-centred, because the centred model's neck traps a short
fit, and a joint mode instead fails on eight schools (its group effects fit the data exactly with a
large group scale; META.md).

Cost: ``FIT_STEPS * FIT_DRAWS`` = 4,000 density gradients plus one compilation, start included (nothing
runs op by op). On the 2-core CPU machine a repeat prediction with these points takes 0.02 to 0.46 s
over the zoo, and a fresh process's first one 2.2 to 3.6 s (1.0 to 1.9 s of it the fit), or 1.2 to
1.8 s with the persistent compilation cache of an earlier session
(`benchmarks/results/predict_first_call/after_fit.md`). It is a per-model fit, however small:
``predict(..., probes="fit")`` reports it in its ``seconds``.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from autoreparam.coordinates import Coordinates
from autoreparam.errors import ModelError
from autoreparam.graph.probes import prior_centre
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model
from autoreparam.vi.meanfield import MeanField, elbo_terms, init_meanfield

FIT_STEPS = 500
FIT_DRAWS = 8
LEARNING_RATE = 0.05
# q's starting scale, as the VI protocol's (VIConfig.init_scale): 1 overflowed every draw in a raw
# coordinate whose prior scale is 0.02, so that no step was ever finite.
INIT_SCALE = 0.1
# Jitted fit programs per model, data structure and plan (as the graph's probe programs are kept),
# least recently used dropped: on eight schools a repeat call fell from 0.8 s to 0.01 s.
_FIT_PROGRAMS: OrderedDict = OrderedDict()
MAX_FIT_PROGRAMS = 64


def fit_points(model: Callable, args: tuple, kwargs: dict, seed: int = 0, steps: int = FIT_STEPS,
               draws: int = FIT_DRAWS) -> tuple[dict[str, np.ndarray], float]:
    """``({latent: (3, *shape)}, seconds)``: the fit's mean, one sd down and one up, in the model's coordinates.

    Raises `ModelError` when the fit does not end finite (the prior points are then the only ones).
    """
    start = time.perf_counter()
    plan = select_sites(analyse_model(model, *args, seed=seed, **kwargs))
    coords = Coordinates(model, args, kwargs, plan)
    non_centred = Parameterisation.non_centred(plan)
    optimiser = optax.adam(LEARNING_RATE)

    def program(data, key):
        bound = coords.with_data(data)
        # The start, the prior centre in the non-centred coordinates, is traced into the program: run
        # eagerly, its two passes through the model compiled every primitive they met on their own, in
        # every new process (about 1 s of a first prediction on radon, persistent cache or not).
        centre = prior_centre(model, bound.model_args, bound.model_kwargs)
        origin = bound.ravel(bound.from_original(centre, non_centred))

        def negative_elbo(q: MeanField, key):
            log_density = lambda u: bound.log_density(bound.unravel(u), non_centred)  # noqa: E731
            return -jnp.mean(elbo_terms(log_density, q, key, draws))

        def step(carry, key):
            q, state = carry
            loss, grads = jax.value_and_grad(negative_elbo)(q, key)
            updates, new_state = optimiser.update(grads, state)
            finite = jnp.isfinite(loss) & jnp.all(jnp.array([jnp.all(jnp.isfinite(g)) for g in grads]))
            keep = lambda new, old: jax.tree_util.tree_map(lambda a, b: jnp.where(finite, a, b), new, old)  # noqa: E731
            return (keep(optax.apply_updates(q, updates), q), keep(new_state, state)), None

        q = init_meanfield(origin, INIT_SCALE)
        q = jax.lax.scan(step, (q, optimiser.init(q)), jax.random.split(key, steps))[0][0]
        points = [bound.to_original(bound.unravel(u), non_centred) for u in (q.loc, q.loc - q.scale, q.loc + q.scale)]
        return {name: jnp.stack([p[name] for p in points]) for name in points[0]}

    # One executable per model, data shapes and plan: a repeat call (new data of the same shapes, the
    # evaluation's second prediction) runs it without tracing or compiling again.
    key = (coords.program_key, steps, draws)
    jitted = _FIT_PROGRAMS.get(key)
    if jitted is None:
        jitted = _FIT_PROGRAMS[key] = jax.jit(program)
        while len(_FIT_PROGRAMS) > MAX_FIT_PROGRAMS:
            _FIT_PROGRAMS.popitem(last=False)
    _FIT_PROGRAMS.move_to_end(key)
    found = jitted(coords.data, jax.random.PRNGKey(seed))
    points = {k: np.asarray(v) for k, v in jax.device_get(found).items()}
    bad = [name for name, value in points.items() if not np.all(np.isfinite(value))]
    if bad:
        raise ModelError(f"site '{bad[0]}': the short non-centred fit for the probe points did not end finite; "
                         "use the prior points (probes='prior')")
    return points, time.perf_counter() - start


def probed_graph(model: Callable, args: tuple, kwargs: dict, probes: str, seed: int = 0):
    """``model(*args, **kwargs)``'s graph with its probes read at the prior points (``"prior"``) or at
    this module's fit points (``"fit"``)."""
    from autoreparam.graph import model_graph

    points = fit_points(model, args, kwargs, seed)[0] if probes == "fit" else None
    return model_graph(model, *args, seed=seed, probe_points=points, **kwargs)

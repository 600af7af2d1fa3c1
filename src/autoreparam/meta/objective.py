"""The training objective of paper 003: each model's ELBO under the predicted centring (VIP's ELBO,
paper 000 Section 5.2), with a mean-field q kept near its optimum by inner steps.

Why inner steps and not an amortised guide head: VIP's gradient in lambda is only right at the q that
is optimal for that lambda (the envelope theorem: d/dlambda max_q ELBO = dELBO/dlambda at q*), and
paper 003's Discussion reports that a badly converged guide teaches the network the best centring
"for the wrong guide". A guide head would have to predict q for every element of models of up to
10^5 elements, and its error would enter the gradient directly. So each training model keeps its own
q (and Adam state) across training steps; before each gradient it takes ``inner_steps`` Adam steps
at the current prediction (``burn_in_steps`` at its first use), which tracks the slowly moving
prediction. q starts from the label's VIP fit, moved into the predicted coordinates through the
original ones.

One `ModelObjective` per model compiles one program ``(q, opt_state, lambda, key, n_inner) ->
(q, opt_state, ELBO, dELBO/dlambda)``; the network's gradient is then the vector-Jacobian product of
the batched network with these per-element gradients (`train.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from autoreparam.coordinates import Coordinates
from autoreparam.graph import ModelGraph
from autoreparam.initial import initial_values
from autoreparam.precision import float_dtype
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model
from autoreparam.vi.meanfield import MeanField, elbo_terms, init_meanfield, inverse_softplus


@dataclass(frozen=True)
class ObjectiveConfig:
    inner_steps: int = 10  # Adam steps on q before each gradient in lambda
    burn_in_steps: int = 300  # Adam steps on q at a model's first use
    inner_samples: int = 16  # draws per inner ELBO estimate
    gradient_samples: int = 32  # draws for the ELBO and its gradient in lambda
    inner_learning_rate: float = 0.02
    init_scale: float = 0.1  # q's scale when no label gives one


def normalisation(label: dict | None) -> tuple[float, float]:
    """``(reference, unit)``: the best fixed ELBO and max(1, |ELBO_CP - ELBO_NCP|) of a model's label.

    A model's loss is its regret against its best fixed parameterisation in units of its CP-NCP gap:
    0 is as good as the better of CP and NCP, 1 as bad as the worse (when the gap exceeds 1 nat),
    negative is better than both. No model dominates by its size or its ELBO's magnitude.
    """
    if not label:
        return 0.0, 1.0
    values = [label.get("fits", {}).get(k, {}).get("elbo") for k in ("cp", "ncp")]
    values = [v for v in values if v is not None and np.isfinite(v)]
    if not values:
        return 0.0, 1.0
    return float(max(values)), float(max(1.0, abs(values[0] - values[-1])))


class ModelObjective:
    """ELBO of one model under a per-element centring, with its own persistent mean-field q."""

    def __init__(self, model: Callable, args: tuple, kwargs: dict, graph: ModelGraph, *,
                 config: ObjectiveConfig = ObjectiveConfig(), form: str = "tied", label: dict | None = None,
                 seed: int = 0):
        structure = analyse_model(model, *args, seed=seed, **kwargs)
        self.plan = select_sites(structure, "default")
        self.coords = Coordinates(model, args, kwargs, self.plan)
        self.config, self.form, self.label = config, form, label
        self.num_elements = graph.num_elements
        self.rows = {}
        for site in self.plan.sites:
            rows = graph.element_rows(site.name)
            self.rows[site.name] = rows[np.argsort(graph.element_index[rows], kind="stable")]
        self.reference, self.unit = normalisation(label)
        self._init = initial_values(model, args, kwargs, structure.names, None, seed)
        self._optimiser = optax.adam(config.inner_learning_rate)
        self._compiled = None
        self.state = None  # (q, opt_state), set at first use
        self.compile_seconds = None

    # --- the centring, from per-element values -------------------------------------------------
    def parameterisation(self, values) -> Parameterisation:
        """``values (M, 1 or 2)`` (a graph's element rows) -> the plan's Parameterisation (traceable)."""
        a = {n: values[r, 0].reshape(self.plan.site(n).shape) for n, r in self.rows.items()}
        b = {n: values[r, -1].reshape(self.plan.site(n).shape) for n, r in self.rows.items()}
        names = tuple(sorted(a))
        return Parameterisation.tree_unflatten(names, (tuple(a[n] for n in names), tuple(b[n] for n in names)))

    def _label_parameterisation(self) -> Parameterisation | None:
        if not self.label or not self.label.get("vip_lambda"):
            return None
        lam = {n: np.asarray(self.label["vip_lambda"][n], dtype=float_dtype()).reshape(self.plan.site(n).shape)
               for n in self.plan.names}
        return Parameterisation.tied(self.plan, lam)

    # --- q ---------------------------------------------------------------------------------------
    def initial_q(self, values: np.ndarray) -> MeanField:
        """q in the coordinates of ``values``: the label's VIP q moved through the original coordinates."""
        target = self.parameterisation(jnp.asarray(values, dtype=float_dtype()))
        source = self._label_parameterisation()
        fit = (self.label or {}).get("fits", {}).get("vip")
        if source is not None and fit and fit.get("loc") is not None:
            z = self.coords.to_original(self.coords.unravel(jnp.asarray(fit["loc"], float_dtype())), source)
            loc = self.coords.ravel(self.coords.from_original(z, target))
            scale = jnp.asarray(fit["scale"], float_dtype())
            if bool(jnp.all(jnp.isfinite(loc))) and bool(jnp.all(jnp.isfinite(scale))):
                return MeanField(loc, inverse_softplus(jnp.maximum(scale, 1e-4)))
        loc = self.coords.ravel(self.coords.from_original(self._init, target))
        return init_meanfield(loc, self.config.init_scale)

    def _step(self, q: MeanField, opt_state, values, key, num_inner):
        config, coords = self.config, self.coords

        def log_density_at(values):
            param = self.parameterisation(values)
            return lambda x: coords.log_density(coords.unravel(x), param)

        fixed = log_density_at(jax.lax.stop_gradient(values))

        def negative_elbo(q, k):
            return -jnp.mean(elbo_terms(fixed, q, k, config.inner_samples, stl=True))

        def inner(_, carry):
            q, opt_state, key = carry
            key, sub = jax.random.split(key)
            loss, grads = jax.value_and_grad(negative_elbo)(q, sub)
            updates, new_state = self._optimiser.update(grads, opt_state, q)
            new_q = optax.apply_updates(q, updates)
            finite = jnp.isfinite(loss) & jnp.all(jnp.array([jnp.all(jnp.isfinite(g)) for g in jax.tree_util.tree_leaves(grads)]))
            keep = lambda new, old: jnp.where(finite, new, old)  # noqa: E731 - skip a non-finite step
            return jax.tree_util.tree_map(keep, new_q, q), jax.tree_util.tree_map(keep, new_state, opt_state), key

        key, final = jax.random.split(key)
        q, opt_state, _ = jax.lax.fori_loop(0, num_inner, inner, (q, opt_state, key))

        def elbo(values):
            return jnp.mean(elbo_terms(log_density_at(values), q, final, config.gradient_samples, stl=True))

        value, gradient = jax.value_and_grad(elbo)(values)
        ok = jnp.isfinite(value) & jnp.all(jnp.isfinite(gradient))
        return q, opt_state, value, jnp.where(ok, gradient, 0.0), ok

    def lower(self, outputs: int = 1):
        """Trace the step program (NumPyro's handler stack is global: trace in one thread only)."""
        # JAX's default float throughout (float64 under jax_enable_x64): q starts from the model's own
        # values, and a float32 program refused them there (found running the suite in 64 bits)
        q = init_meanfield(jnp.zeros(self.coords.dim, float_dtype()), 1.0)
        values = jnp.full((self.num_elements, outputs), 0.5, float_dtype())
        return jax.jit(self._step).lower(q, self._optimiser.init(q), values, jax.random.PRNGKey(0), jnp.int32(1))

    def compile(self, outputs: int = 1, lowered=None) -> None:
        """Compile the step program now; XLA's compilation of a ``lowered`` program may run in a thread."""
        if self._compiled is not None:
            return
        import time

        start = time.perf_counter()
        self._compiled = (self.lower(outputs) if lowered is None else lowered).compile()
        self.compile_seconds = time.perf_counter() - start

    def __call__(self, values: np.ndarray, key) -> tuple[float, np.ndarray, bool]:
        """``(ELBO, dELBO/dvalues, finite)`` at the centring ``values (M, k)``, after q's inner steps."""
        values = jnp.asarray(values, dtype=float_dtype())
        self.compile(values.shape[1])
        steps = self.config.inner_steps
        if self.state is None:
            q = self.initial_q(np.asarray(values))
            self.state = (q, self._optimiser.init(q))
            steps = self.config.burn_in_steps
        q, opt_state, value, gradient, ok = self._compiled(*self.state, values, key, jnp.int32(steps))
        self.state = (q, opt_state)
        return float(value), np.asarray(gradient), bool(ok)

    def reset(self) -> None:
        """Forget q (a new training run starts it again from the label)."""
        self.state = None

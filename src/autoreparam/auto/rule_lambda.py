"""The Section 3 rule's lambda, averaged over points of the posterior, as one compiled program per model.

``reparam.rule`` gives the rule at one point; here it is vmapped over a batch of points (draws from a
warm-up, or the initial values), averaged, and compiled through ``mcmc.programs`` with the data as
runtime arguments, so a second call on the same model compiles nothing.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from autoreparam.coordinates import Coordinates
from autoreparam.mcmc.programs import PROGRAMS
from autoreparam.precision import float_dtype
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.rule import rule_function

# Points the rule is averaged over: enough to average out where the curvature varies (a logistic
# likelihood, a scale latent), few enough to cost a small fraction of a warm-up.
MAX_POINTS = 32


class RuleLambda:
    """``lambda_at(flat original draws (n, original_dim)) -> Parameterisation`` for one model."""

    def __init__(self, coords: Coordinates, seed: int = 0):
        self.coords, self.seed = coords, seed
        self.seconds = {"compile": 0.0, "run": 0.0}
        self.origin_density = float("nan")  # the log density at the origin, once `lambda_at_origin` ran

    def _build(self):
        coords = self.coords

        def mean_lambda(data, flat_points, key, at_origin):
            bound = coords.with_data(data)
            # The origin of the centred program's unconstrained space (``initial.ORIGIN``, where auto
            # starts), in original coordinates, and the log density there: computed here, where the
            # model is traced anyway, instead of in a program of its own.
            centred = Parameterisation.centred(bound.plan)
            zeros = jnp.zeros(coords.dim, dtype=flat_points.dtype)
            origin = bound.ravel_original(bound.to_original(bound.unravel(zeros), centred)).astype(flat_points.dtype)
            density = bound.log_density_cp(bound.unravel(zeros))
            points = jnp.where(at_origin, jnp.broadcast_to(origin, flat_points.shape), flat_points)
            rule = rule_function(bound.model, bound.model_args, bound.model_kwargs, bound.plan, key)
            per_point = jax.vmap(lambda x: rule(bound.unravel_original(x)))(points)
            return {name: jnp.mean(values, axis=0) for name, values in per_point.items()}, origin, density

        return mean_lambda

    def _run(self, points, at_origin: bool):
        key = ("rule_lambda", self.coords.program_key)
        args = (self.coords.data, points, jax.random.PRNGKey(self.seed), jnp.asarray(at_origin))
        (lam, origin, density), c, t = PROGRAMS(key, self._build, args)
        self.seconds["compile"] += c
        self.seconds["run"] += t
        lam = {name: np.clip(np.nan_to_num(np.asarray(v), nan=1.0), 0.0, 1.0) for name, v in lam.items()}
        return Parameterisation.tied(self.coords.plan, lam), np.asarray(origin), float(density)

    def lambda_at_origin(self) -> tuple[Parameterisation, np.ndarray, bool]:
        """The rule's lambda at the origin of the centred unconstrained space, the origin's original
        values (flat), and whether the model's log density is finite there (if not, the caller looks
        for another start: ``initial.initial_values``). The density itself is kept in ``origin_density``."""
        points = jnp.zeros((MAX_POINTS, self.coords.original_dim), float_dtype())
        lam, origin, density = self._run(points, True)
        self.origin_density = density
        return lam, origin, bool(np.isfinite(density) and np.all(np.isfinite(origin)))

    def lambda_at(self, flat_points) -> Parameterisation:
        """The rule's lambda averaged over ``MAX_POINTS`` of ``flat_points`` (evenly thinned, or repeated:
        a fixed number of points keeps one executable for every call)."""
        flat_points = np.asarray(flat_points, dtype=float_dtype()).reshape(-1, self.coords.original_dim)
        index = np.linspace(0, flat_points.shape[0] - 1, MAX_POINTS).round().astype(int)
        return self._run(jnp.asarray(flat_points[index]), False)[0]

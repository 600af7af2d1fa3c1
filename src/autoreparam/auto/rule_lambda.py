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

    def _build(self):
        coords = self.coords

        def mean_lambda(data, flat_points, key):
            bound = coords.with_data(data)
            rule = rule_function(bound.model, bound.model_args, bound.model_kwargs, bound.plan, key)
            per_point = jax.vmap(lambda x: rule(bound.unravel_original(x)))(flat_points)
            return {name: jnp.mean(values, axis=0) for name, values in per_point.items()}

        return mean_lambda

    def lambda_at(self, flat_points) -> Parameterisation:
        """The rule's lambda averaged over ``MAX_POINTS`` of ``flat_points`` (evenly thinned, or repeated:
        a fixed number of points keeps one executable for every call)."""
        flat_points = np.asarray(flat_points, dtype=np.float32).reshape(-1, self.coords.original_dim)
        index = np.linspace(0, flat_points.shape[0] - 1, MAX_POINTS).round().astype(int)
        points = jnp.asarray(flat_points[index])
        key = ("rule_lambda", self.coords.program_key)
        lam, c, t = PROGRAMS(key, self._build, (self.coords.data, points, jax.random.PRNGKey(self.seed)))
        self.seconds["compile"] += c
        self.seconds["run"] += t
        lam = {name: np.clip(np.nan_to_num(np.asarray(v), nan=1.0), 0.0, 1.0) for name, v in lam.items()}
        return Parameterisation.tied(self.coords.plan, lam)

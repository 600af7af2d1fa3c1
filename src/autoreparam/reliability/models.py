"""The models simulation-based calibration runs on: small, centred, and of different geometry.

Each is a NumPyro model written centred, as a user writes it, with a fixed design (sizes, known
noise scales, covariates) and its observed site sampled from the prior predictive when not given:

- ``funnel``: Neal's funnel with no data (the zoo's `neals_funnel`, dim 2): the posterior is the
  prior, a funnel whose neck CP cannot enter;
- ``funnel_observed``: the funnel observed through noise (the zoo's `funnel_with_observation`,
  sigma = 1; papers/003's training family): CP or NCP is better depending on the draw;
- ``eight_schools``: the zoo's model with the real sigmas (Rubin 1981);
- ``hierarchical_logistic``: 8 groups of 10 Bernoulli observations with random intercepts and a
  common slope on a standard-normal covariate: weakly informative data, a funnel in (tau, a);
- ``random_walk_scan``: a Gaussian random walk with unknown step scale over 6 steps, written with
  ``numpyro.contrib.control_flow.scan`` and observed through unit noise: a funnel in (tau, level)
  along a time series, whose sites are reparameterised step by step inside the scan body.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro import handlers
from numpyro.contrib.control_flow import scan

from autoreparam.errors import ArgumentError
from autoreparam.models.funnels import FUNNEL_Y_RANGE, funnel_with_observation, neals_funnel
from autoreparam.models.hierarchical import eight_schools

EIGHT_SCHOOLS_SIGMA = (15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0)  # Rubin (1981), BDA Table 5.2
MAX_PRIOR_DRAWS = 1000  # draws of (parameters, data) before giving up on the data's allowed range


def hierarchical_logistic(group, x, num_groups, y=None):
    """Random-intercept logistic regression, centred.

    mu ~ N(0, 1); tau ~ HalfNormal(1); a_j ~ N(mu, tau); beta ~ N(0, 1);
    y_i ~ Bernoulli(logit = a_{group_i} + beta x_i).
    """
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    tau = numpyro.sample("tau", dist.HalfNormal(1.0))
    with numpyro.plate("groups", num_groups):
        a = numpyro.sample("a", dist.Normal(mu, tau))
    beta = numpyro.sample("beta", dist.Normal(0.0, 1.0))
    group = jnp.asarray(group)
    with numpyro.plate("observations", group.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=a[group] + beta * jnp.asarray(x)), obs=y)


RANDOM_WALK_STEPS = 6


def random_walk_scan(num_steps, y=None):
    """A random walk written with scan, centred: tau ~ HalfNormal(1); level_t ~ N(level_{t-1}, tau)
    from level_0 = 0; y_t ~ N(level_t, 1)."""
    tau = numpyro.sample("tau", dist.HalfNormal(1.0))

    def step(previous, y_t):
        level = numpyro.sample("level", dist.Normal(previous, tau))
        numpyro.sample("y", dist.Normal(level, 1.0), obs=y_t)
        return level, None

    scan(step, 0.0, y, length=num_steps)


@dataclass(frozen=True)
class SBCModel:
    """A centred model with its fixed design; ``observed`` names the data keyword (None: no data).

    ``data_range``: the interval the model accepts its data in; prior draws whose data fall outside
    are drawn again. Selecting on the data alone leaves every posterior p(theta | y) unchanged, so
    the ranks stay uniform (Talts et al. 2018, Section 3.1, holds for any distribution of y).
    """

    name: str
    description: str
    model: Callable
    args: tuple
    kwargs: dict
    observed: str | None
    data_range: tuple[float, float] | None = None

    @functools.cached_property
    def _joint_draw(self) -> Callable:
        """key -> every sample site's value in one prior predictive draw, compiled once per model.

        Tracing the model anew per draw re-lowered and re-compiled `scan` every time: 0.4 s and
        about 5 MB that were never freed per draw of `random_walk_scan`, until LLVM could not
        allocate memory near 1,000 draws in one process. The compiled draw gives the same values.
        """
        kwargs = {**self.kwargs, **({self.observed: None} if self.observed else {})}

        def draw(key):
            trace = handlers.trace(handlers.seed(self.model, rng_seed=key)).get_trace(*self.args, **kwargs)
            return {name: site["value"] for name, site in trace.items()
                    if site["type"] == "sample" and (not site["is_observed"] or name == self.observed)}

        return jax.jit(draw)

    def prior_draw(self, seed: int) -> tuple[dict, dict]:
        """One joint draw from the prior predictive: (latent values, data keyword arguments)."""
        for attempt in range(MAX_PRIOR_DRAWS):
            values = self._joint_draw(jax.random.fold_in(jax.random.PRNGKey(seed), attempt))
            latents = {name: np.asarray(value) for name, value in values.items() if name != self.observed}
            if self.observed is None:
                return latents, {}
            y = np.asarray(values[self.observed])
            if self.data_range is None or np.all((y >= self.data_range[0]) & (y <= self.data_range[1])):
                return latents, {self.observed: jnp.asarray(y)}
        raise ArgumentError(f"{self.name}: no prior draw of the data in {self.data_range} in {MAX_PRIOR_DRAWS} tries")


def _logistic_design() -> tuple:
    rng = np.random.default_rng(20180412)  # a fixed design, the same in every replication
    num_groups, per_group = 8, 10
    group = np.repeat(np.arange(num_groups), per_group)
    x = rng.standard_normal(group.size).astype(np.float32)
    return (jnp.asarray(group), jnp.asarray(x), num_groups)


def sbc_models() -> dict[str, SBCModel]:
    """The SBC models by name (built on call: importing this module allocates no arrays)."""
    models = [
        SBCModel("funnel", "Neal's funnel, no data: z ~ N(0, 3), x_1..2 ~ N(0, exp(z / 2))",
                 neals_funnel, (2,), {}, None),
        SBCModel("funnel_observed", "funnel observed once: z ~ N(0, 1), x ~ N(0, exp(z)), y ~ N(x, 1)",
                 funnel_with_observation, (), {"sigma": 1.0}, "y", FUNNEL_Y_RANGE),
        SBCModel("eight_schools", "eight schools: mu ~ N(0, 5), log_tau ~ N(0, 5), theta_j ~ N(mu, exp(log_tau))",
                 eight_schools, (jnp.asarray(EIGHT_SCHOOLS_SIGMA),), {}, "y"),
        SBCModel("hierarchical_logistic", "8 groups x 10 Bernoulli draws, random intercepts a_j ~ N(mu, tau), slope beta",
                 hierarchical_logistic, _logistic_design(), {}, "y"),
        SBCModel("random_walk_scan", "random walk in scan: tau ~ HalfNormal(1), level_t ~ N(level_(t-1), tau) "
                 f"over {RANDOM_WALK_STEPS} steps, y_t ~ N(level_t, 1)",
                 random_walk_scan, (RANDOM_WALK_STEPS,), {}, "y"),
    ]
    return {m.name: m for m in models}


MODEL_NAMES = ("funnel", "funnel_observed", "eight_schools", "hierarchical_logistic", "random_walk_scan")

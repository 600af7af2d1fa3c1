"""What the hostile-input tests share: small models and run settings small enough to compile fast.

Imported by ``test_hostile_input.py``, ``test_hostile_errors.py`` and ``test_hostile_edges.py``
(pytest puts ``tests/`` on the import path: the folder is not a package).
"""

from __future__ import annotations

import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.contrib.control_flow import scan

import autoreparam as ar

VI = ar.VIConfig(num_steps=20, num_samples=4, learning_rates=(0.1,), final_num_samples=16, progress=False)
TINY = dict(num_chains=2, num_warmup=20, num_samples=20, num_leapfrog=2, vi_config=VI, progress=False)


def hierarchy(y, scale, offset=0.0):
    mu = numpyro.sample("mu", dist.Normal(offset, 1.0))
    tau = numpyro.sample("tau", dist.HalfNormal(1.0))
    with numpyro.plate("group", len(y)):
        theta = numpyro.sample("theta", dist.Normal(mu, tau))
        numpyro.sample("y", dist.Normal(theta, scale), obs=y)


def clashing_names():
    """theta's non-centred auxiliary would be named like a site the model already has."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    numpyro.sample("theta_decentered", dist.Normal(0.0, 1.0))
    numpyro.sample("theta", dist.Normal(mu, 1.0))


def random_walk(y, level_scale=1.0, step_scale=0.5):
    """A Gaussian random walk written with scan, an initial level outside it and a site after it."""
    level = numpyro.sample("level", dist.Normal(0.0, level_scale))

    def step(previous, y_t):
        current = numpyro.sample("walk", dist.Normal(previous, step_scale))
        numpyro.sample("y", dist.Normal(current, 1.0), obs=y_t)
        return current, current

    last, _ = scan(step, level, y)
    numpyro.sample("after", dist.Normal(last, 1.0))  # its prior depends on the scan's last value


Y_WALK = np.array([0.5, 1.5, 1.0, 2.5])

"""PyMC ports of the centred zoo models, for the nutpie peer (``benchmark/nutpie_peer.py``).

Each port is written line for line after its NumPyro original in ``models/hierarchical.py`` and
``models/regression.py``: the same priors, the same site names, the same centred form, and it takes
the original's arguments, so ``build(load(name))`` is conditioned on exactly the data that
``autoreparam.models.load(name)`` gives. ``tests/benchmark/test_pymc_ports.py`` checks that both
programs have the same log joint density at random points on the real data.

PyMC is part of the optional ``peers`` extra (``make peers``); it is imported only inside
``build``, so importing this module needs neither PyMC nor nutpie.
"""

from __future__ import annotations

import numpy as np

from autoreparam.errors import ArgumentError
from autoreparam.models import hierarchical, regression
from autoreparam.models.problem import Problem


def _take_or_zero(pt, values, index, size: int):
    """``models.indexing.take_or_zero`` in PyTensor: ``values[index]``, 0 for an index past the end."""
    index = np.asarray(index)
    if index.size == 0 or index.max() < size:
        return values[index]
    padded = pt.concatenate([values, pt.zeros(1)])
    return padded[np.minimum(index, size)]


def eight_schools(pm, pt, sigma, y=None):
    sigma = np.asarray(sigma, dtype=float)
    mu = pm.Normal("mu", 0.0, 5.0)
    log_tau = pm.Normal("log_tau", 0.0, 5.0)
    theta = pm.Normal("theta", mu, pt.exp(log_tau), shape=sigma.shape[0])
    pm.Normal("y", theta, sigma, observed=y)


def radon(pm, pt, county, floor, log_uranium, num_counties, y=None):
    mu_a = pm.Normal("mu_a", 0.0, 1.0)
    b1 = pm.Normal("b1", 0.0, 1.0)
    b2 = pm.Normal("b2", 0.0, 1.0)
    m = pm.Normal("m", mu_a + b1 * np.asarray(log_uranium, dtype=float), 1.0, shape=int(num_counties))
    pm.Normal("y", m[np.asarray(county)] + b2 * np.asarray(floor, dtype=float), 1.0, observed=y)


def german_credit(pm, pt, x, y=None):
    x = np.asarray(x, dtype=float)
    log_tau0 = pm.Normal("log_tau0", 0.0, 10.0)
    log_tau = pm.Normal("log_tau", log_tau0, 1.0, shape=x.shape[1])
    beta = pm.Normal("beta", 0.0, pt.exp(log_tau), shape=x.shape[1])
    pm.Bernoulli("y", logit_p=pt.dot(x, beta), observed=y)


def election88(pm, pt, state, black, female, num_states, y=None):
    mu_a = pm.Normal("mu_a", 0.0, 100.0)
    log_sigma_a = pm.Normal("log_sigma_a", 0.0, 10.0)
    a = pm.Normal("a", mu_a, pt.exp(log_sigma_a), shape=int(num_states))
    b1 = pm.Normal("b1", 0.0, 100.0)
    b2 = pm.Normal("b2", 0.0, 100.0)
    logits = (
        _take_or_zero(pt, a, state, int(num_states))
        + b1 * np.asarray(black, dtype=float)
        + b2 * np.asarray(female, dtype=float)
    )
    pm.Bernoulli("y", logit_p=logits, observed=y)


def electric(pm, pt, pair, grade, grade_pair, treatment, num_pairs, num_grades, y=None):
    num_pairs, num_grades = int(num_pairs), int(num_grades)
    mu = pm.Normal("mu", 0.0, 1.0, shape=num_grades)
    log_sigma_y = pm.Normal("log_sigma_y", 0.0, 1.0, shape=num_grades)
    a = pm.Normal("a", 100.0 * _take_or_zero(pt, mu, grade_pair, num_grades), 1.0, shape=num_pairs)
    b = pm.Normal("b", 0.0, 100.0, shape=num_grades)
    loc = _take_or_zero(pt, a, pair, num_pairs) + _take_or_zero(pt, b, grade, num_grades) * np.asarray(
        treatment, dtype=float
    )
    scale = pt.exp(_take_or_zero(pt, log_sigma_y, grade, num_grades))
    pm.Normal("y", loc, scale, observed=y)


# Keyed by the NumPyro function itself: every radon state shares one port, and a problem whose model
# has no port (radon_stddvs, the funnels, simulated models) is refused by name.
PORTS = {
    hierarchical.eight_schools: eight_schools,
    hierarchical.radon: radon,
    regression.german_credit: german_credit,
    hierarchical.election88: election88,
    hierarchical.electric: electric,
}


def has_port(problem: Problem) -> bool:
    return problem.model in PORTS


def build(problem: Problem):
    """The PyMC model of ``problem`` (a ``pymc.Model``), conditioned on the problem's own data."""
    if not has_port(problem):
        ported = ", ".join(f.__name__ for f in PORTS)
        raise ArgumentError(
            f"no PyMC port of problem {problem.name!r} (model {problem.model.__name__}); ported models: {ported}"
        )
    import pymc as pm
    import pytensor.tensor as pt

    kwargs = dict(problem.kwargs)
    if kwargs.get("y") is not None:
        kwargs["y"] = np.asarray(kwargs["y"])
    with pm.Model() as model:
        PORTS[problem.model](pm, pt, *problem.args, **kwargs)
    return model

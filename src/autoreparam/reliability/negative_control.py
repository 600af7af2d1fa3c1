"""A negative control for SBC: a non-centring whose log-Jacobian is deliberately counted twice.

Built from public pieces only (NumPyro's ``handlers.reparam`` and ``Reparam`` contract,
`autoreparam.reparam.handlers.decentre_site`, and `reparam.in_scan.ScanBodyCentring` to reach scan
bodies), never from a code path a user runs. Non-centring
``z ~ N(mu, s)`` as ``zt ~ N(0, 1)``, ``z = mu + s zt`` is exact because the auxiliary density is
used directly (paper 000 Section 4.2); adding ``log|dz/dzt| = sum log s`` on top is the classic
change-of-variables bug (the Jacobian applied to a density that already accounts for it). It
multiplies the posterior by ``prod s``, pushing every scale up: SBC must reject it.
"""

from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
from numpyro import handlers
from numpyro.infer import Predictive
from numpyro.infer.reparam import Reparam

from autoreparam.reparam.handlers import aux_name, decentre_site
from autoreparam.reparam.in_scan import ScanBodyCentring
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model

WRONG_FACTOR_SUFFIX = "_wrong_log_jacobian"

# One rewritten model per (model, rewritten sites): compiled programs are keyed by the model
# function (`mcmc.programs`), so a new wrapper per SBC replication compiled the sampler again each
# time (about 4 s per replication of the funnel, against 0.04 s for NCP's replications).
_REWRITTEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class DoubledJacobianReparam(Reparam):
    """Non-centre a location-scale site and add its log-Jacobian once more (deliberately wrong)."""

    def __call__(self, name, fn, obs):
        aux, transform = decentre_site(name, fn, 0.0, 0.0)
        value = numpyro.sample(aux_name(name), aux)
        z = transform(value)
        # Per element, summed over event dims only: inside a plate a factor is broadcast over the
        # plate, so a scalar total would be counted once per element.
        ldj = transform.log_abs_det_jacobian(value, z)
        if fn.event_dim:
            ldj = jnp.sum(ldj, axis=tuple(range(-fn.event_dim, 0)))
        numpyro.factor(name + WRONG_FACTOR_SUFFIX, ldj)
        return None, z


def wrong_jacobian_model(model, args: tuple, kwargs: dict):
    """``model`` with every hierarchical site (policy "default") rewritten by `DoubledJacobianReparam`.

    Returns the rewritten model and the names of the rewritten sites; the same rewritten model
    object for the same ``model`` and sites (``_REWRITTEN``), so that its programs compile once.
    """
    names = tuple(select_sites(analyse_model(model, *args, **kwargs), "default").names)
    try:
        per_model = _REWRITTEN.setdefault(model, {})
    except TypeError:  # a callable that cannot be weakly referenced: rewritten afresh, as before
        per_model = {}
    if names not in per_model:
        per_model[names] = _rewrite(model, names)
    return per_model[names], names


def _rewrite(model, names: tuple):
    config = {name: DoubledJacobianReparam() for name in names}
    # Sites inside a scan body are rewritten there (NumPyro's reparam cannot reach them from outside);
    # the same wrong rewrite at every step, so it needs no step index.
    inside_scan = ScanBodyCentring(model, lambda name, step: config.get(name))
    return handlers.reparam(inside_scan, config=config)


def original_values(wrong_model, samples: dict, names, args: tuple, kwargs: dict) -> dict:
    """Draws of the original latents ``names`` from draws ``(chains, draws, ...)`` of the rewritten model.

    The rewritten sites are deterministic sites of ``wrong_model``; NumPyro's ``Predictive`` recomputes them.
    """
    lead = next(iter(samples.values())).shape[:2]
    flat = {k: np.reshape(v, (-1,) + v.shape[2:]) for k, v in samples.items()}
    missing = [n for n in names if n not in flat]
    if missing:
        predicted = Predictive(wrong_model, posterior_samples=flat, return_sites=missing)(
            jax.random.PRNGKey(0), *args, **kwargs
        )
        flat.update({k: np.asarray(v) for k, v in predicted.items()})
    return {n: np.reshape(flat[n], lead + flat[n].shape[1:]) for n in names}

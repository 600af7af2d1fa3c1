"""Effect handlers that rewrite a centred NumPyro program: NumPyro programs in, NumPyro programs out.

Each rewritten latent ``z`` becomes an auxiliary sample site ``{z}_decentered`` (NumPyro's suffix, so
the result interoperates with ``numpyro.infer.reparam.LocScaleReparam``) followed by a deterministic
site ``z`` holding the value in the original coordinates (paper 000 Section 4.2 and Appendix B.2-B.3;
the workshop form with separate loc/scale centring is 004 Appendix B.2, with its typo
``b ** rv_scale`` read as ``rv_scale ** b``).

The rewritten program is a normal NumPyro model: use it with NumPyro's NUTS, SVI or Predictive.
"""

from __future__ import annotations

import functools
from typing import Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
from numpyro import handlers
from numpyro.distributions import constraints
from numpyro.infer.reparam import Reparam
from numpyro.primitives import Messenger

from autoreparam.errors import ArgumentError, SiteError
from autoreparam.reparam.families import find_family, supported_family_names, unwrap
from autoreparam.reparam.in_scan import ScanBodyCentring, step_slice
from autoreparam.reparam.parameterisation import Parameterisation, check_unit_interval
# AUX_SUFFIX and aux_name (NumPyro's `{name}_decentered` convention) live where sites are selected,
# which checks that the auxiliary names are free; re-exported here, where they are used.
from autoreparam.reparam.selection import AUX_SUFFIX, aux_name, select_sites  # noqa: F401
from autoreparam.reparam.sites import analyse_model


class FoldSampleShape(Messenger):
    """``numpyro.sample(name, d, sample_shape=S)`` seen as ``numpyro.sample(name, d.expand(S + batch))``:
    the same i.i.d. draws and the same log density, with every element in the distribution.

    NumPyro hands a reparameteriser only the site's distribution, never its ``sample_shape``: the
    rewritten program drew one auxiliary value where the model drew S of them (3 i.i.d. latents
    became one scalar, a different posterior), and the coordinate maps refused a valid model (found
    in review; NumPyro's own ``LocScaleReparam`` does the same). Applied inside every rewrite here.
    """

    def process_message(self, msg):
        shape = tuple(msg["kwargs"].get("sample_shape", ())) if msg["type"] == "sample" else ()
        if shape and not msg["is_observed"]:
            msg["fn"] = msg["fn"].expand(shape + tuple(msg["fn"].batch_shape))
            msg["kwargs"]["sample_shape"] = ()


def _centring_array(name: str, what: str, value, shape) -> jnp.ndarray:
    value = jnp.asarray(value, dtype=jnp.result_type(float))
    if value.ndim and value.shape != tuple(shape):
        raise SiteError(name, f"{what} has shape {value.shape} but the site has shape {tuple(shape)}")
    check_unit_interval(name, what, value)
    return jnp.broadcast_to(value, shape)


def decentre_site(name: str, fn, loc_centring, scale_centring):
    """The auxiliary distribution of a site and the transform from its value to the original value.

    Shared by the program rewrite below and by the coordinate maps (``autoreparam.coordinates``), so
    the two cannot disagree.
    """
    family = find_family(fn)
    if family is None:
        base, _ = unwrap(fn)
        raise SiteError(
            name,
            f"{type(base).__name__} has no location-scale form; supported families: "
            f"{', '.join(supported_family_names())}",
        )
    base, event_dim = unwrap(fn)
    shape = fn.shape()
    a = _centring_array(name, "loc centring (a)", loc_centring, shape)
    b = _centring_array(name, "scale centring (b)", scale_centring, shape)
    aux, transform = family.decentre(base, a, b, shape)
    if event_dim:
        aux = aux.to_event(event_dim)
    return aux, transform


class PartialCentringReparam(Reparam):
    """Rewrite ``z ~ D(mu, s)`` as ``zt ~ D(a mu, s^b)``, ``z = mu + s^(1-b) (zt - a mu)``.

    ``a = b = 0`` is non-centring, ``a = b = 1`` the identity, anything between partial centring
    (paper 000 Section 5.2). ``a`` and ``b`` broadcast against the site's full value shape, so every
    element may have its own value, also under a plate.
    """

    def __init__(self, loc_centring, scale_centring=None):
        self.loc_centring = loc_centring
        self.scale_centring = loc_centring if scale_centring is None else scale_centring

    def __call__(self, name, fn, obs):
        if obs is not None:
            raise SiteError(name, "is observed; observed sites are never reparameterised")
        aux, transform = decentre_site(name, fn, self.loc_centring, self.scale_centring)
        value = numpyro.sample(aux_name(name), aux)
        return None, transform(value)


class LearnableCentringReparam(Reparam):
    """Partial centring whose ``a``/``b`` are NumPyro params in [0, 1], one per element (VIP's handler).

    For use with NumPyro's SVI; autoreparam's own VIP passes the centring explicitly instead
    (``autoreparam.vi``). Params are ``{name}_centring`` (tied) or ``{name}_loc_centring`` and
    ``{name}_scale_centring`` (separate), initialised at ``init``.
    """

    def __init__(self, form: str = "tied", init: float = 0.5):
        if form not in ("tied", "separate"):
            raise ArgumentError(f"form must be 'tied' or 'separate', got '{form}'")
        # Strictly inside (0, 1): NumPyro stores a unit-interval param as its logit, and at 0 or 1 the
        # sigmoid's gradient underflows, so the centring never moved from its start (found in review).
        if isinstance(init, bool) or not isinstance(init, (int, float)) or not (0.0 < init < 1.0):
            raise ArgumentError(f"init must be a number strictly between 0 and 1 (e.g. 0.05 to start near "
                                f"non-centred), got {init!r}: at 0 or 1 the learned centring cannot move")
        self.form, self.init = form, float(init)

    def __call__(self, name, fn, obs):
        if obs is not None:
            raise SiteError(name, "is observed; observed sites are never reparameterised")
        shape = fn.shape()

        def param(suffix):
            return numpyro.param(f"{name}_{suffix}", jnp.full(shape, self.init), constraint=constraints.unit_interval)

        if self.form == "tied":
            a = b = param("centring")
        else:
            a, b = param("loc_centring"), param("scale_centring")
        return PartialCentringReparam(a, b)(name, fn, obs)


def partially_centre_sites(model: Callable, centring: Mapping[str, tuple]) -> Callable:
    """``model`` with each site of ``centring`` (name -> (a, b)) partially centred, wherever it is sampled.

    ``a`` and ``b`` are scalars or arrays of the site's full shape. A site sampled inside a ``scan``
    body has the stacked shape ``(length, *step_shape)`` and is rewritten step by step
    (``reparam.in_scan``); every other site by NumPyro's ``reparam`` handler.
    """

    def config(msg):
        name = msg["name"]
        if msg.get("is_observed") or name not in centring:
            return None
        return PartialCentringReparam(*centring[name])

    def in_scan(name, step):
        if name not in centring:
            return None
        a, b = centring[name]
        return PartialCentringReparam(step_slice(a, step), step_slice(b, step))

    return handlers.reparam(ScanBodyCentring(FoldSampleShape(model), in_scan), config=config)


def reparameterise(model: Callable, parameterisation: Parameterisation) -> Callable:
    """The program ``model`` with every site of ``parameterisation`` partially centred as it says."""
    return partially_centre_sites(
        model, {name: (parameterisation.loc_centring[name], parameterisation.scale_centring[name])
                for name in parameterisation.loc_centring})


def _rewrite_per_call(model: Callable, sites, centring_of: Callable, check: Callable | None = None) -> Callable:
    """Wrap ``model`` so each call chooses its sites from that call's arguments (tracing, not names).

    ``check(plan)``, if given, validates the centring against the sites chosen before any is rewritten.
    """

    @functools.wraps(model)
    def rewritten(*args, **kwargs):
        plan = select_sites(analyse_model(model, *args, **kwargs), sites)
        if check is not None:
            check(plan)
        return partially_centre_sites(model, {site.name: centring_of(site) for site in plan.sites})(*args, **kwargs)

    return rewritten


def noncentre(model: Callable, sites: str | Sequence[str] = "default") -> Callable:
    """Non-centre the chosen latents: ``z ~ D(mu, s)`` becomes ``zt ~ D(0, 1)``, ``z = mu + s zt``."""
    return _rewrite_per_call(model, sites, lambda site: (0.0, 0.0))


def centre(model: Callable) -> Callable:
    """The centred program is the program as written: the identity handler."""
    return model


def partially_centre(model: Callable, lam=None, sites="default", *, loc_centring=None, scale_centring=None):
    """Partially centre with a given lambda (tied) or given ``loc_centring``/``scale_centring`` (separate).

    Each value is a scalar for every element or a mapping site name -> array of the site's shape. A
    mapping must name latent sites only, and give a value for every site ``sites`` chooses.
    """
    if lam is not None and (loc_centring is not None or scale_centring is not None):
        raise ArgumentError("give either lam (tied form) or loc_centring and scale_centring (separate form)")
    a = lam if lam is not None else loc_centring
    b = lam if lam is not None else scale_centring
    if a is None or b is None:
        raise ArgumentError("partially_centre needs lam, or both loc_centring and scale_centring")
    given = {"lam": lam} if lam is not None else {"loc_centring": loc_centring, "scale_centring": scale_centring}
    for argument, value in given.items():
        for where, each in (value.items() if isinstance(value, Mapping) else [(None, value)]):
            _check_centring_value(argument, where, each)

    def pick(value, site):
        return value[site.name] if isinstance(value, Mapping) else value

    def check(plan):
        # A wrong name was a bare KeyError naming the site it lacked, not the one misspelt (found in review).
        for argument, value in given.items():
            if not isinstance(value, Mapping):
                continue
            unknown = [name for name in value if name not in plan.structure.names]
            if unknown:
                raise SiteError(unknown[0], f"{argument} names it, but it is not a latent site of the model "
                                f"(latents: {', '.join(plan.structure.names)})")
            for site in plan.sites:
                if site.name not in value:
                    raise SiteError(site.name, f"{argument} gives no value for it, and it is to be reparameterised "
                                    f"(sites={sites!r} chose {', '.join(plan.names)}): add it to {argument}, or "
                                    "give one number for every site")
            # A value for a latent the plan leaves alone was dropped without a word (found in review).
            unused = [name for name in value if name not in plan.names]
            if unused:
                decision = next((d.reason for d in plan.decisions if d.name == unused[0]), "")
                raise SiteError(unused[0], f"{argument} gives it a value, but sites={sites!r} does not reparameterise "
                                f"it ({decision or 'not chosen'}): name it in sites=, or leave it out of {argument}")

    return _rewrite_per_call(model, sites, lambda site: (pick(a, site), pick(b, site)), check)


def _check_centring_value(argument: str, site: str | None, value) -> None:
    """A centring value must be a number or an array of numbers (``lam='half'`` was a bare ValueError
    from NumPy; found in review). Its range and shape are checked per site (``_centring_array``)."""
    if isinstance(value, jax.core.Tracer):
        return
    try:
        kind = np.asarray(value).dtype.kind
    except (TypeError, ValueError):  # e.g. a ragged list
        kind = None
    if kind not in ("b", "i", "u", "f") or isinstance(value, (bool, np.bool_)):
        what = f"{argument}[{site!r}]" if site is not None else argument
        forms = "" if site is not None else " or a dict site name -> number or array"
        raise ArgumentError(f"{what} must be a number in [0, 1], an array of them (0: non-centred, 1: centred)"
                            f"{forms}, got {type(value).__name__} {value!r:.60}")


def learnable_centring(model: Callable, sites="default", form: str = "tied", init: float = 0.5) -> Callable:
    """Partially centre with learnable per-element centring params (for NumPyro's SVI).

    Sites sampled inside ``scan`` stay centred here: a ``numpyro.param`` created in a scan body would
    be one per step. autoreparam's own VIP (``method="vip"``) learns their centring too.
    """

    @functools.wraps(model)
    def rewritten(*args, **kwargs):
        plan = select_sites(analyse_model(model, *args, **kwargs), sites)
        config = {site.name: LearnableCentringReparam(form, init) for site in plan.sites if not site.in_scan}
        return handlers.reparam(FoldSampleShape(model), config=config)(*args, **kwargs)

    return rewritten

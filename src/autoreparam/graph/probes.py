"""Per-element probes: prior scale against likelihood curvature, the quantity that decides centring.

Paper 000 Section 3 (and Appendix A, papers/002): in the model theta ~ N(0, 1), mu ~ N(theta, s),
y_n ~ N(mu, sigma), the best parameterisation of mu depends on ``s^2 q`` with ``q = N / sigma^2``, the
curvature the likelihood puts on mu: NCP is better for ``s^2 q << 1`` (weak evidence), CP for
``s^2 q >> 1``; at ``s^2 q = 1`` both condition numbers are 3 and lambda = 1/2 is best (REFERENCE.md).
For each element z_j of each latent we measure the general form of both quantities:

- the prior scale ``s_j`` (and location) of z_j's own distribution;
- the curvature ``c_j = -d^2/dz_j^2 sum_{t != own} log p_t``: the second derivative of every
  log-density term except z_j's own prior, i.e. what its children (likelihood and child priors) say.
  Other elements of z_j's own site count when their priors read z_j (a ``scan`` time series).

``log(s_j^2 |c_j|)`` is the ``log(s^2 q)`` of Section 3, exactly so in that model. The probes are taken
at three *prior points*, each computed top-down so that a latent sits at a point of its prior given
its parents: the *centre* (every latent at its prior location) and the *low* and *high* quantile
points (every location-scale latent at ``loc - scale`` and ``loc + scale``; scale families at their
15.9% and 84.1% quantiles; other families at their mean). A hierarchical scale latent at its low
and high points gives the curvature in the funnel's neck and in its mouth. The points are
deterministic and depend neither on names nor on statement order, unlike random prior draws (NumPyro
splits its key in program order). A mode is not used: the centred log joint of a hierarchical model
has no mode (it grows without bound as the group scale shrinks).

The curvature is a Hessian diagonal per site, vectorised: exact (one Hessian-vector product per
element with a one-hot vector; every site's vectors through one traced gradient) for sites of at most
``EXACT_DIAGONAL_LIMIT`` elements, and
Hutchinson's estimator ``mean_k v_k * H v_k`` with ``HUTCHINSON_VECTORS`` Rademacher vectors above
that, which is exact when the site's elements are conditionally independent given the other sites
(the usual plate) and unbiased otherwise. LogNormal latents are probed in log space, where partial
centring acts.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
from jax.scipy.stats import norm
from numpyro import handlers
from numpyro.infer.util import log_density

from autoreparam.errors import ModelError
from autoreparam.graph.features import LOG_CLIP, log_abs
from autoreparam.graph.program import SiteRecord, read_parameter
from autoreparam.model_data import ModelData
from autoreparam.reparam.families import find_family, unwrap
from autoreparam.validation import nonfinite_site

QUANTILE_POINTS = (-1.0, 1.0)  # the low and high prior points, in prior standard deviations
EXACT_DIAGONAL_LIMIT = 256
HUTCHINSON_VECTORS = 8
_HVP_BATCH = 32

ELEMENT_FEATURES: tuple[tuple[str, str], ...] = (
    ("log_prior_scale", "log s_j, the prior scale of the element at the prior centre (0 without a family)"),
    ("prior_loc_sign", "sign of the prior location at the prior centre (0 without a location)"),
    ("prior_loc_log_abs", "log |prior location| at the prior centre (-30 for 0; 0 without a location)"),
    ("curvature_sign", "sign of c_j at the prior centre (+1: the rest of the log joint is concave in z_j there)"),
    ("log_abs_curvature", "log |c_j| at the prior centre (-30 when c_j = 0)"),
    ("log_scale2_curvature", "log(s_j^2 |c_j|) at the prior centre: paper 000 Section 3's log(s^2 q); "
                             "> 0 favours centring, < 0 non-centring (0 without a family)"),
    ("low_log_prior_scale", "log s_j at the low prior point"),
    ("low_log_abs_curvature", "log |c_j| at the low prior point"),
    ("low_log_scale2_curvature", "log(s_j^2 |c_j|) at the low prior point"),
    ("high_log_prior_scale", "log s_j at the high prior point"),
    ("high_log_abs_curvature", "log |c_j| at the high prior point"),
    ("high_log_scale2_curvature", "log(s_j^2 |c_j|) at the high prior point"),
    ("curvature_positive_fraction", "fraction of the three prior points with c_j > 0"),
    ("reparameterisable", "1 if partial centring applies to the element (a family), else 0"),
)
ELEMENT_FEATURE_NAMES: tuple[str, ...] = tuple(name for name, _ in ELEMENT_FEATURES)


def _log_coordinate(site: SiteRecord) -> bool:
    return site.family is not None and site.family.kind == "log-location-scale"


def _prior_point(t: float) -> Callable:
    """``substitute_fn`` putting each latent at standardised point ``t`` of its prior, given its parents.

    ``t = 0`` is the centre: a location-scale latent at its location, a scale family at its scale,
    another family at its mean. Otherwise a location-scale latent is at ``loc + t * scale``, a scale
    family at its ``Phi(t)`` quantile and another family still at its mean.
    """

    def point(msg):
        if msg["type"] != "sample" or msg["is_observed"]:
            return None
        fn = msg["fn"]
        shape = fn.shape(msg["kwargs"].get("sample_shape", ()))
        family = find_family(fn)
        if family is None:
            value = fn.mean
        else:
            base = unwrap(fn)[0]
            loc, scale = family.loc_scale(base)
            if loc is None:
                value = scale if t == 0 else base.icdf(norm.cdf(t))
            else:
                value = loc + t * scale
                value = jnp.exp(value) if family.kind == "log-location-scale" else value
        return jnp.broadcast_to(value, shape)

    return point


def _trace_at(model, args, kwargs, t: float):
    """The model's trace with every latent at standardised prior point ``t`` (`_prior_point`)."""
    substituted = handlers.substitute(handlers.seed(model, rng_seed=0), substitute_fn=_prior_point(t))
    # Without NumPyro's argument checks: a scale of exactly 0 at a prior point (e.g. |mu| at mu = 0)
    # must become the probe error below, which names the site, not a bare ValueError.
    with handlers.block(), numpyro.validation_enabled(False):
        return handlers.trace(substituted).get_trace(*args, **kwargs)


def _points(model, args, kwargs, latents: list[SiteRecord]) -> tuple:
    """The centre, low and high points in probe coordinates: per latent an array ``(3, *shape)``."""
    runs = [_trace_at(model, args, kwargs, t) for t in (0.0,) + QUANTILE_POINTS]
    points = []
    for site in latents:
        stacked = jnp.stack([jnp.asarray(run[site.name]["value"]) for run in runs])
        points.append(jnp.log(stacked) if _log_coordinate(site) else stacked)
    return tuple(points)


def prior_centre(model, args, kwargs) -> dict:
    """Every latent at the prior centre (`_prior_point` at t = 0), in the model's coordinates."""
    trace = _trace_at(model, args, kwargs, 0.0)
    return {name: msg["value"] for name, msg in trace.items() if msg["type"] == "sample" and not msg["is_observed"]}


def _check_centres(latents: list[SiteRecord], points) -> None:
    for site, point in zip(latents, points):
        if not np.all(np.isfinite(np.asarray(point[0]))):
            raise ModelError(f"site '{site.name}': its centre point is not finite (the prior centre unless points "
                             "were given: e.g. a mean that does not exist); the probes need one")


def _raise_nonfinite_centre(model, args, kwargs, latents: list[SiteRecord], points, total: float):
    """A `ModelError` naming the site whose log density is not finite at the centre point (`nonfinite_site`)."""
    values = {s.name: np.exp(p[0]) if _log_coordinate(s) else p[0] for s, p in zip(latents, points)}
    found = nonfinite_site(model, args, kwargs, values)
    where = "at the centre point (the prior centre unless points were given), where the graph's probes are read"
    if found is None or found[0] == "<model>":
        raise ModelError(f"the model's log density is {total} {where}")
    site, explanation = found
    raise ModelError(f"site '{site}': " + explanation.replace("at the initial values", where)
                     .replace("at those latent values", "there"))


def _probe_function(model, args, kwargs, latents: list[SiteRecord], key: jax.Array,
                    per_site: bool = False) -> Callable:
    """``coordinates -> (per latent (scale, loc, curvature), log joint)``, each flattened to the site's elements.

    ``key`` draws Hutchinson's probe vectors (large sites); a traced argument, so a new seed reuses
    the compiled program. ``per_site``: differentiate each site with the others held constant (one
    traced gradient per site) instead of all sites through one; see ``_joint_curvatures``."""
    names = [s.name for s in latents]

    def run(coords):
        values = {n: jnp.exp(u) if _log_coordinate(s) else u for n, s, u in zip(names, latents, coords)}
        with handlers.block():
            return handlers.trace(handlers.seed(handlers.substitute(model, data=values), 0)).get_trace(*args, **kwargs)

    def children_log_density(coords):
        # Every density at fixed latent values, so that a coordinate enters only through the parameters
        # it sets: its children's densities (likelihood and child priors), and, within its own site, the
        # priors of later elements that read it (a ``scan`` time series, x_t ~ N(x_{t-1}, s)). Its own
        # prior drops out exactly (no parameter of it reads the element itself: a zero tangent, not a
        # subtraction that would leave 1 / s^2 as roundoff in a curvature that may be exactly 0). An
        # observed value stays live: ``obs=f(z)`` puts curvature on z through its value.
        total = 0.0
        for msg in run(coords).values():
            if msg["type"] != "sample":
                continue
            value = msg["value"] if msg.get("is_observed") else jax.lax.stop_gradient(msg["value"])
            log_prob = msg["fn"].log_prob(value)
            total = total + jnp.sum(log_prob if msg.get("scale") is None else msg["scale"] * log_prob)
        return total

    counts = [1 if s.size <= EXACT_DIAGONAL_LIMIT else HUTCHINSON_VECTORS for s in latents]

    def site_rows(coords):
        """Per site its probe vectors: one-hot per element, or Hutchinson's Rademacher vectors."""
        out = []
        for site, count, value in zip(latents, counts, coords):
            if count == 1:
                out.append(jnp.eye(site.size, dtype=value.dtype).reshape((site.size,) + site.shape))
            else:
                out.append(jax.random.rademacher(key, (count,) + site.shape).astype(value.dtype))
        return out

    curvatures = _per_site_curvatures if per_site else _joint_curvatures

    def probe(coords):
        trace = run(coords)
        diagonals = curvatures(children_log_density, coords, site_rows(coords), counts)
        # The log joint itself, as the samplers will see it (masks, scales, NumPyro's support checks):
        # features read where it is not finite describe no posterior (found in review: data outside a
        # Uniform(z, z + 1) gave lambdas without a word where ``infer`` named the site).
        values = {n: jnp.exp(u) if _log_coordinate(s) else u for n, s, u in zip(names, latents, coords)}
        total = log_density(handlers.seed(model, 0), args, kwargs, values)[0]
        sites = [(*_own_scale_and_loc(trace, site), curvature) for site, curvature in zip(latents, diagonals)]
        return sites, total

    return probe


def _joint_curvatures(log_density: Callable, coords: tuple, bases: list, counts: list) -> list:
    """Minus the Hessian diagonal of ``log_density`` per site: ``sum_k v_k * H v_k / count`` over the
    site's rows ``v_k`` (zero on every other site), every row through one traced gradient.

    The compiled program grows with the model, not with the model times its number of sites (an
    unrolled 100-step walk took 202 s to build its graph with a gradient traced per site, 25 s so). A
    row's zero tangents on the other sites are real zeros, so an infinite derivative there (sqrt(|x|)
    at x = 0) makes this site's product NaN: ``probe_elements`` then falls back on the per-site form.
    """
    gradient = jax.grad(log_density)
    offsets = np.cumsum([0] + [basis.shape[0] for basis in bases])
    num_rows = int(offsets[-1])
    batch_size = max(1, min(_HVP_BATCH, num_rows))  # a single large site has 8 rows, not 32
    num_blocks = -(-num_rows // batch_size)

    def tangent(row):
        return tuple(jnp.where((row >= lo) & (row < hi), basis[jnp.clip(row - lo, 0, hi - lo - 1)], 0.0)
                     if hi > lo else jnp.zeros(basis.shape[1:], basis.dtype)  # a site of no elements
                     for basis, lo, hi in zip(bases, offsets[:-1], offsets[1:]))

    def batch(sums, block):
        vectors = jax.vmap(tangent)(block)
        products = jax.vmap(lambda v: jax.jvp(gradient, (coords,), (v,))[1])(vectors)
        return tuple(total + jnp.sum(v * p, axis=0) for total, v, p in zip(sums, vectors, products)), None

    blocks = jnp.arange(num_blocks * batch_size).reshape(num_blocks, batch_size)  # rows past the last: zero
    sums, _ = jax.lax.scan(batch, tuple(jnp.zeros_like(c) for c in coords), blocks)
    return [-(total / count).reshape(-1) for total, count in zip(sums, counts)]


def _per_site_curvatures(log_density: Callable, coords: tuple, bases: list, counts: list) -> list:
    """What ``_joint_curvatures`` computes, each site differentiated with the others closed over as
    constants (their tangents are symbolic zeros, so an infinite derivative elsewhere stays out)."""
    out = []
    for index, (basis, count) in enumerate(zip(bases, counts)):
        def rest(u, index=index):
            return log_density(coords[:index] + (u,) + coords[index + 1:])

        gradient = jax.grad(rest)

        def hvp(v, gradient=gradient, index=index):
            return jax.jvp(gradient, (coords[index],), (v,))[1]

        products = jax.lax.map(hvp, basis, batch_size=_HVP_BATCH) if basis.shape[0] else basis
        out.append(-(jnp.sum(basis * products, axis=0) / count).reshape(-1))
    return out


def _own_scale_and_loc(trace, site: SiteRecord) -> tuple[jax.Array, jax.Array]:
    """The site's own prior scale and location in ``trace``, flattened (zeros without a family or location)."""
    fn = trace[site.name]["fn"]
    loc = scale = jnp.zeros(site.size)
    if site.family is not None:
        scale = jnp.broadcast_to(read_parameter(fn, site.family, "scale"), site.shape).reshape(-1)
        if any(p == "loc" for p, _ in site.parameters):
            loc = jnp.broadcast_to(read_parameter(fn, site.family, "loc"), site.shape).reshape(-1)
    return scale, loc


def _prior_centre_locations(model, args, kwargs, latents: list[SiteRecord]) -> list[jax.Array]:
    """Per latent its prior location at the prior centre: the location features describe the prior
    wherever the scale and curvature probes are read."""
    trace = _trace_at(model, args, kwargs, 0.0)
    return [_own_scale_and_loc(trace, site)[1] for site in latents]


def _element_features(site: SiteRecord, scale, loc, curvature) -> np.ndarray:
    """The ``(site.size, len(ELEMENT_FEATURES))`` rows of one latent from its probes at the three points.

    A non-finite probe at the centre is an error naming the site; at the low or high point it is
    replaced by the centre's value (e.g. a scale that overflows one standard deviation up).
    """
    if not np.all(np.isfinite(scale[0])):
        raise ModelError(f"site '{site.name}': its scale is not finite at the centre point (the prior centre "
                         "unless points were given); check its prior there (e.g. a scale that under- or overflows)")
    if not np.all(np.isfinite(curvature[0])):
        # The curvature is of the rest of the log joint: the fault lies in a density that reads this site
        # (``mu ~ N(0, 1); z ~ N(0, |mu|)`` at mu = 0 blamed mu alone; found in review).
        raise ModelError(f"site '{site.name}': the curvature of the densities that depend on it is not finite at "
                         "the centre point (the prior centre unless points were given), e.g. a child's scale that "
                         f"is 0 or overflows there; check the sites whose parameters read '{site.name}'")
    finite = np.isfinite(curvature) & np.isfinite(scale)
    curvature = np.where(finite, curvature, curvature[0])
    scale = np.where(finite, scale, scale[0])
    has_family = site.family is not None
    has_loc = any(p == "loc" for p, _ in site.parameters)
    log_scale = log_abs(scale) if has_family else np.zeros_like(scale)
    log_curvature = log_abs(curvature)
    ratio = np.clip(2.0 * log_scale + log_curvature, -LOG_CLIP, LOG_CLIP) if has_family else log_scale
    ratio = np.where(has_family & (log_curvature == -LOG_CLIP), -LOG_CLIP, ratio)  # no evidence: the floor
    columns = {
        "prior_loc_sign": np.sign(loc[0]),
        "prior_loc_log_abs": log_abs(loc[0]) if has_loc else np.zeros(site.size),
        "curvature_sign": np.sign(curvature[0]),
        "curvature_positive_fraction": np.mean(curvature > 0, axis=0),
        "reparameterisable": np.full(site.size, float(has_family)),
    }
    for prefix, point in (("", 0), ("low_", 1), ("high_", 2)):
        columns[prefix + "log_prior_scale"] = log_scale[point]
        columns[prefix + "log_abs_curvature"] = log_curvature[point]
        columns[prefix + "log_scale2_curvature"] = ratio[point]
    return np.stack([np.broadcast_to(columns[n], (site.size,)) for n in ELEMENT_FEATURE_NAMES], axis=1)


# Jitted probe programs per model, data structure and latent layout, least recently used dropped.
_PROBE_PROGRAMS: OrderedDict = OrderedDict()
MAX_PROBE_PROGRAMS = 64


def _probe_program(model, args, kwargs, latents: list[SiteRecord], seed: int, given_points: bool = False,
                   per_site: bool = False) -> Callable:
    """``(points=None) -> (points, (probes, log joints))``, jitted with the data's arrays and the seed's key as arguments
    and kept per process.

    With ``given_points`` the three points are an argument (per latent ``(3, *shape)`` in probe
    coordinates), not the prior points.

    The data and the key are arguments, not constants, so a second graph of the same model (a new
    seed, new data of the same shapes, ``predict_parameterisation`` called again) reuses the compiled
    program: on eight schools a repeat build fell from 0.30 s to 0.011 s (``benchmarks/graph_build.py``,
    docs/graph.md); with the seed in the key, as it was, each new seed cost radon MN 0.2 to 0.3 s. The prior points are computed inside it too: run op by op in a fresh process,
    each distinct operation of the model compiled on its own. The key holds everything the traced
    function depends on besides its arguments.
    """
    data = ModelData.for_model(model, tuple(args), dict(kwargs))
    layout = tuple((s.name, s.distribution, s.family, s.parameters, s.shape, s.event_dim) for s in latents)
    key = (model, data.key, layout, given_points, per_site)
    program = _PROBE_PROGRAMS.get(key)
    if program is None:
        def probes(arrays, points, rng_key):
            bound_args, bound_kwargs = data.rebuild(arrays)
            probe = jax.vmap(_probe_function(model, bound_args, bound_kwargs, latents, rng_key, per_site))
            if points is None:
                points = _points(model, bound_args, bound_kwargs, latents)
                return points, probe(points)
            centre = _prior_centre_locations(model, bound_args, bound_kwargs, latents)
            sites, totals = probe(points)
            return points, ([(scale, loc.at[0].set(prior_loc), curvature)
                             for (scale, loc, curvature), prior_loc in zip(sites, centre)], totals)

        program = _PROBE_PROGRAMS[key] = jax.jit(probes)
        while len(_PROBE_PROGRAMS) > MAX_PROBE_PROGRAMS:
            _PROBE_PROGRAMS.popitem(last=False)
    _PROBE_PROGRAMS.move_to_end(key)
    rng_key = jax.random.PRNGKey(seed)
    return lambda points=None: program(data.arrays, points, rng_key)


def _probe_coordinates(latents: list[SiteRecord], points: dict) -> tuple:
    """Given points ``{name: (3, *shape)}`` in original coordinates, in probe coordinates (log space for
    LogNormal latents), checked for shape."""
    out = []
    for site in latents:
        if site.name not in points:
            raise ModelError(f"site '{site.name}': no probe point given for it")
        value = np.asarray(points[site.name], dtype=np.float64)
        if value.shape != (3,) + tuple(site.shape):
            raise ModelError(f"site '{site.name}': probe points must have shape {(3,) + tuple(site.shape)} (centre, "
                             f"low, high), got {value.shape}")
        out.append(jnp.asarray(np.log(value) if _log_coordinate(site) else value, dtype=site.value.dtype))
    return tuple(out)


def probe_elements(model, args, kwargs, latents: list[SiteRecord], seed: int = 0,
                   points: dict | None = None) -> list[np.ndarray]:
    """Per latent site (in the given order) its ``(size, len(ELEMENT_FEATURES))`` float32 element features.

    ``seed`` only seeds Hutchinson's probe vectors (large sites); the prior points are deterministic.
    ``points`` replaces the prior centre, low and high points by others, ``{name: (3, *shape)}`` in the
    model's coordinates for every latent (`autoreparam.meta.fit_points`: a short fit's mean and one
    of its standard deviations down and up). The scale and curvature features are then read at those
    points; the location features stay at the prior centre, as the network was trained to read them
    (a location read at a fitted point is a new feature, not the same one moved).
    """
    program = _probe_program(model, args, kwargs, latents, seed, given_points=points is not None)
    given = None if points is None else _probe_coordinates(latents, points)
    points, (results, totals) = jax.device_get(program(given))
    if not all(np.all(np.isfinite(curvature)) for _, _, curvature in results):
        # The joint gradient's zero tangents meet an infinite derivative on some site (0 * inf): the
        # per-site form keeps each site's own (found in review: sqrt(|x|) at x = 0 turned another
        # site's exact 0 into NaN, and its error named that other site).
        program = _probe_program(model, args, kwargs, latents, seed, given_points=given is not None,
                                 per_site=True)
        points, (results, totals) = jax.device_get(program(given))
    _check_centres(latents, points)
    features = []
    for site, (scale, loc, curvature) in zip(latents, results):
        rows = _element_features(site, *(np.asarray(a, dtype=np.float64) for a in (scale, loc, curvature)))
        features.append(rows.astype(np.float32))
    if not np.isfinite(totals[0]):  # after the probes' own errors, which say more where they apply
        _raise_nonfinite_centre(model, args, kwargs, latents, points, float(totals[0]))
    return features

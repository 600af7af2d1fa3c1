"""Fuzzing invariant 1: the coordinate maps and densities of a random program agree with each other.

For a program of the corpus (``autoreparam.corpus``), every location-scale latent partially centred
(policy "all"), at random points near prior draws and for random centrings (tied lambda per element,
separate a != b per element, and a random mix of 0 and 1 per element), in float64:

- ``log p_u(u) = log p_v(v(u)) + log|det dv/du|`` (paper 000 Section 5.2; `Coordinates.log_density`,
  `Coordinates.to_cp`);
- ``log p_v(v)`` is NumPyro's ``log_density`` of the original program at ``z(v)`` plus the log-Jacobian
  of ``biject_to(support)``: an oracle that shares no code with ``Coordinates``;
- ``to_cp(from_cp(v)) = v`` (the round trip, as a backward error in the centred coordinates) and the
  two log-Jacobians cancel. The round trip in ``u`` is recorded too (``round_trip_u``) but does not
  fail a program: the paper's map ``x = mu + s^(1-b) (u - a mu)`` multiplies a chain's earlier terms by
  ``1 - a s^(1-b)`` per step, so along a random walk with ``a s^(1-b)`` far from 1 recovering ``u``
  from ``x`` cancels digits exponentially in the chain's length (program 28 of corpus seed 0: 5e-6 in
  float64 at separate a, b), a conditioning property of the parameterisation, not an error of the code;
- for programs of at most `MAX_JACOBIAN_DIM` coordinates, the log-Jacobian equals ``slogdet`` of
  ``jax.jacfwd`` of the flat map (no hand-written Jacobian involved).
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from numpyro import handlers
from numpyro.distributions import biject_to
from numpyro.infer.util import log_density

from autoreparam.coordinates import Coordinates
from autoreparam.lang import compile_program
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model

MAX_JACOBIAN_DIM = 60  # jacfwd of the flat map is dim x dim; beyond this it costs more than it adds
RELATIVE_TOLERANCE = 1e-9  # float64: only round-off remains; scaled by the size of the terms summed
CENTRINGS = ("tied", "separate", "mixed")


def _centring(kind: str, plan, rng: np.random.Generator) -> Parameterisation:
    def draw():
        return {s.name: rng.uniform(0.0, 1.0, size=s.shape) for s in plan.sites}

    if kind == "tied":
        return Parameterisation.tied(plan, draw())
    if kind == "separate":
        return Parameterisation.separate(plan, draw(), draw())
    return Parameterisation.tied(plan, {s.name: rng.integers(0, 2, size=s.shape).astype(float) for s in plan.sites})


def _oracle_cp_density(coords: Coordinates, v: dict, z: dict) -> jax.Array:
    value, trace = log_density(coords.model, coords.model_args, coords.model_kwargs, z)
    for name in coords.names:
        value = value + jnp.sum(biject_to(trace[name]["fn"].support).log_abs_det_jacobian(v[name], z[name]))
    return value


def _relative(a, b, *scales) -> float:
    scale = 1.0 + sum(abs(float(s)) for s in scales)
    return abs(float(a) - float(b)) / scale


def _terms(coords: Coordinates, with_jacobian: bool):
    """``(key, noise, centring) ->`` every quantity the identities compare, as one function to jit.

    The point is a prior draw of the program mapped to the centring's coordinates ``u`` and moved by
    ``noise`` there, so it lies near the typical set, where a wrong term would show.
    """
    names = coords.names

    def terms(key, noise, param):
        trace = handlers.trace(handlers.seed(coords.model, rng_seed=key)).get_trace(
            *coords.model_args, **coords.model_kwargs
        )
        u0 = coords.from_original({n: trace[n]["value"] for n in names}, param)
        flat0, unravel = ravel_pytree({n: u0[n] for n in names})
        flat_u = flat0 + noise
        u = unravel(flat_u)
        v, z, ldj = coords.to_cp(u, param)
        back, _, ldj_back = coords.from_cp(v, param)
        again = coords.to_cp(back, param)[0]
        out = {
            "u": flat_u,
            "lhs": coords.log_density(u, param),
            "cp": coords.log_density_cp(v),
            "ldj": ldj,
            "ldj_back": ldj_back,
            "oracle": _oracle_cp_density(coords, v, z),
            "back": ravel_pytree({n: back[n] for n in names})[0],
            "v": ravel_pytree({n: v[n] for n in names})[0],
            "v_again": ravel_pytree({n: again[n] for n in names})[0],
        }
        if with_jacobian:
            jac = jax.jacfwd(lambda f: ravel_pytree(coords.to_cp(unravel(f), param)[0])[0])(flat_u)
            out["slogdet"] = jnp.linalg.slogdet(jac)[1]
        return out

    return terms


def point_errors(t: dict) -> dict:
    """Relative errors of every identity from `_terms`' output (``finite: False`` where the density is not finite)."""
    t = {k: np.asarray(x) for k, x in t.items()}
    if not all(np.isfinite(t[k]) for k in ("lhs", "cp", "ldj")):
        return {"finite": False, "finite_agree": bool(np.isfinite(t["lhs"]) == np.isfinite(t["cp"] + t["ldj"]))}
    errors = {
        "finite": True,
        "identity": _relative(t["lhs"], t["cp"] + t["ldj"], t["lhs"], t["cp"], t["ldj"]),
        "oracle": _relative(t["cp"], t["oracle"], t["cp"]),
        "round_trip": float(np.max(np.abs(t["v_again"] - t["v"]) / (1.0 + np.abs(t["v"])), initial=0.0)),
        "round_trip_u": float(np.max(np.abs(t["back"] - t["u"]) / (1.0 + np.abs(t["u"])), initial=0.0)),
        "inverse_jacobian": _relative(t["ldj"], -t["ldj_back"], t["ldj"]),
    }
    if "slogdet" in t:
        errors["jacobian"] = _relative(t["slogdet"], t["ldj"], t["ldj"])
    return errors


def check_program(text: str, data: dict, seed: int, num_points: int = 3) -> dict:
    """Every identity at ``num_points`` random points of one program, in float64; a JSON-ready record."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    with jax.enable_x64(True):
        model, args, kwargs = compile_program(text, data)
        structure = analyse_model(model, *args, seed=seed, **kwargs)
        plan = select_sites(structure, "all")
        coords = Coordinates(model, args, kwargs, plan)
        terms = jax.jit(_terms(coords, coords.dim <= MAX_JACOBIAN_DIM))
        points = []
        for k in range(num_points):
            kind = CENTRINGS[k % len(CENTRINGS)]
            param = _centring(kind, plan, rng)
            key = jax.random.PRNGKey(int(rng.integers(2**31)))
            noise = 0.3 * rng.standard_normal(coords.dim)
            points.append({"centring": kind, **point_errors(terms(key, noise, param))})
    checks = ("identity", "oracle", "round_trip", "inverse_jacobian", "jacobian")
    worst = {c: max((p[c] for p in points if c in p), default=None) for c in checks + ("round_trip_u",)}
    failed = [c for c in checks if worst[c] is not None and not worst[c] <= RELATIVE_TOLERANCE]
    failed += ["finite_agree"] if any(not p.get("finite_agree", True) for p in points) else []
    return {
        "dim": coords.dim,
        "reparameterised_sites": len(plan.sites),
        "points": len(points),
        "finite_points": sum(p["finite"] for p in points),
        "max_relative_error": worst,
        "failed": failed,
        "seconds": time.perf_counter() - start,
    }

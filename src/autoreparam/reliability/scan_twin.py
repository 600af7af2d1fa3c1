"""Fuzzing invariant: a time series written with ``scan`` agrees with the same series unrolled.

The corpus's time-series programs (``corpus.time_series``) compile to one scalar site per step
(``x[1]``, ``x[2]``, ...; docs/language.md). Their *scan twin* is the same model written in NumPyro
with ``numpyro.contrib.control_flow.scan``: ``x1`` before the scan, the steps ``x[2..T]`` as one
stacked site ``x`` inside it, the observations after it. The two share no code below NumPyro: the
unrolled program is rewritten site by site by NumPyro's ``reparam`` handler, the twin step by step
inside the scan body (`reparam.in_scan`). In float64, for random centrings (tied lambda, separate
a != b, a random mix of 0 and 1, per element, the same element by element in both):

- the twin's reparameterised log density equals the unrolled program's at the same coordinates;
- its original values (the path) equal the unrolled program's;
- the twin passes every identity of `identity.py` (density = centred density + log-Jacobian, the
  oracle, the round trip, the inverse Jacobian, ``slogdet`` of the Jacobian).
"""

from __future__ import annotations

import re
import time

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.contrib.control_flow import scan

from autoreparam.coordinates import Coordinates
from autoreparam.errors import ArgumentError
from autoreparam.lang import compile_program
from autoreparam.reliability.identity import CENTRINGS, MAX_JACOBIAN_DIM, RELATIVE_TOLERANCE, _terms, point_errors
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model

_NUMBER = r"(-?[0-9.eE+-]+)"
_PATTERNS = {
    "innovation_prior_scale": rf"^s ~ half_normal\({_NUMBER}\)$",
    "initial_scale": rf"^x\[1\] ~ normal\(0, {_NUMBER}\)$",
    "noise_scale": rf"^  y\[t\] ~ normal\(x\[t\], {_NUMBER}\)$",
}
_STEP = re.compile(rf"^  x\[t\] ~ normal\((?:{_NUMBER} \* )?x\[t - 1\], s\)$")


def twin_constants(text: str) -> dict:
    """The constants of a time-series program, read from its text as the compiler reads them."""
    lines = text.splitlines()
    out = {}
    for key, pattern in _PATTERNS.items():
        found = [re.match(pattern, line) for line in lines]
        found = [m for m in found if m]
        if len(found) != 1:
            raise ArgumentError(f"not a corpus time-series program: no single line for {key}")
        out[key] = float(found[0].group(1))
    steps = [m for m in (_STEP.match(line) for line in lines) if m]
    if len(steps) != 1:
        raise ArgumentError("not a corpus time-series program: no single step line")
    out["phi"] = 1.0 if steps[0].group(1) is None else float(steps[0].group(1))
    return out


def scan_twin(constants: dict):
    """The time-series program written with scan: ``model(T, y)``."""

    def model(T, y):
        s = numpyro.sample("s", dist.HalfNormal(constants["innovation_prior_scale"]))
        x1 = numpyro.sample("x1", dist.Normal(0.0, constants["initial_scale"]))

        def step(previous, _):
            x = numpyro.sample("x", dist.Normal(previous if constants["phi"] == 1.0 else constants["phi"] * previous, s))
            return x, x

        _, rest = scan(step, x1, None, length=T - 1)
        path = jnp.concatenate([jnp.reshape(x1, (1,)), rest])
        with numpyro.plate("t", T):
            numpyro.sample("y", dist.Normal(path, constants["noise_scale"]), obs=y)

    return model


def _twin_centring(kind: str, unrolled_plan, twin_plan, T: int, rng: np.random.Generator):
    """The same random centring for both programs, element by element: (unrolled, twin)."""
    names = ["s"] + [f"x[{t}]" for t in range(1, T + 1)]

    def draw():
        if kind == "mixed":
            return {n: float(rng.integers(0, 2)) for n in names}
        return {n: float(rng.uniform()) for n in names}

    def as_twin(values):
        return {"s": values["s"], "x1": values["x[1]"], "x": np.array([values[f"x[{t}]"] for t in range(2, T + 1)])}

    a, b = draw(), (draw() if kind == "separate" else None)
    b = a if b is None else b
    unrolled = Parameterisation.separate(unrolled_plan, a, b)
    twin = Parameterisation.separate(twin_plan, as_twin(a), as_twin(b))
    return unrolled, twin


def check_scan_twin(text: str, data: dict, seed: int, num_points: int = 3) -> dict:
    """The scan twin of one corpus time-series program against the program, in float64; a JSON-ready record."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    constants = twin_constants(text)
    T = int(data["T"])
    with jax.enable_x64(True):
        model, args, kwargs = compile_program(text, data)
        unrolled = Coordinates(model, args, kwargs, select_sites(analyse_model(model, *args, **kwargs), "all"))
        twin_model = scan_twin(constants)
        y = jnp.asarray(data["y"], jnp.float64)
        twin = Coordinates(twin_model, (T, y), {}, select_sites(analyse_model(twin_model, T, y), "all"))
        if not twin.structure["x"].in_scan or set(twin.plan.names) != {"s", "x1", "x"}:
            raise ArgumentError("the scan twin's sites were not all planned for rewriting")

        @jax.jit
        def compare(u_twin, param_unrolled, param_twin):
            u_unrolled = {"s": u_twin["s"], "x[1]": u_twin["x1"],
                          **{f"x[{t}]": u_twin["x"][t - 2] for t in range(2, T + 1)}}
            path_twin = twin.to_original(u_twin, param_twin)
            path_unrolled = unrolled.to_original(u_unrolled, param_unrolled)
            return {"twin": twin.log_density(u_twin, param_twin),
                    "unrolled": unrolled.log_density(u_unrolled, param_unrolled),
                    "path_twin": jnp.concatenate([path_twin["x1"][None], path_twin["x"]]),
                    "path_unrolled": jnp.stack([path_unrolled[f"x[{t}]"] for t in range(1, T + 1)])}

        identities = jax.jit(_terms(twin, twin.dim <= MAX_JACOBIAN_DIM))
        points = []
        for k in range(num_points):
            kind = CENTRINGS[k % len(CENTRINGS)]
            param_unrolled, param_twin = _twin_centring(kind, unrolled.plan, twin.plan, T, rng)
            key = jax.random.PRNGKey(int(rng.integers(2**31)))
            noise = 0.3 * rng.standard_normal(twin.dim)
            terms = identities(key, noise, param_twin)
            errors = point_errors(terms)
            u_twin = twin.unravel(jnp.asarray(terms["u"]))
            both = {name: np.asarray(value) for name, value in compare(u_twin, param_unrolled, param_twin).items()}
            if np.isfinite(both["twin"]) and np.isfinite(both["unrolled"]):
                scale = 1.0 + abs(float(both["twin"])) + abs(float(both["unrolled"]))
                errors["twin_density"] = abs(float(both["twin"] - both["unrolled"])) / scale
                errors["twin_path"] = float(np.max(np.abs(both["path_twin"] - both["path_unrolled"])
                                                   / (1.0 + np.abs(both["path_unrolled"]))))
            points.append({"centring": kind, **errors})
    checks = ("twin_density", "twin_path", "identity", "oracle", "round_trip", "inverse_jacobian", "jacobian")
    worst = {c: max((p[c] for p in points if c in p), default=None) for c in checks}
    failed = [c for c in checks if worst[c] is not None and not worst[c] <= RELATIVE_TOLERANCE]
    failed += ["finite_agree"] if any(not p.get("finite_agree", True) for p in points) else []
    return {"dim": twin.dim, "steps": T, "points": len(points), "finite_points": sum(p["finite"] for p in points),
            "max_relative_error": worst, "failed": failed, "seconds": time.perf_counter() - start}

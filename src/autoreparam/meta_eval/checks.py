"""Cheap in-process checks: the Section 3 closed form, and robustness to large constants and plates.

Section 3 (paper 000, Appendix A): theta ~ N(0, 1), mu ~ N(theta, sigma_mu), y_n ~ N(mu, sigma); the
best partial centring lambda* of mu minimises the condition number of the posterior under the best
diagonal preconditioner (`autoreparam.analysis.best_lambda`), known in closed form. Robustness:
the prediction for models whose constants and data reach 1e6 and whose plates reach 1e5 elements
must be finite and in [0, 1], and the model's log density must be finite at the start of the
predicted coordinates.
"""

from __future__ import annotations

import time

import numpy as np

from autoreparam.meta.files import write_json
from autoreparam.meta_eval.machine import describe_machine
from autoreparam.meta_eval.protocol import SECTION3_Q, SECTION3_SIGMA_MU

_WIDE = 100_000


def section3(out, networks: dict, prototype) -> dict:
    """lambda of mu from every network and the prototype against lambda* on the (q, sigma_mu) grid."""
    from autoreparam.analysis import best_lambda
    from autoreparam.graph import model_graph
    from autoreparam.meta.predict import centring_per_site, graph_for, predict_graph
    from autoreparam.meta.prototype import prototype_lambda
    from autoreparam.meta_eval.models import load_spec

    rows = []
    for sigma_mu in SECTION3_SIGMA_MU:
        for q in SECTION3_Q:
            spec = {"kind": "section3", "q": q, "sigma_mu": sigma_mu, "n": 10}
            model, args, kwargs = load_spec(spec)
            graph = model_graph(model, *args, **kwargs)
            row = {"q": q, "sigma_mu": sigma_mu, "best": best_lambda(q, sigma_mu)}
            built = {"prior": graph}
            for label, net in networks.items():
                row[label] = float(predict_graph(graph_for(net, model, args, kwargs, built=built), net).lam["mu"])
            if prototype is not None:
                row["prototype"] = float(centring_per_site(graph, prototype_lambda(prototype, graph))["mu"][0])
            rows.append(row)
    write_json(out, {"rows": rows, "ran_on": describe_machine()})
    return {"rows": rows}


def _cases():
    """(name, model, args, kwargs) of the robustness cases."""
    from autoreparam.lang import compile_program
    from autoreparam.models import load
    from autoreparam.models.hierarchical import eight_schools

    rng = np.random.default_rng(0)
    schools = load("eight_schools")
    sigma, y = np.asarray(schools.args[0]), np.asarray(schools.kwargs["y"])
    cases = [("eight_schools, data x 1e6", eight_schools, (sigma * 1e6,), {"y": y * 1e6}),
             ("eight_schools, data x 1e-6", eight_schools, (sigma * 1e-6,), {"y": y * 1e-6})]
    big_constants = """
data y: real[8]
mu ~ normal(1000000, 1000000)
tau ~ half_normal(1000000)
for (j in 1 .. 8)
  theta[j] ~ normal(mu, tau)
  y[j] ~ normal(theta[j], 1000000)
"""
    cases.append(("program with constants 1e6", *compile_program(big_constants, {"y": (y * 1e6).tolist()})))
    wide_sigma = rng.uniform(5, 20, _WIDE).astype(np.float32)
    wide_y = rng.normal(0, 15, _WIDE).astype(np.float32)
    cases.append((f"eight_schools with {_WIDE} schools", eight_schools, (wide_sigma,), {"y": wide_y}))
    groups = rng.integers(1, 101, _WIDE)
    intercepts = """
data N: int
data group: int[N]
data y: real[N]
mu ~ normal(0, 10)
tau ~ half_normal(5)
for (j in 1 .. 100)
  a[j] ~ normal(mu, tau)
for (n in 1 .. N)
  y[n] ~ normal(a[group[n]], 1)
"""
    data = {"N": _WIDE, "group": groups.tolist(), "y": rng.normal(0, 3, _WIDE).round(4).tolist()}
    cases.append((f"varying intercepts, {_WIDE} rows", *compile_program(intercepts, data)))
    return cases


def robustness(out, network, prototype) -> dict:
    """Predict on every case; finite, in [0, 1], and a finite log density at the predicted start."""
    from autoreparam.coordinates import Coordinates
    from autoreparam.graph import model_graph
    from autoreparam.initial import initial_values
    from autoreparam.meta.predict import centring_per_site, graph_for, predict_graph
    from autoreparam.meta.prototype import prototype_lambda
    from autoreparam.meta.start import start_without_fit
    from autoreparam.reparam.selection import select_sites
    from autoreparam.reparam.sites import analyse_model

    rows = []
    for name, model, args, kwargs in _cases():
        start = time.perf_counter()
        graph = model_graph(model, *args, **kwargs)
        prediction = predict_graph(graph_for(network, model, args, kwargs, built={"prior": graph}), network)
        seconds = time.perf_counter() - start
        values = np.concatenate([np.ravel(v) for v in prediction.lam.values()])
        structure = analyse_model(model, *args, **kwargs)
        plan = select_sites(structure, "default")
        coords = Coordinates(model, args, kwargs, plan)
        param = prediction.parameterisation(plan)
        fit = start_without_fit(coords, param, initial_values(model, args, kwargs, structure.names))
        log_density = float(coords.log_density(coords.unravel(fit.loc), param))
        proto = np.ravel(centring_per_site(graph, prototype_lambda(prototype, graph))[plan.names[0]]) \
            if prototype is not None and plan.names else np.zeros(0)
        rows.append({
            "case": name, "elements": int(values.size), "seconds": seconds, "finite": bool(np.all(np.isfinite(values))),
            "in_unit_interval": bool(np.all((values >= 0) & (values <= 1))), "lambda_min": float(values.min()),
            "lambda_max": float(values.max()), "log_density_finite": bool(np.isfinite(log_density)),
            "lambda": {n: float(np.mean(v)) for n, v in prediction.lam.items()},
            "prototype_finite": bool(np.all(np.isfinite(proto))),
        })
    write_json(out, {"rows": rows, "ran_on": describe_machine()})
    return {"rows": rows}

"""A 10^5-row program compiled by autoreparam.lang against the same model hand-written in NumPyro.

Times the jitted log density and its gradient (median of repeated calls after compilation) and the
time to compile the program text (parse, check, bind data, dry run) and to jit each function.
Writes JSON. Usage:

    python benchmarks/lang_speed.py --rows 100000 --out benchmarks/results/lang_speed.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer.util import log_density

from autoreparam.lang import compile_program

GROUPS_PROGRAM = """data N: int
data J: int
data group: int[N]
data x: real[N]
data y: real[N]
mu ~ normal(0, 5)
log_tau ~ normal(0, 1)
b ~ normal(0, 1)
log_sigma ~ normal(0, 1)
for (j in 1 .. J)
  a[j] ~ normal(mu, exp(log_tau))
for (n in 1 .. N)
  y[n] ~ normal(a[group[n]] + b * x[n], exp(log_sigma))
"""

LOGISTIC_PROGRAM = """data N: int
data D: int
data x: real[N, D]
data y: int[N]
log_tau0 ~ normal(0, 10)
for (d in 1 .. D)
  log_tau[d] ~ normal(log_tau0, 1)
  beta[d] ~ normal(0, exp(log_tau[d]))
for (n in 1 .. N)
  y[n] ~ bernoulli_logit(dot(x[n], beta))
"""


def groups_numpyro(group, x, num_groups, y=None):
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    log_tau = numpyro.sample("log_tau", dist.Normal(0.0, 1.0))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    log_sigma = numpyro.sample("log_sigma", dist.Normal(0.0, 1.0))
    with numpyro.plate("groups", num_groups):
        a = numpyro.sample("a", dist.Normal(mu, jnp.exp(log_tau)))
    with numpyro.plate("rows", group.shape[0]):
        numpyro.sample("y", dist.Normal(a[group] + b * x, jnp.exp(log_sigma)), obs=y)


def logistic_numpyro(x, y=None):
    log_tau0 = numpyro.sample("log_tau0", dist.Normal(0.0, 10.0))
    with numpyro.plate("features", x.shape[1]):
        log_tau = numpyro.sample("log_tau", dist.Normal(log_tau0, 1.0))
        beta = numpyro.sample("beta", dist.Normal(0.0, jnp.exp(log_tau)))
    with numpyro.plate("rows", x.shape[0]):
        numpyro.sample("y", dist.Bernoulli(logits=x @ beta), obs=y)


def _problems(rows: int, rng):
    groups = 1000
    group = rng.integers(0, groups, rows)
    x = rng.normal(size=rows)
    y = rng.normal(np.sin(group) + 0.5 * x, 1.0)
    xs = rng.normal(size=(rows, 20))
    ys = rng.binomial(1, 0.5, rows)
    return {
        "hierarchical_normal": (
            GROUPS_PROGRAM, {"N": rows, "J": groups, "group": (group + 1).tolist(), "x": x.tolist(), "y": y.tolist()},
            groups_numpyro, (group, x, groups), {"y": y},
            {"mu": 0.1, "log_tau": 0.0, "b": 0.3, "log_sigma": 0.0, "a": jnp.zeros(groups)},
        ),
        "logistic_dot_20": (
            LOGISTIC_PROGRAM, {"N": rows, "D": 20, "x": xs.tolist(), "y": ys.tolist()},
            logistic_numpyro, (xs,), {"y": ys},
            {"log_tau0": 0.0, "log_tau": jnp.zeros(20), "beta": jnp.full(20, 0.1)},
        ),
    }


def _time(fn, params, repeats: int) -> dict:
    start = time.perf_counter()
    jax.block_until_ready(fn(params))
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(params))
        times.append(time.perf_counter() - start)
    return {"first_call_s": first, "median_ms": 1e3 * statistics.median(times), "min_ms": 1e3 * min(times)}


def run(rows: int, repeats: int, seed: int) -> dict:
    results = {}
    for name, (text, data, model, args, kwargs, params) in _problems(rows, np.random.default_rng(seed)).items():
        start = time.perf_counter()
        compiled = compile_program(text, data)
        compile_s = time.perf_counter() - start
        entry = {"compile_program_s": compile_s}
        for label, (m, a, k) in {"program": tuple(compiled), "numpyro": (model, args, kwargs)}.items():
            density = jax.jit(lambda p, m=m, a=a, k=k: log_density(m, a, k, p)[0])
            gradient = jax.jit(jax.value_and_grad(lambda p, m=m, a=a, k=k: log_density(m, a, k, p)[0]))
            entry[label] = {"log_density": _time(density, params, repeats),
                            "value_and_grad": _time(gradient, params, repeats),
                            "value": float(density(params))}
        for what in ("log_density", "value_and_grad"):
            entry[f"{what}_ratio_program_over_numpyro"] = (
                entry["program"][what]["median_ms"] / entry["numpyro"][what]["median_ms"])
        results[name] = entry
    return {
        "rows": rows, "repeats": repeats, "seed": seed, "device": str(jax.devices()[0]),
        "jax": jax.__version__, "numpyro": numpyro.__version__, "machine": platform.processor() or platform.machine(),
        "cpu_count": __import__("os").cpu_count(), "results": results,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/lang_speed.json")
    args = parser.parse_args()
    report = run(args.rows, args.repeats, args.seed)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

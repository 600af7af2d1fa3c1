"""Time to build the model graph (`autoreparam.graph.model_graph`) of each zoo model and of plate models
of growing size, in one process on the CPU. Writes JSON.

    python benchmarks/graph_build.py --out benchmarks/results/graph_build.json

"first" is the first build of a model in the process (JAX compiles the model's eager operations and the
jitted probe function); "repeat" is the median of ``--repeats`` further builds, which reuse the probe
program (kept per model and data layout, the data passed as arguments; before befd6f0 they traced and
compiled it again each time). A tiny model is built first so that JAX's own start-up is
charged to no model.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from autoreparam.graph import model_graph
from autoreparam.models import load

ZOO = ("eight_schools", "radon_mn", "radon_stddvs_mn", "german_credit", "election88", "electric")


def wide_schools(sigma, y=None):
    """Eight schools with one school per element of ``sigma``: latent and observed plates of that size."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    log_tau = numpyro.sample("log_tau", dist.Normal(0.0, 5.0))
    with numpyro.plate("schools", sigma.shape[0]):
        theta = numpyro.sample("theta", dist.Normal(mu, jnp.exp(log_tau)))
        numpyro.sample("y", dist.Normal(theta, sigma), obs=y)


def varying_intercepts(group, x, num_groups, y=None):
    """Radon-like: ``num_groups`` intercepts read through ``a[group]`` by a plate of rows."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    log_s = numpyro.sample("log_s", dist.Normal(0.0, 1.0))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    with numpyro.plate("groups", num_groups):
        a = numpyro.sample("a", dist.Normal(mu, jnp.exp(log_s)))
    with numpyro.plate("rows", group.shape[0]):
        numpyro.sample("y", dist.Normal(a[group] + b * x, 1.0), obs=y)


def _synthetic(size: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    wide = (wide_schools, (rng.uniform(5, 20, size).astype(np.float32),),
            {"y": rng.normal(0, 10, size).astype(np.float32)})
    groups = 100
    intercepts = (varying_intercepts, (rng.integers(0, groups, size), rng.normal(size=size).astype(np.float32), groups),
                  {"y": rng.normal(size=size).astype(np.float32)})
    return {f"wide_schools_{size}": wide, f"varying_intercepts_{size}rows_{groups}groups": intercepts}


def _time(model, args, kwargs, repeats: int) -> dict:
    start = time.perf_counter()
    graph = model_graph(model, *args, **kwargs)
    first = time.perf_counter() - start
    again = []
    for _ in range(repeats):
        start = time.perf_counter()
        model_graph(model, *args, **kwargs)
        again.append(time.perf_counter() - start)
    return {"nodes": graph.num_nodes, "edges": graph.num_edges, "latent_elements": graph.num_elements,
            "first_seconds": round(first, 3), "repeat_seconds_median": round(float(np.median(again)), 3)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="benchmarks/results/graph_build.json")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", default="10,1000,100000", help="plate sizes of the synthetic models")
    args = parser.parse_args(argv)

    warm = _synthetic(3)
    model, margs, mkwargs = next(iter(warm.values()))
    model_graph(model, *margs, **mkwargs)  # JAX start-up

    results = {}
    for name in ZOO:
        problem = load(name)
        results[name] = _time(problem.model, problem.args, problem.kwargs, args.repeats)
        print(name, results[name], flush=True)
    for size in (int(s) for s in args.sizes.split(",")):
        for name, (model, margs, mkwargs) in _synthetic(size).items():
            results[name] = _time(model, margs, mkwargs, args.repeats)
            print(name, results[name], flush=True)

    report = {
        "what": "seconds to build autoreparam.graph.model_graph, CPU, one process",
        "machine": {"platform": platform.platform(), "processor": platform.processor(), "cpus": os.cpu_count(),
                    "jax": jax.__version__, "numpyro": numpyro.__version__, "backend": jax.default_backend(),
                    "load_average_at_end": [round(x, 2) for x in os.getloadavg()]},
        "repeats": args.repeats,
        "results": results,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The graph of an unrolled time series: first-call and repeat seconds of ``model_graph`` against its length.

    python benchmarks/graph_unrolled_chain.py --steps 25,50,100 --label after --out FILE.json
    PYTHONPATH=<other checkout>/src python benchmarks/graph_unrolled_chain.py --label before --out ...

A program in autoreparam's language unrolls a loop that reads its own earlier elements into one scalar
site per step (docs/language.md), and the graph's probes take the curvature of every site. Each length
runs in this one process in increasing order, with the persistent compilation cache off, so the first
call compiles that length's programs (nothing of a shorter chain is reused: the shapes differ).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

os.environ["AUTOREPARAM_COMPILATION_CACHE"] = "0"

import jax  # noqa: E402
import numpy as np  # noqa: E402
import numpyro  # noqa: E402
import numpyro.distributions as dist  # noqa: E402

from autoreparam.graph import model_graph  # noqa: E402


def unrolled_walk(num_steps: int):
    """tau ~ HalfNormal(1); x_t ~ N(x_{t-1}, tau) from x_0 = 0, one site per step; y_t ~ N(x_t, 1)."""
    def model(y):
        tau = numpyro.sample("tau", dist.HalfNormal(1.0))
        previous = 0.0
        for t in range(num_steps):
            previous = numpyro.sample(f"x{t}", dist.Normal(previous, tau))
            numpyro.sample(f"y{t}", dist.Normal(previous, 1.0), obs=y[t])
    return model


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="25,50,100")
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    rows = []
    for num_steps in (int(s) for s in args.steps.split(",")):
        model, y = unrolled_walk(num_steps), np.linspace(0.0, 1.0, num_steps).astype(np.float32)
        start = time.perf_counter()
        model_graph(model, y)
        first = time.perf_counter() - start
        start = time.perf_counter()
        model_graph(model, y)
        again = time.perf_counter() - start
        rows.append({"steps": num_steps, "first_call_s": round(first, 2), "again_s": round(again, 3)})
        print(json.dumps(rows[-1]), flush=True)
    out = {"label": args.label, "machine": f"{platform.node()} ({os.cpu_count()} CPUs), jax {jax.__version__}",
           "when": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "rows": rows}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

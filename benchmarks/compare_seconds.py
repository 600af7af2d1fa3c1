"""`autoreparam compare eight_schools` against one NumPyro NUTS run, in seconds, side by side.

    python benchmarks/compare_seconds.py --repeats 3 --out benchmarks/results/compare_seconds.json

Issue 9's bound: the four-method comparison (CP, NCP, VIP and auto with NUTS, their variational
fits, every diagnostic) must finish in less than twice one NumPyro NUTS run. Each run here is a fresh
process started cold, as a user starts it (persistent compilation cache off, imports included):

- ``autoreparam compare eight_schools`` with its defaults (4 chains x 1000 warm-up + 2000 draws);
- NumPyro's NUTS on the centred eight schools model (the zoo's, written out here so the process
  imports NumPyro only, not autoreparam), 4 chains vectorised x 1000 warm-up + 1000 draws, the
  settings of `benchmarks/wall_clock.py`; the data come from the zoo's loader in this process.

The two alternate, ``--repeats`` times each, so that load on the machine hits both alike. Reported:
each process's wall seconds, NumPyro's seconds inside ``mcmc.run`` (compilation included) and
``compare``'s own "wall time" line, and the ratio of medians. Writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

NUMPYRO_RUN = """
import json, sys, time
import jax, jax.numpy as jnp, numpyro, numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS
data = json.loads(sys.argv[1])

def eight_schools(sigma, y=None):  # autoreparam.models.hierarchical.eight_schools
    sigma = jnp.asarray(sigma)
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    log_tau = numpyro.sample("log_tau", dist.Normal(0.0, 5.0))
    with numpyro.plate("schools", sigma.shape[0]):
        theta = numpyro.sample("theta", dist.Normal(mu, jnp.exp(log_tau)))
        numpyro.sample("y", dist.Normal(theta, sigma), obs=y)

mcmc = MCMC(NUTS(eight_schools), num_warmup=1000, num_samples=1000, num_chains=4,
            chain_method="vectorized", progress_bar=False)
start = time.perf_counter()
mcmc.run(jax.random.PRNGKey(0), jnp.asarray(data["sigma"]), y=jnp.asarray(data["y"]))
jax.block_until_ready(mcmc.get_samples())
print("inside", time.perf_counter() - start)
"""


def _timed(command: list[str], env: dict) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    from autoreparam.models import load

    problem = load("eight_schools")
    data = json.dumps({"sigma": [float(s) for s in problem.args[0]], "y": [float(v) for v in problem.kwargs["y"]]})
    env = {**os.environ, "AUTOREPARAM_COMPILATION_CACHE": "0"}
    cli = [sys.executable, "-m", "autoreparam.cli", "compare", "eight_schools", "--quiet"]
    runs = []
    for repeat in range(args.repeats):
        order = ("compare", "numpyro") if repeat % 2 == 0 else ("numpyro", "compare")
        for who in order:
            if who == "compare":
                wall, out = _timed(cli, env)
                inside = float(re.search(r"wall time ([0-9.]+)s", out).group(1))
            else:
                wall, out = _timed([sys.executable, "-c", NUMPYRO_RUN, data], env)
                inside = float(re.search(r"inside ([0-9.]+)", out).group(1))
            runs.append({"who": who, "repeat": repeat, "process_seconds": wall, "inside_seconds": inside})
            print(f"{who:8s} repeat {repeat}: {wall:5.1f} s process, {inside:5.1f} s inside", flush=True)

    def median(who, key):
        return statistics.median(r[key] for r in runs if r["who"] == who)

    summary = {
        "compare_process_seconds": median("compare", "process_seconds"),
        "numpyro_process_seconds": median("numpyro", "process_seconds"),
        "compare_inside_seconds": median("compare", "inside_seconds"),
        "numpyro_inside_seconds": median("numpyro", "inside_seconds"),
    }
    summary["ratio_process"] = summary["compare_process_seconds"] / summary["numpyro_process_seconds"]
    summary["ratio_inside"] = summary["compare_inside_seconds"] / summary["numpyro_inside_seconds"]
    summary["bound_met"] = summary["ratio_process"] < 2.0
    import jax

    result = {"command": "python benchmarks/compare_seconds.py " + " ".join(argv or sys.argv[1:]),
              "machine": f"{platform.node()} ({os.cpu_count()} CPUs), Python {platform.python_version()}, "
                         f"jax {jax.__version__}", "git": os.environ.get("GIT_COMMIT") or _git(),
              "when": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "runs": runs, "summary": summary}
    with open(args.out, "w") as handle:
        json.dump(result, handle, indent=1)
    print(json.dumps(summary, indent=1))
    return 0


def _git() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


if __name__ == "__main__":
    raise SystemExit(main())

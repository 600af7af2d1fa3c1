"""What the stable division of the auxiliary densities costs per gradient, side by side in one process.

    python benchmarks/stable_divide_cost.py --out benchmarks/results/stable_divide_cost.json

Since 6878752 every location-scale auxiliary density is ``families.standardised`` (its quotient by
``stable_divide``, a custom JVP) instead of NumPyro's own. This times the model's log density and
gradient in the rewritten coordinates, jitted and vmapped over the chains, with each: the old one is
had by making ``standardised`` return NumPyro's class while the program is traced. Centred and at
lambda = 0.5 (the parameterisation a runtime argument, as in the samplers), 1 and 16 chains,
alternating the two ``--rounds`` times; reports the median ratio of evaluations per second.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from autoreparam.coordinates import Coordinates  # noqa: E402
from autoreparam.initial import initial_values  # noqa: E402
from autoreparam.models import load  # noqa: E402
from autoreparam.reparam import Parameterisation, analyse_model, families, select_sites  # noqa: E402

STABLE = families.standardised


def compiled(coords, stable: bool):
    """The vmapped value-and-gradient, traced with the stable or with NumPyro's auxiliary densities."""
    fn = jax.jit(jax.vmap(jax.value_and_grad(lambda x, p: coords.log_density(coords.unravel(x), p)),
                          in_axes=(0, None)))

    def call(x, param):
        families.standardised = STABLE if stable else (lambda cls, shape_params=(): cls)
        try:
            return fn(x, param)
        finally:
            families.standardised = STABLE

    return call


def rate(call, x, param, reps: int) -> float:
    jax.block_until_ready(call(x, param))
    start = time.perf_counter()
    for _ in range(reps):
        out = call(x, param)
    jax.block_until_ready(out)
    return x.shape[0] * reps / (time.perf_counter() - start)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="eight_schools,radon_mn,german_credit")
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    rows = []
    for name in args.models.split(","):
        problem = load(name)
        structure = analyse_model(problem.model, *problem.args, **problem.kwargs)
        coords = Coordinates(problem.model, problem.args, problem.kwargs, select_sites(structure, "default"))
        _, free = initial_values(problem.model, problem.args, problem.kwargs, structure.names, unconstrained=True)
        centre = np.asarray(coords.ravel(free), np.float32)
        calls = {"stable": compiled(coords, True), "numpyro": compiled(coords, False)}
        for label, param in (("cp", Parameterisation.centred(coords.plan)),
                             ("lambda=0.5", Parameterisation.tied(coords.plan, 0.5))):
            for chains in (1, 16):
                x = jnp.asarray(centre + 0.1 * np.random.default_rng(0).standard_normal((chains, centre.size)),
                                jnp.float32)
                values = {k: np.asarray(c(x, param)[0]) for k, c in calls.items()}
                rates = {k: [] for k in calls}
                for _ in range(args.rounds):
                    for k, c in calls.items():
                        rates[k].append(rate(c, x, param, args.reps))
                ratios = [s / n for s, n in zip(rates["stable"], rates["numpyro"])]
                row = {"model": name, "param": label, "chains": chains,
                       "stable_per_second": rates["stable"], "numpyro_per_second": rates["numpyro"],
                       "median_ratio": float(np.median(ratios)),
                       "max_log_density_difference": float(np.max(np.abs(values["stable"] - values["numpyro"])))}
                rows.append(row)
                print(name, label, chains, round(row["median_ratio"], 3), row["max_log_density_difference"], flush=True)
    report = {"rows": rows, "jax": jax.__version__, "machine": platform.processor() or platform.machine(),
              "cpus": os.cpu_count(),
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=Path(__file__).parent).stdout.strip()}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

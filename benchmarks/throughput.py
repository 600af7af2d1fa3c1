"""Gradient throughput of our samplers against the model's raw value-and-gradient, per second.

    python benchmarks/throughput.py --out benchmarks/results/throughput.json [--devices 2]

The denominator of the paper's metric is gradient evaluations; this asks what a gradient costs
inside our samplers. "Raw" is the model's log density and gradient in the centred coordinates,
jitted and vmapped over the chains, called in a loop of ``--reps`` on fixed positions. "HMC" is the
sampling phase of fixed-L HMC (L = 8) and "NUTS" of our NUTS, both counted as gradient evaluations
per second of run time (compilation apart). Each at 1 and at 16 chains. Vectorised NUTS makes every
chain wait for the longest trajectory of each transition; ``--devices N`` (a fresh process with N
host devices, ``xla_force_host_platform_device_count``) spreads the chains over devices instead,
which the samplers do unchanged (``mcmc/sharding.py``). The sampling progress bar is host-side
between segments; "nuts_with_progress" times only the segments, so it leaves the bar's own host time
out (``benchmarks/progress_cost.py`` times whole runs with and without it). Writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

if "--devices" in sys.argv:  # must precede JAX's initialisation
    devices = sys.argv[sys.argv.index("--devices") + 1]
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from autoreparam.coordinates import Coordinates  # noqa: E402
from autoreparam.initial import initial_values  # noqa: E402
from autoreparam.mcmc.config import HMCConfig, NUTSConfig  # noqa: E402
from autoreparam.mcmc.hmc import CycleSampler  # noqa: E402
from autoreparam.mcmc.nuts import NUTSSampler  # noqa: E402
from autoreparam.models import load  # noqa: E402
from autoreparam.progress import SamplingProgress  # noqa: E402
from autoreparam.reparam import Parameterisation, analyse_model, select_sites  # noqa: E402


def setup(name: str):
    problem = load(name)
    structure = analyse_model(problem.model, *problem.args, **problem.kwargs)
    coords = Coordinates(problem.model, problem.args, problem.kwargs, select_sites(structure, "default"))
    _, free = initial_values(problem.model, problem.args, problem.kwargs, structure.names, unconstrained=True)
    return coords, np.asarray(coords.ravel(free), dtype=np.float32)


def raw(coords, centre, chains: int, reps: int) -> float:
    param = Parameterisation.centred(coords.plan)
    fn = jax.jit(jax.vmap(jax.value_and_grad(lambda x: coords.log_density(coords.unravel(x), param))))
    x = jnp.asarray(centre + 0.1 * np.random.default_rng(0).standard_normal((chains, centre.size)), jnp.float32)
    jax.block_until_ready(fn(x))
    start = time.perf_counter()
    for _ in range(reps):
        out = fn(x)
    jax.block_until_ready(out)
    return chains * reps / (time.perf_counter() - start)


def hmc(coords, centre, chains: int) -> float:
    param = Parameterisation.centred(coords.plan)
    sampler = CycleSampler(coords, 1, HMCConfig(num_warmup=200, num_samples=1000))
    x = centre + 0.1 * np.random.default_rng(0).standard_normal((chains, centre.size))
    result = sampler.run((param,), np.ones(coords.dim), x.astype(np.float32), 8, seed=0)
    result = sampler.run((param,), np.ones(coords.dim), x.astype(np.float32), 8, seed=1)  # compiled: time the run
    return float(np.sum(result.grad_evals)) / result.seconds["sampling"]


def nuts(coords, centre, chains: int, progress: bool) -> float:
    param = Parameterisation.centred(coords.plan)
    sampler = NUTSSampler(coords, NUTSConfig(num_warmup=200, num_samples=1000))
    x = (centre + 0.1 * np.random.default_rng(0).standard_normal((chains, centre.size))).astype(np.float32)
    sampler.run(param, np.ones(coords.dim), x, seed=0)
    bar = SamplingProgress(1200) if progress else None
    result = sampler.run(param, np.ones(coords.dim), x, seed=1, progress=bar)
    if bar is not None:
        bar.close()
    return float(np.sum(result.grad_evals)) / result.seconds["sampling"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="eight_schools,radon_mn,german_credit")
    parser.add_argument("--chains", default="1,16")
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--out", default="results/throughput.json")
    args = parser.parse_args(argv)
    rows = []
    for name in args.models.split(","):
        coords, centre = setup(name)
        for chains in (int(c) for c in args.chains.split(",")):
            base = raw(coords, centre, chains, args.reps)
            row = {"model": name, "chains": chains, "devices": jax.device_count(), "raw_grads_per_second": base,
                   "hmc_grads_per_second": hmc(coords, centre, chains),
                   "nuts_grads_per_second": nuts(coords, centre, chains, progress=False),
                   "nuts_with_progress_grads_per_second": nuts(coords, centre, chains, progress=True)}
            for key in ("hmc", "nuts", "nuts_with_progress"):
                row[f"{key}_share_of_raw"] = row[f"{key}_grads_per_second"] / base
            rows.append(row)
            print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"rows": rows, "jax": jax.__version__, "device": jax.devices()[0].device_kind}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

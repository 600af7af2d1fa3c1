"""Step-wise NUTS against the vmapped kernel, gradients per second on warmed-up chains of zoo models.

    python benchmarks/results/stepwise_nuts/measure.py --out benchmarks/results/stepwise_nuts/measure.json

For each model and chain count: our NUTS warms up the centred model (1000 transitions), and from
its chains (positions, per-chain step sizes and mass matrices) both batchings run the same 500
sampling transitions, each compiled first and then timed: BlackJAX's kernel scanned over
transitions and vmapped over chains (what ``mcmc.segments`` runs), and ``nuts_steps.run_transitions``.
Both make the same chain (``check_exact.py``), so they count the same gradients. Also reported:
the "waiting factor", the lockstep iterations the vmapped kernel runs (the sum over transitions of
the longest trajectory among chains) over the step-wise loop's (the largest sum over one chain),
and the seconds per iteration of each loop.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", ".."))
from check_exact import scanned, stepwise  # noqa: E402
from throughput import setup  # noqa: E402

from autoreparam.mcmc.config import NUTSConfig  # noqa: E402
from autoreparam.mcmc.nuts import NUTSSampler  # noqa: E402
from autoreparam.mcmc.segments import sample_codes, warmup_codes  # noqa: E402
from autoreparam.mcmc.spaces import flat_log_density  # noqa: E402
from autoreparam.reparam import Parameterisation  # noqa: E402


def _timed(fn, *args):
    jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    out = fn(*args)
    jax.block_until_ready(out)
    return time.perf_counter() - start, out


def measure(name: str, chains: int, transitions: int) -> dict:
    coords, centre = setup(name)
    param = Parameterisation.centred(coords.plan)
    sampler = NUTSSampler(coords, NUTSConfig(num_warmup=1000, num_samples=50))
    x = (centre + 0.1 * np.random.default_rng(0).standard_normal((chains, centre.size))).astype(np.float32)
    warm = sampler.segments.start(x, np.ones(coords.dim), 1.0, 0)
    warm, _, _ = sampler.segments.run(param, warm, warmup_codes(1000))
    log_density = flat_log_density(coords, param)
    codes, target = jnp.asarray(sample_codes(transitions)), jnp.float32(0.8)
    args = (warm.positions, warm.adapt, warm.keys, codes, target, 10)
    t_scan, (_, out_scan) = _timed(jax.jit(lambda *a: scanned(log_density, *a), static_argnums=(5,)), *args)
    t_step, out_step = _timed(jax.jit(lambda *a: stepwise(log_density, *a), static_argnums=(5,)), *args)
    steps = np.asarray(out_scan[1])
    same = bool(np.array_equal(steps, np.asarray(out_step[3][1])))
    lockstep, own = int(steps.max(axis=0).sum()), int(steps.sum(axis=1).max())
    grads = float(steps.sum())
    return {"model": name, "chains": chains, "transitions": transitions, "gradients": grads,
            "same_trajectory_lengths": same, "waiting_factor": lockstep / own,
            "vmapped_kernel_grads_per_second": grads / t_scan, "stepwise_grads_per_second": grads / t_step,
            "stepwise_over_vmapped": t_scan / t_step,
            "vmapped_us_per_iteration": 1e6 * t_scan / lockstep, "stepwise_us_per_iteration": 1e6 * t_step / own,
            "step_size_range": [float(np.min(warm.adapt.step_size)), float(np.max(warm.adapt.step_size))]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="eight_schools,radon_mn,german_credit")
    parser.add_argument("--chains", default="4,16")
    parser.add_argument("--transitions", type=int, default=500)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    rows = []
    for name in args.models.split(","):
        for chains in (int(c) for c in args.chains.split(",")):
            rows.append(measure(name, chains, args.transitions))
            print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in rows[-1].items()}, flush=True)
    with open(args.out, "w") as handle:
        json.dump({"rows": rows, "jax": jax.__version__, "device": jax.devices()[0].device_kind,
                   "command": "python benchmarks/results/stepwise_nuts/measure.py " + " ".join(argv or sys.argv[1:])},
                  handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

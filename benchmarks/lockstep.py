"""How much of vectorised NUTS's gap to the raw gradient rate is chains waiting for each other?

    python benchmarks/lockstep.py --out benchmarks/results/lockstep.json

Vectorised NUTS runs each transition for as many leapfrog steps as its longest chain needs, so with
``L[c, t]`` the steps of chain c at draw t, the lanes do useful work a share
``sum L / (chains * sum_t max_c L[c, t])`` of the time (the *lockstep efficiency*); the rest is the
spread of trajectory lengths. The setting is ``benchmarks/throughput.py``'s: the centred model, 16
chains, 200 warm-up and 1000 draws of our NUTS (pooled adaptation), the run timed on a second call.
Reported per model: the lockstep efficiency, the sampler's gradients per second, and what that rate
would be if no lane idled (gradients of the longest chain per transition, times the chains, per
second), each over the raw vmapped value-and-gradient rate. Where the efficiency is near 1 and the
share is still below 1, the gap is the kernel's own cost per step, not the waiting. Writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from autoreparam.mcmc.config import NUTSConfig  # noqa: E402
from autoreparam.mcmc.nuts import NUTSSampler  # noqa: E402
from autoreparam.reparam import Parameterisation  # noqa: E402
from throughput import raw, setup  # noqa: E402


def measure(name: str, chains: int, reps: int) -> dict:
    coords, centre = setup(name)
    param = Parameterisation.centred(coords.plan)
    sampler = NUTSSampler(coords, NUTSConfig(num_warmup=200, num_samples=1000))
    start = (centre + 0.1 * np.random.default_rng(0).standard_normal((chains, centre.size))).astype(np.float32)
    sampler.run(param, np.ones(coords.dim), start, seed=0)
    result = sampler.run(param, np.ones(coords.dim), start, seed=1)  # compiled: time the run
    steps = np.asarray(result.draw_stats["n_steps"], float)  # (chains, draws)
    seconds = result.seconds["sampling"]
    base = raw(coords, centre, chains, reps)
    return {"model": name, "chains": chains, "raw_grads_per_second": base,
            "lockstep_efficiency": float(steps.sum() / (chains * steps.max(axis=0).sum())),
            "mean_steps": float(steps.mean()),
            "nuts_share_of_raw": float(steps.sum() / seconds / base),
            "nuts_share_of_raw_if_no_lane_idled": float(chains * steps.max(axis=0).sum() / seconds / base)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="eight_schools,radon_mn,german_credit")
    parser.add_argument("--chains", type=int, default=16)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--out", default="benchmarks/results/lockstep.json")
    args = parser.parse_args(argv)
    rows = [measure(name, args.chains, args.reps) for name in args.models.split(",")]
    for row in rows:
        print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

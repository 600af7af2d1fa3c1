"""NUTS's ESS per gradient against its step size, the warm-up's metric held fixed: is it smooth?

    python benchmarks/step_scan.py --out benchmarks/results/step_probe/scan.jsonl \
        [--cases electric:0:1,radon_nd:1:0] [--factors 1,0.9,0.8,0.7]

A case is MODEL:LAMBDA:SEED with LAMBDA 1 (centred) or 0 (non-centred). Per case: 4 chains start
at the origin jittered in (-1, 1), warm up for 1000 transitions (Stan's windows, pooled, the
gradient-seeded metric as ``auto`` starts: ``mcmc.segments``), then the same chains draw 1000
transitions at each factor times the adapted step size in turn. Per factor, one JSON line: the step
size, mean leapfrog steps per transition, mean acceptance, the smallest bulk ESS over every element
and it per 1000 gradients of those draws. The evidence behind ``auto.step_probe``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from autoreparam.diagnostics.standard import standard_diagnostics  # noqa: E402
from autoreparam.mcmc.config import NUTSConfig  # noqa: E402
from autoreparam.mcmc.segments import SegmentSampler, sample_codes, warmup_codes  # noqa: E402
from autoreparam.reparam import Parameterisation  # noqa: E402
from throughput import setup  # noqa: E402

CASES = ("electric:0:1", "electric:0:2", "radon_nd:1:0", "radon_mn:1:0", "radon_pa:1:0", "eight_schools:0:0",
         "german_credit:0:0", "election88:1:0")


def scan(model: str, centred: bool, seed: int, factors: list[float]):
    coords, centre = setup(model)
    param = (Parameterisation.centred if centred else Parameterisation.non_centred)(coords.plan)
    sampler = SegmentSampler(coords, NUTSConfig(), 50)
    start = (centre + np.random.default_rng(seed).uniform(-1, 1, (4, coords.dim))).astype(np.float32)
    chains = sampler.start(start, np.ones(coords.dim), 1.0, seed)
    chains, _, _ = sampler.run(param, chains, warmup_codes(1000), metric_from_gradient=True)
    adapted = float(np.asarray(chains.adapt.step_size)[0])
    for factor in factors:
        chains = chains._replace(adapt=chains.adapt._replace(step_size=np.full(4, adapted * factor, np.float32)))
        chains, draws, _ = sampler.run(param, chains, sample_codes(1000))
        ess = standard_diagnostics(coords.split_original(draws.draws)).min_ess_bulk
        gradients = float(np.sum(draws.steps))
        yield {"model": model, "lambda": 1.0 if centred else 0.0, "seed": seed, "factor": factor,
               "step_size": adapted * factor, "mean_steps": float(draws.steps.mean()),
               "acceptance": float(draws.accept.mean()), "min_ess_bulk": float(ess),
               "ess_per_1000_gradients": 1000.0 * ess / gradients}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--factors", default="1,0.9,0.8,0.7")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    factors = [float(f) for f in args.factors.split(",")]
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    for case in args.cases.split(","):
        model, lam, seed = case.split(":")
        for row in scan(model, lam == "1", int(seed), factors):
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

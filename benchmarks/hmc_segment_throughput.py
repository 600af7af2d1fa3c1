"""Fixed-L HMC's sampling-phase gradients per second: this checkout's sampler against another's, A/B in one process.

    python benchmarks/hmc_segment_throughput.py --other /tmp/before/src/autoreparam/mcmc/hmc.py \
        --out benchmarks/results/hmc_segment_throughput.json

``benchmarks/throughput.py``'s HMC measurement (the centred model, L = 8, 200 warm-up + 1000 draws,
runs of an already compiled sampler timed): ``--other`` is another checkout's ``mcmc/hmc.py``,
loaded beside this one (it must import only modules this checkout still has), and the two samplers'
runs alternate ``--repeats`` times in one process, so both meet the same machine load. Asks whether
running the warm-up and the draws as segments of one program (46b6e71) costs the draws anything per
gradient, and whether a loop over the active iterations that leaves padding unrun (the warm-up of
200 runs in a segment of 1000) costs the draws anything and saves the warm-up its padding. Writes
JSON: per model and chain count, each sampler's draws' gradients per second and warm-up seconds per
run, the ratios of their medians, and whether the two samplers' draws were equal bit for bit.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from autoreparam.mcmc.config import HMCConfig  # noqa: E402
from autoreparam.mcmc.hmc import CycleSampler  # noqa: E402
from autoreparam.reparam import Parameterisation  # noqa: E402
from throughput import setup  # noqa: E402


def load_other(path: str):
    spec = importlib.util.spec_from_file_location("other_hmc", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CycleSampler


def measure(model: str, chains: int, other, repeats: int) -> dict:
    coords, centre = setup(model)
    param = Parameterisation.centred(coords.plan)
    x = (centre + 0.1 * np.random.default_rng(0).standard_normal((chains, centre.size))).astype(np.float32)
    config = HMCConfig(num_warmup=200, num_samples=1000)
    samplers = {"this checkout": CycleSampler(coords, 1, config), "other": other(coords, 1, config)}
    # Both modules compile through the one process-wide cache (`mcmc.programs.PROGRAMS`): samplers
    # with equal keys would run whichever program compiled first (an A/B of two segment samplers
    # first measured one program twice).
    if hasattr(samplers["other"], "_segment_key"):
        samplers["other"]._segment_key = ("other checkout", *samplers["other"]._segment_key)
    for sampler in samplers.values():  # compile
        sampler.run((param,), np.ones(coords.dim), x, 8, seed=0)
    rates = {name: [] for name in samplers}
    warmup = {name: [] for name in samplers}
    identical = True
    for repeat in range(repeats):
        draws = {}
        for name, sampler in samplers.items():
            result = sampler.run((param,), np.ones(coords.dim), x, 8, seed=repeat + 1)
            rates[name].append(float(np.sum(result.grad_evals)) / result.seconds["sampling"])
            warmup[name].append(result.seconds["warmup"])
            draws[name] = np.asarray(result.draws)
        identical &= bool(np.array_equal(*draws.values()))
    ratio = float(np.median(rates["this checkout"]) / np.median(rates["other"]))
    warmup_ratio = float(np.median(warmup["this checkout"]) / np.median(warmup["other"]))
    return {"model": model, "chains": chains, "grads_per_second": rates, "median_ratio": ratio,
            "warmup_seconds": warmup, "warmup_seconds_ratio": warmup_ratio, "draws_identical": identical}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", required=True, help="another checkout's src/autoreparam/mcmc/hmc.py")
    parser.add_argument("--label", default="other", help="what --other is, for the JSON")
    parser.add_argument("--models", default="eight_schools,radon_mn,german_credit")
    parser.add_argument("--chains", default="1,16")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", default="benchmarks/results/hmc_segment_throughput.json")
    args = parser.parse_args(argv)
    other = load_other(args.other)
    rows = []
    for model in args.models.split(","):
        for chains in (int(c) for c in args.chains.split(",")):
            row = measure(model, chains, other, args.repeats)
            rows.append(row)
            print(model, chains, {k: round(float(np.median(v))) for k, v in row["grads_per_second"].items()},
                  f"ratio {row['median_ratio']:.3f}", f"warm-up seconds ratio {row['warmup_seconds_ratio']:.3f}",
                  f"identical draws {row['draws_identical']}", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({
        "command": " ".join(["python benchmarks/hmc_segment_throughput.py", *(argv or sys.argv[1:])]),
        "other": args.label, "when": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""NUTS's segments with padding that does not run, against another checkout's, A/B in one process.

    git worktree add /tmp/before <commit>
    python benchmarks/nuts_segment_throughput.py --other /tmp/before/src/autoreparam/mcmc \
        --out benchmarks/results/nuts_segment_loop.json

``--other`` is another checkout's ``mcmc`` folder: its ``segments.py`` and ``nuts.py`` are loaded
beside this checkout's (they must import only modules this checkout still has), and the two
samplers' runs alternate ``--repeats`` times in one process, so both meet the same machine load.
Asks whether a segment program that loops over its active transitions (``fori_loop``, padding not
run) costs NUTS's draws anything per gradient against one that scans every transition, and what a
run whose lengths are not whole segments saves. Per model and chain count, two run lengths: one of
whole segments (500 warm-up + 1000 draws in segments of 50: nothing is padded, so the draws must be
equal bit for bit) and one that is not (520 + 1000: a padded sampler runs 30 transitions per chain
that it throws away; its first 30 draws are its warm-up's padding, so the draws are equal here too).
Writes JSON: each sampler's draws' gradients per second, warm-up and
sampling seconds per run, the transitions each ran, the ratios of their medians and the median of
the ratios seed by seed ("paired"), and whether the draws were equal.
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

from autoreparam.mcmc import segments as this_segments  # noqa: E402
from autoreparam.mcmc.config import NUTSConfig  # noqa: E402
from autoreparam.mcmc.nuts import NUTSSampler  # noqa: E402
from autoreparam.reparam import Parameterisation  # noqa: E402
from throughput import setup  # noqa: E402

LENGTHS = {"whole segments": (500, 1000), "not whole segments": (520, 1000)}


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_other(folder: str):
    """The other checkout's ``NUTSSampler``, built on its own ``segments`` module."""
    segments = _load("other_segments", Path(folder) / "segments.py")
    sys.modules["autoreparam.mcmc.segments"] = segments  # what the other nuts.py imports
    try:
        nuts = _load("other_nuts", Path(folder) / "nuts.py")
    finally:
        sys.modules["autoreparam.mcmc.segments"] = this_segments
    return nuts.NUTSSampler


def _transitions(sampler) -> list:
    """Count the transitions each call of the sampler's segment program runs (codes not padding)."""
    ran = []
    run = sampler.segments.run

    def counting(param, chains, codes, **kwargs):
        out = run(param, chains, codes, **kwargs)
        ran.append(int(out[1].steps.shape[1]))
        return out

    sampler.segments.run = counting
    return ran


def measure(model: str, chains: int, lengths: tuple, other, repeats: int) -> dict:
    coords, centre = setup(model)
    param = Parameterisation.centred(coords.plan)
    x = (centre + 0.1 * np.random.default_rng(0).standard_normal((chains, centre.size))).astype(np.float32)
    config = NUTSConfig(num_warmup=lengths[0], num_samples=lengths[1])
    samplers = {"this checkout": NUTSSampler(coords, config), "other": other(coords, config)}
    # Both modules compile through the one process-wide cache (`mcmc.programs.PROGRAMS`): samplers
    # with equal keys would run whichever program compiled first.
    samplers["other"].segments._key = ("other checkout", *samplers["other"].segments._key)
    ran = {name: _transitions(sampler) for name, sampler in samplers.items()}
    for sampler in samplers.values():  # compile
        sampler.run(param, np.ones(coords.dim), x, seed=0)
    rates, warmup, sampling = ({name: [] for name in samplers} for _ in range(3))
    identical = True
    for repeat in range(repeats):
        draws = {}
        for name, sampler in samplers.items():
            ran[name].clear()
            result = sampler.run(param, np.ones(coords.dim), x, seed=repeat + 1)
            rates[name].append(float(np.sum(result.grad_evals)) / result.seconds["sampling"])
            warmup[name].append(result.seconds["warmup"])
            sampling[name].append(result.seconds["sampling"])
            draws[name] = np.asarray(result.draws)
        identical &= bool(np.array_equal(*draws.values()))
    def median_ratio(values):
        return float(np.median(values["this checkout"]) / np.median(values["other"]))

    def paired(values):
        # Both samplers ran each seed one after the other: the ratio per seed cancels the machine's load
        # of that moment better than a ratio of medians (each seed's chains differ in their work).
        ratios = np.asarray(values["this checkout"]) / np.asarray(values["other"])
        return {"median": float(np.median(ratios)), "slower_of": int(np.sum(ratios > 1.0)), "n": int(ratios.size)}

    return {"model": model, "chains": chains, "num_warmup": lengths[0], "num_samples": lengths[1],
            "grads_per_second": rates, "warmup_seconds": warmup, "sampling_seconds": sampling,
            "transitions_run": {name: sum(r) for name, r in ran.items()},
            "grads_per_second_ratio": median_ratio(rates), "warmup_seconds_ratio": median_ratio(warmup),
            "sampling_seconds_ratio": median_ratio(sampling), "paired_sampling_seconds_ratio": paired(sampling),
            "paired_warmup_seconds_ratio": paired(warmup), "draws_identical": identical}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", required=True, help="another checkout's src/autoreparam/mcmc folder")
    parser.add_argument("--label", default="other", help="what --other is, for the JSON")
    parser.add_argument("--models", default="eight_schools,radon_mn,german_credit")
    parser.add_argument("--chains", default="1,16")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default="benchmarks/results/nuts_segment_loop.json")
    args = parser.parse_args(argv)
    other = load_other(args.other)
    rows = []
    for model in args.models.split(","):
        for chains in (int(c) for c in args.chains.split(",")):
            for label, lengths in LENGTHS.items():
                row = measure(model, chains, lengths, other, args.repeats)
                rows.append({"lengths": label, **row})
                print(model, chains, label, f"grads/s ratio {row['grads_per_second_ratio']:.3f}",
                      f"paired warm-up s ratio {row['paired_warmup_seconds_ratio']['median']:.3f}",
                      f"paired sampling s ratio {row['paired_sampling_seconds_ratio']['median']:.3f}",
                      row["transitions_run"],
                      f"identical draws {row['draws_identical']}", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({
        "command": " ".join(["python benchmarks/nuts_segment_throughput.py", *(argv or sys.argv[1:])]),
        "other": args.label, "when": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

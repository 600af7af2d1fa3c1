"""How much two runs of an invariance check at one seed move together, against runs at two seeds.

    python benchmarks/invariance_seeds.py --programs 4 --out benchmarks/results/invariance_seeds.json

The invariance check (`reliability.prior.check_invariance`) compares runs in different centrings with
a two-sample test that assumes their Monte Carlo errors independent. For the first sampled corpus
programs (seed 0), NUTS in CP (seed 7) against NUTS in NCP at the same seed and at another (8), with
the fuzz's settings (4 chains x 500 warm-up + 1000 draws): the correlation, per latent element,
between the two runs' draws (each chain's series about its mean, pooled over chains). Independent
runs give correlations near 0 (about +-1/sqrt(4000) = 0.016); runs that share random numbers and
geometry give more. Writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from autoreparam.lang import compile_program
from autoreparam.reliability.fuzz import _program, mcmc_programs
from autoreparam.reliability.methods import MethodSpec, RunSettings, run_spec
from autoreparam.reliability.ranks import flatten_sites


def series_correlation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per element: correlation of (chains, draws, elements) series, each chain about its own mean."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    return np.sum(a * b, axis=(0, 1)) / np.sqrt(np.sum(a * a, axis=(0, 1)) * np.sum(b * b, axis=(0, 1)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=4)
    parser.add_argument("--out", default="benchmarks/results/invariance_seeds.json")
    args = parser.parse_args(argv)
    settings = RunSettings(num_chains=4, num_warmup=500, num_samples=1000)
    rows = []
    for index in mcmc_programs(3 * args.programs + 12, 0)[: args.programs]:
        program = _program(index, 0)
        model, _, kwargs = compile_program(program.text, program.data)

        def draws(lam, seed):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                samples, summary = run_spec(MethodSpec("given", "nuts", {"parameterisation": lam}), model, (), kwargs,
                                            seed, settings)
            return flatten_sites(samples, lead=2)[0], bool(summary["trustworthy"])

        (cp, cp_ok), (ncp_same, same_ok), (ncp_other, other_ok) = draws(1.0, 7), draws(0.0, 7), draws(0.0, 8)
        same, other = series_correlation(cp, ncp_same), series_correlation(cp, ncp_other)
        row = {"program": index, "family": program.family, "elements": int(cp.shape[-1]),
               "trusted": {"cp": cp_ok, "ncp_same_seed": same_ok, "ncp_other_seed": other_ok},
               "same_seed": {"median": float(np.median(same)), "max": float(np.max(same))},
               "other_seed": {"median": float(np.median(other)), "max": float(np.max(other))}}
        rows.append(row)
        print(json.dumps(row), flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": " ".join(["python", "benchmarks/invariance_seeds.py", *sys.argv[1:]]),
                               "settings": settings.__dict__, "programs": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

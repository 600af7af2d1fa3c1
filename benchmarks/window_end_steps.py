"""The step sizes ``auto``'s warm-up holds at the end of each slow window on the zoo: how far healthy
runs sit above ``auto.rescue.FROZEN_STEP``, below which ``auto`` starts its warm-up again.

    python benchmarks/window_end_steps.py --out benchmarks/results/window_end_steps.json

For each zoo model and seed: ``ar.infer(method="auto")`` (4 chains x 1000 warm-up + 500 draws), the
smallest step size over chains after every transition that ends a slow window (the rule's warm-up,
and any candidate's re-adaptation), and whether the call started again. Resumable: rows already in
``--out`` are kept.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings

import numpy as np

import autoreparam as ar
from autoreparam.auto.rescue import FROZEN_STEP
from autoreparam.mcmc import segments
from autoreparam.models import load

MODELS = ("eight_schools", "german_credit", "electric", "radon_mn", "radon_pa", "radon_stddvs_mn",
          "hierarchical_linear", "sparse_logistic", "neals_funnel", "election88", "funnel_with_observation")


def _recording(record: list):
    """``SegmentSampler.run`` wrapped to note the step size after every segment that ends a slow window."""
    run = segments.SegmentSampler.run

    def recorded(self, param, chains, codes, **kwargs):
        chains, draws, seconds = run(self, param, chains, codes, **kwargs)
        if len(codes) and codes[-1] == segments.WINDOW_END:
            record.append(float(np.min(np.asarray(chains.adapt.step_size))))
        return chains, draws, seconds

    return recorded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    rows = json.load(open(args.out))["rows"] if os.path.exists(args.out) else []
    done = {(r["model"], r["seed"]) for r in rows}
    record: list = []
    segments.SegmentSampler.run = _recording(record)
    warnings.simplefilter("ignore", ar.ConvergenceWarning)
    for name in MODELS:
        problem = load(name)
        for seed in range(args.seeds):
            if (name, seed) in done:
                continue
            record.clear()
            result = ar.infer(problem.model, *problem.args, method="auto", num_chains=4, num_warmup=1000,
                              num_samples=500, seed=seed, progress=False, **problem.kwargs)
            rows.append({"model": name, "seed": seed, "window_end_steps": list(record),
                         "started_again": "started again" in result.decision, "ran_as": result.method})
            print(json.dumps(rows[-1]), flush=True)
            smallest = min(min(r["window_end_steps"]) for r in rows if r["window_end_steps"])
            with open(args.out, "w") as f:
                json.dump({"frozen_step": FROZEN_STEP, "smallest": smallest,
                           "started_again": sum(r["started_again"] for r in rows), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

"""Seconds of the standard diagnostics per call: ArviZ's functions against ``diagnostics.rank_normalised``.

    python benchmarks/diagnostics_speed.py --out benchmarks/results/diagnostics_speed.json

Bulk ESS, tail ESS and rank R-hat of 4 chains x 1000 draws of k elements (AR(1) chains, phi 0.5),
as ``infer`` computes them for its result and ``auto`` for each pilot: ArviZ 0.23 (``az.ess`` bulk
and tail, ``az.rhat`` rank, on an xarray Dataset, as ``diagnostics.standard`` called it before)
against ``standard_diagnostics`` now. Both in one process, alternating, the best of ``--repeats``;
the values are checked equal first.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from autoreparam.diagnostics.standard import _arviz, _to_dataset, standard_diagnostics


def _draws(k: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    x = np.empty((4, 1000, k))
    x[:, 0] = rng.normal(size=(4, k))
    for t in range(1, 1000):
        x[:, t] = 0.5 * x[:, t - 1] + rng.normal(size=(4, k))
    return {"x": x}


def with_arviz(draws: dict):
    az = _arviz()
    dataset = _to_dataset(draws)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (az.ess(dataset, method="bulk")["x"].values, az.ess(dataset, method="tail")["x"].values,
                az.rhat(dataset, method="rank")["x"].values)


def ours(draws: dict):
    d = standard_diagnostics(draws)
    return d.ess_bulk["x"], d.ess_tail["x"], d.r_hat["x"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,56,108,400")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default="benchmarks/results/diagnostics_speed.json")
    args = parser.parse_args(argv)
    rows = []
    for k in [int(s) for s in args.sizes.split(",")]:
        draws = _draws(k)
        for a, b in zip(with_arviz(draws), ours(draws)):
            np.testing.assert_allclose(b, a, rtol=1e-9)
        seconds = {"arviz": [], "ours": []}
        for _ in range(args.repeats):
            for name, fn in (("arviz", with_arviz), ("ours", ours)):
                start = time.perf_counter()
                fn(draws)
                seconds[name].append(time.perf_counter() - start)
        best = {name: min(values) for name, values in seconds.items()}
        rows.append({"elements": k, "seconds": seconds, "best": best, "speedup": best["arviz"] / best["ours"]})
        print(f"{k:>4} elements: ArviZ {best['arviz']:.3f} s, ours {best['ours']:.3f} s, "
              f"{best['arviz'] / best['ours']:.2f}x")
    out = {"machine": f"{platform.machine()}, {platform.processor() or 'cpu'}", "chains": 4, "draws": 1000,
           "repeats": args.repeats, "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

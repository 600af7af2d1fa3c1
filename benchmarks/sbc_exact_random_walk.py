"""Exact posterior PITs of the SBC's random-walk replications, with no sampler.

    python benchmarks/sbc_exact_random_walk.py --replications 3000 --out benchmarks/results/sbc_exact_random_walk.json

The SBC model `random_walk_scan` (reliability/models.py): tau ~ HalfNormal(1), level_t ~
N(level_(t-1), tau) over 6 steps from 0, y_t ~ N(level_t, 1). Given tau the walk is linear-Gaussian:
level ~ N(0, tau^2 C) with C_ij = min(i, j) + 1, y ~ N(0, tau^2 C + I), and level | y, tau is normal
with the eigenvalues of tau^2 C shrunk by 1 / (1 + eigenvalue) (the Kalman gain in C's eigenbasis).
So P(level_i <= true | y) and P(tau <= true | y) are integrals over tau, computed on a grid. For
replication r the true values and data are the SBC's own (`SBCModel.prior_draw` at
``stable_seed("sbc-data", "random_walk_scan", r)``), so these PITs are what every correct sampler's
ranks estimate; a deviation here is in the replications, not in a sampler. Written when the
auto/nuts cell failed at 300 replications on level[4] (docs/reliability_findings.md); the blocks
"first_300" and "after_300" tell a deviation of those replications from one of the prior draws.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from scipy import stats

from autoreparam.reliability.models import RANDOM_WALK_STEPS, sbc_models
from autoreparam.reliability.sbc import stable_seed

TAU_GRID = np.linspace(1e-4, 8.0, 8000)  # HalfNormal(1) has 1e-15 of its mass above 8


def exact_pit(level_true: np.ndarray, tau_true: float, y: np.ndarray) -> np.ndarray:
    """(PIT of level_0..level_5, PIT of tau) under the exact posterior given y."""
    steps = len(y)
    eigenvalues, vectors = np.linalg.eigh(np.minimum.outer(np.arange(steps), np.arange(steps)) + 1.0)
    z = vectors.T @ y
    lam = TAU_GRID[:, None] ** 2 * eigenvalues[None]
    log_likelihood = -0.5 * (np.log(lam + 1).sum(1) + (z[None] ** 2 / (lam + 1)).sum(1))
    log_weight = log_likelihood + stats.halfnorm.logpdf(TAU_GRID)
    weight = np.exp(log_weight - log_weight.max())
    weight /= weight.sum()
    shrink = lam / (lam + 1)
    means = (shrink * z[None]) @ vectors.T
    sds = np.sqrt((shrink[:, None, :] * vectors[None] ** 2).sum(-1))
    pit_level = (weight[:, None] * stats.norm.cdf((level_true[None] - means) / sds)).sum(0)
    return np.append(pit_level, weight[TAU_GRID <= tau_true].sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=300)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    model = sbc_models()["random_walk_scan"]
    pits = []
    for r in range(args.replications):
        truth, data = model.prior_draw(stable_seed("sbc-data", "random_walk_scan", r))
        pits.append(exact_pit(np.asarray(truth["level"], float), float(truth["tau"]), np.asarray(data["y"], float)))
    pits = np.array(pits)
    labels = [f"level[{t}]" for t in range(RANDOM_WALK_STEPS)] + ["tau"]

    def summary(block):
        return {"replications": len(block),
                "pit_mean_minus_half": dict(zip(labels, np.round(block.mean(0) - 0.5, 4).tolist())),
                "sd_ratio": dict(zip(labels, np.round(block.std(0) * np.sqrt(12), 3).tolist())),
                "ks_p": dict(zip(labels, [round(stats.kstest(block[:, k], "uniform").pvalue, 5)
                                          for k in range(len(labels))]))}

    result = {"all": summary(pits), "first_100": summary(pits[:100]), "first_300": summary(pits[:300]),
              "after_300": summary(pits[300:])}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result["all"]))


if __name__ == "__main__":
    main()

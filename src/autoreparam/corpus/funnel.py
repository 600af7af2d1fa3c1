"""Neal's funnel chains of depth 1 to 3, with and without an observation (paper 003's family).

Depth d (1 or 2 for training, 3 for extrapolation): z0 ~ N(0, 1), z_k ~ N(0, exp(z_{k-1})) for k = 1..d; with an observation,
y ~ N(z_d, sigma). Depth 1 with an observation is the meta-learning paper's training family
(papers/003, "Experiments"): sigma in [0.1, 20] (here log-uniform) and y in [-20, 20] (here a prior
predictive draw, conditioned on |y| <= 20 and on the informativeness stratum, with tau = exp(z_{d-1})
and n = 1). The funnel's scales are fixed by the paper, so no units are drawn.
"""

from __future__ import annotations

import numpy as np

from autoreparam.corpus.common import Design, GeneratedProgram, draw_in_stratum, num, text_num
from autoreparam.models.funnels import FUNNEL_SIGMA_RANGE, FUNNEL_Y_RANGE

FAMILY = "funnel"


def _chain(rng, depth: int) -> list[float]:
    z = [rng.normal(0.0, 1.0)]
    for _ in range(depth):
        # Clipped only to keep numpy finite: such draws put y far outside [-20, 20] and are rejected.
        z.append(rng.normal(0.0, np.exp(np.clip(z[-1], -50.0, 50.0))))
    return z


def generate(rng: np.random.Generator, design: Design) -> GeneratedProgram:
    depth = 3 if design.large else int(rng.integers(1, 3))  # extrapolation: the deepest chains
    observed = bool(rng.integers(0, 4))  # three in four with an observation
    lines = [f"# family: {FAMILY}; depth {depth}, {'observed' if observed else 'no observation'}",
             "z0 ~ normal(0, 1)"]
    lines += [f"z{k} ~ normal(0, exp(z{k - 1}))" for k in range(1, depth + 1)]
    params = {"depth": depth, "observed": observed, "stratum": list(design.stratum)}
    if not observed:
        params.update(log10_informativeness=None, stratum_hit=None)
        return GeneratedProgram(FAMILY, "\n".join(lines) + "\n", {}, params)

    def draw(r):
        sigma = num(10.0 ** r.uniform(*np.log10(FUNNEL_SIGMA_RANGE)))
        z = _chain(r, depth)
        return {"sigma": sigma, "z": z, "y": r.normal(z[-1], sigma)}

    def log10_q(d):
        if abs(d["y"]) > FUNNEL_Y_RANGE[1]:
            return np.inf  # outside the paper's range: rejected
        return 2.0 * d["z"][-2] / np.log(10.0) - 2.0 * np.log10(d["sigma"])

    sample, q, hit = draw_in_stratum(rng, draw, log10_q, design.stratum)
    y = float(np.clip(sample["y"], *FUNNEL_Y_RANGE))
    lines = lines[:1] + ["data y: real"] + lines[1:] + [f"y ~ normal(z{depth}, {text_num(sample['sigma'])})"]
    params.update(sigma=sample["sigma"], y=num(y, 7), log10_informativeness=q, stratum_hit=hit,
                  draw={f"z{k}": num(v) for k, v in enumerate(sample["z"])})
    return GeneratedProgram(FAMILY, "\n".join(lines) + "\n", {"y": num(y, 7)}, params)

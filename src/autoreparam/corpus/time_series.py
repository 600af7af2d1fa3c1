"""Random walks and AR(1) latent series with an unknown innovation scale, observed with noise.

x_1 ~ N(0, s0); x_t ~ N(phi x_{t-1}, s) for t >= 2 (phi = 1: random walk; else a constant drawn
from [-0.95, 0.95]); y_t ~ N(x_t, sigma); s ~ half-normal. Written centred, as a modeller would;
the compiler unrolls the loop into one scalar site per step, so each step can be non-centred
(x_t = phi x_{t-1} + s eps_t) or partially centred by the reparam handlers. Informativeness: tau = s,
n = 1, sigma the noise scale. Lengths: 5 to 30 steps for training, 31 to 60 for extrapolation.
"""

from __future__ import annotations

import numpy as np

from autoreparam.corpus.common import (
    Design,
    GeneratedProgram,
    as_list,
    draw_in_stratum,
    draw_units,
    num,
    signed_text_num,
    target_informativeness,
    text_num,
)

FAMILY = "time_series"
TRAIN_LENGTH, LARGE_LENGTH = (5, 30), (31, 60)


def generate(rng: np.random.Generator, design: Design) -> GeneratedProgram:
    lengths = LARGE_LENGTH if design.large else TRAIN_LENGTH
    length = int(rng.integers(lengths[0], lengths[1] + 1))
    random_walk = bool(rng.integers(2))
    phi = 1.0 if random_walk else num(rng.uniform(-0.95, 0.95), 3)
    units = draw_units(rng)
    s_scale, s0 = units, num(units * 10.0 ** rng.uniform(0.0, 1.0))
    q_target = target_informativeness(rng, design)
    sigma = num(s_scale / np.sqrt(q_target))

    def draw(r):
        return {"s": abs(r.normal(0.0, s_scale))}

    d, q, hit = draw_in_stratum(rng, draw, lambda d: np.log10(d["s"] ** 2 / sigma**2), design.stratum)
    x = np.empty(length)
    x[0] = rng.normal(0.0, s0)
    for t in range(1, length):
        x[t] = rng.normal(phi * x[t - 1], d["s"])
    y = rng.normal(x, sigma)
    loc = "x[t - 1]" if random_walk else f"{signed_text_num(phi)} * x[t - 1]"
    lines = [f"# family: {FAMILY}; {'random walk' if random_walk else 'AR(1)'}, {length} steps",
             "data T: int", "data y: real[T]", f"s ~ half_normal({text_num(s_scale)})",
             f"x[1] ~ normal(0, {text_num(s0)})", "for (t in 2 .. T)", f"  x[t] ~ normal({loc}, s)",
             "for (t in 1 .. T)", f"  y[t] ~ normal(x[t], {text_num(sigma)})"]
    params = {
        "kind": "random_walk" if random_walk else "ar1", "length": length, "phi": phi, "units": units,
        "innovation_prior_scale": s_scale, "initial_scale": s0, "noise_scale": sigma,
        "informativeness_target": num(q_target), "log10_informativeness": q, "stratum": list(design.stratum),
        "stratum_hit": hit, "draw": {"s": num(d["s"])},
    }
    return GeneratedProgram(FAMILY, "\n".join(lines) + "\n", {"T": length, "y": as_list(y)}, params)

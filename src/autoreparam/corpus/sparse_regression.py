"""Sparse-scale regressions like German credit: one log scale per coefficient around a global one.

log_tau0 ~ N(m, 2); log_tau_d ~ N(log_tau0, 1); beta_d ~ N(0, exp(log_tau_d)); y_n from
x_n . beta through a Bernoulli-logit or a normal likelihood. The design matrix is in units of
10^U(-2, 2), so m is log(1 / units) plus the stratum's offset. Informativeness: tau = exp(log_tau0)
times the units (the coefficients' effect on the predictor), n = N, sigma the noise scale (2 for
the logistic likelihood, the inverse square root of p (1 - p) at p = 1/2).
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

FAMILY = "sparse_regression"
TRAIN_ROWS, LARGE_ROWS = (20, 200), (201, 500)
TRAIN_FEATURES, LARGE_FEATURES = (2, 20), (21, 40)


def generate(rng: np.random.Generator, design: Design) -> GeneratedProgram:
    rows = LARGE_ROWS if design.large else TRAIN_ROWS
    features = LARGE_FEATURES if design.large else TRAIN_FEATURES
    n, dim = int(rng.integers(rows[0], rows[1] + 1)), int(rng.integers(features[0], features[1] + 1))
    logistic = bool(rng.integers(2))
    units = draw_units(rng)
    x = rng.normal(0.0, units, size=(n, dim))
    sigma = 2.0 if logistic else num(units * 10.0 ** rng.uniform(-1.0, 1.0))
    q_target = target_informativeness(rng, design)
    # tau * units = sigma * sqrt(q / n): the prior centre of log_tau0 that hits the target on average.
    loc = num(np.log(sigma * np.sqrt(q_target / n) / units))

    def draw(r):
        log_tau0 = r.normal(loc, 2.0)
        log_tau = r.normal(log_tau0, 1.0, size=dim)
        return {"log_tau0": log_tau0, "log_tau": log_tau, "beta": r.normal(0.0, np.exp(log_tau))}

    def log10_q(d):
        return np.log10((np.exp(d["log_tau0"]) * units) ** 2 * n / sigma**2)

    d, q, hit = draw_in_stratum(rng, draw, log10_q, design.stratum)
    eta = x @ d["beta"]
    if logistic:
        y, likelihood = rng.binomial(1, 1.0 / (1.0 + np.exp(-np.clip(eta, -30, 30)))), "bernoulli_logit(dot(x[n], beta))"
    else:
        y, likelihood = rng.normal(eta, sigma), f"normal(dot(x[n], beta), {text_num(sigma)})"
    lines = [f"# family: {FAMILY}; {'logistic' if logistic else 'gaussian'}, {n} rows, {dim} features",
             "data N: int", "data D: int", "data x: real[N, D]", f"data y: {'int' if logistic else 'real'}[N]",
             f"log_tau0 ~ normal({signed_text_num(loc)}, 2)", "for (d in 1 .. D)", "  log_tau[d] ~ normal(log_tau0, 1)",
             "  beta[d] ~ normal(0, exp(log_tau[d]))", "for (n in 1 .. N)", f"  y[n] ~ {likelihood}"]
    params = {
        "likelihood": "bernoulli_logit" if logistic else "normal", "num_rows": n, "num_features": dim,
        "units": units, "noise_scale": sigma, "log_tau0_loc": loc, "informativeness_target": num(q_target),
        "log10_informativeness": q, "stratum": list(design.stratum), "stratum_hit": hit,
        "draw": {"log_tau0": num(d["log_tau0"])},
    }
    data = {"N": n, "D": dim, "x": as_list(x), "y": as_list(y)}
    return GeneratedProgram(FAMILY, "\n".join(lines) + "\n", data, params)

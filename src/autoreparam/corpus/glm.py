"""Hierarchical GLMs: Bernoulli-logit and Poisson-log, random intercepts and slopes, grouped
once, nested (groups within regions) or crossed (two groupings of the observations).

The covariate is in units of 10^U(-2, 2), so the slope's prior scale is the inverse units. The
intercepts' scale is set by the informativeness stratum, with sigma^2 the inverse Fisher
information per observation (1 / (p (1 - p)) for Bernoulli, 1 / rate for Poisson).
"""

from __future__ import annotations

import numpy as np

from autoreparam.corpus.common import (
    Design,
    GeneratedProgram,
    as_list,
    draw_in_stratum,
    draw_units,
    group_index,
    group_sizes,
    num,
    target_informativeness,
    text_num,
)

FAMILY = "hierarchical_glm"
TRAIN_GROUPS, LARGE_GROUPS = (2, 40), (41, 80)
TRAIN_PER_GROUP, LARGE_PER_GROUP = (1, 30), (31, 50)
GROUPINGS = ("single", "nested", "crossed")


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def generate(rng: np.random.Generator, design: Design) -> GeneratedProgram:
    likelihood = ("bernoulli_logit", "poisson_log")[int(rng.integers(2))]
    grouping = GROUPINGS[int(rng.integers(3))]
    slopes = bool(rng.integers(2))
    groups = LARGE_GROUPS if design.large else TRAIN_GROUPS
    per_group = LARGE_PER_GROUP if design.large else TRAIN_PER_GROUP
    num_groups = int(rng.integers(groups[0], groups[1] + 1))
    sizes = group_sizes(rng, num_groups, int(rng.integers(per_group[0], per_group[1] + 1)))
    n = int(sizes.sum())
    group = group_index(sizes)
    num_regions = int(rng.integers(2, max(3, num_groups // 3) + 1))
    region = rng.integers(1, num_regions + 1, size=num_groups)
    num_levels2 = int(rng.integers(2, 11))
    group2 = rng.integers(1, num_levels2 + 1, size=n)
    units = draw_units(rng)
    x = rng.normal(0.0, units, size=n)
    mu_loc = 0.0 if likelihood == "bernoulli_logit" else num(rng.uniform(0.0, 2.0))
    info_guess = 0.25 if likelihood == "bernoulli_logit" else float(np.exp(mu_loc))
    q_target = target_informativeness(rng, design)
    tau_scale = num(np.clip(np.sqrt(q_target / (sizes.mean() * info_guess)), 1e-3, 10.0))
    slope_scale, slope_sd_scale, other_scale = num(1.0 / units), num(0.5 / units), num(rng.uniform(0.1, 1.0))

    def draw(r):
        d = {"mu": r.normal(mu_loc, 1.0), "beta": r.normal(0.0, slope_scale), "tau_a": abs(r.normal(0.0, tau_scale))}
        base = d["mu"]
        if grouping == "nested":
            d["tau_r"] = abs(r.normal(0.0, other_scale))
            base = r.normal(d["mu"], d["tau_r"], size=num_regions)[region - 1]
        d["a"] = r.normal(base, d["tau_a"], size=num_groups)
        d["b"] = r.normal(d["beta"], abs(r.normal(0.0, slope_sd_scale)), size=num_groups) if slopes else None
        d["c"] = r.normal(0.0, abs(r.normal(0.0, other_scale)), size=num_levels2) if grouping == "crossed" else None
        eta = d["a"][group - 1] + (d["b"][group - 1] if slopes else d["beta"]) * x
        d["eta"] = eta + (d["c"][group2 - 1] if grouping == "crossed" else 0.0)
        return d

    def log10_q(d):
        eta = np.clip(d["eta"], -30, 30)
        info = np.mean(_sigmoid(eta) * (1 - _sigmoid(eta))) if likelihood == "bernoulli_logit" else np.mean(np.exp(eta))
        return np.log10(d["tau_a"] ** 2 * sizes.mean() * info)

    d, q, hit = draw_in_stratum(rng, draw, log10_q, design.stratum)
    eta = np.clip(d["eta"], -30, 30)
    y = rng.binomial(1, _sigmoid(eta)) if likelihood == "bernoulli_logit" else rng.poisson(np.minimum(np.exp(eta), 1e6))

    lines = [f"# family: {FAMILY}; {likelihood}, {grouping} grouping, {'random slopes' if slopes else 'fixed slope'}, "
             f"{num_groups} groups, {n} observations", "data N: int", "data J: int", "data group: int[N]",
             "data x: real[N]", "data y: int[N]"]
    data = {"N": n, "J": num_groups, "group": as_list(group), "x": as_list(x), "y": as_list(y)}
    if grouping == "nested":
        lines += ["data R: int", "data region: int[J]"]
        data.update(R=num_regions, region=as_list(region))
    if grouping == "crossed":
        lines += ["data K: int", "data group2: int[N]"]
        data.update(K=num_levels2, group2=as_list(group2))
    lines += [f"mu ~ normal({text_num(mu_loc)}, 1)", f"beta ~ normal(0, {text_num(slope_scale)})",
              f"tau_a ~ half_normal({text_num(tau_scale)})"]
    if grouping == "nested":
        lines += [f"tau_r ~ half_normal({text_num(other_scale)})", "for (r in 1 .. R)", "  region_mean[r] ~ normal(mu, tau_r)",
                  "for (j in 1 .. J)", "  a[j] ~ normal(region_mean[region[j]], tau_a)"]
    else:
        lines += ["for (j in 1 .. J)", "  a[j] ~ normal(mu, tau_a)"]
    slope = "beta"
    if slopes:
        lines += [f"tau_b ~ half_normal({text_num(slope_sd_scale)})", "for (j in 1 .. J)", "  b[j] ~ normal(beta, tau_b)"]
        slope = "b[group[n]]"
    predictor = f"a[group[n]] + {slope} * x[n]"
    if grouping == "crossed":
        lines += [f"tau_c ~ half_normal({text_num(other_scale)})", "for (k in 1 .. K)", "  c[k] ~ normal(0, tau_c)"]
        predictor += " + c[group2[n]]"
    lines += ["for (n in 1 .. N)", f"  y[n] ~ {likelihood}({predictor})"]
    params = {
        "likelihood": likelihood, "grouping": grouping, "random_slopes": slopes, "num_groups": num_groups,
        "num_observations": n, "group_sizes": sizes.tolist(), "empty_groups": int((sizes == 0).sum()),
        "num_regions": num_regions if grouping == "nested" else None,
        "num_levels2": num_levels2 if grouping == "crossed" else None, "units": units, "tau_scale": tau_scale,
        "informativeness_target": num(q_target), "log10_informativeness": q, "stratum": list(design.stratum),
        "stratum_hit": hit, "draw": {"mu": num(d["mu"]), "beta": num(d["beta"]), "tau_a": num(d["tau_a"])},
    }
    return GeneratedProgram(FAMILY, "\n".join(lines) + "\n", data, params)

"""Normal hierarchies: group means around a common mean, observed with noise (eight schools' shape).

2 to 100 groups, 0 to 50 observations per group (empty groups included); the group scale's prior
scale is the units (10^U(-2, 2), so prior and noise scales span 4 decades), the noise scale is set
by the informativeness stratum. The group-scale prior is half-normal, half-Cauchy or a normal on
its log; the noise scale is known or given a half-normal prior. `latent` switches the group
effects to Student-t (the student_t_hierarchy family).
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

FAMILY = "normal_hierarchy"
TRAIN_GROUPS, LARGE_GROUPS = (2, 60), (61, 100)
TRAIN_PER_GROUP, LARGE_PER_GROUP = (0, 30), (31, 50)
TAU_PRIORS = ("half_normal", "half_cauchy", "log_normal_scale")


def _tau_prior(kind: str, scale: float) -> tuple[list[str], str]:
    """Statements drawing the group scale, and the expression to use for it."""
    if kind == "log_normal_scale":
        return [f"log_tau ~ normal({_signed(np.log(scale))}, 1)"], "exp(log_tau)"
    return [f"tau ~ {kind}({text_num(scale)})"], "tau"


def _signed(value: float) -> str:
    return ("-" if value < 0 else "") + text_num(abs(value))


def _draw_tau(rng, kind: str, scale: float) -> float:
    if kind == "half_normal":
        return abs(rng.normal(0.0, scale))
    if kind == "half_cauchy":
        return abs(scale * rng.standard_cauchy())
    return float(np.exp(rng.normal(np.log(scale), 1.0)))


def generate(rng: np.random.Generator, design: Design, latent: str = "normal") -> GeneratedProgram:
    groups = TRAIN_GROUPS if not design.large else LARGE_GROUPS
    per_group = TRAIN_PER_GROUP if not design.large else LARGE_PER_GROUP
    num_groups = int(rng.integers(groups[0], groups[1] + 1))
    sizes = group_sizes(rng, num_groups, int(rng.integers(max(per_group[0], 1), per_group[1] + 1)))
    n_per_group = sizes.sum() / num_groups
    units = draw_units(rng)
    tau_kind = TAU_PRIORS[int(rng.integers(len(TAU_PRIORS)))]
    tau_scale = units
    q_target = target_informativeness(rng, design)
    sigma = num(tau_scale * np.sqrt(n_per_group / q_target))
    mu_scale = num(units * 10.0 ** rng.uniform(0.0, 1.0))
    noise_known = bool(rng.integers(2))
    df = num(10.0 ** rng.uniform(0.0, 1.5)) if latent == "student_t" else None

    def draw(r):
        return {"mu": r.normal(0.0, mu_scale), "tau": _draw_tau(r, tau_kind, tau_scale),
                "sigma": sigma if noise_known else abs(r.normal(0.0, sigma))}

    def log10_q(d):
        return np.log10(d["tau"] ** 2 * n_per_group / d["sigma"] ** 2)

    hyper, q, hit = draw_in_stratum(rng, draw, log10_q, design.stratum)
    if latent == "student_t":
        theta = hyper["mu"] + hyper["tau"] * rng.standard_t(df, size=num_groups)
    else:
        theta = rng.normal(hyper["mu"], hyper["tau"], size=num_groups)
    group = group_index(sizes)
    y = rng.normal(theta[group - 1], hyper["sigma"])

    tau_lines, tau_expr = _tau_prior(tau_kind, tau_scale)
    noise_lines, noise_expr = ([], text_num(sigma)) if noise_known else ([f"sigma ~ half_normal({text_num(sigma)})"], "sigma")
    latent_dist = f"student_t({text_num(df)}, mu, {tau_expr})" if df else f"normal(mu, {tau_expr})"
    family = "student_t_hierarchy" if latent == "student_t" else FAMILY
    lines = [
        f"# family: {family}; {num_groups} groups, {int(sizes.sum())} observations, "
        f"log10 informativeness {q:.2f}",
        "data N: int", "data J: int", "data group: int[N]", "data y: real[N]",
        f"mu ~ normal(0, {text_num(mu_scale)})", *tau_lines, *noise_lines,
        "for (j in 1 .. J)", f"  theta[j] ~ {latent_dist}",
        "for (n in 1 .. N)", f"  y[n] ~ normal(theta[group[n]], {noise_expr})",
    ]
    params = {
        "num_groups": num_groups, "num_observations": int(sizes.sum()), "group_sizes": sizes.tolist(),
        "empty_groups": int((sizes == 0).sum()), "units": units, "tau_prior": tau_kind, "tau_scale": tau_scale,
        "mu_scale": mu_scale, "noise_scale": sigma, "noise_known": noise_known, "student_t_df": df,
        "informativeness_target": num(q_target), "log10_informativeness": q, "stratum": list(design.stratum),
        "stratum_hit": hit, "draw": {k: num(v) for k, v in hyper.items()},
    }
    data = {"N": int(sizes.sum()), "J": num_groups, "group": as_list(group), "y": as_list(y)}
    return GeneratedProgram(family, "\n".join(lines) + "\n", data, params)

"""Extra training programs: linear-Gaussian hierarchies whose group scale is a known constant.

The corpus's normal hierarchies always give the group scale a prior (a latent), but many models fix
it (paper 000 Section 3's ``mu ~ N(theta, sigma_mu)`` with sigma_mu given). These programs cover
that case, in the corpus layout (``train/index.jsonl``, ``.arp`` and ``.json`` files), so the labels
and training commands read them like a corpus split:

    theta ~ normal(0, a)
    for (j in 1 .. J)
      mu[j] ~ normal(theta, s)
    for (j in 1 .. J)
      for (n in 1 .. N)
        y[j, n] ~ normal(mu[j], sigma)

with a, s ~ 10^U(-1, 1), J in 1..5, N in 1..20 and sigma set by an informativeness
s^2 N / sigma^2 ~ 10^U(-3, 3); data drawn from the prior predictive. Program i uses
``default_rng([seed, i])``. They differ from the Section 3 evaluation models (which have a = 1,
J = 1, N = 10 and a fixed grid of q and sigma_mu) but share their form, so their optimum is known
in closed form: ``params["optimal_lambda"]`` is the tied lambda of the mu_j that maximises the
ELBO of the exact mean-field fit, i.e. minimises KL(q* || posterior) = (sum log P_ii - log det P) / 2
for the posterior precision P of the reparameterised latents (`autoreparam.analysis`), found on a
grid then refined. It is the global optimum: VIP's fits can stop at the other root (for s != 1 the
map z~ -> mu decorrelates mu~ from theta at lambda = 1 and at lambda = s^(lambda - 1)), so the
warm start regresses these programs on ``optimal_lambda`` rather than on their VIP label.

``layout="indexed"`` writes the same hierarchy the way real data arrive (radon's counties, the
corpus's normal hierarchies): flat observations reaching their group through an index,

    for (n in 1 .. N)
      y[n] ~ normal(mu[group[n]], sigma)

with J log-uniform in 2..100 groups of unequal sizes (uniform on 0..m, m in 1..40, empty groups
included, observations shuffled) and the informativeness set for the mean group size. Its optimum
is per element (`optimal_lambdas`): groups with more data want more centring. Without these
programs, networks trained on the balanced layout alone put radon's county effects (indexed, known
scale, informative) at lambda 0.43 to 0.62 where the optimum is above 0.8: the only indexed group
effects they saw had a latent group scale and low labels (benchmarks/results/meta_indexed_synthetic).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from autoreparam.corpus.common import as_list, group_index, group_sizes, num, text_num
from autoreparam.errors import ArgumentError

FAMILY = "known_scale_hierarchy"
LAYOUTS = ("balanced", "indexed")


def _hierarchy_kl(a: float, s: float, sizes, sigma: float):
    """KL(q* || posterior) of the exact mean-field fit as a function of the mu_j's lambdas (theta centred)."""
    from autoreparam.analysis.linear_gaussian import LinearGaussianModel
    from autoreparam.analysis.partial_centring import reparameterised_posterior_precision

    sizes = np.asarray(sizes)
    groups, observed = sizes.size, np.flatnonzero(sizes > 0)
    n = groups + 1
    weights = np.zeros((n, n))
    weights[1:, 0] = 1.0
    # A group's n_j observations at noise sigma are one observation of mu_j at noise sigma / sqrt(n_j).
    model = LinearGaussianModel(weights=weights, offsets=np.zeros(n), scales=np.array([a] + [s] * groups),
                                obs_matrix=np.eye(n)[1 + observed], obs_cov=np.diag(sigma**2 / sizes[observed]))

    def kl(lam_mu) -> float:
        lam = np.concatenate([[1.0], np.broadcast_to(lam_mu, (groups,))])
        precision = reparameterised_posterior_precision(model, lam)
        return 0.5 * (np.sum(np.log(np.diag(precision))) - np.linalg.slogdet(precision)[1])

    return kl


def _minimise_on_unit_interval(f, grid_points: int, refine: float) -> float:
    """argmin of a scalar f on [0, 1]: the best of a grid, refined within +-``refine`` (the grid finds
    the global basin; f can have two, module docstring)."""
    import scipy.optimize

    grid = np.linspace(0.0, 1.0, grid_points)
    best = grid[int(np.argmin([f(x) for x in grid]))]
    result = scipy.optimize.minimize_scalar(f, bounds=(max(best - refine, 0.0), min(best + refine, 1.0)),
                                            method="bounded")
    return float(result.x if result.fun <= f(best) else best)


def optimal_lambda(a: float, s: float, groups: int, per_group: int, sigma: float) -> float:
    """The tied lambda of every mu_j minimising the mean-field KL of the exact posterior (docstring)."""
    return _minimise_on_unit_interval(_hierarchy_kl(a, s, np.full(groups, per_group), sigma), 201, 0.005)


def optimal_lambdas(a: float, s: float, sizes, sigma: float, sweeps: int = 2) -> np.ndarray:
    """lambda per mu_j minimising the same KL when groups differ in size (paper 000 Section 5's
    objective at its exact optimum): the tied optimum, then ``sweeps`` rounds of coordinate descent,
    each coordinate on a grid of 21 points refined within +-0.05. Never worse than the tied optimum."""
    kl = _hierarchy_kl(a, s, sizes, sigma)
    lam = np.full(np.size(sizes), _minimise_on_unit_interval(kl, 201, 0.005))
    for _ in range(sweeps):
        for j in range(lam.size):
            def along(x, j=j):
                trial = lam.copy()
                trial[j] = x
                return kl(trial)

            moved = _minimise_on_unit_interval(along, 21, 0.05)
            if along(moved) < along(lam[j]):  # the grid may miss the current point's basin
                lam[j] = moved
    return lam


def generate(index: int, seed: int, layout: str = "balanced") -> tuple[str, dict, dict]:
    """Program ``index`` of the set ``seed`` in ``layout`` (`LAYOUTS`): text, data and parameters."""
    if layout == "indexed":
        return _generate_indexed(index, seed)
    rng = np.random.default_rng([seed, index])
    a, s = (num(10.0 ** rng.uniform(-1, 1)) for _ in range(2))
    groups, per_group = int(rng.integers(1, 6)), int(rng.integers(1, 21))
    informativeness = 10.0 ** rng.uniform(-3, 3)
    sigma = num(s * np.sqrt(per_group / informativeness))
    theta = rng.normal(0, a)
    mu = rng.normal(theta, s, size=groups)
    y = rng.normal(mu[:, None], sigma, size=(groups, per_group))
    text = "\n".join([
        f"# family: {FAMILY}; {groups} groups of {per_group}, log10 informativeness {np.log10(informativeness):.2f}",
        "data J: int", "data N: int", "data y: real[J, N]",
        f"theta ~ normal(0, {text_num(a)})",
        "for (j in 1 .. J)",
        f"  mu[j] ~ normal(theta, {text_num(s)})",
        "for (j in 1 .. J)",
        "  for (n in 1 .. N)",
        f"    y[j, n] ~ normal(mu[j], {text_num(sigma)})",
    ]) + "\n"
    data = {"J": groups, "N": per_group, "y": as_list(y)}
    params = {"a": a, "s": s, "groups": groups, "per_group": per_group, "sigma": sigma,
              "log10_informativeness": float(np.log10(informativeness)), "seed": [seed, index],
              "optimal_lambda": optimal_lambda(a, s, groups, per_group, sigma)}
    return text, data, params


def _generate_indexed(index: int, seed: int) -> tuple[str, dict, dict]:
    rng = np.random.default_rng([seed, index])
    a, s = (num(10.0 ** rng.uniform(-1, 1)) for _ in range(2))
    groups = int(round(10.0 ** rng.uniform(np.log10(2), 2)))
    sizes = group_sizes(rng, groups, int(rng.integers(1, 41)))
    informativeness = 10.0 ** rng.uniform(-3, 3)  # s^2 n / sigma^2 at the mean group size n
    sigma = num(s * np.sqrt(sizes.mean() / informativeness))
    theta = rng.normal(0, a)
    mu = rng.normal(theta, s, size=groups)
    order = rng.permutation(int(sizes.sum()))  # observations arrive in no group order, as in real data
    group = group_index(sizes)[order]
    y = rng.normal(mu[group - 1], sigma)
    text = "\n".join([
        f"# family: {FAMILY}; indexed, {groups} groups, {int(sizes.sum())} observations, "
        f"log10 informativeness {np.log10(informativeness):.2f}",
        "data J: int", "data N: int", "data group: int[N]", "data y: real[N]",
        f"theta ~ normal(0, {text_num(a)})",
        "for (j in 1 .. J)",
        f"  mu[j] ~ normal(theta, {text_num(s)})",
        "for (n in 1 .. N)",
        f"  y[n] ~ normal(mu[group[n]], {text_num(sigma)})",
    ]) + "\n"
    data = {"J": groups, "N": int(sizes.sum()), "group": as_list(group), "y": as_list(y)}
    params = {"layout": "indexed", "a": a, "s": s, "groups": groups, "sizes": as_list(sizes), "sigma": sigma,
              "log10_informativeness": float(np.log10(informativeness)), "seed": [seed, index],
              "optimal_lambda": as_list(optimal_lambdas(a, s, sizes, sigma))}
    return text, data, params


def write_synthetic(out, n: int, seed: int, layout: str = "balanced") -> Path:
    """Write ``n`` programs in ``layout`` (`LAYOUTS`) into ``out/train`` (absent or empty), corpus layout."""
    if layout not in LAYOUTS:
        raise ArgumentError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    root = Path(out)
    if root.exists() and any(root.iterdir()):
        raise ArgumentError(f"{root} is not empty; choose a new folder")
    (root / "train").mkdir(parents=True)
    with open(root / "train" / "index.jsonl", "w", encoding="utf-8") as index:
        for i in range(n):
            text, data, params = generate(i, seed, layout)
            name = f"k{i:05d}"
            (root / "train" / f"{name}.arp").write_text(text, encoding="utf-8")
            (root / "train" / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
            index.write(json.dumps({"id": name, "family": FAMILY, "split": "train", "program": f"{name}.arp",
                                    "data": f"{name}.json", "params": params}) + "\n")
    (root / "manifest.json").write_text(json.dumps({"n": n, "seed": seed, "layout": layout, "families": [FAMILY],
                                                    "splits": {"train": n}}, indent=2) + "\n")
    return root

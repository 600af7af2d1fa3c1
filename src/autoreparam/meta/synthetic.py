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
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from autoreparam.corpus.common import as_list, num, text_num
from autoreparam.errors import ArgumentError

FAMILY = "known_scale_hierarchy"


def optimal_lambda(a: float, s: float, groups: int, per_group: int, sigma: float) -> float:
    """The tied lambda of every mu_j minimising the mean-field KL of the exact posterior (docstring)."""
    import scipy.optimize

    from autoreparam.analysis.linear_gaussian import LinearGaussianModel
    from autoreparam.analysis.partial_centring import reparameterised_posterior_precision

    n = groups + 1
    weights = np.zeros((n, n))
    weights[1:, 0] = 1.0
    model = LinearGaussianModel(weights=weights, offsets=np.zeros(n), scales=np.array([a] + [s] * groups),
                                obs_matrix=np.eye(n)[1:], obs_cov=np.eye(groups) * sigma**2 / per_group)

    def kl(lam):
        precision = reparameterised_posterior_precision(model, np.array([1.0] + [lam] * groups))
        return 0.5 * (np.sum(np.log(np.diag(precision))) - np.linalg.slogdet(precision)[1])

    grid = np.linspace(0.0, 1.0, 201)
    best = grid[int(np.argmin([kl(x) for x in grid]))]
    result = scipy.optimize.minimize_scalar(kl, bounds=(max(best - 0.005, 0.0), min(best + 0.005, 1.0)),
                                            method="bounded")
    return float(result.x if result.fun <= kl(best) else best)


def generate(index: int, seed: int) -> tuple[str, dict, dict]:
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


def write_synthetic(out, n: int, seed: int) -> Path:
    """Write ``n`` programs into ``out/train`` (absent or empty) in the corpus layout."""
    root = Path(out)
    if root.exists() and any(root.iterdir()):
        raise ArgumentError(f"{root} is not empty; choose a new folder")
    (root / "train").mkdir(parents=True)
    with open(root / "train" / "index.jsonl", "w", encoding="utf-8") as index:
        for i in range(n):
            text, data, params = generate(i, seed)
            name = f"k{i:05d}"
            (root / "train" / f"{name}.arp").write_text(text, encoding="utf-8")
            (root / "train" / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
            index.write(json.dumps({"id": name, "family": FAMILY, "split": "train", "program": f"{name}.arp",
                                    "data": f"{name}.json", "params": params}) + "\n")
    (root / "manifest.json").write_text(json.dumps({"n": n, "seed": seed, "families": [FAMILY],
                                                    "splits": {"train": n}}, indent=2) + "\n")
    return root

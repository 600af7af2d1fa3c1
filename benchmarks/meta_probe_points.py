"""Why the meta network centres electric and election '88 wrongly: its probes read the prior, not the posterior.

The network's strongest per-element evidence is ``log(s^2 c)`` (paper 000 Section 3's ``log(s^2 q)``,
`autoreparam.graph.probes`): the element's prior scale against the curvature the rest of the model
puts on it, taken at three *prior* points (the centre and one prior standard deviation down and up).
This script takes the same quantity at a *posterior* point, the posterior median of every latent
drawn by ``ar.infer(method="auto")``, and prints it beside the network's lambda, per-model VIP's
lambda (``ar.fit_vip`` with the fit of the meta labels, `LABEL_FIT`; VIP's own lambda, as a label holds it) and the Section 3 rule ``lambda ~ s^2 c / (1 + s^2 c)`` (the
data's share of the element's precision; exact optimum at ``s^2 q = 1``, lambda = 1/2).

    python benchmarks/meta_probe_points.py --out benchmarks/results/meta_probe_points.json

Needs the zoo's data (``AUTOREPARAM_DATA``). A diagnosis, not a benchmark: no timing is read.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

import autoreparam as ar
from autoreparam.graph.features import LOG_CLIP, log_abs
from autoreparam.graph.probes import ELEMENT_FEATURE_NAMES, _log_coordinate, _probe_function, probe_elements
from autoreparam.graph.program import trace_sites
from autoreparam.meta.predict import predict
from autoreparam.coordinates import Coordinates
from autoreparam.models import load
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model
from autoreparam.meta.labels import LABEL_CONFIG

# The fit of the network's training labels (docs/meta.md, "Labels"): `meta.labels.LABEL_CONFIG`.
LABEL_FIT = LABEL_CONFIG
FIT_STEPS, FIT_DRAWS = 500, 8
MODELS = ("eight_schools", "radon_az", "radon_in", "radon_ma", "radon_mn", "radon_mo", "radon_nd", "radon_pa",
          "german_credit", "election88", "electric")
COLUMNS = {name: ELEMENT_FEATURE_NAMES.index(name) for name in
           ("log_scale2_curvature", "low_log_scale2_curvature", "high_log_scale2_curvature")}


def _log_s2c(scale: np.ndarray, curvature: np.ndarray) -> np.ndarray:
    """The probes' ``log(s^2 |c|)``, clipped as the graph's features are."""
    return np.clip(2.0 * log_abs(scale) + log_abs(curvature), -LOG_CLIP, LOG_CLIP)


def _share(log_ratio: np.ndarray) -> np.ndarray:
    """Section 3's rule of thumb ``s^2 c / (1 + s^2 c)`` from its logarithm."""
    return 1.0 / (1.0 + np.exp(-np.asarray(log_ratio, dtype=np.float64)))


def _site_mean(parameterisation: dict, name: str) -> float:
    """A site's mean lambda; NaN where the method leaves it alone (a prior with constant parameters)."""
    return float(np.mean(parameterisation[name])) if name in parameterisation else float("nan")


def ncp_points(model, args, kwargs, steps: int = FIT_STEPS, draws: int = FIT_DRAWS,
               learning_rate: float = 0.05) -> tuple[dict, dict, float]:
    """Two cheap data-informed points in original coordinates, and the seconds both took.

    Both start at the origin of the non-centred program's unconstrained coordinates and take ``steps``
    Adam steps: the *mode* of its log joint (one gradient a step), and the mean of a mean-field
    normal q fitted by the reparameterised ELBO (``draws`` gradients a step; paper 000 Section 4's
    objective at lambda = 0). A joint mode is not typical of a hierarchical posterior: the group
    effects can fit the data exactly with a large group scale, which the mode rewards and the
    ELBO's entropy term does not.
    """
    start = time.perf_counter()
    plan = select_sites(analyse_model(model, *args, **kwargs))
    coords = Coordinates(model, args, kwargs, plan)
    ncp = Parameterisation.non_centred(plan)
    log_joint = lambda x: coords.log_density(coords.unravel(x), ncp)  # noqa: E731
    optimiser = optax.adam(learning_rate)

    def negative_elbo(params, key):
        loc, log_scale = params
        eps = jax.random.normal(key, (draws, loc.size))
        return -(jnp.mean(jax.vmap(log_joint)(loc + jnp.exp(log_scale) * eps)) + jnp.sum(log_scale))

    def minimise(loss, params):
        def step(carry, key):
            params, state = carry
            updates, state = optimiser.update(jax.grad(loss)(params, key), state)
            return (optax.apply_updates(params, updates), state), None

        keys = jax.random.split(jax.random.PRNGKey(0), steps)
        return jax.lax.scan(step, (params, optimiser.init(params)), keys)[0][0]

    @jax.jit
    def run(origin):
        mode = minimise(lambda x, _key: -log_joint(x), origin)
        mean = minimise(negative_elbo, (origin, jnp.full_like(origin, -2.3)))[0]
        return [coords.to_original(coords.unravel(x), ncp) for x in (mode, mean)]

    mode, mean = jax.device_get(run(jnp.zeros(coords.dim)))
    as_numpy = lambda d: {k: np.asarray(v) for k, v in d.items()}  # noqa: E731
    return as_numpy(mode), as_numpy(mean), time.perf_counter() - start


def _probe_at(model, args, kwargs, latents, values: dict, seed: int) -> dict[str, np.ndarray]:
    """Per latent with a family, the elements' ``log(s^2 c)`` at the original values ``values``."""
    coords = tuple(jnp.asarray(np.log(values[s.name]) if _log_coordinate(s) else values[s.name],
                               dtype=jnp.float32).reshape(s.shape) for s in latents)
    probes = jax.device_get(jax.jit(_probe_function(model, args, kwargs, latents, jax.random.PRNGKey(seed)))(coords))
    return {s.name: _log_s2c(np.asarray(scale, np.float64), np.asarray(curvature, np.float64))
            for s, (scale, _loc, curvature) in zip(latents, probes) if s.family is not None}


def diagnose(name: str, seed: int = 0) -> dict:
    problem = load(name)
    model, args, kwargs = problem.model, problem.args, problem.kwargs
    latents = [s for s in trace_sites(model, args, kwargs, seed) if not s.observed]
    prior = dict(zip([s.name for s in latents], probe_elements(model, args, kwargs, latents, seed)))
    meta = predict(model, *args, **kwargs).lam
    mode, mean, points_seconds = ncp_points(model, args, kwargs)

    start = time.perf_counter()
    posterior = ar.infer(model, *args, method="auto", num_chains=4, num_warmup=500, num_samples=500, seed=seed,
                         progress=False, **kwargs)
    # VIP's own lambda, as a training label holds it, whichever fit VIP-HMC would then sample in.
    vip = ar.fit_vip(model, *args, config=LABEL_FIT, discrete=False, seed=seed, **kwargs)
    seconds = time.perf_counter() - start
    median = {s.name: np.median(np.asarray(posterior.samples[s.name]).reshape((-1,) + s.shape), axis=0)
              for s in latents}
    at_posterior = _probe_at(model, args, kwargs, latents, median, seed)
    at_mode = _probe_at(model, args, kwargs, latents, mode, seed)
    at_mean = _probe_at(model, args, kwargs, latents, mean, seed)

    sites = {}
    for site in latents:
        if site.name not in vip.lam:
            continue  # not reparameterised (e.g. a prior with constant parameters): no lambda to compare
        rows = prior[site.name]
        target = np.asarray(vip.lam[site.name], np.float64).reshape(-1)
        rules = {"prior_centre": _share(rows[:, COLUMNS["log_scale2_curvature"]]),
                 "ncp_mode": _share(at_mode[site.name]), "ncp_vi_mean": _share(at_mean[site.name]),
                 "posterior": _share(at_posterior[site.name])}
        sites[site.name] = {
            "elements": site.size,
            "meta_lambda": float(np.mean(meta[site.name])),
            "vip_lambda": float(np.mean(target)),
            "auto_lambda": _site_mean(posterior.parameterisation, site.name),
            **{f"prior_{k}": float(np.median(rows[:, j])) for k, j in COLUMNS.items()},
            "ncp_mode_log_scale2_curvature": float(np.median(at_mode[site.name])),
            "ncp_vi_mean_log_scale2_curvature": float(np.median(at_mean[site.name])),
            "posterior_log_scale2_curvature": float(np.median(at_posterior[site.name])),
            **{f"section3_lambda_at_{k}": float(np.median(v)) for k, v in rules.items()},
            "abs_error_to_vip": {
                "meta": float(np.mean(np.abs(np.asarray(meta[site.name]).reshape(-1) - target))),
                **{f"rule_at_{k}": float(np.mean(np.abs(v - target))) for k, v in rules.items()}},
        }
    return {"model": name, "sites": sites, "ncp_points_seconds": points_seconds, "vip_recommended": vip.recommended,
            "sampling_seconds": seconds, "auto_trustworthy": not posterior.diagnostics.health.warnings}


def _errors(result: dict) -> dict[str, float]:
    """Mean |lambda - VIP's lambda| over the model's reparameterised elements, per predictor."""
    sites = result["sites"].values()
    total = sum(row["elements"] for row in sites)
    keys = next(iter(result["sites"].values()))["abs_error_to_vip"].keys()
    return {k: sum(row["elements"] * row["abs_error_to_vip"][k] for row in sites) / total for k in keys}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/meta_probe_points.json")
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args(argv)
    results = []
    for name in args.models.split(","):
        result = diagnose(name)
        result["mean_abs_error_to_vip"] = _errors(result)
        results.append(result)
        print(f"{name} (NCP mode and VI mean, compilation included: {result['ncp_points_seconds']:.2f} s)")
        for site, row in result["sites"].items():
            print(f"  {site:12s} n={row['elements']:3d} lambda: meta {row['meta_lambda']:.2f} vip {row['vip_lambda']:.2f} "
                  f"auto {row['auto_lambda']:.2f}; log s2c at prior centre/low/high "
                  f"{row['prior_log_scale2_curvature']:.2f} {row['prior_low_log_scale2_curvature']:.2f} "
                  f"{row['prior_high_log_scale2_curvature']:.2f}, NCP mode {row['ncp_mode_log_scale2_curvature']:.2f}, "
                  f"NCP VI mean {row['ncp_vi_mean_log_scale2_curvature']:.2f}, "
                  f"posterior {row['posterior_log_scale2_curvature']:.2f}")
        print("  mean |lambda - VIP|: " + ", ".join(f"{k} {v:.3f}" for k, v in result["mean_abs_error_to_vip"].items()))
    keys = results[0]["mean_abs_error_to_vip"].keys()
    summary = {k: float(np.mean([r["mean_abs_error_to_vip"][k] for r in results])) for k in keys}
    print("over the models: " + ", ".join(f"{k} {v:.3f}" for k, v in summary.items()))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"jax": jax.__version__, "fit_steps": FIT_STEPS, "fit_draws": FIT_DRAWS,
                                          "mean_abs_error_to_vip": summary, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

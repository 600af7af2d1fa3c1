"""Why the meta network centres electric and election '88 wrongly: its probes read the prior, not the posterior.

The network's strongest per-element evidence is ``log(s^2 c)`` (paper 000 Section 3's ``log(s^2 q)``,
`autoreparam.graph.probes`): the element's prior scale against the curvature the rest of the model
puts on it, taken at three *prior* points (the centre and one prior standard deviation down and up).
This script takes the same quantity at a *posterior* point, the posterior median of every latent
drawn by ``ar.infer(method="auto")``, and prints it beside the network's lambda, per-model VIP's
lambda (``ar.infer(method="vip")`` with the fit of the meta labels, `LABEL_FIT`) and the Section 3 rule ``lambda ~ s^2 c / (1 + s^2 c)`` (the
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

import autoreparam as ar
from autoreparam.graph.features import LOG_CLIP, log_abs
from autoreparam.graph.probes import ELEMENT_FEATURE_NAMES, _log_coordinate, _probe_function, probe_elements
from autoreparam.graph.program import trace_sites
from autoreparam.meta.predict import predict
from autoreparam.models import load
from autoreparam.vi.protocol import VIConfig

# The fit of the network's training labels (docs/meta.md, "Labels"): 1000 Adam steps of 32 draws at
# learning rates 0.02 and 0.1, VIP from lambda 0.05, 0.5 and 0.95.
LABEL_FIT = VIConfig(num_steps=1000, num_samples=32, learning_rates=(0.02, 0.1), progress=False)
MODELS = ("electric", "election88", "german_credit", "eight_schools", "radon_mn")
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


def diagnose(name: str, seed: int = 0) -> dict:
    problem = load(name)
    model, args, kwargs = problem.model, problem.args, problem.kwargs
    latents = [s for s in trace_sites(model, args, kwargs, seed) if not s.observed]
    prior = dict(zip([s.name for s in latents], probe_elements(model, args, kwargs, latents, seed)))
    meta = predict(model, *args, **kwargs).lam

    start = time.perf_counter()
    posterior = ar.infer(model, *args, method="auto", num_chains=4, num_warmup=500, num_samples=500, seed=seed,
                         progress=False, **kwargs)
    vip = ar.infer(model, *args, method="vip", kernel="nuts", num_chains=2, num_warmup=200, num_samples=200, seed=seed,
                   vi_config=LABEL_FIT, progress=False, **kwargs)
    seconds = time.perf_counter() - start
    median = {s.name: np.median(np.asarray(posterior.samples[s.name]).reshape((-1,) + s.shape), axis=0)
              for s in latents}
    coords = tuple(jnp.asarray(np.log(median[s.name]) if _log_coordinate(s) else median[s.name],
                               dtype=jnp.float32) for s in latents)
    probes = jax.device_get(jax.jit(_probe_function(model, args, kwargs, latents, seed))(coords))

    sites = {}
    for site, (scale, _loc, curvature) in zip(latents, probes):
        if site.family is None or site.name not in meta:
            continue
        at_posterior = _log_s2c(np.asarray(scale, np.float64), np.asarray(curvature, np.float64))
        rows = prior[site.name]
        sites[site.name] = {
            "elements": site.size,
            "meta_lambda": float(np.mean(meta[site.name])),
            "vip_lambda": _site_mean(vip.parameterisation, site.name),
            "auto_lambda": _site_mean(posterior.parameterisation, site.name),
            **{f"prior_{k}": float(np.median(rows[:, j])) for k, j in COLUMNS.items()},
            "posterior_log_scale2_curvature": float(np.median(at_posterior)),
            "section3_lambda_at_prior_centre": float(np.median(_share(rows[:, COLUMNS["log_scale2_curvature"]]))),
            "section3_lambda_at_posterior": float(np.median(_share(at_posterior))),
        }
    return {"model": name, "sites": sites, "sampling_seconds": seconds,
            "auto_max_rhat_ok": not posterior.diagnostics.health.warnings}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/meta_probe_points.json")
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args(argv)
    results = []
    for name in args.models.split(","):
        result = diagnose(name)
        results.append(result)
        print(name)
        for site, row in result["sites"].items():
            print(f"  {site:12s} n={row['elements']:3d} meta {row['meta_lambda']:.2f} vip {row['vip_lambda']:.2f} auto {row['auto_lambda']:.2f} "
                  f"log s2c prior centre/low/high {row['prior_log_scale2_curvature']:6.2f} "
                  f"{row['prior_low_log_scale2_curvature']:6.2f} {row['prior_high_log_scale2_curvature']:6.2f} "
                  f"posterior {row['posterior_log_scale2_curvature']:6.2f} "
                  f"rule: prior {row['section3_lambda_at_prior_centre']:.2f} "
                  f"posterior {row['section3_lambda_at_posterior']:.2f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"jax": jax.__version__, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Why iHMC's non-centred half diverges on a deep funnel's prior: the gradient it is handed is wrong.

    python benchmarks/ihmc_transport_error.py --out benchmarks/results/ihmc_transport_error.json

Steps the iHMC cycle kernel (mcmc/cycle.py) by hand on the prior of ``z_k ~ N(0, exp(z_{k-1}))``,
depth 3 (fuzz programs 355, 469 and 703 without their observation), at fixed step sizes, and at
every iteration compares the non-centred state it holds (moved there from the centred half by
``spaces.make_transport``) with a fresh evaluation in the non-centred coordinates. Divergent
non-centred half-steps are counted by whether the gradient they started from was off by more than
1, and by how far the centred scale ``exp(z2)`` was past sqrt(float max), beyond which JAX's
derivative of ``x / s`` in ``s`` (``-x * s ** -2``) underflows (docs/reliability_findings.md).
Add ``--x64`` to run in float64. ``results/ihmc_transport_error*_before.json`` are the runs at 95bdbb6,
before the auxiliary densities divided stably (``families.standardised``).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist


def funnel(depth: int = 3):
    z = numpyro.sample("z0", dist.Normal(0.0, 1.0))
    for level in range(1, depth + 1):
        z = numpyro.sample(f"z{level}", dist.Normal(0.0, jnp.exp(z)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--x64", action="store_true")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    jax.config.update("jax_enable_x64", args.x64)

    from autoreparam.coordinates import Coordinates
    from autoreparam.mcmc.cycle import build_cycle_kernel
    from autoreparam.mcmc.spaces import flat_log_density
    from autoreparam.reparam.parameterisation import Parameterisation
    from autoreparam.reparam.selection import select_sites
    from autoreparam.reparam.sites import analyse_model

    coords = Coordinates(funnel, (), {}, select_sites(analyse_model(funnel), "default"))
    params = (Parameterisation.centred(coords.plan), Parameterisation.non_centred(coords.plan))
    init, step = build_cycle_kernel(coords, params)
    ncp_gradient = jax.grad(flat_log_density(coords, params[1]))
    log_steps, num_leapfrog = jnp.log(jnp.array([1e-4, 0.5])), jnp.array([4, 16])
    inverse_mass = jnp.ones((2, coords.dim))

    @jax.jit
    def run(key):
        def body(state, k):
            held = state.spaces[1]
            error = jnp.max(jnp.abs(held.logdensity_grad - ncp_gradient(held.position)))
            moved, info = step(k, state, log_steps, inverse_mass, num_leapfrog)
            return moved, (info.is_divergent, error, state.spaces[0].position[2])

        return jax.lax.scan(body, init(jnp.zeros(coords.dim)), jax.random.split(key, args.iterations))[1]

    divergent, error, z2 = (np.asarray(a) for a in run(jax.random.PRNGKey(0)))
    threshold = float(np.sqrt(np.finfo(np.asarray(z2).dtype).max))
    past = z2 > np.log(threshold)  # the centred scale exp(z2) past sqrt(max)
    ncp_divergent = divergent[:, 1]
    wrong = error > 1.0
    report = {
        "float": str(z2.dtype), "iterations": args.iterations, "step_sizes": [1e-4, 0.5], "num_leapfrog": [4, 16],
        "sqrt_float_max": threshold,
        "divergent": {"centred_half": int(divergent[:, 0].sum()), "non_centred_half": int(ncp_divergent.sum())},
        "non_centred_divergent_from_a_gradient_off_by_more_than_1": int((ncp_divergent & wrong).sum()),
        "non_centred_divergent_with_the_scale_past_sqrt_max": int((ncp_divergent & past).sum()),
        "iterations_with_the_scale_past_sqrt_max": int(past.sum()),
        "max_transported_gradient_error": float(np.nanmax(error)),
        "median_error_where_scale_past_sqrt_max": float(np.nanmedian(error[past])) if past.any() else None,
        "median_error_elsewhere": float(np.nanmedian(error[~past])) if (~past).any() else None,
        "machine": platform.processor() or platform.machine(), "jax": jax.__version__,
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                 cwd=Path(__file__).parent).stdout.strip(),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

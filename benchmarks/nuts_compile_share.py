"""How much of the NUTS segment program's compilation is BlackJAX's NUTS itself.

    python benchmarks/nuts_compile_share.py --models eight_schools,radon_mn,german_credit --repeats 3 \
        --out benchmarks/results/nuts_compile_share.json

`auto`'s first call spends most of its XLA compilation on one program, the NUTS segment
(`mcmc.segments.SegmentSampler`): 3.1 s of 3.9 s on eight schools. Issue 9 asks what makes compilation
slow. Each cell is a fresh process that compiles (ahead of time, ``lower().compile()``) either
``ours``: the segment program for the model (4 chains, 50 transitions, the default NUTSConfig), or
``bare``: BlackJAX's NUTS kernel alone, vmapped over 4 chains and scanned over 50 transitions, on a
standard normal of the model's dimension (no model, no adaptation, no map to the original
coordinates). Their difference bounds what everything of ours in the program (the model's gradient,
the window adaptation, the moves between parameterisations, the draws' map) can cost to compile.
Writes JSON and a markdown table.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fresh_process import ZOO_MODEL, alternating_cells, parse_args, write_report  # noqa: E402

CHILD = ZOO_MODEL + """
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.segments import SegmentSampler
from autoreparam.precision import float_dtype
chains, length = 4, 50
if variant == "ours":
    sampler = SegmentSampler(coords, NUTSConfig(), length)
    param = Parameterisation.tied(plan, 0.5)
    state = sampler.start(jnp.zeros((chains, coords.dim)), jnp.ones(coords.dim), 0.1, 0)
    function = sampler._build()
    args = (coords.data, param, param, jnp.asarray(False), state, jnp.zeros(length, jnp.int32),
            jnp.asarray(0.8, float_dtype()), jnp.asarray(0.0, float_dtype()))
else:
    import blackjax.mcmc.hmc as bj_hmc
    import blackjax.mcmc.nuts as bj_nuts
    kernel = bj_nuts.build_kernel()
    def log_density(x):
        return -0.5 * jnp.sum(x ** 2)
    def function(x, key, step_size, inverse_mass):
        def one(x, key):
            def transition(state, k):
                state, _ = kernel(k, state, log_density, step_size, inverse_mass, 10)
                return state, state.position
            return jax.lax.scan(transition, bj_hmc.init(x, log_density), jax.random.split(key, length))[1]
        return jax.vmap(one)(x, jax.random.split(key, x.shape[0]))
    args = (jnp.zeros((chains, coords.dim)), jax.random.PRNGKey(0), 0.1, jnp.ones(coords.dim))
start = time.perf_counter()
lowered = jax.jit(function).lower(*args)
lowered_at = time.perf_counter()
lowered.compile()
print(json.dumps({"dim": coords.dim, "lower": lowered_at - start, "compile": time.perf_counter() - lowered_at}))
"""

MODELS = ("eight_schools", "radon_mn", "german_credit")


def main(argv=None) -> int:
    args = parse_args(__doc__, MODELS, argv)
    models = args.models
    started = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())
    cells = alternating_cells(CHILD, models, ("ours", "bare"), args.repeats)
    lines = ["| model | dim | ours: compile s (lower s) | bare BlackJAX NUTS: compile s (lower s) | bare / ours (compile) |",
             "|---|---|---|---|---|"]
    for model in models:
        med = {v: {k: float(np.median([c[k] for c in cells if c["model"] == model and c["variant"] == v]))
                   for k in ("lower", "compile")} for v in ("ours", "bare")}
        dim = next(c["dim"] for c in cells if c["model"] == model)
        lines.append(f"| {model} | {dim} | {med['ours']['compile']:.2f} ({med['ours']['lower']:.2f}) | "
                     f"{med['bare']['compile']:.2f} ({med['bare']['lower']:.2f}) | "
                     f"{med['bare']['compile'] / med['ours']['compile']:.2f} |")
    write_report(args.out, started, args.repeats, cells, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

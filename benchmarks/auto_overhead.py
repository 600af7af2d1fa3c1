"""How auto's fixed costs amortise: ESS per second of ``infer(method="auto")`` against NumPyro's NUTS on
the centred model, for growing numbers of draws, measured side by side in one process.

    python benchmarks/auto_overhead.py --model radon_mn --draws 1000,4000,16000 --out results/auto_overhead.json

auto pays a variational fit and a warm-up per candidate parameterisation before it samples; NumPyro's
NUTS pays only its own compilation and warm-up. On a model whose centred form is already good the
extra cost is fixed, so auto's ESS per second approaches NumPyro's as the run grows. Writes JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax
import numpy as np
from numpyro.infer import MCMC, NUTS

import autoreparam as ar
from autoreparam.diagnostics.standard import standard_diagnostics
from autoreparam.models import load


def _numpyro(problem, draws: int, chains: int, seed: int) -> dict:
    start = time.perf_counter()
    mcmc = MCMC(NUTS(problem.model), num_warmup=1000, num_samples=draws, num_chains=chains,
                chain_method="vectorized", progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), *problem.args, **problem.kwargs)
    seconds = time.perf_counter() - start
    samples = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    ess = standard_diagnostics(samples).min_ess_bulk
    return {"seconds": seconds, "min_ess_bulk": ess, "ess_per_second": ess / seconds}


def _auto(problem, draws: int, chains: int, seed: int) -> dict:
    start = time.perf_counter()
    result = ar.infer(problem.model, *problem.args, method="auto", num_chains=chains, num_warmup=1000,
                      num_samples=draws, seed=seed, progress=False, **problem.kwargs)
    seconds = time.perf_counter() - start
    ess = result.diagnostics.standard.min_ess_bulk
    return {"seconds": seconds, "min_ess_bulk": ess, "ess_per_second": ess / seconds, "chosen": result.method,
            "phases": result.timing}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="radon_mn")
    parser.add_argument("--draws", default="1000,4000,16000")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default="results/auto_overhead.json")
    args = parser.parse_args(argv)
    problem = load(args.model, data_dir=args.data_dir)
    rows = []
    for draws in (int(d) for d in args.draws.split(",")):
        ours, theirs = _auto(problem, draws, args.chains, args.seed), _numpyro(problem, draws, args.chains, args.seed)
        rows.append({"draws": draws, "auto": ours, "numpyro_nuts_cp": theirs,
                     "ratio_ess_per_second": ours["ess_per_second"] / theirs["ess_per_second"]})
        print(f"{draws:>6} draws: auto {ours['ess_per_second']:.1f} ESS/s ({ours['seconds']:.1f} s, {ours['chosen']}), "
              f"NumPyro NUTS CP {theirs['ess_per_second']:.1f} ESS/s ({theirs['seconds']:.1f} s), "
              f"ratio {rows[-1]['ratio_ess_per_second']:.2f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"model": args.model, "chains": args.chains, "seed": args.seed, "rows": rows,
                               "jax": jax.__version__}, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

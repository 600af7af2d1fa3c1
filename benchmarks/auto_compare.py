"""`auto` before and after a change, per model and seed: one JSON line each (stdout).

    PYTHONPATH=<checkout>/src python benchmarks/auto_compare.py LABEL eight_schools,radon_mn 0,1 >> FILE.jsonl

Run it once per checkout (the label names the code) and compare the lines: seconds (all phases; the
persistent compilation cache is on, so they include whatever it held, and the machine may be
shared: compare gradients first), warm-up gradients per chain, min bulk ESS (ArviZ) per 1000
gradients of the kept draws, every gradient the call ran (`result.gradients["total"]`: warm-up,
pilots and candidates kept or not, sampling; all chains) and the ESS per 1000 of those, max R-hat,
what auto chose, and whether the result is trustworthy.
4 chains x 1000 warm-up + 1000 draws.
"""
import sys, time, json, warnings
import numpy as np, arviz as az
warnings.filterwarnings("ignore")
import autoreparam as ar
from autoreparam.models import load
out = []
for name in sys.argv[2].split(","):
    p = load(name)
    for seed in [int(s) for s in sys.argv[3].split(",")]:
        t = time.perf_counter()
        r = ar.infer(p.model, *p.args, method="auto", num_chains=4, num_warmup=1000, num_samples=1000, seed=seed, progress=False, **p.kwargs)
        total = time.perf_counter() - t
        idata = r.to_arviz()
        ess = float(min(np.min(v.values) for v in az.ess(idata, method="bulk").data_vars.values()))
        rhat = float(max(np.max(v.values) for v in az.rhat(idata).data_vars.values()))
        all_grads = int(r.gradients["total"])
        rec = dict(code=sys.argv[1], model=name, seed=seed, total_s=round(total, 1), warm_grads=float(np.mean(r.chains.warmup_grad_evals)),
                   ess_per_1000=round(1000 * ess / r.num_grad_evals, 2), all_grads=all_grads,
                   ess_per_1000_all=round(1000 * ess / all_grads, 2), ess_per_s=round(ess / total, 1), rhat=round(rhat, 3),
                   chosen=r.decision[:60], trust=r.trustworthy)
        print(json.dumps(rec), flush=True)

"""`auto` before and after a change, per model and seed: one JSON line each (stdout).

    PYTHONPATH=<checkout>/src python benchmarks/auto_compare.py LABEL eight_schools,radon_mn 0,1 >> FILE.jsonl

Run it once per checkout (the label names the code) and compare the lines: seconds (all phases; the
persistent compilation cache is on, so they include whatever it held, and the machine may be
shared: compare gradients first), warm-up gradients per chain, min bulk ESS (ArviZ) per 1000
gradients of the kept draws, every gradient the call ran (`result.gradients["total"]`: warm-up,
pilots and candidates kept or not, sampling; all chains) and the ESS per 1000 of those, max R-hat,
what auto chose, whether the result is trustworthy, and whether its draws were drawn again (at a
higher acceptance, or in CP or NCP: ``in_fixed``) or run on (``ran_on``).
4 chains x 1000 warm-up + 1000 draws. A name ``program:N`` is generated program N of the corpus
(``generate_program(N, 0)``, the fuzzing's), run as the invariance check runs it: 500 warm-up
transitions, its seed ``stable_seed("invariance", 0, N, "")`` (the seeds argument is then ignored).
"""
import sys, time, json, warnings
import numpy as np, arviz as az
warnings.filterwarnings("ignore")
import autoreparam as ar
from autoreparam.models import load
out = []



def problem(name):
    """``(model, args, kwargs, warm-up, seeds or None)``: a zoo model, or a generated program."""
    if name.startswith("program:"):
        from autoreparam.corpus import generate_program
        from autoreparam.lang import compile_program
        from autoreparam.reliability.sbc import stable_seed
        index = int(name.split(":")[1])
        program = generate_program(index, 0)[1]
        model, _, data = compile_program(program.text, program.data)
        return model, (), data, 500, [stable_seed("invariance", 0, index, "")]
    p = load(name)
    return p.model, p.args, p.kwargs, 1000, None


for name in sys.argv[2].split(","):
    model, args, kwargs, num_warmup, seeds = problem(name)
    for seed in seeds or [int(s) for s in sys.argv[3].split(",")]:
        t = time.perf_counter()
        r = ar.infer(model, *args, method="auto", num_chains=4, num_warmup=num_warmup, num_samples=1000, seed=seed, progress=False, **kwargs)
        total = time.perf_counter() - t
        idata = r.to_arviz()
        ess = float(min(np.min(v.values) for v in az.ess(idata, method="bulk").data_vars.values()))
        rhat = float(max(np.max(v.values) for v in az.rhat(idata).data_vars.values()))
        all_grads = int(r.gradients["total"])
        rec = dict(code=sys.argv[1], model=name, seed=seed, total_s=round(total, 1), warm_grads=float(np.mean(r.chains.warmup_grad_evals)),
                   ess_per_1000=round(1000 * ess / r.num_grad_evals, 2), all_grads=all_grads,
                   ess_per_1000_all=round(1000 * ess / all_grads, 2), ess_per_s=round(ess / total, 1), rhat=round(rhat, 3),
                   divergences=int(np.sum(r.chains.divergences)), chosen=r.decision[:60], trust=r.trustworthy,
                   redrawn="drawn again" in r.decision, in_fixed="the draws were drawn again in" in r.decision,
                   ran_on="ran on for as many again" in r.decision)
        print(json.dumps(rec), flush=True)

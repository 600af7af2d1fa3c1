"""Experiment: cap NUTS tree depth during the warm-up before the first rule switch (gradients are the metric)."""
import sys, time, json, warnings, dataclasses
import numpy as np, arviz as az
warnings.filterwarnings("ignore")
import autoreparam as ar
import autoreparam.auto as A
from autoreparam.mcmc.segments import SegmentSampler
from autoreparam.models import load
CAP = int(sys.argv[1])
orig_segments = A._Run.segments
def segments(self, phase, param, chains, codes, source=None, target=None, stop=None):
    if phase == "warmup" and not getattr(self, "_first_done", False) and CAP > 0:
        self._first_done = True
        full = self.sampler
        if not hasattr(self, "_capped"):
            self._capped = SegmentSampler(self.coords, dataclasses.replace(self.config, max_num_doublings=CAP), full.segment_length)
        self.sampler = self._capped
        try:
            return orig_segments(self, phase, param, chains, codes, source, target, stop)
        finally:
            self.sampler = full
    return orig_segments(self, phase, param, chains, codes, source, target, stop)
A._Run.segments = segments
for name in sys.argv[2].split(","):
    p = load(name)
    for seed in [int(s) for s in sys.argv[3].split(",")]:
        t = time.perf_counter()
        r = ar.infer(p.model, *p.args, method="auto", num_chains=4, num_warmup=1000, num_samples=1000, seed=seed, progress=False, **p.kwargs)
        total = time.perf_counter() - t
        idata = r.to_arviz()
        ess = float(min(np.min(v.values) for v in az.ess(idata, method="bulk").data_vars.values()))
        rhat = float(max(np.max(v.values) for v in az.rhat(idata).data_vars.values()))
        wg = np.asarray(r.chains.warmup_grad_evals)
        rec = dict(code=f"cap{CAP}", model=name, seed=seed, total_s=round(total, 1), warm_grads=float(np.mean(wg)),
                   ess_per_1000=round(1000 * ess / r.num_grad_evals, 2), ess_per_s=round(ess / total, 1), rhat=round(rhat, 3),
                   total_grads=int(r.num_grad_evals), chosen=r.decision[:60], trust=r.trustworthy)
        print(json.dumps(rec), flush=True)

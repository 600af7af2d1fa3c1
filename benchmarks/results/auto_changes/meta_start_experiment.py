"""Experiment: start `auto`'s warm-up in the meta-learned network's centring instead of the rule's.

    PYTHONPATH=<checkout>/src python benchmarks/results/auto_changes/meta_start_experiment.py LABEL MODELS SEEDS [meta]

Issue 11 asks that `auto` use the prediction where it saves time and never where it loses. `auto`
runs no variational fit, so the one place a prediction can enter is the lambda its warm-up starts
in, the rule's lambda at the initial values, used until the first rule switch (after the first long
slow window, ``auto.rule_switches``). With the fourth argument ``meta``, this patches ``auto._Run``
so that its first ``lambda_at`` returns the shipped network's prediction (``meta.predict``) for the
model instead; every later re-evaluation is the rule's, as before. (Since `auto` reads its first lambda at
the origin, ``lambda_at_origin``, that call is the one patched: at d080f63, where the first run was
made, it was the first ``lambda_at``.) Without it, `auto` runs unchanged
(the baseline, same process and machine). One JSON line per model and seed, the fields of
``benchmarks/auto_compare.py`` plus the prediction's seconds (graph and network, compilation
included; the first model pays the network's compilation).
"""
import json
import sys
import time
import warnings

import arviz as az
import numpy as np

warnings.filterwarnings("ignore")
import autoreparam as ar  # noqa: E402
import autoreparam.auto as auto  # noqa: E402
from autoreparam.meta.predict import predict  # noqa: E402
from autoreparam.models import load  # noqa: E402

LABEL, MODELS, SEEDS = sys.argv[1], sys.argv[2].split(","), [int(s) for s in sys.argv[3].split(",")]
USE_META = len(sys.argv) > 4 and sys.argv[4] == "meta"
_lambda_at, _lambda_at_origin = auto._Run.lambda_at, auto._Run.lambda_at_origin
STATE = {"prediction": None}


def lambda_at(self, flat_points):
    # The warm-up's first lambda, where the origin's density was not finite (another start was found).
    if USE_META and not getattr(self, "_started", False):
        self._started = True
        return STATE["prediction"].parameterisation(self.coords.plan)
    return _lambda_at(self, flat_points)


def lambda_at_origin(self):
    param, origin, finite = _lambda_at_origin(self)
    if USE_META and finite:
        self._started = True
        return STATE["prediction"].parameterisation(self.coords.plan), origin, finite
    return param, origin, finite


auto._Run.lambda_at, auto._Run.lambda_at_origin = lambda_at, lambda_at_origin
for name in MODELS:
    problem = load(name)
    for seed in SEEDS:
        start = time.perf_counter()
        prediction_seconds = None
        if USE_META:
            STATE["prediction"] = predict(problem.model, *problem.args, seed=seed, **problem.kwargs)
            prediction_seconds = round(STATE["prediction"].seconds["total"], 2)
        r = ar.infer(problem.model, *problem.args, method="auto", num_chains=4, num_warmup=1000, num_samples=1000,
                     seed=seed, progress=False, **problem.kwargs)
        total = time.perf_counter() - start
        idata = r.to_arviz()
        ess = float(min(np.min(v.values) for v in az.ess(idata, method="bulk").data_vars.values()))
        rhat = float(max(np.max(v.values) for v in az.rhat(idata).data_vars.values()))
        all_grads = int(r.gradients["total"])
        print(json.dumps(dict(code=LABEL, model=name, seed=seed, start="meta" if USE_META else "rule",
                              prediction_s=prediction_seconds, total_s=round(total, 1),
                              warm_grads=float(np.mean(r.chains.warmup_grad_evals)), all_grads=all_grads,
                              ess_per_1000=round(1000 * ess / r.num_grad_evals, 2),
                              ess_per_1000_all=round(1000 * ess / all_grads, 2), rhat=round(rhat, 3),
                              chosen=r.decision[:60], trust=r.trustworthy)), flush=True)

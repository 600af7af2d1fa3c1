"""Evidence behind ``auto``: NUTS in the Section 3 rule's lambda against CP and NCP, per gradient.

    python benchmarks/rule_lambda.py --out results/rule_lambda --report benchmarks/results/rule_lambda.md

For each zoo model: NUTS (4 chains, 1000 warm-up, 1000 draws, the library's segment sampler, one
executable for everything) in four parameterisations: the rule's lambda at the initial values
("rule at the prior median"), the rule's lambda averaged over draws of the second half of that
warm-up ("rule at posterior draws", what ``auto`` learns), CP and NCP. Score: pooled bulk ESS (min
over elements) per 1000 gradient evaluations, R-hat and divergences. One JSON per model.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from autoreparam.auto.rule_lambda import RuleLambda
from autoreparam.coordinates import Coordinates
from autoreparam.diagnostics.standard import standard_diagnostics
from autoreparam.initial import initial_values
from autoreparam.mcmc.config import NUTSConfig
from autoreparam.mcmc.segments import SegmentSampler, sample_codes, warmup_codes
from autoreparam.models import load
from autoreparam.reparam import Parameterisation, analyse_model, select_sites

MODELS = ("eight_schools", "radon_mn", "radon_pa", "radon_az", "radon_in", "radon_ma", "radon_mo", "radon_nd",
          "german_credit", "electric", "election88", "hierarchical_linear", "sparse_logistic")


def run_model(name: str, seed: int) -> dict:
    problem = load(name)
    structure = analyse_model(problem.model, *problem.args, **problem.kwargs)
    plan = select_sites(structure, "default")
    coords = Coordinates(problem.model, problem.args, problem.kwargs, plan)
    init, free = initial_values(problem.model, problem.args, problem.kwargs, structure.names, unconstrained=True)
    sampler = SegmentSampler(coords, NUTSConfig(num_warmup=1000, num_samples=1000), 50)
    rule = RuleLambda(coords, seed)
    centred = Parameterisation.centred(plan)
    start = np.asarray(coords.ravel(free))[None] + np.random.default_rng(seed).uniform(-1, 1, (4, coords.dim))

    def nuts(param):
        chains = sampler.start(start.astype(np.float32), np.ones(coords.dim), 1.0, seed)
        chains, warm, _ = sampler.run(param, chains, warmup_codes(1000), source=centred)
        chains, draws, _ = sampler.run(param, chains, sample_codes(1000))
        standard = standard_diagnostics(coords.split_original(draws.draws))
        return warm, {"ess_per_1000_grads": 1000 * standard.min_ess_bulk / float(draws.steps.sum()),
                      "max_r_hat": standard.max_r_hat, "divergences": int(draws.divergent.sum()),
                      "grads_per_transition": float(draws.steps.mean()),
                      "lambda": {n: np.asarray(v).ravel().tolist() for n, v in param.lam.items()}}

    prior = rule.lambda_at(coords.ravel_original(init)[None])
    warm, rows = nuts(prior)
    out = {"rule at the prior median": rows}
    posterior = rule.lambda_at(warm.draws[:, 500:].reshape(-1, coords.original_dim))
    out["rule at posterior draws"] = nuts(posterior)[1]
    out["cp"] = nuts(centred)[1]
    out["ncp"] = nuts(Parameterisation.non_centred(plan))[1]
    return out


def report(results: dict) -> str:
    labels = ("rule at the prior median", "rule at posterior draws", "cp", "ncp")
    lines = ["| model | " + " | ".join(labels) + " | rule (posterior) / better of CP, NCP |",
             "|---|" + "---|" * (len(labels) + 1)]
    for name, rows in results.items():
        cells = [f"{rows[k]['ess_per_1000_grads']:.2f} (R-hat {rows[k]['max_r_hat']:.3f})" for k in labels]
        best = max(rows["cp"]["ess_per_1000_grads"], rows["ncp"]["ess_per_1000_grads"])
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {rows['rule at posterior draws']['ess_per_1000_grads'] / best:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results/rule_lambda")
    parser.add_argument("--report", default=None)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for name in args.models.split(","):
        path = out / f"{name}__s{args.seed}.json"
        if not path.exists():
            path.write_text(json.dumps(run_model(name, args.seed)))
        results[name] = json.loads(path.read_text())
        print(name, {k: round(v["ess_per_1000_grads"], 2) for k, v in results[name].items()}, flush=True)
    text = report(results)
    print(text)
    if args.report:
        Path(args.report).write_text(
            "# The Section 3 rule's lambda against CP and NCP (benchmarks/rule_lambda.py)\n\n"
            "Pooled bulk ESS (min over elements) per 1000 gradient evaluations; NUTS, 4 chains x 1000 warm-up + "
            f"1000 draws, seed {args.seed}.\n\n" + text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Two META.md evaluations side by side, on the models both ran (say, one network against its successor).

    python scripts/compare_meta_evals.py OLD_RESULTS NEW_RESULTS --out docs/meta_ensemble_vs_seed0.json

Writes JSON (every number) and prints a markdown table. Each evaluation reran every method on its
models (VIP, CP and NCP too), so a difference also carries the Monte Carlo noise of both runs: the
ESS rows come from one NUTS seed of 700 draws per chain under the short protocols.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from autoreparam.meta_eval.collect import Results, ess, regret, section3_error


def _by_name(rows: list[dict]) -> dict[str, dict]:
    return {r["name"]: r for r in rows}


def summary(results: Results, names: set[str], funnel_names: set[str]) -> dict:
    models = [r for r in results.held_out + results.zoo if r["name"] in names]
    funnel = [r for r in results.funnel if r["name"] in funnel_names and "nuts" in r]
    regrets = np.array([regret(r, "meta") for r in models])
    ratios = np.array([ess(r, "meta") / ess(r, "vip") for r in models if "nuts" in r])
    funnel_ratios = np.array([ess(r, "meta") / ess(r, "vip") for r in funnel])
    credit = _by_name(results.zoo).get("german_credit")
    return {
        "section3_error": section3_error(results.section3, "meta"),
        "models": sorted(names),
        "elbo_regret_median": float(np.median(regrets)),
        "elbo_below_half_nat": [r["name"] for r, g in zip(models, regrets) if g < -0.5],
        "elbo_regret_worst": float(np.min(regrets)),
        "elbo_regret": {r["name"]: float(g) for r, g in zip(models, regrets)},
        "german_credit_share_of_vip_gain": regret(credit, "meta") / regret(credit, "vip") if credit else None,
        "ess_ratio_median": float(np.median(ratios)),
        "funnel_points": len(funnel),
        "funnel_share_at_least_0.9": float(np.mean(funnel_ratios >= 0.9)),
        "funnel_ratio_median": float(np.median(funnel_ratios)),
        "prototype_funnel_share_at_least_0.9": float(np.mean([ess(r, "prototype") / ess(r, "vip") >= 0.9 for r in funnel])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    old, new = Results.load(args.old), Results.load(args.new)
    names = set(_by_name(old.held_out + old.zoo)) & set(_by_name(new.held_out + new.zoo))
    funnel_names = set(_by_name(old.funnel)) & set(_by_name(new.funnel))
    payload = {"old": {"results": args.old, "networks": old.protocol.get("networks"), **summary(old, names, funnel_names)},
               "new": {"results": args.new, "networks": new.protocol.get("networks"), **summary(new, names, funnel_names)}}
    Path(args.out).write_text(json.dumps(payload, indent=1) + "\n")
    rows = [("Section 3 error (27 models)", "section3_error"), ("median ELBO - best fixed (nat)", "elbo_regret_median"),
            ("worst ELBO - best fixed (nat)", "elbo_regret_worst"),
            ("German credit: share of VIP's ELBO gain", "german_credit_share_of_vip_gain"),
            ("median ESS/grad ratio to VIP", "ess_ratio_median"),
            ("funnel: share of points >= 0.9x VIP", "funnel_share_at_least_0.9"),
            ("funnel: median ratio to VIP", "funnel_ratio_median"),
            ("funnel: prototype's share >= 0.9x VIP (same runs)", "prototype_funnel_share_at_least_0.9")]
    print(f"| on the {len(names)} models and {payload['new']['funnel_points']} funnel points both ran | old | new |")
    print("| --- | --- | --- |")
    for label, key in rows:
        print(f"| {label} | {payload['old'][key]:.3g} | {payload['new'][key]:.3g} |")
    print(f"| models below -0.5 nat | {', '.join(payload['old']['elbo_below_half_nat'])} | "
          f"{', '.join(payload['new']['elbo_below_half_nat'])} |")


if __name__ == "__main__":
    main()

"""Two labels of `benchmarks/auto_compare.py`'s lines side by side, with geometric-mean ratios.

    python benchmarks/auto_compare_pairs.py CELLS.jsonl BEFORE AFTER > pairs.txt

Per model and seed: ESS per 1000 of every gradient of the call, per 1000 gradients of the kept
draws, ESS per second, R-hat, trust and divergences, BEFORE then AFTER. Then the geometric mean of
AFTER / BEFORE over the pairs, and ESS per second again over seeds other than 0 (the first call
of a model in a process may compile; later seeds reuse its programs).
"""
import collections
import json
import math
import sys

COLUMNS = ("ess_per_1000_all", "ess_per_1000", "ess_per_s")


def main(path: str, before: str, after: str) -> None:
    rows = [json.loads(line) for line in open(path) if line.startswith("{")]
    cells = {(r["code"], r["model"], r["seed"]): r for r in rows}
    logs = collections.defaultdict(list)
    print(f"{'model':14} seed  ess/1000 all   ess/1000 draws   ess/s   r-hat   trust   divergences")
    for model in dict.fromkeys(r["model"] for r in rows):
        for seed in sorted({r["seed"] for r in rows if r["model"] == model}):
            if (before, model, seed) not in cells or (after, model, seed) not in cells:
                continue
            x, y = cells[(before, model, seed)], cells[(after, model, seed)]
            for key in COLUMNS:
                logs[key].append(math.log(y[key] / x[key]))
            if seed != 0:
                logs["ess_per_s, seeds other than 0"].append(math.log(y["ess_per_s"] / x["ess_per_s"]))
            print(f"{model:14} {seed}  " + "  ".join(f"{x[k]:8.2f} {y[k]:8.2f}" for k in COLUMNS)
                  + f"  {x['rhat']} {y['rhat']}  {x['trust']} {y['trust']}  {x['divergences']} {y['divergences']}")
    for key, values in logs.items():
        print(f"{key}: {after} / {before} geometric mean {math.exp(sum(values) / len(values)):.3f} over "
              f"{len(values)}, {math.exp(min(values)):.2f} to {math.exp(max(values)):.2f}")


if __name__ == "__main__":
    main(*sys.argv[1:4])

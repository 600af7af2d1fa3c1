"""``autoreparam meta report``: META.md and its figures, generated from evaluation results.

Every number in META.md comes from the JSON files under the results folder (and the training runs'
cards); the hand-written reading, if ``docs/meta_reading.md`` exists in the checkout, is appended as is.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from autoreparam.errors import ArgumentError
from autoreparam.meta.files import write_text
from autoreparam.meta.predict import SHIPPED
from autoreparam.meta_eval import figures
from autoreparam.meta_eval.collect import Results, best_fixed, ess, errors, machine_names, regret, section3_error
from autoreparam.meta_eval.protocol import METHOD_NAMES, METHODS
from autoreparam.meta_eval.targets import _fmt, targets

READING = Path(__file__).resolve().parents[3] / "docs" / "meta_reading.md"


def _table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def _targets_section(results: Results) -> list[str]:
    mark = {True: "met", False: "**missed**", None: "not measured"}
    rows = [[t["target"], t["measured"], mark[t["met"]], t["detail"]] for t in targets(results)]
    return ["## Targets", ""] + _table(["target", "measured", "", "detail"], rows) + [""]


def _runs_section(runs: list[Path], results: Results) -> list[str]:
    lines = ["## What ran", ""]
    name = results.protocol.get("protocol", {}).get("name", "?")
    setting = json.dumps(results.protocol.get("protocol", {}))
    where = results.machines()
    names = machine_names(where)
    if len(names) > 1:  # parts ran on different machines: say where
        lines.append(f"Protocol `{name}`: `{setting}`. Where the tasks ran:")
        lines.append("")
        lines += [f"- {part}: " + "; ".join(f"{n} on `{m}`" for m, n in counts.items()) for part, counts in where.items()]
    else:
        machine = names[0] if names else results.protocol.get("machine", "?")
        lines.append(f"Evaluation on `{machine}`, protocol `{name}`: `{setting}`.")
    lines.append("")
    rows = []
    for run in runs:
        card_path = run / "meta_gnn.json"
        if not card_path.exists():
            continue
        record = json.loads(card_path.read_text())["record"]
        seconds = record.get("seconds", {})
        total = sum(v for v in seconds.values())
        rows.append([run.name, record.get("seed"), record.get("num_models"), record.get("steps"),
                     f"{seconds.get('regression', 0):.0f}", f"{seconds.get('objective_compile', 0):.0f}",
                     f"{seconds.get('elbo', 0):.0f}", f"{total / 60:.1f}", record.get("machine", "?")])
    if rows:
        lines += _table(["run", "seed", "training models", "steps", "warm start (s)", "ELBO objectives compiled (s)",
                         "ELBO phase (s)", "total (min)", "machine"], rows) + [""]
    return lines


def _section3(results: Results) -> list[str]:
    if not results.section3:
        return []
    labels = [n for n in ["meta"] + results.other_networks if n in results.section3[0]] + ["prototype"]
    rows = [[f"{r['q']:.3g}", f"{r['sigma_mu']:g}", f"{r['best']:.3f}"] + [f"{r.get(n, float('nan')):.3f}" for n in labels]
            for r in results.section3]
    means = ["mean abs error", "", ""] + [f"{section3_error(results.section3, n):.3f}" for n in labels]
    return (["## Section 3: Gaussian hierarchies with a known optimum", "",
             "theta ~ N(0, 1), mu ~ N(theta, sigma_mu), y_n ~ N(mu, sigma) (10 observations, q = N / sigma^2); "
             "lambda* minimises the condition number under the best diagonal preconditioner (paper 000 "
             "Appendix A, `autoreparam.analysis.best_lambda`). CP, NCP and 0.5 have mean errors "
             f"{section3_error([dict(r, c=1.0) for r in results.section3], 'c'):.3f}, "
             f"{section3_error([dict(r, c=0.0) for r in results.section3], 'c'):.3f} and "
             f"{section3_error([dict(r, c=0.5) for r in results.section3], 'c'):.3f}.", "",
             "![Section 3](figures/meta/section3.png)", ""]
            + _table(["q", "sigma_mu", "lambda*"] + labels, rows + [means]) + [""])


def _ess_table(rows: list[dict], title: str) -> list[str]:
    sampled = [r for r in rows if "nuts" in r]
    if not sampled:
        return []
    body = []
    for r in sampled:
        values = [ess(r, m) for m in METHODS]
        hats = max(run["max_r_hat"] for m in METHODS for run in r["nuts"].get(m, []))
        body.append([r["name"]] + [_fmt(v) for v in values] + [_fmt(ess(r, "meta") / ess(r, "vip")), _fmt(hats)])
    return ([f"{title}: ESS per 1000 gradient evaluations (min over elements of pooled bulk ESS, mean over seeds)", ""]
            + _table(["model"] + [METHOD_NAMES[m] for m in METHODS] + ["meta / VIP", "max R-hat"], body) + [""])


def _elbo_table(rows: list[dict], title: str, extra: list[str]) -> list[str]:
    if not rows:
        return []
    methods = ["half", "vip", "meta", "meta_vip", "prototype"] + extra
    body = []
    for r in rows:
        label, value = best_fixed(r)
        body.append([r["name"], f"{value:.2f} ({label.upper()})", _fmt(r["elbo_se"].get(label))]
                    + [f"{regret(r, m):+.2f}" for m in methods])
    return ([f"{title}: ELBO minus the best fixed ELBO (nats; + is better than both CP and NCP)", ""]
            + _table(["model", "best fixed ELBO", "s.e."] + [METHOD_NAMES.get(m, m) for m in methods], body) + [""])


def _timing(results: Results) -> list[str]:
    if not results.timing:
        return []
    body = []
    for t in results.timing:
        warm = t.get("predict_first_warm_cache_seconds")  # absent in evaluations before fresh-process timing
        body.append([t["name"], f"{t['predict_first_seconds']:.2f}", "n/a" if warm is None else f"{warm:.2f}",
                     f"{t['predict_again_seconds']:.2f}",
                     f"{t['vip_time_to_lambda']:.1f}", f"{100 * t['predict_again_seconds'] / t['vip_time_to_lambda']:.2f}%",
                     _fmt(t["meta"]["time_to_1000_ess"]), _fmt(t["vip"]["time_to_1000_ess"]),
                     _fmt(t["meta"]["ess_per_1000_grads"]), _fmt(t["vip"]["ess_per_1000_grads"])])
    return (["Time to lambda and to 1,000 effective draws (seconds; `ar.infer(method='meta')` against "
             "`ar.infer(method='vip', kernel='nuts')` with the paper's VI protocol; 4 chains, 1000 warm-up). "
             "A first call runs in a fresh process with an empty persistent compilation cache, then again with "
             "what it left there (`meta_eval/first_prediction.py`)", ""]
            + _table(["model", "predict, first call", "first call, warm cache", "predict, again", "VIP's fit",
                      "again / VIP",
                      "meta: time to 1000 ESS", "VIP: time to 1000 ESS", "meta ESS/1000 grads",
                      "VIP ESS/1000 grads"], body) + [""])


def _robustness(results: Results) -> list[str]:
    if not results.robustness:
        return []
    body = [[r["case"], r["elements"], f"{r['seconds']:.1f}", r["finite"] and r["in_unit_interval"],
             f"{r['lambda_min']:.3f} .. {r['lambda_max']:.3f}", r["log_density_finite"], r["prototype_finite"]]
            for r in results.robustness]
    return (["## Robustness", ""] + _table(["case", "latent elements", "graph + predict (s)", "finite, in [0, 1]",
                                            "lambda range", "log density finite at start", "prototype finite"], body) + [""])


def _seeds(results: Results) -> list[str]:
    labels = ["meta"] + results.other_networks
    models = results.seeds.get("held_out", []) + results.seeds.get("zoo", [])
    if len(labels) < 2 or not models:
        return []
    funnel = results.seeds.get("funnel", [])
    body = []
    for label in labels:
        regrets = np.array([regret(r, label) for r in models if label in r["elbo"]])
        funnel_regrets = np.array([regret(r, label) for r in funnel if label in r["elbo"]])
        body.append([label, _fmt(section3_error(results.section3, label)), _fmt(np.nanmedian(regrets)),
                     f"{int(np.sum(regrets < -0.5))} of {regrets.size}", _fmt(np.nanmin(regrets)),
                     _fmt(np.nanmedian(funnel_regrets)) if funnel_regrets.size else "n/a"])
    return (["## Stability over training seeds", "",
             "`meta` is the evaluated network (the shipped one: the ensemble of the training seeds, their lambda "
             "averaged, `meta/ensemble.py`); `seed_0`, `seed_1`, ... are single networks of the same training with "
             "different seeds, and `.../warm_start` the networks after the warm start alone (the ablation of the "
             "ELBO phase). Each is scored by the ELBO of its centring (q fitted, no NUTS) on the same models.", ""]
            + _table(["network", "Section 3 error", "median ELBO - best fixed (held-out + zoo)", "models below -0.5 nat",
                      "worst", "funnel: median ELBO - best fixed"], body) + [""])


def _not_run(results: Results) -> list[str]:
    """What the evaluation set out to measure but has no result for (a run stopped for time, say)."""
    from autoreparam.meta_eval.models import spec_name
    from autoreparam.meta_eval.protocol import FUNNEL_SIGMA, FUNNEL_Y, ZOO

    have = {"zoo": {r["name"] for r in results.zoo}, "timing": {t["name"] for t in results.timing},
            "funnel": {r["name"] for r in results.funnel}}
    funnel = [spec_name({"kind": "funnel", "y": y, "sigma": s}) for y in FUNNEL_Y for s in FUNNEL_SIGMA]
    rows = [["zoo (ELBO + NUTS)", ", ".join(n for n in ZOO if n not in have["zoo"]) or "-"],
            ["zoo end-to-end timing", ", ".join(n for n in ZOO if n not in have["timing"]) or "-"],
            ["funnel grid points", f"{sum(n not in have['funnel'] for n in funnel)} of {len(funnel)} missing"]]
    per_split = results.protocol.get("protocol", {}).get("held_out_per_split")
    if per_split:
        rows.append(["held-out generated models", f"{len(results.held_out)} of {3 * per_split} run"])
    others = results.other_networks
    if others:
        done = sum(len(v) for v in results.seeds.values())
        rows.append(["other seeds' ELBO-only models", f"{done} of {len(funnel) + 11 + 3 * (per_split or 0)} run"])
    return (["## Not run", "", "Planned by the protocol but without a result (every target above is computed "
             "over what did run; a missing model is not counted as met).", ""]
            + _table(["part", "missing"], rows) + [""])


def write_report(results_dir, out=".", runs=()) -> Path:
    results = Results.load(results_dir)
    out = Path(out)
    figure_dir = out / "figures" / "meta"
    figure_dir.mkdir(parents=True, exist_ok=True)
    runs = [Path(r) for r in runs]
    for run in runs:
        # A folder without a run's card (a training --out rather than its seed_<s>, or a typo) was left
        # out of the report without a word (found in review).
        if not (run / "meta_gnn.json").exists():
            inside = sorted(p.name for p in run.glob("seed_*") if (p / "meta_gnn.json").exists()) if run.is_dir() else []
            hint = f"; it holds the runs {', '.join(inside)}: name them" if inside else ""
            raise ArgumentError(f"--runs {run}: no trained run there (no meta_gnn.json){hint}")
    # Figures only from this call: a stale one in a reused --out was linked as if current (found in review).
    written = set()
    for name, draw in (("funnel_lambda.png", lambda path: figures.funnel_maps(results, path)),
                       ("section3.png", lambda path: figures.section3_figure(results, path)),
                       ("ess_ratio.png", lambda path: figures.ess_ratio_figure(results, path)),
                       ("training.png", lambda path: figures.training_figure(runs, path))):
        (figure_dir / name).unlink(missing_ok=True)
        if draw(figure_dir / name) is not None:
            written.add(name)
    extra = []
    lines = ["# The meta-learned parameterisation: measurements", "",
             f"Generated by `autoreparam meta report --results {Path(results_dir).as_posix()}"
             + (f" --runs {','.join(r.as_posix() for r in runs)}" if runs else "") + "` from the evaluation's JSON files "
             "(`autoreparam meta evaluate`); docs/meta.md describes the method. Methods: "
             + ", ".join(f"{m} = {METHOD_NAMES[m]}" for m in METHODS) + ".", ""]
    lines += _targets_section(results) + _runs_section(runs, results)
    if runs:
        lines += ["![training](figures/meta/training.png)", ""]
    lines += _section3(results)
    if results.funnel:
        lines += ["## Paper 003's funnel grid", "",
                  "z ~ N(0, 1), x ~ N(0, e^z), y ~ N(x, sigma) at y in {-20, -10, 0, 10, 20} and "
                  "sigma in {0.1, 5.075, 10.05, 15.025, 20}.", "", "![funnel lambda](figures/meta/funnel_lambda.png)", ""]
        lines += _ess_table(results.funnel, "Funnel grid") + _elbo_table(results.funnel, "Funnel grid", extra)
    lines += ["## Held-out generated models", ""] + _elbo_table(results.held_out, "Held-out", extra)
    lines += _ess_table(results.held_out, "Held-out")
    lines += ["## The zoo (never seen in training)", ""] + _elbo_table(results.zoo, "Zoo", extra)
    lines += _ess_table(results.zoo, "Zoo") + _timing(results)
    lines += ["![ESS ratios](figures/meta/ess_ratio.png)", ""] + _robustness(results) + _seeds(results)
    lines += _not_run(results)
    failed = sum((errors(results.root / p) for p in ("funnel", "held_out", "zoo", "timing")), [])
    if failed:
        lines += ["## Tasks that failed", ""] + _table(["file", "error"], [[f["file"], f["error"][:200]] for f in failed]) + [""]
    if READING.exists() and results.protocol.get("network_name") == SHIPPED:
        lines += [READING.read_text()]  # it reads the shipped network's evaluation, no other
    lines = [line for line in lines if not (line.startswith("![") and "figures/meta/" in line
                                            and line.split("figures/meta/")[1].split(")")[0] not in written)]
    return write_text(out / "META.md", "\n".join(lines) + "\n")

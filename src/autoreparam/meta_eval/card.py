"""The default network's model card (``meta/weights/MODEL_CARD_fit.md``), written from its JSON card
and the evaluation results, so that it never disagrees with them."""

from __future__ import annotations

import json
from pathlib import Path

from autoreparam.meta.files import write_text
from autoreparam.meta.weights import read_card
from autoreparam.meta_eval.collect import Results, machine_names
from autoreparam.meta_eval.targets import targets


def _others_differ(members: list[dict]) -> str:
    """How the other members' configurations differ from the first's: only in the seed, or more."""
    if len(members) < 2:
        return ""
    strip = [{k: v for k, v in m.get("config", {}).items() if k != "seed"} for m in members]
    return ("; the others differ only in the seed" if all(c == strip[0] for c in strip[1:])
            else "; the others' configurations differ, see the JSON card")


def _network_lines(stem: Path, title: str, loaded_by: str) -> list[str]:
    """The card's title, files, architecture and training sections, from the weights' JSON card."""
    card = read_card(stem)
    record, arch = card["record"], card["architecture"]
    members = record.get("members") or [{"seed": record.get("seed"), "config": record.get("config", {}),
                                         "seconds": record.get("seconds", {})}]
    manifest = record.get("corpus_manifest") or {}
    lines = [
        f"# Model card: {title}", "",
        f"Files: `{stem.name}.eqx` (Equinox leaf serialisation, NumPy arrays, no pickle) and `{stem.name}.json` "
        f"(architecture, feature columns, training record). Loaded by {loaded_by}. Its graphs' probes are read "
        f"at {'a short non-centred fit (`meta/fit_points.py`)' if arch.get('probes') == 'fit' else 'the prior points'}"
        ", in training and in use.", "",
        "## What it is", "",
        f"A typed message-passing network (docs/meta.md): hidden size {arch['hidden']}, {arch['num_steps']} rounds "
        f"with shared weights, {arch['form']} lambda per latent element; "
        f"{arch['num_node_features']} node and {arch['num_element_features']} element feature columns of "
        "`autoreparam.graph`."
        + (f" The file holds an ensemble of {len(members)} such networks, trained alike with seeds "
           f"{', '.join(str(m.get('seed')) for m in members)}; the prediction is the mean of their lambda "
           "(`meta/ensemble.py`)." if len(members) > 1 else ""), "",
        "## Training", "",
        f"- Corpus: `{record.get('corpus')}` (`autoreparam corpus --n {manifest.get('n')} --seed {manifest.get('seed')}`, "
        f"held-out family `{manifest.get('held_out_family')}`), train split; labels folders {record.get('labels')}.",
        f"- {record.get('num_models')} training programs, families {', '.join(record.get('families', []))}.",
        f"- Configuration (seed {members[0].get('seed')}{_others_differ(members)}): "
        f"`{json.dumps(members[0].get('config', {}))}`.",
    ]
    for member in members:
        seconds = member.get("seconds", {})
        lines.append(f"- Seed {member.get('seed')}: warm start {seconds.get('regression', 0):.0f} s, compiling the "
                     f"ELBO objectives {seconds.get('objective_compile', 0):.0f} s, ELBO phase "
                     f"{seconds.get('elbo', 0):.0f} s, on {record.get('machine')}.")
    return lines


def _loaded_by(stem: Path) -> str:
    """Which calls use the network of ``stem``: the default one, or the one read at the prior points."""
    from autoreparam.meta.predict import SHIPPED

    if stem.name == SHIPPED:
        return ("default (`predict`, `predict_parameterisation` and `infer(..., method=\"meta\")` without "
                "`probes` / `meta_probes`, and with `\"fit\"`)")
    return "`predict(..., probes=\"prior\")` and `infer(..., method=\"meta\", meta_probes=\"prior\")`"


_LIMITS = ["", "## Limits", "",
           "Trained on programs of the corpus's families (normal hierarchies, funnels, hierarchical GLMs, "
           "sparse regressions, random walks and AR(1)) and known-scale Gaussian hierarchies; "
           "META.md says where it falls short of per-model VIP."]


def _where(results: Results) -> str:
    """The machines the evaluation ran on, as the card names them."""
    machines = machine_names(results.machines())
    if not machines:
        return f"`{results.protocol.get('machine', '?')}`"
    if len(machines) == 1:
        return f"`{machines[0]}`"
    return ", ".join(f"`{m}`" for m in machines) + " (META.md's section \"What ran\" says which part ran where)"


def write_model_card(stem, results_dir, out, light_results=None) -> Path:
    """The card of the network META.md's evaluation ran (``results_dir``, `autoreparam meta evaluate`).

    ``light_results``: a folder `benchmarks/meta_fit_points.py` wrote, whose lighter comparison with the
    network read at the prior points (the evidence that made this one the default) the card adds.
    """
    stem = Path(stem)
    mark = {True: "met", False: "missed", None: "not measured"}
    results = Results.load(results_dir)
    lines = _network_lines(stem, "a shipped meta-learned parameterisation network", _loaded_by(stem))
    lines += [
        "",
        "## Evaluation (META.md has every table)", "",
        f"Protocol `{results.protocol.get('protocol', {}).get('name', '?')}` on {_where(results)}; "
        "the section \"Not run\" of META.md lists what this evaluation did not reach.", "",
        "| target | measured | |", "| --- | --- | --- |",
    ]
    lines += [f"| {t['target']} | {t['measured']} | {mark[t['met']]} |" for t in targets(results)]
    if light_results is not None:
        lines += _light_evaluation(Path(light_results))
    return write_text(out, "\n".join(lines + _LIMITS) + "\n")


def _gain_share(model: dict, label: str) -> str:
    """``label``'s ELBO gain over the best fixed centring as a share of VIP's (German credit's target)."""
    vip, mine = model["regret"]["vip"], model["regret"][label]
    return f"{100 * mine / vip:.0f}% ({mine:.1f} of {vip:.1f} nat)" if vip > 0 else "VIP gains nothing"


def _light_evaluation(results_dir: Path) -> list[str]:
    """The card's section on the lighter evaluation that chose the fit-probed network as the default
    (`benchmarks/meta_fit_points.py`: every centring's ELBO fitted by the labels' VI protocol, no NUTS),
    beside the network read at the prior points from the same run."""
    summary = json.loads((results_dir / "summary.json").read_text())["summary"]
    german = json.loads((results_dir / "german_credit.json").read_text())
    ours, shipped = "retrained_fit", "meta_prior"
    zoo, program, funnel = summary["zoo"], summary["program"], summary["funnel"]
    radon = [json.loads(path.read_text())["abs_error_to_vip"] for path in sorted(results_dir.glob("radon_*.json"))]

    def radon_range(label: str) -> str:
        errors = [r[label] for r in radon]
        return f"{min(errors):.3f} to {max(errors):.3f}"

    closer = sum(r[ours] < r[shipped] for r in radon)

    def pair(group: dict, key: str, fmt: str = "{:.3f}") -> tuple[str, str]:
        return fmt.format(group[key][ours]), fmt.format(group[key][shipped])

    rows = [
        ("Section 3: mean abs(lambda - lambda*)", *pair(summary, "section3_abs_error")),
        (f"zoo ({zoo['models']} models): mean abs(lambda - VIP's)", *pair(zoo, "mean_abs_error_to_vip")),
        ("zoo: models below the best fixed ELBO - 0.5 nat", ", ".join(zoo["below_half_nat"][ours]) or "none",
         ", ".join(zoo["below_half_nat"][shipped]) or "none"),
        ("German credit: share of VIP's ELBO gain", _gain_share(german, ours), _gain_share(german, shipped)),
        (f"radon ({len(radon)} states): abs(lambda - VIP's), mean per state",
         f"{radon_range(ours)} (closer on {closer} of {len(radon)})", radon_range(shipped)),
        (f"held-out programs ({program['models']}): mean abs(lambda - VIP's)", *pair(program, "mean_abs_error_to_vip")),
        ("held-out programs below the best fixed ELBO - 0.5 nat", ", ".join(program["below_half_nat"][ours]) or "none",
         ", ".join(program["below_half_nat"][shipped]) or "none"),
        (f"funnel grid ({funnel['models']} points): mean abs(lambda - VIP's)", *pair(funnel, "mean_abs_error_to_vip")),
        ("robustness cases finite and in [0, 1] (of 5)", str(summary["robust_cases_finite_in_unit_interval"][ours]),
         str(summary["robust_cases_finite_in_unit_interval"][shipped])),
    ]
    lines = [
        "",
        f"## The comparison that made it the default (`{results_dir.as_posix()}`, its README has the commands)", "",
        "A lighter evaluation than META.md's: every centring's ELBO was fitted by the training labels' VI protocol "
        "(1000 Adam steps of 32 draws), with no NUTS runs (NUTS in both networks' centrings on the zoo: "
        "`benchmarks/results/meta_fit_nuts`). The network read at the prior points (`meta_gnn`) was scored in the "
        "same run.", "",
        "| measure | this network | `meta_gnn`, at the prior points |", "| --- | --- | --- |",
    ]
    return lines + [f"| {name} | {a} | {b} |" for name, a, b in rows]

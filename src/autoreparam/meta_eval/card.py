"""The shipped weights' model card (``meta/weights/MODEL_CARD.md``), written from their JSON card and
the evaluation results, so that it never disagrees with them."""

from __future__ import annotations

import json
from pathlib import Path

from autoreparam.meta.files import write_text
from autoreparam.meta_eval.collect import Results
from autoreparam.meta_eval.targets import targets


def _others_differ(members: list[dict]) -> str:
    """How the other members' configurations differ from the first's: only in the seed, or more."""
    if len(members) < 2:
        return ""
    strip = [{k: v for k, v in m.get("config", {}).items() if k != "seed"} for m in members]
    return ("; the others differ only in the seed" if all(c == strip[0] for c in strip[1:])
            else "; the others' configurations differ, see the JSON card")


def write_model_card(stem, results_dir, out) -> Path:
    stem = Path(stem)
    card = json.loads(stem.with_suffix(".json").read_text())
    record, arch = card["record"], card["architecture"]
    members = record.get("members") or [{"seed": record.get("seed"), "config": record.get("config", {}),
                                         "seconds": record.get("seconds", {})}]
    manifest = record.get("corpus_manifest") or {}
    mark = {True: "met", False: "missed", None: "not measured"}
    results = Results.load(results_dir)
    lines = [
        "# Model card: the shipped meta-learned parameterisation network", "",
        f"Files: `{stem.name}.eqx` (Equinox leaf serialisation, NumPy arrays, no pickle) and `{stem.name}.json` "
        "(architecture, feature columns, training record). Loaded by `autoreparam.meta.predict.default_network`.", "",
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
    lines += [
        "",
        "## Evaluation (META.md has every table)", "",
        f"Protocol `{results.protocol.get('protocol', {}).get('name', '?')}` on `{results.protocol.get('machine', '?')}`; "
        "the section \"Not run\" of META.md lists what this evaluation did not reach.", "",
        "| target | measured | |", "| --- | --- | --- |",
    ]
    lines += [f"| {t['target']} | {t['measured']} | {mark[t['met']]} |" for t in targets(results)]
    lines += ["", "## Limits", "",
              "Trained on programs of the corpus's families (normal hierarchies, funnels, hierarchical GLMs, "
              "sparse regressions, random walks and AR(1)) and known-scale Gaussian hierarchies; "
              "META.md says where it falls short of per-model VIP."]
    return write_text(out, "\n".join(lines) + "\n")

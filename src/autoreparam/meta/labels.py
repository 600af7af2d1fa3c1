"""Per-model labels for training: the model's graph, and VIP beside CP and NCP (one Ray task per program).

For every program of a corpus split (``autoreparam corpus``) a task compiles the program with its
data, builds its graph (`autoreparam.graph.model_graph`) and runs VIP with the CP and NCP fits under
one protocol (paper 000 Section 5.2, `autoreparam.vi.vip.fit_vip`). It writes

    <labels>/<split>/<id>.graph.json   the ModelGraph (JSON)
    <labels>/<split>/<id>.json         ELBOs of CP, NCP and VIP, their q (loc and scale, flat, in each
                                       fit's coordinates), VIP's lambda per planned site, timings

The training objective uses the best fixed ELBO and the CP-NCP gap to normalise each model's loss,
and the warm start regresses on VIP's lambda. A program the graph or the fits cannot handle gets a
file with ``error`` and is left out of training.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from autoreparam.errors import ArgumentError, DataError
from autoreparam.meta.files import write_json, write_text
from autoreparam.meta.tasks import Task, run_tasks
from autoreparam.vi.protocol import VIConfig

# Labels need converged ELBOs to within a fraction of a nat, not the paper's full protocol: 1000 steps
# of 32 draws at two learning rates, three VIP starts (about 1/40 of the paper's density evaluations).
LABEL_CONFIG = VIConfig(num_steps=1000, num_samples=32, learning_rates=(0.02, 0.1), final_num_samples=1024,
                        progress=False)
FORMAT = "autoreparam.meta.label"


def corpus_records(corpus: str | Path, split: str) -> list[dict]:
    """The index records of one split of a corpus, with absolute program and data paths."""
    folder = Path(corpus) / split
    records = []
    with open(folder / "index.jsonl", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            record["program_path"] = str(folder / record["program"])
            record["data_path"] = str(folder / record["data"])
            records.append(record)
    return records


def label_program(*, out, program: str, data: str, record: dict, config: dict | None, probes: str = "prior") -> dict:
    """Compile ``program`` with ``data``, build its graph, fit CP, NCP and VIP; write ``out``.

    ``config=None`` writes the graph and the site plan only (programs that know their optimum in
    closed form, `synthetic.py`, need no fits for the warm start). ``probes``: where the graph's
    probes are read (`autoreparam.meta.network.PROBES`); the fits do not depend on it.
    """
    from autoreparam.lang import compile_program
    from autoreparam.meta.fit_points import probed_graph
    from autoreparam.vi.vip import fit_vip

    out = Path(out)
    if config is None:
        return _graph_only(out, program, data, record, probes)
    vi_config = VIConfig(**{**config, "learning_rates": tuple(config["learning_rates"]),
                            "decay_fractions": tuple(config["decay_fractions"]),
                            "decay_factors": tuple(config["decay_factors"]),
                            "vip_starts": tuple(config["vip_starts"])})
    model, args, kwargs = compile_program(program, data)
    start = time.perf_counter()
    graph = probed_graph(model, args, kwargs, probes)
    graph_seconds = time.perf_counter() - start
    write_text(out.with_suffix(".graph.json"), graph.to_json())
    start = time.perf_counter()
    vip = fit_vip(model, *args, config=vi_config, discrete=False, **kwargs)
    fit_seconds = time.perf_counter() - start
    fits = {label: {"elbo": f.elbo, "elbo_se": f.elbo_se, "learning_rate": f.learning_rate,
                    "nonfinite_steps": f.nonfinite_steps, "loc": f.loc, "scale": f.scale}
            for label, f in vip.fits.items()}
    payload = {
        "format": FORMAT,
        "id": record["id"], "family": record["family"], "split": record["split"],
        "program": program, "data": data, "params": record.get("params", {}), "probes": probes,
        "sites": {s.name: list(s.shape) for s in vip.plan.sites},
        "num_elements": int(graph.num_elements), "num_nodes": int(graph.num_nodes),
        "fits": fits,
        "vip_lambda": {name: np.asarray(v).ravel() for name, v in vip.lam.items()},
        "seconds": {"graph": graph_seconds, "fits": fit_seconds,
                    "fit_compile": vip.timing["vip"]["compile_seconds"]},
    }
    write_json(out, payload)
    return {"elbo_gap": _gap(fits)}


def _graph_only(out: Path, program: str, data: str, record: dict, probes: str) -> dict:
    from autoreparam.lang import compile_program
    from autoreparam.meta.fit_points import probed_graph
    from autoreparam.reparam.selection import select_sites
    from autoreparam.reparam.sites import analyse_model

    model, args, kwargs = compile_program(program, data)
    start = time.perf_counter()
    graph = probed_graph(model, args, kwargs, probes)
    seconds = time.perf_counter() - start
    write_text(out.with_suffix(".graph.json"), graph.to_json())
    plan = select_sites(analyse_model(model, *args, **kwargs), "default")
    write_json(out, {"format": FORMAT, "id": record["id"], "family": record["family"], "split": record["split"],
                     "program": program, "data": data, "params": record.get("params", {}), "probes": probes,
                     "sites": {s.name: list(s.shape) for s in plan.sites}, "num_elements": int(graph.num_elements),
                     "num_nodes": int(graph.num_nodes), "fits": {}, "vip_lambda": {},
                     "seconds": {"graph": seconds}})
    return {}


def _gap(fits: dict) -> float | None:
    values = [fits[k]["elbo"] for k in ("cp", "ncp")]
    return None if any(v is None or not np.isfinite(v) for v in values) else abs(values[0] - values[1])


def label_tasks(corpus: str | Path, out: str | Path, splits=("train",), limit: int | None = None,
                config: VIConfig | None = LABEL_CONFIG, probes: str = "prior") -> list[Task]:
    """One task per program of ``splits`` (the first ``limit`` of each split when given)."""
    plain = None if config is None else dataclasses.asdict(dataclasses.replace(config, progress=False))
    tasks = []
    for split in splits:
        records = corpus_records(corpus, split)[:limit]
        for record in records:
            target = Path(out) / split / f"{record['id']}.json"
            tasks.append(Task(target, {"program": record["program_path"], "data": record["data_path"],
                                       "record": {k: record[k] for k in ("id", "family", "split", "params")},
                                       "config": plain, "probes": probes}))
    return tasks


def make_labels(corpus, out, *, splits=("train",), limit=None, address=None, num_cpus=None, serial=False,
                progress=True, graphs_only=False, probes: str = "prior") -> list[dict]:
    """Label every program of ``splits`` that has no label file yet (resumable)."""
    from autoreparam.meta.network import PROBES

    if probes not in PROBES:
        raise ArgumentError(f"probes must be one of {', '.join(map(repr, PROBES))}, got {probes!r}")
    config = None if graphs_only else LABEL_CONFIG
    # The corpus before the manifest: a missing corpus or a misspelt split left a manifest that then
    # refused the right command as "other settings" (found in review).
    for split in splits:
        if not (Path(corpus) / split / "index.jsonl").is_file():
            raise DataError(f"{Path(corpus) / split / 'index.jsonl'} not found: --corpus must be a folder written by "
                            "`autoreparam corpus`, and --splits name its splits (train, interpolation, "
                            "extrapolation, held_out_family)")
    check_manifest(corpus, out, config, probes)
    tasks = label_tasks(corpus, out, splits, limit, config, probes)
    return run_tasks(label_program, tasks, address=address, num_cpus=num_cpus, serial=serial,
                     label="labels", progress=progress)


MANIFEST = "labels_manifest.json"


def check_manifest(corpus, out, config: VIConfig | None, probes: str) -> None:
    """Record what the labels in ``out`` are made from on first use; refuse other settings later.

    A resumed labelling skips every existing file, so labels of another corpus, VI protocol or probes
    would otherwise mix silently with the old ones. Splits and limits may grow: they add files.
    """
    from autoreparam.meta.files import read_json

    manifest = Path(corpus) / "manifest.json"
    wanted = json.loads(json.dumps({
        "corpus": str(Path(corpus).resolve()),
        "corpus_manifest": {k: v for k, v in read_json(manifest).items() if k != "seconds"}
        if manifest.exists() else None,
        "config": None if config is None else dataclasses.asdict(dataclasses.replace(config, progress=False)),
        "probes": probes}))
    path = Path(out) / MANIFEST
    if not path.exists():
        write_json(path, wanted)
        return
    saved = read_json(path)
    differ = [f"{k}: folder has {saved.get(k)!r}, now {wanted[k]!r}" for k in wanted if saved.get(k) != wanted[k]]
    if differ:
        raise ArgumentError(f"labels folder {out} was made with other settings ({'; '.join(differ)}); "
                            f"choose another labels folder")


def read_labels(folder: str | Path, split: str = "train") -> list[dict]:
    """Every successful label of a split, with its graph file's path; failures are skipped."""
    labels = []
    for path in sorted((Path(folder) / split).glob("*.json")):
        if path.name.endswith(".graph.json"):
            continue
        payload = json.loads(path.read_text(encoding="utf-8"))
        if payload.get("format") != FORMAT:
            continue
        payload["graph_path"] = str(path.with_suffix(".graph.json"))
        labels.append(payload)
    return labels

"""``autoreparam meta evaluate``: every evaluation of META.md as resumable tasks (Ray) and quick checks.

Layout of ``out``: ``section3.json`` and ``robustness.json`` (in this process), ``funnel/``,
``held_out/``, ``zoo/`` (one `model_task` JSON per model) and ``timing/`` (one `timing_task` JSON per
zoo model); ``protocol.json`` records what ran. Rerunning skips every finished file.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from autoreparam.meta.files import write_json
from autoreparam.meta.tasks import Task, run_tasks
from autoreparam.meta_eval.machine import cpus, describe_machine
from autoreparam.meta_eval.model_task import evaluate_model
from autoreparam.meta_eval.models import spec_name
from autoreparam.meta_eval.protocol import (EVAL_VI, FUNNEL_SIGMA, FUNNEL_VI, FUNNEL_Y, HELD_OUT_SPLITS, METHODS,
                                            PROTOCOLS, ZOO)
from autoreparam.meta_eval.timing_task import time_model

PARTS = ("checks", "funnel", "held_out", "zoo", "timing", "seeds")


def _vi(config) -> dict:
    return dataclasses.asdict(dataclasses.replace(config, progress=False))


def _held_out_specs(corpus: Path, per_split: int) -> list[dict]:
    from autoreparam.meta.labels import corpus_records

    specs = []
    for split in HELD_OUT_SPLITS:
        for record in corpus_records(corpus, split)[:per_split]:
            specs.append({"kind": "program", "split": split, "id": record["id"], "family": record["family"],
                          "program": record["program_path"], "data": record["data_path"]})
    return specs


def seed_tasks(out: Path, corpus: Path | None, protocol, networks: dict) -> list[Task]:
    """ELBO-only tasks (fixed centrings, no VIP, no NUTS) for the networks of other training seeds."""
    tasks = []
    for task in model_tasks(out / "seeds", corpus, protocol, networks, None, ("funnel", "held_out", "zoo")):
        tasks.append(Task(task.out, {**task.kwargs, "nuts": None, "ess_methods": []}))
    return tasks


def model_tasks(out: Path, corpus: Path | None, protocol, networks: dict, prototype: str | None, parts) -> list[Task]:
    common = {"networks": networks, "prototype": prototype, "ess_methods": list(METHODS)}
    tasks = []
    if "funnel" in parts:
        for y in FUNNEL_Y:
            for sigma in FUNNEL_SIGMA:
                spec = {"kind": "funnel", "y": y, "sigma": sigma}
                tasks.append(Task(out / "funnel" / f"{spec_name(spec)}.json",
                                  {"spec": spec, "vi_config": _vi(FUNNEL_VI), "nuts": protocol.funnel_nuts.to_dict(),
                                   **common}))
    if "held_out" in parts and corpus is not None:
        for spec in _held_out_specs(corpus, protocol.held_out_per_split):
            tasks.append(Task(out / "held_out" / f"{spec['split']}_{spec['id']}.json",
                              {"spec": spec, "vi_config": _vi(EVAL_VI), "nuts": protocol.model_nuts.to_dict(), **common}))
    if "zoo" in parts:
        for name in ZOO:
            spec = {"kind": "zoo", "name": name}
            tasks.append(Task(out / "zoo" / f"{name}.json",
                              {"spec": spec, "vi_config": _vi(EVAL_VI), "nuts": protocol.model_nuts.to_dict(), **common}))
    return tasks


def plan_evaluation(out, *, corpus=None, protocol: str = "cpu", network: str | None = None, seed_networks=(),
                    prototype: str | None = None, parts=PARTS, machine: str | None = None):
    """Record what runs in ``out/protocol.json`` and return its tasks: (model tasks, timing tasks).

    ``machine`` describes the machine that runs the tasks (default: this one). Each task's JSON also
    records its own (``ran_on``), so parts that ran elsewhere (a GPU machine's CPU cores for the model
    tasks, a quiet machine for timing) are reported as such.
    """
    from autoreparam.meta.predict import shipped_stem

    out = Path(out)
    chosen = PROTOCOLS[protocol]
    prototype = str(prototype or shipped_stem("prototype"))
    networks = {"meta": network}
    others = {Path(stem).parent.name + ("" if Path(stem).name == "meta_gnn" else f"/{Path(stem).name}"): stem
              for stem in seed_networks}
    machine = machine or describe_machine()
    write_json(out / "protocol.json", {"protocol": dataclasses.asdict(chosen), "networks": networks,
                                       "other_networks": others,
                                       "prototype": prototype, "eval_vi": _vi(EVAL_VI), "funnel_vi": _vi(FUNNEL_VI),
                                       "machine": machine})
    tasks = model_tasks(out, Path(corpus) if corpus else None, chosen, networks, prototype, parts)
    if "seeds" in parts and others:
        tasks += seed_tasks(out, Path(corpus) if corpus else None, chosen, {"meta": network, **others})
    timing = []
    if "timing" in parts:
        timing = [Task(out / "timing" / f"{name}.json", {"spec": {"kind": "zoo", "name": name},
                                                         "num_samples": chosen.timing_samples}) for name in ZOO]
    return tasks, timing


def evaluate(out, *, corpus=None, protocol: str = "cpu", network: str | None = None, seed_networks=(),
             prototype: str | None = None, parts=PARTS, address=None, num_cpus=None, serial=False,
             progress=True) -> Path:
    """Run (or resume) the evaluation into ``out``."""
    out = Path(out)
    workers = 1 if serial else (None if address else (num_cpus or cpus()))
    tasks, timing = plan_evaluation(out, corpus=corpus, protocol=protocol, network=network,
                                    seed_networks=seed_networks, prototype=prototype, parts=parts,
                                    machine=describe_machine(workers))
    if "checks" in parts:
        protocol_record = json.loads((out / "protocol.json").read_text())
        _checks(out, protocol_record["networks"], protocol_record["other_networks"], protocol_record["prototype"])
    run_tasks(evaluate_model, tasks, address=address, num_cpus=num_cpus, serial=serial, label="evaluate",
              progress=progress, max_calls=5)
    run_tasks(time_model, timing, address=address, num_cpus=num_cpus, serial=serial, label="timing",
              progress=progress, max_calls=1)
    return out


def _checks(out: Path, networks: dict, others: dict, prototype: str) -> None:
    from autoreparam.meta.predict import default_network
    from autoreparam.meta.prototype_train import load_prototype
    from autoreparam.meta.weights import load_network
    from autoreparam.meta_eval.checks import robustness, section3

    nets = {k: default_network() if v is None else load_network(v)[0] for k, v in networks.items()}
    nets.update({k: load_network(v)[0] for k, v in others.items()})
    proto = load_prototype(prototype)[0]
    done = out / "section3.json"
    if not done.exists() or not set(nets) <= set(json.loads(done.read_text())["rows"][0]):
        section3(done, nets, proto)  # again when a network was added
    if not (out / "robustness.json").exists():
        robustness(out / "robustness.json", nets["meta"], proto)

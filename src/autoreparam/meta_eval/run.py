"""``autoreparam meta evaluate``: every evaluation of META.md as resumable tasks (Ray) and quick checks.

Layout of ``out``: ``section3.json`` and ``robustness.json`` (in this process), ``funnel/``,
``held_out/``, ``zoo/`` (one `model_task` JSON per model) and ``timing/`` (one `timing_task` JSON per
zoo model); ``protocol.json`` records what ran. Rerunning skips every finished file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
from pathlib import Path

from autoreparam.errors import ArgumentError
from autoreparam.meta.files import write_json
from autoreparam.meta.tasks import WORKERS_VARIABLE, Task, run_tasks
from autoreparam.meta_eval.machine import cpus, describe_machine
from autoreparam.meta_eval.model_task import evaluate_model
from autoreparam.meta_eval.models import spec_name
from autoreparam.meta_eval.protocol import (EVAL_VI, FUNNEL_SIGMA, FUNNEL_VI, FUNNEL_Y, HELD_OUT_SPLITS, METHODS,
                                            PROTOCOLS, ZOO)
from autoreparam.meta_eval.timing_task import time_model

PARTS = ("checks", "funnel", "held_out", "zoo", "timing", "seeds")


def _vi(config) -> dict:
    return dataclasses.asdict(dataclasses.replace(config, progress=False))


def _program_key(record: dict) -> str:
    """A program's identity: its text and its data (parsed, so formatting does not matter)."""
    text = Path(record["program_path"]).read_text(encoding="utf-8")
    data = json.loads(Path(record["data_path"]).read_text(encoding="utf-8"))
    return hashlib.sha256((text + "\0" + json.dumps(data, sort_keys=True)).encode()).hexdigest()


def _held_out_specs(corpus: Path, per_split: int) -> list[dict]:
    """The first ``per_split`` programs of each held-out split that are not also training programs.

    The corpus can hold the same program in two splits (unobserved funnels of depth 1-2 have no data
    and one text per depth, and the split cycle puts copies in both 'train' and 'interpolation'); such
    a program is not held out, so it is skipped here rather than evaluated as if it were unseen.
    """
    from autoreparam.meta.labels import corpus_records

    train = {_program_key(r) for r in corpus_records(corpus, "train")} \
        if (Path(corpus) / "train" / "index.jsonl").exists() else set()
    specs = []
    for split in HELD_OUT_SPLITS:
        records = [r for r in corpus_records(corpus, split) if _program_key(r) not in train]
        for record in records[:per_split]:
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


@dataclasses.dataclass(frozen=True)
class EvaluationPlan:
    """What one evaluation runs: model tasks, timing tasks, and the networks the in-process checks read."""

    tasks: list
    timing: list
    networks: dict
    others: dict
    prototype: str


# protocol.json's fields that decide what the tasks compute: a folder keeps one value of each.
_DECIDING = ("protocol", "networks", "network_name", "other_networks", "prototype", "corpus")


def plan_evaluation(out, *, corpus=None, protocol: str = "cpu", network: str | None = None, seed_networks=(),
                    prototype: str | None = None, parts=PARTS) -> EvaluationPlan:
    """Record what runs in ``out/protocol.json`` and return the plan.

    A folder holds one evaluation: a command whose protocol, networks or prototype differ from those
    ``protocol.json`` records is refused (a resumed run would mix both in one report). The machine is
    recorded as the planner's; each task's JSON records its own (``ran_on``), so parts run elsewhere (a
    lent machine's CPU cores for the model tasks, a quiet machine for timing) are reported as such.
    """
    from autoreparam.meta.predict import SHIPPED, shipped_stem
    from autoreparam.meta.weights import read_card

    out = Path(out)
    unknown = [part for part in parts if part not in PARTS]
    if unknown or not parts:
        # A misspelt part ran nothing, with exit status 0 (found in review).
        raise ArgumentError(f"--parts: unknown {', '.join(map(repr, unknown)) or 'nothing given'}; choose among "
                            f"{', '.join(PARTS)}")
    if "held_out" in parts and corpus is None:
        raise ArgumentError("the held_out part evaluates a corpus's held-out splits: give --corpus, or leave "
                            "held_out out of --parts")
    for stem in (network, *seed_networks):
        if stem is not None:
            read_card(stem)  # a missing or damaged card before any task: every task failed on it (found in review)
    chosen = PROTOCOLS[protocol]
    networks = {"meta": network}
    others = {Path(stem).parent.name + ("" if Path(stem).name == "meta_gnn" else f"/{Path(stem).name}"): stem
              for stem in seed_networks}
    record = {"protocol": dataclasses.asdict(chosen), "networks": networks,
              # the network "meta" is, by name: the shipped default changes, a results folder does not
              "network_name": Path(network).name if network else SHIPPED,
              "other_networks": others, "prototype": prototype or "shipped",
              # the held-out programs' corpus: results from another one were silently reused (found in review)
              "corpus": str(Path(corpus).resolve()) if corpus else None,
              "eval_vi": _vi(EVAL_VI), "funnel_vi": _vi(FUNNEL_VI), "machine": describe_machine()}
    _refuse_other_evaluation(out / "protocol.json", record)
    write_json(out / "protocol.json", record)
    prototype = str(prototype or shipped_stem("prototype"))
    tasks = model_tasks(out, Path(corpus) if corpus else None, chosen, networks, prototype, parts)
    if "seeds" in parts and others:
        tasks += seed_tasks(out, Path(corpus) if corpus else None, chosen, {"meta": network, **others})
    timing = []
    if "timing" in parts:
        timing = [Task(out / "timing" / f"{name}.json", {"spec": {"kind": "zoo", "name": name},
                                                         "num_samples": chosen.timing_samples}) for name in ZOO]
    return EvaluationPlan(tasks, timing, networks, others, prototype)


# Record keys whose values name files: one network named by a relative and by an absolute path is one
# network (a resume from another spelling was refused; found in review).
_PATH_KEYS = ("networks", "other_networks", "prototype")


def _as_paths(key: str, value):
    """``value`` with every file name of a ``_PATH_KEYS`` entry made absolute (from this working folder),
    for comparison only: the record keeps the names as given."""
    if key not in _PATH_KEYS:
        return value
    if isinstance(value, dict):
        return {k: _as_paths(key, v) for k, v in value.items()}
    return os.path.realpath(value) if isinstance(value, str) and value != "shipped" else value


def _refuse_other_evaluation(path: Path, record: dict) -> None:
    if not path.exists():
        return
    previous = json.loads(path.read_text())
    as_json = json.loads(json.dumps(record))  # tuples as the file holds them: lists
    differ = [k for k in _DECIDING if k in previous and _as_paths(k, previous[k]) != _as_paths(k, as_json[k])]
    if differ:
        raise ArgumentError(
            f"{path.parent} holds an evaluation with another {', '.join(differ)} ({path}: "
            + "; ".join(f"{k} {json.dumps(previous[k])}" for k in differ)
            + "); give the same options (--protocol, --network, --seed-networks, --prototype) or another --out")


@contextlib.contextmanager
def worker_count(workers: int | None):
    """Tell the tasks' `describe_machine` how many worker processes share the machine (forwarded to
    Ray's workers and inherited by spawned processes)."""
    previous = os.environ.pop(WORKERS_VARIABLE, None)
    if workers is not None:
        os.environ[WORKERS_VARIABLE] = str(workers)
    try:
        yield
    finally:
        os.environ.pop(WORKERS_VARIABLE, None)
        if previous is not None:
            os.environ[WORKERS_VARIABLE] = previous


def evaluate(out, *, corpus=None, protocol: str = "cpu", network: str | None = None, seed_networks=(),
             prototype: str | None = None, parts=PARTS, address=None, num_cpus=None, serial=False,
             progress=True) -> Path:
    """Run (or resume) the evaluation into ``out``."""
    out = Path(out)
    with worker_count(1 if serial else (None if address else (num_cpus or cpus()))):
        plan = plan_evaluation(out, corpus=corpus, protocol=protocol, network=network,
                               seed_networks=seed_networks, prototype=prototype, parts=parts)
        if "checks" in parts:
            _checks(out, plan.networks, plan.others, plan.prototype)
        run_tasks(evaluate_model, plan.tasks, address=address, num_cpus=num_cpus, serial=serial, label="evaluate",
                  progress=progress, max_calls=5)
        run_tasks(time_model, plan.timing, address=address, num_cpus=num_cpus, serial=serial, label="timing",
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

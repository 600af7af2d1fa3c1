"""One worker of a many-process evaluation without Ray (a machine with many CPUs and no Ray).

Every worker builds the same task list as ``autoreparam meta evaluate`` (model tasks, then timing
tasks) and takes the next unclaimed one by creating ``<out>.claim`` exclusively, so N workers share
the list dynamically; each result file is written as its task finishes (resumable like the command).

    PARTS=funnel,held_out,zoo,timing,seeds SEED_NETWORKS=stem1,stem2 \
    python scripts/eval_worker.py OUT CORPUS PROTOCOL NETWORK [PROTOTYPE]
"""
import os
import sys
from pathlib import Path

from autoreparam.meta.predict import shipped_stem
from autoreparam.meta.tasks import _guarded, pending
from autoreparam.meta_eval.model_task import evaluate_model
from autoreparam.meta_eval.protocol import PROTOCOLS, ZOO
from autoreparam.meta_eval.run import model_tasks, seed_tasks
from autoreparam.meta.tasks import Task
from autoreparam.meta_eval.timing_task import time_model

out, corpus, protocol, network = Path(sys.argv[1]), Path(sys.argv[2]), PROTOCOLS[sys.argv[3]], sys.argv[4]
prototype = sys.argv[5] if len(sys.argv) > 5 else str(shipped_stem("prototype"))
parts = os.environ.get("PARTS", "funnel,held_out,zoo,timing,seeds").split(",")
networks = {"meta": network}
jobs = []
if "timing" in parts:  # the longest first
    jobs += [(time_model, Task(out / "timing" / f"{name}.json", {"spec": {"kind": "zoo", "name": name},
                                                                   "num_samples": protocol.timing_samples}))
             for name in ("election88", "electric", "german_credit", "radon_mn", "radon_pa")]
jobs += [(evaluate_model, t) for t in model_tasks(out, corpus, protocol, networks, prototype, parts)
         if t.kwargs["spec"].get("kind") == "zoo"]
if "timing" in parts:
    jobs += [(time_model, Task(out / "timing" / f"{name}.json", {"spec": {"kind": "zoo", "name": name},
                                                                   "num_samples": protocol.timing_samples}))
             for name in ZOO]
jobs += [(evaluate_model, t) for t in model_tasks(out, corpus, protocol, networks, prototype, parts)
         if t.kwargs["spec"].get("kind") != "zoo"]
others = [stem for stem in os.environ.get("SEED_NETWORKS", "").split(",") if stem]
if "seeds" in parts and others:  # as `meta evaluate --seed-networks`: other seeds' networks, ELBO only
    named = {Path(stem).parent.name: stem for stem in others}
    jobs += [(evaluate_model, t) for t in seed_tasks(out, corpus, protocol, {"meta": network, **named})]
if not (out / "protocol.json").exists():  # as `meta evaluate` writes it, with this machine
    import dataclasses
    import platform

    import jax

    from autoreparam.meta.files import write_json
    from autoreparam.meta_eval.protocol import EVAL_VI, FUNNEL_VI
    from autoreparam.meta_eval.run import _cpus, _vi

    write_json(out / "protocol.json", {
        "protocol": dataclasses.asdict(protocol), "networks": networks,
        "other_networks": {Path(stem).parent.name: stem for stem in others}, "prototype": prototype,
        "eval_vi": _vi(EVAL_VI), "funnel_vi": _vi(FUNNEL_VI),
        "machine": f"{platform.node()} ({platform.machine()}, {jax.devices()[0].platform}, {_cpus()} CPUs, "
                   f"{os.environ.get('WORKERS', '1')} worker processes, jax {jax.__version__})"})
# PRIORITY: comma-separated result names (e.g. zoo/eight_schools,funnel/funnel_y0_s0.1) run first, in
# that order; ONLY_PRIORITY=1 runs nothing else.
priority = [p for p in os.environ.get("PRIORITY", "").split(",") if p]
rank = {name: i for i, name in enumerate(priority)}


def _name(task):
    return str(Path(task.out).relative_to(out).with_suffix(""))


first = sorted([j for j in jobs if _name(j[1]) in rank], key=lambda j: rank[_name(j[1])])
jobs = first + ([] if os.environ.get("ONLY_PRIORITY") else [j for j in jobs if _name(j[1]) not in rank])
for function, task in jobs:
    if not pending([task]):
        continue
    claim = Path(str(task.out) + ".claim")
    claim.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        continue
    print("start", task.out, flush=True)
    print("done", _guarded(function, task.out, task.kwargs), flush=True)

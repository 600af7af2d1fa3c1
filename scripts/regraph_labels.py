"""Rebuild the graphs of existing labels with this version's graph code, keeping their fits.

A label's fits (VIP, CP, NCP) do not depend on the graph's features, so when only the features change
(here: `autoreparam.meta.fit_points`, where the probes are read) the graphs can be rebuilt without
refitting. Each ``<id>.graph.json`` is rewritten in place at the label's own ``probes``; a label whose
graph cannot be built is renamed ``<id>.json.regraph_failed`` (so training no longer reads it) and
printed.

    python scripts/regraph_labels.py LABELS_DIR [--split train] [--part 0 --parts 2]

``--part/--parts`` split the labels between processes (every ``parts``-th label from ``part``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from autoreparam.meta.files import write_json, write_text
from autoreparam.meta.fit_points import probed_graph
from autoreparam.meta.network import PROBES


def main(argv=None) -> int:
    from autoreparam.lang import compile_program

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labels")
    parser.add_argument("--split", default="train")
    parser.add_argument("--part", type=int, default=0)
    parser.add_argument("--parts", type=int, default=1)
    args = parser.parse_args(argv)
    paths = sorted(p for p in (Path(args.labels) / args.split).glob("*.json") if not p.name.endswith(".graph.json"))
    done = 0
    for path in paths[args.part::args.parts]:
        label = json.loads(path.read_text(encoding="utf-8"))
        if "error" in label:
            continue
        start = time.perf_counter()
        if label.get("probes", "prior") not in PROBES:
            raise SystemExit(f"{path}: unknown probes {label['probes']!r}; expected one of {PROBES}")
        try:
            model, margs, kwargs = compile_program(label["program"], label["data"])
            graph = probed_graph(model, margs, kwargs, label.get("probes", "prior"))
        except Exception as error:  # noqa: BLE001 - reported and set aside, the others go on
            print(f"{path}: {type(error).__name__}: {error}")
            path.rename(path.with_name(path.name + ".regraph_failed"))
            continue
        write_text(path.with_suffix(".graph.json"), graph.to_json())
        label.setdefault("seconds", {})["regraph"] = time.perf_counter() - start
        write_json(path, label)
        done += 1
    print(f"rebuilt {done} graphs of {len(paths)} labels in {args.labels}/{args.split} (part {args.part} of {args.parts})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

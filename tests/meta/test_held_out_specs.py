"""The evaluation's held-out programs exclude copies of training programs."""

from __future__ import annotations

import json

from autoreparam.meta_eval.run import _held_out_specs
from autoreparam.meta_eval.protocol import HELD_OUT_SPLITS


def _split(corpus, split, programs):
    folder = corpus / split
    folder.mkdir(parents=True)
    with open(folder / "index.jsonl", "w", encoding="utf-8") as index:
        for i, (text, data) in enumerate(programs):
            (folder / f"{i:06d}.arp").write_text(text)
            (folder / f"{i:06d}.json").write_text(json.dumps(data))
            index.write(json.dumps({"id": f"{i:06d}", "family": "funnel", "split": split,
                                    "program": f"{i:06d}.arp", "data": f"{i:06d}.json"}) + "\n")


def test_held_out_programs_equal_to_a_training_program_are_skipped(tmp_path):
    shared = ("z0 ~ normal(0, 1)\nz1 ~ normal(0, exp(z0))\n", {})
    _split(tmp_path, "train", [shared, ("z0 ~ normal(0, 1)\n", {})])
    # Same text, other data: a different program, kept.
    other_data = (shared[0], {"y": 1.0})
    _split(tmp_path, "interpolation", [shared, other_data, ("z0 ~ normal(0, 2)\n", {})])
    for split in HELD_OUT_SPLITS[1:]:
        _split(tmp_path, split, [("z0 ~ normal(0, 3)\n", {})])
    specs = _held_out_specs(tmp_path, 2)
    assert [(s["split"], s["id"]) for s in specs] == [("interpolation", "000001"), ("interpolation", "000002"),
                                                      ("extrapolation", "000000"), ("held_out_family", "000000")]

"""``autoreparam corpus``: programs as text (.arp) and data as JSON, one folder per split.

Layout of ``out``::

    manifest.json                 n, seed, held-out family, families, counts per split, seconds
    <split>/index.jsonl           one line per program: id, family, split, params (generating
                                  parameters, realised informativeness, seed), file names
    <split>/<id>.arp              the program; its first line names its family
    <split>/<id>.json             its data, in the language's data format (``--data`` of ``run``)

Nothing is pickled. Splits: train; interpolation (same sizes and ranges as train, other draws);
extrapolation (larger sizes than train); held_out_family (every program of one family).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from autoreparam.corpus.registry import FAMILIES, SPLITS, generate_program
from autoreparam.errors import ArgumentError

FORMAT_VERSION = 1


def write_corpus(out: str | os.PathLike, *, n: int = 10000, seed: int = 0, held_out_family: str = "student_t_hierarchy") -> dict:
    """Write ``n`` programs with their data under ``out`` (absent or empty); returns the manifest."""
    if held_out_family not in FAMILIES:
        raise ArgumentError(f"unknown family {held_out_family!r}; families: {', '.join(FAMILIES)}")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ArgumentError(f"n must be a positive integer, got {n!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ArgumentError(f"seed must be a non-negative integer, got {seed!r}")
    # As Python ints: a NumPy seed reached json.dumps in the programs' params after the first files were
    # written, and that partial folder blocked every rerun (found in review).
    n, seed = int(n), int(seed)
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise ArgumentError(f"{root} is a file; the corpus needs a new folder")
    if root.exists() and any(root.iterdir()):
        raise ArgumentError(f"{root} is not empty; choose a new folder so that no corpus is mixed with another (a "
                            "corpus is written in one go: delete an interrupted one and write it again)")
    start = time.perf_counter()
    try:
        for split in SPLITS:
            (root / split).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ArgumentError(f"cannot create the corpus folder {root}: {error.strerror or error}") from None
    indexes = {split: open(root / split / "index.jsonl", "w", encoding="utf-8") for split in SPLITS}
    counts = dict.fromkeys(SPLITS, 0)
    try:
        for index in range(n):
            split, program = generate_program(index, seed, held_out_family)
            name = f"{index:06d}"
            (root / split / f"{name}.arp").write_text(program.text, encoding="utf-8")
            with open(root / split / f"{name}.json", "w", encoding="utf-8") as f:
                json.dump(program.data, f)
            record = {"id": name, "family": program.family, "split": split, "program": f"{name}.arp",
                      "data": f"{name}.json", "params": program.params}
            indexes[split].write(json.dumps(record) + "\n")
            counts[split] += 1
    finally:
        for f in indexes.values():
            f.close()
    manifest = {"format_version": FORMAT_VERSION, "n": n, "seed": seed, "held_out_family": held_out_family,
                "families": list(FAMILIES), "splits": counts, "seconds": round(time.perf_counter() - start, 2)}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest

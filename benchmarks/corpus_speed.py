"""How long a corpus takes: writing n programs with data, then parsing, checking and compiling each
(the dry run that checks sizes and index ranges; no JAX compilation). Writes JSON. Usage:

    python benchmarks/corpus_speed.py --n 10000 --out benchmarks/results/corpus_speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

from autoreparam.corpus import SPLITS, write_corpus
from autoreparam.lang import compile_program


def run(n: int, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "corpus"
        start = time.perf_counter()
        manifest = write_corpus(root, n=n, seed=seed)
        write_s = time.perf_counter() - start
        size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
        start = time.perf_counter()
        families = Counter()
        for split in SPLITS:
            for line in (root / split / "index.jsonl").read_text().splitlines():
                record = json.loads(line)
                compile_program(root / split / record["program"], root / split / record["data"])
                families[record["family"]] += 1
        compile_s = time.perf_counter() - start
    return {"n": n, "seed": seed, "write_corpus_s": write_s, "compile_all_s": compile_s, "bytes_on_disk": size,
            "splits": manifest["splits"], "families": dict(families), "cpu_count": os.cpu_count()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/corpus_speed.json")
    args = parser.parse_args()
    report = run(args.n, args.seed)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

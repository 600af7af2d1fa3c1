"""What JAX's file lock costs a shared persistent compilation cache, by the number of entries.

    python benchmarks/cache_lock_cost.py --out benchmarks/results/cache_lock_cost.json

Several processes writing one JAX cache folder (the Ray workers of ``autoreparam fuzz`` and ``sbc``,
two notebooks on the user's cache) race without a size bound: JAX writes an entry in place, unlocked,
so a reader can meet half a file ("Error reading persistent compilation cache entry") and compile
again. A size bound (``jax_compilation_cache_max_size``) makes JAX's ``LRUCache`` take a file lock
around every read and write, but each write then scans the whole folder (a ``stat`` and an ``-atime``
read per entry) to decide what to evict. This times JAX's own ``LRUCache`` on folders of N filler
entries (8 KB each, with their ``-atime`` files), bounded and unbounded: the median seconds of a
``put`` of a new 100 KB entry and of a ``get``, and what ``compilation_cache.adopt_bound`` costs to
give an unbounded folder's entries the ``-atime`` files a bounded cache needs. Every timing is a
median of ``--repeats`` operations; the folders live in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from autoreparam.compilation_cache import SHARED_CACHE_MAX_BYTES, adopt_bound

SIZES = (100, 1_000, 5_000, 20_000)
FILLER_BYTES = 8 * 1024
NEW_ENTRY_BYTES = 100 * 1024


def _fill(folder: Path, n: int, with_atime: bool) -> None:
    folder.mkdir(parents=True)
    filler = os.urandom(FILLER_BYTES)
    for i in range(n):
        (folder / f"jit_filler-{i:064x}-cache").write_bytes(filler)
        if with_atime:
            (folder / f"jit_filler-{i:064x}-atime").write_bytes(time.time_ns().to_bytes(8, "little"))


def _median_seconds(operation, repeats: int) -> float:
    times = []
    for r in range(repeats):
        start = time.perf_counter()
        operation(r)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def measure(n: int, repeats: int, root: Path) -> dict:
    from jax._src.lru_cache import LRUCache

    value = os.urandom(NEW_ENTRY_BYTES)
    row = {"entries": n}
    for label, max_size in (("unbounded", -1), ("bounded", SHARED_CACHE_MAX_BYTES)):
        folder = root / f"{label}_{n}"
        _fill(folder, n, with_atime=max_size != -1)
        cache = LRUCache(str(folder), max_size=max_size)
        row[f"put_{label}_s"] = _median_seconds(lambda r: cache.put(f"jit_new-{r:064x}", value), repeats)
        row[f"get_{label}_s"] = _median_seconds(lambda r: cache.get(f"jit_filler-{r:064x}"), repeats)
    folder = root / f"adopt_{n}"
    _fill(folder, n, with_atime=False)
    start = time.perf_counter()
    written = adopt_bound(folder)
    row["adopt_s"] = time.perf_counter() - start
    row["adopt_written"] = written
    start = time.perf_counter()
    adopt_bound(folder)
    row["adopt_again_s"] = time.perf_counter() - start
    row["put_bound_extra_s"] = row["put_bounded_s"] - row["put_unbounded_s"]
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/cache_lock_cost.json")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="cache-lock-cost-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            rows.append(measure(n, args.repeats, Path(tmp)))
            print(json.dumps(rows[-1]), flush=True)
    report = {
        "command": "python benchmarks/cache_lock_cost.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": f"{platform.node()} ({os.cpu_count()} cores), CPU",
        "bound_bytes": SHARED_CACHE_MAX_BYTES, "filler_bytes": FILLER_BYTES, "new_entry_bytes": NEW_ENTRY_BYTES,
        "repeats": args.repeats, "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

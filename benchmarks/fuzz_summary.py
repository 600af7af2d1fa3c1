"""One fuzzing store's counts, failures, errors and largest identity errors, as JSON.

    python benchmarks/fuzz_summary.py results/fuzz_identity --out benchmarks/results/fuzz_identity_summary.json

RELIABILITY.md's fuzzing table is one store's (`autoreparam reliability --fuzz`); a pass run into a
store of its own (e.g. the identities alone, at a later commit) is summarised here with the same
numbers the report computes (`reliability.fuzz_tables.fuzz_section`), with the commands that wrote it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from autoreparam.benchmark.store import ResultStore, _jsonable
from autoreparam.errors import ArgumentError
from autoreparam.reliability.fuzz_tables import fuzz_section
from autoreparam.reliability.stores import commands_of


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    records = ResultStore(args.store).records()
    if not records:
        raise ArgumentError(f"no fuzzing records in {args.store}: run `autoreparam fuzz --out {args.store}` first")
    summary = {"store": args.store, "commands": commands_of(Path(args.store)),
               **fuzz_section(records)}
    Path(args.out).write_text(json.dumps(_jsonable(summary), indent=1, sort_keys=True) + "\n")
    print(json.dumps(summary["counts"], indent=1), json.dumps(summary["max_relative_error"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Fuzzing checks carried over from the committed summary, beside checks rerun from fresh records.

Per-check records are not committed (`results/` is not), so a checkout that reruns one fuzzing check
(say the invariance check, at new code) has no records of the others. ``autoreparam reliability
--carry-fuzz FOLDERS`` keeps the numbers of the checks that the previous summary read from ``FOLDERS``
and that the fresh records lack, with the commands that made them; the document names the carried
checks. The fresh folders' checks replace the previous summary's.
"""

from __future__ import annotations

import re

from autoreparam.errors import ArgumentError
from autoreparam.reliability.fuzz_tables import INVARIANCE_CHECKS, INVARIANTS, invariance_tables

# The summary's per-check tables beside the counts: which check each belongs to.
_TABLES = {"prior_cells": ("prior",), "max_relative_error": ("identity", "scan_twin"),
           **{table: (check,) for check in INVARIANCE_CHECKS for table in invariance_tables(check)}}


def _out_folder(command: str) -> str | None:
    match = re.search(r"--out[ =](\S+)", command)
    return match.group(1) if match else None


def made_in(command: str, folders) -> bool:
    """Whether ``command`` wrote into one of ``folders``, its ``--out`` given relative or absolute.

    A pass started with ``--out /work/main/results/inv_own_seeds`` belongs to the folder the summary
    names ``results/inv_own_seeds``: compared as equal strings, carrying that check dropped the
    command from the document's list (found in use, 2026-12-06).
    """
    out = _out_folder(command)
    if out is None:
        return False
    out = out.rstrip("/")
    return any(out == f.rstrip("/") or (not f.startswith("/") and out.endswith("/" + f.rstrip("/"))) for f in folders)


def carry_fuzz_checks(previous: dict, fresh: dict, folders, fresh_settings: dict) -> tuple[dict, list, list, list]:
    """Merge the previous summary's checks read from ``folders`` into the ``fresh`` fuzzing section.

    Returns ``(fuzz section, carried checks, their commands, their folders)``. Refused (ArgumentError)
    when ``folders`` were not read by the previous summary, when they leave nothing to carry, or when
    the previous checks ran with other sampling settings than the fresh ones (one sentence states them).
    """
    known = previous.get("fuzz_folders", [])
    unknown = [f for f in folders if f not in known]
    if not previous.get("fuzz") or unknown:
        raise ArgumentError(f"--carry-fuzz {','.join(unknown or folders)}: the committed summary's fuzzing section was "
                            f"not read from {'that folder' if len(unknown) == 1 else 'those folders'} (it names "
                            f"{', '.join(known) or 'none'}); give folders it names")
    if previous.get("fuzz_settings") != fresh_settings:
        raise ArgumentError(f"--carry-fuzz: the carried checks ran with {previous.get('fuzz_settings')}, the fresh ones "
                            f"with {fresh_settings}; rerun them alike, or do not carry them")
    old = previous["fuzz"]
    ran = {k for k, v in fresh.get("counts", {}).items() if v["programs"]}  # the summary lists every check, run or not
    carried = [k for k in INVARIANTS if old["counts"].get(k, {}).get("programs") and k not in ran]
    if not carried:
        raise ArgumentError("--carry-fuzz: the fresh records hold every check the committed summary has; nothing to carry")
    merged = {**fresh, "counts": {**fresh.get("counts", {}), **{k: old["counts"][k] for k in carried}}}
    for table, checks in _TABLES.items():
        if table in old and all(k in carried for k in checks if k in old["counts"]):
            merged[table] = old[table]
    for listing in ("failures", "errors"):
        rows = fresh.get(listing, []) + [r for r in old.get(listing, []) if r["invariant"] in carried]
        merged[listing] = sorted(rows, key=lambda r: INVARIANTS.index(r["invariant"]))  # stable: program order kept
    commands = [c for c in previous.get("commands", {}).get("fuzz", []) if made_in(c, folders)]
    return merged, carried, commands, list(folders)

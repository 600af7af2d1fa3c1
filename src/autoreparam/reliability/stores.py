"""The fuzzing records of several result folders, read as one: RELIABILITY.md's fuzzing tables.

Passes of ``autoreparam fuzz`` are often run into folders of their own (the identities alone, one
method's prior check, the invariance check at a new setting) and at different commits. The report
may read several (``--fuzz A,B,C``); each folder's commands, with their commits, are listed in it.
Refusals keep the tables honest: a check (task key) found in two folders would be counted twice;
sampling checks run with different settings (e.g. another target acceptance), or invariance checks
of different runs (three, or four with `auto`), would be mixed; and a named folder without results
(a typo) would silently drop out while the report still named it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autoreparam.benchmark.store import ResultStore
from autoreparam.errors import ArgumentError
from autoreparam.reliability.prior import FIXED_RUNS


@dataclass
class FuzzRecords:
    records: list[dict]
    commands: list[str]  # every folder's command lines, folder by folder
    wall_seconds: float
    settings: dict | None  # the sampling checks' `RunSettings` (None: identities only)
    folders: list[str]


def fuzz_folders(value) -> list[Path]:
    """``--fuzz``'s folders: a comma-separated string, a path, or a list of them."""
    items = value.split(",") if isinstance(value, str) else [value] if isinstance(value, Path) else list(value)
    return [Path(str(v).strip()) for v in items if str(v).strip()]


def commands_of(root: Path) -> list[str]:
    """The command lines that wrote a results folder (`reliability.cli.record_command`), oldest first."""
    path = root / "commands.txt"
    return [line for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def wall_of(root: Path) -> float:
    """The wall seconds the folder's commands recorded, summed."""
    path = root / "wall_seconds.txt"
    return sum(float(line.split()[0]) for line in path.read_text().split("\n") if line.strip()) if path.exists() else 0.0


def read_fuzz_records(value) -> FuzzRecords:
    """Every fuzzing record of the folders in ``value`` (`fuzz_folders`), refusing duplicates and mixed settings."""
    folders = fuzz_folders(value)
    records, commands, wall, settings, settings_from, seen, runs_from = [], [], 0.0, None, None, {}, {}
    if len(folders) > 1:  # one folder may be empty: the report then carries its section over
        missing = [str(f) for f in folders if not (f / "cells").is_dir()]
        if missing:
            raise ArgumentError(f"no fuzzing results in {', '.join(missing)}: check the --fuzz folders")
    for folder in folders:
        for record in ResultStore(folder).records():
            key = record.get("key")
            if key in seen:
                raise ArgumentError(f"{seen[key]} and {folder} both hold the check {key}: it would be counted twice; "
                                    "pass only one of them to --fuzz")
            seen[key] = folder
            stored = record.get("settings")
            if stored is not None:
                stored = {"target_accept": None, **stored}  # records written before target_accept existed
                if settings is None:
                    settings, settings_from = stored, folder
                elif stored != settings:
                    raise ArgumentError(f"{settings_from} and {folder} hold sampling checks run with different settings "
                                        f"({settings} and {stored}); report them separately")
            if record.get("kind") == "invariance":
                runs = tuple(record.get("invariance_runs", FIXED_RUNS))
                runs_from.setdefault(runs, folder)
                if len(runs_from) > 1:
                    (a, fa), (b, fb) = list(runs_from.items())[:2]
                    raise ArgumentError(f"{fa} holds invariance checks of the runs {','.join(a)} and {fb} of "
                                        f"{','.join(b)}; report them separately")
            records.append(record)
        commands += commands_of(folder)
        wall += wall_of(folder)
    return FuzzRecords(records, commands, wall, settings, [str(f) for f in folders])

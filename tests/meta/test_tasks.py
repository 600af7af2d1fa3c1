"""Task running: results are written as they finish, finished tasks are skipped, failures are recorded."""

from __future__ import annotations

import json

from autoreparam.meta.files import write_json
from autoreparam.meta.tasks import Task, pending, run_tasks


def _square(*, out, x):
    if x < 0:
        raise ValueError("negative")
    write_json(out, {"x": x, "square": x * x})
    return {"square": x * x}


def test_serial_tasks_write_skip_and_record_failures(tmp_path):
    tasks = [Task(tmp_path / f"{x}.json", {"x": x}) for x in (1, 2, -1)]
    summaries = run_tasks(_square, tasks, serial=True, progress=False)
    assert [s.get("square") for s in summaries] == [1, 4, None]
    assert "negative" in json.loads((tmp_path / "-1.json").read_text())["error"]
    assert pending(tasks) == [tasks[2]]  # a rerun retries the failure and skips the rest
    assert [s["out"] for s in run_tasks(_square, tasks, serial=True, progress=False)] == [str(tmp_path / "-1.json")]


def test_json_is_written_atomically_without_nan(tmp_path):
    import numpy as np

    path = write_json(tmp_path / "a.json", {"v": np.float32(np.nan), "a": np.arange(3)})
    assert json.loads(path.read_text()) == {"v": None, "a": [0, 1, 2]}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]

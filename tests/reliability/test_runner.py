"""The Ray runner: a local cluster, results saved as JSON as they finish, resumable, a deadline."""

from __future__ import annotations

import pytest

from autoreparam.benchmark.store import ResultStore
from autoreparam.reliability.runner import run_tasks, worker_environment

# Ray starts its processes with fork+exec from a process that has imported JAX, and warns about it.
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning", "ignore::DeprecationWarning")


def square(task: dict) -> dict:
    import os

    if task.get("crash"):
        os._exit(1)  # the worker dies, as when the machine runs out of memory
    return {"value": task["x"] ** 2, "xla_flags": os.environ.get("XLA_FLAGS", "")}


def test_ray_runs_every_task_once_a_rerun_skips_them_and_a_dead_worker_stops_nothing(tmp_path):
    import sys

    from ray import cloudpickle

    # Workers cannot import this test module by name: send `square` by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    store = ResultStore(tmp_path)
    tasks = [{"key": f"t{i}", "x": i} for i in range(5)]
    env = worker_environment(tmp_path / "cache")
    assert run_tasks(tasks[:3], square, store, num_cpus=1, env=env, progress=False) == 3
    crash = {"key": "crash", "x": 0, "crash": True}
    assert run_tasks([crash] + tasks, square, store, num_cpus=1, env=env, progress=False, max_calls=2) == 2
    records = {r["key"]: r for r in store.records()}
    assert "crash" not in records  # a dead worker's task is not saved; the others still ran
    assert [records[f"t{i}"]["value"] for i in range(5)] == [0, 1, 4, 9, 16]
    assert "intra_op_parallelism_threads=1" in records["t0"]["xla_flags"]  # the worker got its environment


def test_serial_mode_and_deadline(tmp_path):
    store = ResultStore(tmp_path)
    tasks = [{"key": f"t{i}", "x": i} for i in range(4)]
    assert run_tasks(tasks, square, store, serial=True, progress=False, deadline_minutes=0.0) == 0
    assert run_tasks(tasks, square, store, serial=True, progress=False) == 4


def test_a_rerun_tries_a_task_that_ended_in_an_error_again(tmp_path):
    """A task saved as an error was skipped by every rerun, even after the bug was fixed (found in review)."""
    store = ResultStore(tmp_path)
    store.save("t0", {"status": "error", "error": "ValueError: a bug since fixed"})
    store.save("t1", {"status": "ok", "value": 1})
    tasks = [{"key": f"t{i}", "x": i} for i in range(3)]
    assert run_tasks(tasks, square, store, serial=True, progress=False) == 2  # t0 again, and t2; not t1
    assert store.load("t0")["value"] == 0 and store.load("t1") == {"status": "ok", "value": 1, "key": "t1"}


def test_serial_mode_drops_compiled_programs_every_max_calls_tasks(tmp_path, monkeypatch):
    import jax
    import jax.numpy as jnp

    from autoreparam.mcmc.programs import PROGRAMS

    cleared = []
    real_clear = jax.clear_caches
    monkeypatch.setattr(jax, "clear_caches", lambda: (cleared.append(len(PROGRAMS._compiled)), real_clear()))

    def compile_one(task):
        PROGRAMS(("runner_test", task["x"]), lambda: lambda v: v * task["x"], (jnp.ones(2),))
        return {"value": task["x"]}

    tasks = [{"key": f"t{i}", "x": i} for i in range(5)]
    assert run_tasks(tasks, compile_one, ResultStore(tmp_path), serial=True, progress=False, max_calls=2) == 5
    # After tasks 2 and 4, with our cache already emptied each time (two programs each).
    assert cleared == [0, 0]
    kept = [key for (key, _) in PROGRAMS._compiled if key[0] == "runner_test"]
    assert kept == [("runner_test", 4)]  # only the task after the last release


def test_worker_environment_hoists_constants_and_caches_compilations(tmp_path, monkeypatch):
    monkeypatch.delenv("AUTOREPARAM_COMPILATION_CACHE", raising=False)  # the suite runs with it off
    env = worker_environment(tmp_path)
    assert env["JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS"] == "True" and env["JAX_EMBEDDED_CONSTANTS_MAX_BYTES"] == "0"
    assert env["JAX_COMPILATION_CACHE_DIR"] == str(tmp_path.resolve())
    assert "JAX_COMPILATION_CACHE_DIR" not in worker_environment(None, fast_compile=True)


def test_commands_are_recorded_with_their_commit_even_without_a_checkout(tmp_path, monkeypatch):
    import subprocess

    from autoreparam.reliability import cli

    cli.record_command(tmp_path, ["fuzz", "--n", "5"])
    line = (tmp_path / "commands.txt").read_text().splitlines()[-1]
    assert line.endswith(" autoreparam fuzz --n 5")

    def no_git(*args, **kwargs):
        raise OSError("no git here")

    monkeypatch.setattr(subprocess, "run", no_git)
    monkeypatch.setenv("GIT_COMMIT", "0e0998d")
    cli.record_command(tmp_path, ["--n", "9"], program="python benchmarks/fuzz_processes.py")
    assert (tmp_path / "commands.txt").read_text().splitlines()[-1].endswith(
        " 0e0998d python benchmarks/fuzz_processes.py --n 9")


def test_the_compilation_cache_s_off_switch_holds_in_the_workers(tmp_path, monkeypatch):
    # Workers were given a cache folder whatever AUTOREPARAM_COMPILATION_CACHE said (found in review).
    monkeypatch.setenv("AUTOREPARAM_COMPILATION_CACHE", "off")
    env = worker_environment(tmp_path / "cache")
    assert "JAX_COMPILATION_CACHE_DIR" not in env and env["AUTOREPARAM_COMPILATION_CACHE"] == "off"
    monkeypatch.delenv("AUTOREPARAM_COMPILATION_CACHE")
    assert "JAX_COMPILATION_CACHE_DIR" in worker_environment(tmp_path / "cache")


def test_replicating_workers_share_the_cache_folder_under_a_lock_even_one_an_unbounded_run_wrote(tmp_path, monkeypatch):
    # Unbounded, JAX writes entries in place without a lock, and a worker could read another's half-written
    # entry; bounded, every write failed on a folder an unbounded run had filled (its entries lack "-atime").
    import os
    import subprocess
    import sys

    from jax._src.lru_cache import LRUCache

    monkeypatch.delenv("AUTOREPARAM_COMPILATION_CACHE", raising=False)  # the suite runs with it off
    folder = tmp_path / "jax_cache"
    folder.mkdir()
    LRUCache(str(folder), max_size=-1).put("jit_earlier-run", b"an earlier unbounded run's entry")
    assert "JAX_COMPILATION_CACHE_MAX_SIZE" not in worker_environment(folder)  # fuzz: distinct programs
    env = {**os.environ, **worker_environment(folder, lock_cache=True)}
    assert int(env["JAX_COMPILATION_CACHE_MAX_SIZE"]) >= 2**30  # a bound that evicts nothing a run writes
    assert (folder / "jit_earlier-run-atime").exists()
    script = "import jax, jax.numpy as jnp; jax.jit(lambda x: jnp.sin(x) * 3.0)(jnp.ones(7)).block_until_ready()"
    run = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", script], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "persistent compilation cache" not in run.stderr, run.stderr[-2000:]
    assert (folder / ".lockfile").exists()  # JAX locked the folder
    written = [p for p in folder.glob("*-cache") if not p.name.startswith("jit_earlier")]
    assert written and all(p.with_name(p.name.removesuffix("-cache") + "-atime").exists() for p in written)


def test_adopting_a_bound_writes_each_missing_access_time_once(tmp_path):
    from autoreparam.compilation_cache import adopt_bound

    assert adopt_bound(tmp_path / "absent") == 0
    (tmp_path / "a-cache").write_bytes(b"x")
    (tmp_path / "b-cache").write_bytes(b"y")
    (tmp_path / "b-atime").write_bytes((7).to_bytes(8, "little"))
    assert adopt_bound(tmp_path) == 1 and adopt_bound(tmp_path) == 0
    assert int.from_bytes((tmp_path / "a-atime").read_bytes(), "little") == (tmp_path / "a-cache").stat().st_mtime_ns
    assert (tmp_path / "b-atime").read_bytes() == (7).to_bytes(8, "little")  # an existing one is kept

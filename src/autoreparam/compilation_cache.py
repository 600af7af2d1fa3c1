"""JAX's persistent compilation cache, in the user's cache folder, switched on by the first ``infer`` call.

Within one process ``mcmc.programs`` already compiles each program once; this keeps the compiled
executables on disk so that a new process (a new notebook session, the next script) skips XLA's
compilation too. It is enabled lazily, never at import (importing autoreparam touches no file).

Off switch: ``AUTOREPARAM_COMPILATION_CACHE=0`` (or ``off``, ``false``, ``no``, ``n``, ``none``,
``disable``, ``disabled``; on: unset, ``1``, ``on``, ``true``, ``yes``; anything else warns), or call
``autoreparam.compilation_cache.disable()`` before the first ``infer``. ``AUTOREPARAM_CACHE_DIR``
moves it (default: ``$XDG_CACHE_HOME/autoreparam/jax`` or ``~/.cache/autoreparam/jax``). A cache
directory the user already gave JAX (``jax_compilation_cache_dir``) is left as it is.

It has no size bound (delete the folder to free its space): a bound makes JAX lock the folder, which
only processes running at the same time need, and scan it on every write (benchmarks/cache_lock_cost.py).
Workers that share one folder and compile the same programs take the bound (`adopt_bound`,
``reliability.runner.worker_environment``).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import jax

_STATE = {"decided": False, "enabled": False, "path": None}
# A size bound far above any cache we write, so nothing is evicted: set only because with a bound JAX's
# LRUCache takes a file lock around each read and write (jax/_src/lru_cache.py); without one it writes
# entries in place, and a second process can read half a file ("Error reading persistent compilation
# cache entry") and compile again. The lock's cost: benchmarks/cache_lock_cost.py.
SHARED_CACHE_MAX_BYTES = 16 * 2**30
OFF_VALUES = ("0", "off", "false", "no", "n", "none", "disable", "disabled")
ON_VALUES = ("", "1", "on", "true", "yes", "y", "enable", "enabled")


def default_path() -> Path:
    root = os.environ.get("AUTOREPARAM_CACHE_DIR")
    if root:
        # Absolute: JAX was given "rel/jax", which moved with the working directory (found in review).
        return Path(root).expanduser().resolve() / "jax"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "autoreparam" / "jax"


def adopt_bound(folder: str | os.PathLike) -> int:
    """Give every entry of a cache folder written without a size bound the access-time file that JAX's
    bounded ``LRUCache`` reads for each entry on every write; returns how many it wrote.

    Without them, a bounded cache on a folder an unbounded one filled fails every write with a
    ``FileNotFoundError`` on ``<key>-atime`` (seen as "Error writing persistent compilation cache entry").
    The time written is the entry's modification time, the format is JAX's (8 bytes, little-endian
    nanoseconds). A missing folder has nothing to adopt.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return 0
    written = 0
    for entry in folder.glob("*-cache"):
        atime = entry.with_name(entry.name.removesuffix("-cache") + "-atime")
        if atime.exists():
            continue
        try:
            atime.write_bytes(entry.stat().st_mtime_ns.to_bytes(8, "little"))
        except FileNotFoundError:  # evicted or replaced by another process meanwhile
            continue
        written += 1
    return written


def disable() -> None:
    """Do not use a persistent cache in this process (call before the first ``infer``)."""
    _STATE.update(decided=True, enabled=False)


def switched_off() -> bool:
    """Whether ``AUTOREPARAM_COMPILATION_CACHE`` says off."""
    return os.environ.get("AUTOREPARAM_COMPILATION_CACHE", "1").strip().lower() in OFF_VALUES


def disable_every_persistent_cache() -> None:
    """No persistent compilation cache in this process, ours or one the user gave JAX
    (``JAX_COMPILATION_CACHE_DIR``, ``jax_compilation_cache_dir``): for timing first calls, where an
    earlier run's executables on disk would be read instead of compiled (``autoreparam bench``)."""
    disable()
    jax.config.update("jax_enable_compilation_cache", False)


def ensure() -> bool:
    """Enable the cache once per process, unless switched off; returns whether it is on."""
    if _STATE["decided"]:
        return _STATE["enabled"]
    _STATE["decided"] = True
    switch = os.environ.get("AUTOREPARAM_COMPILATION_CACHE", "1").strip().lower()
    if switched_off():
        return False
    if switch not in ON_VALUES:
        # "disable" and "none" once left the cache on without a word (found in review).
        warnings.warn(f"AUTOREPARAM_COMPILATION_CACHE={switch!r} is neither on nor off; the persistent compilation "
                      f"cache stays on. To switch it off, set it to one of {', '.join(OFF_VALUES)}", UserWarning,
                      stacklevel=3)
    if jax.config.jax_compilation_cache_dir:  # the user's own choice stands
        _STATE.update(enabled=True, path=jax.config.jax_compilation_cache_dir)
        return True
    path = default_path()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        # An unwritable home is not a reason to fail inference, but the user should know why each new
        # process compiles again (it was switched off without a word; found in review).
        warnings.warn(f"the persistent compilation cache is off: {path} cannot be made ({error.strerror}); set "
                      "AUTOREPARAM_CACHE_DIR to a folder you can write, or AUTOREPARAM_COMPILATION_CACHE=0 to "
                      "silence this", UserWarning, stacklevel=3)
        return False
    jax.config.update("jax_compilation_cache_dir", str(path))
    # Tiny programs (eager operations) are not worth a file each; the graph's probe program and the
    # meta network compile in 0.25 to 0.4 s, and a fresh process reuses them (benchmarks/predict_first_call.py).
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.2)
    _STATE.update(enabled=True, path=str(path))
    return True

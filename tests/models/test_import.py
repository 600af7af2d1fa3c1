"""Importing the package reads no data, creates no folder and opens no network connection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import autoreparam

_PROBE = textwrap.dedent(
    """
    import json, os, sys
    import jax, numpy, numpyro, numpyro.distributions, numpyro.infer  # their own imports may touch files
    events = []
    def hook(event, args):
        if event in ("open", "os.listdir", "os.scandir", "os.mkdir", "socket.connect", "socket.getaddrinfo"):
            events.append([event, str(args[0]) if args else ""])
    sys.addaudithook(hook)
    import autoreparam.models, autoreparam.models.data
    from autoreparam.models import data as _data, load, available  # noqa: F401
    print(json.dumps(events))
    """
)


def test_import_touches_no_data_cache_or_network(tmp_path):
    data_dir, cache_dir = tmp_path / "data", tmp_path / "cache"
    env = {
        **os.environ,
        "AUTOREPARAM_DATA": str(data_dir),
        "XDG_CACHE_HOME": str(cache_dir),
        "PYTHONPATH": str(Path(autoreparam.__file__).resolve().parents[1]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "JAX_PLATFORMS": "cpu",
    }
    result = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    events = json.loads(result.stdout.strip().splitlines()[-1])
    ours = cache_dir / "autoreparam"
    assert not data_dir.exists() and not ours.exists()
    assert not [e for e in events if e[0].startswith("socket")], events
    for event, path in events:
        assert str(data_dir) not in path and str(ours) not in path, (event, path)
        # No data file (or parsed copy) anywhere is opened at import.
        assert not path.endswith((".dat", ".data", ".json", ".npz", ".csv")), (event, path)
    # The hook was live while the package was imported (it saw the modules being read).
    assert any("registry" in path and "models" in path for event, path in events if event == "open"), events[:20]

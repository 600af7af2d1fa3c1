"""Time to lambda on a first call: one prediction in a fresh Python process, as a user's new session meets it.

A prediction's first call in a process pays the weights' loading, the graph's tracing and probes and
the network's compilation; a repeat call pays none of them. Measured inside a long-lived evaluation
worker, "first" would depend on which tasks the worker ran before (the weights already loaded, the
network's program already compiled for the same padded shapes), so it runs in a child process of its
own, with JAX's backend started before the clock (every JAX program pays that, whatever it does).

``cache_dir`` is the child's persistent compilation cache (`autoreparam.compilation_cache`): an empty
folder gives the cold case (a first session), the same folder again the warm case (the next session).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from autoreparam.errors import AutoreparamError

_CHILD = r"""
import json, sys, time
import jax
jax.jit(lambda x: x + 1)(1.0)  # JAX's backend is up, as after any earlier JAX work
from autoreparam.meta.predict import default_network, predict
from autoreparam.meta.weights import load_network
from autoreparam.meta_eval.models import load_spec
spec, network_stem = json.loads(sys.argv[1]), sys.argv[2]
model, args, kwargs = load_spec(spec)
start = time.perf_counter()
network = default_network() if network_stem == "shipped" else load_network(network_stem)[0]
load_seconds = time.perf_counter() - start
first = predict(model, *args, network=network, **kwargs)
start = time.perf_counter()
again = predict(model, *args, network=network, **kwargs)
again_seconds = time.perf_counter() - start
print(json.dumps({"load": load_seconds, "fit": first.seconds.get("fit", 0.0), "graph": first.seconds["graph"],
                  "network": first.seconds["network"],
                  "first_total": load_seconds + first.seconds["total"], "again": again_seconds}))
"""


def first_prediction(spec: dict, cache_dir: str | Path, network: str = "shipped", src: str | None = None,
                     timeout: float = 600.0) -> dict:
    """Seconds of one fresh process's prediction for ``spec`` (`meta_eval.models.load_spec`).

    Returns ``load`` (reading the weights), ``fit`` (the fit probes' short fit; 0 for a network read
    at the prior points), ``graph`` and ``network`` (compilation included), ``first_total`` (their
    sum) and ``again`` (a repeat call in the same process). ``network``: a weights stem, or
    "shipped". ``src``: run the child on another checkout's ``src`` folder.
    """
    env = {**os.environ, "AUTOREPARAM_CACHE_DIR": str(cache_dir), "AUTOREPARAM_COMPILATION_CACHE": "1"}
    if src:
        env["PYTHONPATH"] = str(Path(src).resolve())
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(spec), str(network)], env=env,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as error:
        raise AutoreparamError(f"the first prediction of {spec} took more than {timeout:.0f} s") from error
    if out.returncode != 0:
        raise AutoreparamError(f"the first prediction of {spec} failed in its own process:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])

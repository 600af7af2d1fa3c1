"""End-to-end timing of one zoo model as a user meets it: ``ar.infer(method="meta")`` against
``ar.infer(method="vip", kernel="nuts")`` (the library's per-model VIP, paper protocol), and the
time to lambda of each (a Ray task, one JSON).

Time to 1,000 effective draws = every phase before sampling (analysis, prediction or VI, compilation,
warm-up) + the sampling phase's seconds x 1000 / (its minimum bulk ESS): the measured run, scaled
to 1,000 effective draws of its worst element. Both runs take place in one process, meta first, after
a trivial JAX operation (so neither pays JAX's start-up; meta pays any other first-use cost). Time to
lambda on a first call is measured apart, in fresh processes (`meta_eval.first_prediction`): with an
empty persistent compilation cache (``predict_first_seconds``) and then with what that run left in it.
"""

from __future__ import annotations

import tempfile
import time

import numpy as np

from autoreparam.meta.files import write_json
from autoreparam.meta_eval.machine import describe_machine
from autoreparam.meta_eval.first_prediction import first_prediction

FORMAT = "autoreparam.meta_eval.timing"


def _end_to_end(model, args, kwargs, method: str, num_samples: int, **options) -> dict:
    import autoreparam as ar

    start = time.perf_counter()
    result = ar.infer(model, *args, method=method, num_chains=4, num_warmup=1000, num_samples=num_samples,
                      seed=0, progress=False, **options, **kwargs)
    total = time.perf_counter() - start
    sampling = float(result.chains.seconds.get("sampling", 0.0))
    ess = float(result.diagnostics.standard.min_ess_bulk)
    return {"seconds_total": total, "seconds_sampling": sampling, "min_ess_bulk": ess,
            "time_to_1000_ess": (total - sampling) + sampling * 1000.0 / ess if ess > 0 else None,
            "ess_per_1000_grads": 1000.0 * ess / float(np.sum(result.chains.grad_evals)),
            "timing": result.timing, "decision": result.decision, "max_r_hat": result.diagnostics.standard.max_r_hat}


def time_model(*, out, spec: dict, num_samples: int) -> dict:
    import jax.numpy as jnp

    from autoreparam.meta.predict import predict
    from autoreparam.meta_eval.models import load_spec, spec_name

    # The first call in a fresh process of its own, with an empty and then a filled persistent
    # compilation cache: in this worker it would depend on the tasks run before it.
    with tempfile.TemporaryDirectory(prefix="autoreparam-cache-") as cache_dir:
        cold = first_prediction(spec, cache_dir)
        warm = first_prediction(spec, cache_dir)
    jnp.ones(1).block_until_ready()
    model, args, kwargs = load_spec(spec)
    predict(model, *args, **kwargs)
    start = time.perf_counter()
    again = predict(model, *args, **kwargs)
    again_seconds = time.perf_counter() - start
    meta = _end_to_end(model, args, kwargs, "meta", num_samples)
    vip = _end_to_end(model, args, kwargs, "vip", num_samples, kernel="nuts")
    payload = {"format": FORMAT, "name": spec_name(spec), "spec": spec, "ran_on": describe_machine(),
               "predict_first_seconds": cold["first_total"], "predict_first_parts": cold,
               "predict_first_warm_cache_seconds": warm["first_total"], "predict_first_warm_cache_parts": warm,
               "predict_again_seconds": again_seconds, "predict_again_parts": again.seconds,
               "vip_time_to_lambda": vip["timing"]["variational"] + vip["timing"].get("variational_compile", 0.0), "meta": meta, "vip": vip}
    write_json(out, payload)
    return {"name": payload["name"]}

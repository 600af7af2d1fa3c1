"""One evaluation task: every method's ELBO and NUTS efficiency on one model (a Ray task, one JSON).

ELBOs: every centring of `centrings.targets` is fitted in one vmapped program (`fit_parameterisations`,
so the comparison is under one protocol and the model compiles once). Efficiency: NUTS in each
method's centring, all methods sharing one compiled sampler (the centring is a runtime argument),
every chain started the same way (`meta.start.start_without_fit`: initial values plus a standard
normal perturbation, unit metric, Stan's window adaptation), so that only the parameterisation
differs. ESS is ArviZ's rank-normalised bulk ESS on the original coordinates, pooled over chains,
minimum over elements, per 1000 gradient evaluations of the sampling phase.
"""

from __future__ import annotations

import time

import numpy as np

from autoreparam.meta.files import write_json
from autoreparam.meta_eval.machine import describe_machine

FORMAT = "autoreparam.meta_eval.model"


def _networks(network_stems: dict):
    from autoreparam.meta.predict import default_network
    from autoreparam.meta.weights import load_network

    return {label: (default_network() if stem is None else load_network(stem)[0]) for label, stem in network_stems.items()}


def _vi_config(config: dict):
    from autoreparam.vi.protocol import VIConfig

    tuples = ("learning_rates", "decay_fractions", "decay_factors", "vip_starts")
    return VIConfig(**{k: tuple(v) if k in tuples else v for k, v in config.items()})


def _nuts_runs(coords, fits, init, methods, nuts: dict) -> dict:
    from autoreparam.diagnostics.standard import standard_diagnostics
    from autoreparam.mcmc.config import NUTSConfig
    from autoreparam.mcmc.nuts import NUTSSampler
    from autoreparam.meta.start import start_without_fit
    from autoreparam.sampling import draws_from_q

    config = NUTSConfig(num_warmup=nuts["num_warmup"], num_samples=nuts["num_samples"],
                        max_num_doublings=nuts["max_num_doublings"])
    sampler = NUTSSampler(coords, config)
    runs = {}
    for method in methods:
        param = fits[method].parameterisation
        start = start_without_fit(coords, param, init)
        runs[method] = []
        for seed in nuts["seeds"]:
            begin = time.perf_counter()
            chains = sampler.run(param, start.scale**2, draws_from_q(start, nuts["num_chains"], seed), seed)
            diag = standard_diagnostics(coords.split_original(chains.draws))
            grads = float(np.sum(chains.grad_evals))
            runs[method].append({
                "seed": seed, "ess_per_1000": 1000.0 * diag.min_ess_bulk / grads, "min_ess_bulk": diag.min_ess_bulk,
                "min_ess_tail": diag.min_ess_tail, "max_r_hat": diag.max_r_hat, "grad_evals": grads,
                "warmup_grad_evals": float(np.sum(chains.warmup_grad_evals)),
                "divergences": int(np.sum(chains.divergences)), "seconds": time.perf_counter() - begin,
                "seconds_parts": chains.seconds,
            })
    return runs


def evaluate_model(*, out, spec: dict, vi_config: dict, nuts: dict | None, networks: dict, prototype: str | None,
                   ess_methods: list) -> dict:
    """Fit every centring of the model ``spec``, run NUTS in ``ess_methods``; write ``out``.

    ``nuts=None``: fixed centrings only, no VIP and no NUTS (the ELBO comparison of other networks).
    """
    from autoreparam.coordinates import Coordinates
    from autoreparam.graph import model_graph
    from autoreparam.initial import initial_values
    from autoreparam.meta.prototype_train import load_prototype
    from autoreparam.meta_eval.centrings import predicted, summary, targets
    from autoreparam.meta_eval.models import load_spec, spec_name
    from autoreparam.reparam.selection import select_sites
    from autoreparam.reparam.sites import analyse_model
    from autoreparam.vi.fits import fit_parameterisations

    model, args, kwargs = load_spec(spec)
    structure = analyse_model(model, *args, **kwargs)
    plan = select_sites(structure, "default")
    coords = Coordinates(model, args, kwargs, plan)
    init = initial_values(model, args, kwargs, structure.names)
    start = time.perf_counter()
    graph = model_graph(model, *args, **kwargs)
    graph_seconds = time.perf_counter() - start
    proto = load_prototype(prototype)[0] if prototype else None
    predictions = predicted(plan, graph, _networks(networks), proto, (model, tuple(args), dict(kwargs)))
    config = _vi_config(vi_config)
    start = time.perf_counter()
    fits, fit_timing = fit_parameterisations(coords, targets(plan, predictions, config.vip_starts, nuts is not None),
                                             init, config, seed=0, label="eval")
    fit_seconds = time.perf_counter() - start
    payload = {
        "format": FORMAT, "name": spec_name(spec), "spec": spec, "ran_on": describe_machine(),
        "num_latent_elements": int(coords.original_dim), "num_planned_elements": int(sum(s.size for s in plan.sites)),
        "elbo": {k: f.elbo for k, f in fits.items()}, "elbo_se": {k: f.elbo_se for k, f in fits.items()},
        "lambda": {k: summary(f.parameterisation) for k, f in fits.items()},
        "seconds": {"graph": graph_seconds, "fits": fit_seconds, **fit_timing},
    }
    if nuts is not None and plan.sites:
        payload["nuts"] = _nuts_runs(coords, fits, init, ess_methods, nuts)
        payload["nuts_config"] = nuts
    write_json(out, payload)
    return {"name": payload["name"]}

"""``infer``: one entry point from a centred NumPyro model to posterior samples.

Pipeline: site analysis -> site plan -> coordinates -> variational fits (CP, NCP, VIP as the method
needs) -> sampler (HMC, iHMC or NUTS, started from q and preconditioned by its scales) -> diagnostics.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from typing import Callable, Sequence

import numpy as np

from autoreparam import compilation_cache
from autoreparam.auto import run_auto
from autoreparam.coordinates import Coordinates
from autoreparam.errors import ArgumentError, ConvergenceWarning
from autoreparam.explain import nonfinite_gradient_warning
from autoreparam.initial import ORIGIN, PRIOR_MEDIAN, check_init_strategy, initial_values
from autoreparam.meta.network import PROBES
from autoreparam.meta.predict import predict as meta_predict
from autoreparam.meta.start import start_without_fit
from autoreparam.mcmc.config import PAPER_L_GRID, STEP_SIZE_RULES, HMCConfig, NUTSConfig
from autoreparam.mcmc.oracle import check_grid
from autoreparam.reparam.parameterisation import Parameterisation
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model
from autoreparam.progress import SamplingProgress
from autoreparam.result import InferenceResult, compute_diagnostics
from autoreparam.sampling import ORACLE_METRICS, sample_hmc, sample_nuts
from autoreparam.validation import (check_call, check_counts, check_target_accept, refuse_nonfinite_draws,
                                    warn_if_unrolled)
from autoreparam.vi.fits import fit_or_retry, retry_note
from autoreparam.vi.protocol import FAST, VIConfig, check_config
from autoreparam.vi.vip import run_vip

METHODS = ("cp", "ncp", "vip", "ihmc", "auto", "given", "meta")
KERNELS = ("hmc", "nuts")
# "auto" needs the VIP fit only as evidence next to pilot chains, so it uses a lighter protocol.


def _check_arguments(method, kernel, num_chains, num_warmup, num_samples, num_leapfrog) -> str:
    if method not in METHODS:
        raise ArgumentError(f"unknown method '{method}'; choose one of {', '.join(METHODS)}")
    kernel = ("nuts" if method in ("auto", "meta") else "hmc") if kernel is None else kernel
    if kernel not in KERNELS:
        raise ArgumentError(f"unknown kernel '{kernel}'; choose one of {', '.join(KERNELS)}")
    if method == "ihmc" and kernel != "hmc":
        raise ArgumentError("method 'ihmc' interleaves fixed-length HMC steps; use kernel='hmc'")
    if method == "auto" and kernel != "nuts":
        raise ArgumentError("method 'auto' samples with NUTS; use kernel='nuts' or leave kernel unset")
    check_counts(num_chains, num_warmup, num_samples, num_leapfrog)
    return kernel


def given_parameterisation(plan, value) -> Parameterisation:
    """``parameterisation=`` of ``method="given"``: a Parameterisation, a lambda in [0, 1] for every
    element, or a mapping site -> lambda (scalar or array of the site's shape); 1 = centred."""
    if value is None:
        raise ArgumentError("method 'given' needs parameterisation=: a lambda in [0, 1], a mapping from site "
                            "name to lambda, or an autoreparam.Parameterisation")
    if isinstance(value, Parameterisation):
        missing = sorted(set(plan.names) ^ set(value.names))
        if missing:
            raise ArgumentError(f"the parameterisation's sites {value.names} differ from the plan's {plan.names}")
        return value
    return Parameterisation.tied(plan, value)


def _variational_fits(method, coords, init, vi_config, form, seed, given=None, starts=None):
    """``(VIPResult or None, fits by label, (compile seconds, run seconds))`` of the fits a method needs."""
    plan = coords.plan
    if method == "vip":
        vip = run_vip(coords, init, vi_config, form=form, discrete=False, seed=seed, starts=starts)
        timings = list(vip.timing.values())
        return vip, vip.fits, (sum(t["compile_seconds"] for t in timings), sum(t["run_seconds"] for t in timings))
    targets = {"cp": Parameterisation.centred(plan), "ncp": Parameterisation.non_centred(plan), "given": given}
    wanted = {"cp": ["cp"], "ncp": ["ncp"], "ihmc": ["cp", "ncp"], "given": ["given"]}[method]
    fits, timing = fit_or_retry(coords, {k: targets[k] for k in wanted}, init, vi_config, needed=wanted, seed=seed,
                                label="VI")
    return None, fits, (timing["compile_seconds"], timing["run_seconds"])


def _spaces(method, fits, vi):
    """The fits a fixed method samples in, and a sentence on why."""
    if method == "ihmc":
        return [fits["cp"], fits["ncp"]], "interleaved HMC: one CP and one NCP step per iteration"
    if method == "vip":
        # VIP includes its own check: a fit whose ELBO lost to a fixed one is a local optimum, so sample
        # in the recommended parameterisation (paper 000 Section 6.3) and say so.
        return [fits[vi.recommended]], f"VIP-HMC in {vi.recommended.upper()}: {vi.reason}"
    reasons = {"cp": "centred, as written", "ncp": "every planned site non-centred", "given": "the parameterisation given",
               "meta": "the meta-learned network's predicted centring (paper 003)"}
    if method != "cp" and not fits[method].parameterisation.names:
        return [fits[method]], "no site is rewritten (result.plan says why), so the model is sampled as written"
    return [fits[method]], reasons[method]


# The seed of the meta-learned prediction, whatever the sampler's: the short fit its probes are read at
# is stochastic, and at the sampler's seed eight schools' log_tau moved between 0.59 and 0.68 over
# seeds 0 to 3, so runs at two seeds sampled in two centrings (found in review).
PREDICTION_SEED = 0


def _meta_prediction(model, model_args, model_kwargs, plan, probes):
    """The meta-learned centring of the plan's sites (timed: graph, network, and a fit for fit probes)."""
    prediction = meta_predict(model, *model_args, seed=PREDICTION_SEED, probes=probes, **model_kwargs)
    prediction.parameterisation(plan)  # a site the network cannot give is reported here, by name
    return prediction


def _bar(enabled: bool, config):
    """A progress reporter for sampling transitions (``progress.SamplingProgress``), or None."""
    return SamplingProgress(config.num_warmup + config.num_samples) if enabled else None


def infer(
    model: Callable,
    /,
    *model_args,
    method: str = "auto",
    kernel: str | None = None,
    num_chains: int = 4,
    num_warmup: int = 1000,
    num_samples: int = 2000,
    seed: int = 0,
    sites: str | Sequence[str] = "default",
    form: str = "tied",
    num_leapfrog: int | str = "oracle",
    leapfrog_grid: Sequence[int] = PAPER_L_GRID,
    step_size_rule: str = "window",
    oracle_metric: str = "pooled",
    target_accept: float | None = None,
    parameterisation=None,
    init: str | None = None,
    meta_probes: str | None = None,
    vi_config: VIConfig | None = None,
    init_strategy: Callable | None = None,
    progress: bool = True,
    **model_kwargs,
) -> InferenceResult:
    """Sample the posterior of the centred ``model(*model_args, **model_kwargs)`` in a better parameterisation.

    ``method``: "cp", "ncp", "vip" (VIP-HMC, paper 000 Algorithm 2), "ihmc" (Algorithm 1), "auto" (our
    default: NUTS in the partial centring of the Section 3 rule, learnt during warm-up and checked
    by pilot draws; docs/auto.md) or "given" (the partial centring ``parameterisation``: a lambda
    for every element, a mapping site -> lambda, or a Parameterisation). ``kernel``: "hmc" (fixed
    L, the paper's set-up; L by oracle over ``leapfrog_grid`` unless given) or "nuts"; "auto"
    defaults to NUTS, the others to HMC. Samples and initial values are always in the original
    coordinates.

    Safe defaults for fixed-L HMC: ``step_size_rule="window"`` (Stan's windowed adaptation of the step
    size and a diagonal mass matrix, seeded by q) and ``oracle_metric="pooled"`` (L scored by pooled
    rank-normalised ESS; an L at which the pilot chains disagree, R-hat above 1.05, is never
    chosen). ``step_size_rule="sign"`` with ``oracle_metric="paper"`` is the paper's protocol. A result whose R-hat, ESS or divergences
    make it untrustworthy says so in ``summary()`` and ``result.health``, and ``infer`` warns
    (``autoreparam.ConvergenceWarning``). ``target_accept``: the mean acceptance the step size is
    adapted to (NUTS and windowed HMC: 0.8 by default; raise it, e.g. to 0.95, against divergences).
    ``vi_config``: the protocol (`autoreparam.VIConfig`) of the variational fits a method runs, the
    paper's by default for "cp", "ncp", "vip", "ihmc" and "given"; "auto" fits only when a frozen
    warm-up starts again (`autoreparam.auto.rescue`; ``vi.protocol.FAST`` by default). ``form``: the
    form of the centring VIP learns, "tied" (one lambda per element, paper 000) or "separate" (a for
    the location, b for the scale, paper 004); refused with any other method, which learns none.

    ``method="meta"``: sample in the centring the meta-learned network predicts
    (`autoreparam.meta.predict`, paper 003), with no per-model optimisation; NUTS by default. Its
    sampler starts from the model's initial values with a unit metric and lets the window adaptation
    tune it, so no variational fit runs unless ``vi_config`` is given or a fixed-L HMC step-size rule
    other than "window" needs q's scales (then the light ``FAST`` preset). ``init="meta"`` with
    ``method="vip"`` starts VIP from that prediction instead of ``vi_config.vip_starts``.
    ``meta_probes``: where the graph's probes are read, and so which shipped network reads them
    (`autoreparam.meta.predict`): ``"fit"`` (the default: the network trained at a short non-centred
    fit's points, 4,000 gradients per call; ``meta/weights/MODEL_CARD_fit.md``) or ``"prior"`` (the
    network trained at the prior points, fitting nothing; ``MODEL_CARD.md``, META.md).
    """
    model_args, model_kwargs, seed = check_call(model, model_args, model_kwargs, seed, entry=infer)
    compilation_cache.ensure()
    kernel = _check_arguments(method, kernel, num_chains, num_warmup, num_samples, num_leapfrog)
    if not isinstance(progress, (bool, np.bool_)):  # it was refused later as "VIConfig.progress" (found in review)
        raise ArgumentError(f"progress must be True or False, got {progress!r}")
    if parameterisation is not None and method != "given":
        raise ArgumentError(f"parameterisation= is for method='given', not method={method!r}")
    if init not in (None, "meta") or (init == "meta" and method != "vip"):
        raise ArgumentError(f"init= is None or 'meta' (with method='vip'), got init={init!r} with method={method!r}")
    if meta_probes is not None and "meta" not in (method, init):
        raise ArgumentError(f"meta_probes= is for method='meta' or init='meta', not method={method!r}")
    if meta_probes not in (None, *PROBES):
        raise ArgumentError(f"meta_probes must be one of {', '.join(map(repr, PROBES))}, got {meta_probes!r}")
    leapfrog_grid = check_grid(leapfrog_grid, num_spaces=2 if method == "ihmc" else 1)
    # Checked whatever the method: a misspelt value was accepted wherever it was not used (found in review).
    if form not in ("tied", "separate"):
        raise ArgumentError(f"form must be 'tied' or 'separate', got {form!r}")
    # Arguments a method does not use were accepted without a word (found in review).
    if form != "tied" and method != "vip":
        raise ArgumentError(f"form={form!r} is the form of the centring VIP learns (method='vip'); method={method!r} "
                            "learns none: drop form= or use method='vip'")
    if step_size_rule not in STEP_SIZE_RULES:
        raise ArgumentError(f"step_size_rule must be one of {STEP_SIZE_RULES}, got {step_size_rule!r}")
    check_config(vi_config, "vi_config")
    check_target_accept(target_accept)
    nuts_config = NUTSConfig(num_warmup=num_warmup, num_samples=num_samples,
                             target_accept=0.8 if target_accept is None else float(target_accept))
    if oracle_metric not in ORACLE_METRICS:
        raise ArgumentError(f"oracle_metric must be one of {', '.join(ORACLE_METRICS)}, got {oracle_metric!r}")
    started = time.perf_counter()
    structure = analyse_model(model, *model_args, seed=seed, **model_kwargs)
    check_init_strategy(init_strategy, structure.latents)
    warn_if_unrolled(structure.names)
    plan = select_sites(structure, sites)
    coords = Coordinates(model, model_args, model_kwargs, plan)
    given = given_parameterisation(plan, parameterisation) if method == "given" else None
    if method == "auto" and init_strategy is None:
        start_values = free_init = None  # the unconstrained origin, found with auto's first lambda (run_auto)
    else:
        start_values, free_init = initial_values(model, model_args, model_kwargs, structure.names, init_strategy,
                                                 seed, unconstrained=True,
                                                 default=ORIGIN if method == "auto" else PRIOR_MEDIAN)
    timing = {"analysis": time.perf_counter() - started}
    oracle, vi, no_fit, standard = None, None, False, None
    bar = _bar(progress and (method == "auto" or kernel == "nuts"), nuts_config)
    if method == "auto":
        # No variational fit: the Section 3 rule gives the parameterisation, learnt during warm-up.
        outcome = run_auto(coords, free_init, start_values, num_chains, nuts_config, seed, progress=bar,
                           vi_config=vi_config)
        chains, decision, labels, centring = outcome.chains, outcome.reason, (outcome.label,), outcome.param
        standard = outcome.standard  # of these draws, computed by ``auto.run_on``
        timing.update({k: v for k, v in outcome.timing.items() if k != "analysis"})
        timing["analysis"] += outcome.timing.get("analysis", 0.0)  # initial values found inside run_auto
        gradients = dict(outcome.gradients)
    else:
        meta = (_meta_prediction(model, model_args, model_kwargs, plan, meta_probes)
                if "meta" in (method, init) else None)
        fit_method, starts, no_fit = method, None, False
        if method == "meta":  # the "given" path, in the predicted centring
            fit_method, given = "given", meta.parameterisation(plan)
            timing["prediction"] = meta.seconds["total"]
        if init == "meta":
            starts = (meta.parameterisation(plan),)
            timing["prediction"] = meta.seconds["total"]
        if method == "meta" and vi_config is None and (kernel == "nuts" or step_size_rule == "window"):
            fits = {"meta": start_without_fit(coords, given, start_values)}
            timing.update(compile=0.0, variational=0.0)
            no_fit = True
        else:
            vi_config = dataclasses.replace(vi_config or (FAST if method == "meta" else VIConfig()), progress=progress)
            vi, fits, (compile_vi, run_vi) = _variational_fits(fit_method, coords, start_values, vi_config, form, seed,
                                                               given, starts)
            timing.update(compile=compile_vi, variational=run_vi, variational_compile=compile_vi)
            if method == "meta":
                fits = {"meta": dataclasses.replace(fits["given"], label="meta")}
        spaces, decision = _spaces(method, fits, vi)
        decision += retry_note(fits)
        if kernel == "nuts":
            chains = sample_nuts(coords, spaces[0], num_chains, nuts_config, seed, progress=bar,
                                 fitted_metric=not no_fit)
        else:
            config = HMCConfig(num_warmup=num_warmup, num_samples=num_samples, step_size_rule=step_size_rule,
                               target_accept=target_accept)
            chains, oracle = sample_hmc(
                coords, spaces, config, num_chains, num_leapfrog, leapfrog_grid, seed, metric=oracle_metric
            )
            if oracle is not None:
                # The pilots compile the sampler's program (the final run then reuses it): that is
                # compilation, as ``compare`` counts it, not pilot time (found in review).
                runs = oracle.runs.values()
                timing["compile"] += sum(r.seconds.get("compile", 0.0) for r in runs)
                timing["pilots"] = sum(v for r in runs for phase, v in r.seconds.items() if phase != "compile")
        timing["compile"] += chains.seconds.get("compile", 0.0)
        timing.update(warmup=chains.seconds.get("warmup", 0.0), sampling=chains.seconds.get("sampling", 0.0))
        centring = spaces[-1].parameterisation  # for iHMC: the non-centred half
        gradients = {"warmup": int(np.sum(chains.warmup_grad_evals)), "sampling": int(np.sum(chains.grad_evals))}
        labels = tuple(f.label for f in spaces)
    for site in structure.latents:
        if site.without_density is not None:
            decision += (f" {site.name}: {int(site.without_density.sum())} of its {site.size} elements are masked "
                         "out of the density (e.g. the observed positions of obs_mask); their draws mean nothing, and "
                         "the diagnostics leave them out.")
    if not structure.observed:
        # NumPyro's semantics: an observed site given None is sampled, so a forgotten data argument
        # silently turns the posterior into the prior. Say so where the user reads the decision.
        decision += (" The model has no observed site, so these draws are its prior; if it should be "
                     "conditioned on data, pass them (e.g. y=... for numpyro.sample('y', ..., obs=y)).")
    gradients["total"] = sum(gradients.values())
    if bar is not None:
        bar.close()
    diagnosing = time.perf_counter()
    samples = coords.split_original(chains.draws)
    refuse_nonfinite_draws(samples, structure)
    rewritable = bool(select_sites(structure, "all").sites)  # for the advice on a flagged run
    diagnostics = compute_diagnostics(samples, chains, oracle, labels, method, rewritable, coords.without_density,
                                      standard)
    if diagnostics.standard.stuck_sites and (why := nonfinite_gradient_warning(coords, samples)):
        health = diagnostics.health
        health = dataclasses.replace(health, warnings=(*health.warnings, why))
        diagnostics = dataclasses.replace(diagnostics, health=health)
    # The result's ESS, R-hat and health check are a phase of the call too (with auto's pilot scores).
    timing["diagnostics"] = timing.get("diagnostics", 0.0) + time.perf_counter() - diagnosing
    timing["total"] = time.perf_counter() - started
    if not diagnostics.health.trustworthy:
        warnings.warn(
            "autoreparam.infer: the result is not trustworthy: " + " ".join(diagnostics.health.warnings)
            + f" What to try: {diagnostics.health.advice}",
            ConvergenceWarning,
            stacklevel=2,
        )
    return InferenceResult(
        method=method if method != "auto" else f"auto -> {labels[0]}",
        kernel=kernel,
        samples=samples,
        parameterisation=centring.lam,
        num_grad_evals=int(np.sum(chains.grad_evals)),
        diagnostics=diagnostics,
        decision=decision,
        plan=plan,
        chains=chains,
        vi=vi if vi is not None or method == "auto" or no_fit else fits,
        timing=timing,
        gradients=gradients,
        centring=centring,
    )


"""Fuzzing invariants 2 and 3: what sampling a random program must give, whatever the method.

- `check_prior`: with its observations removed, a program's posterior is its prior, so every method
  must return the prior marginals. Checked against exact means and variances where the prior's
  parameters are constants, and against i.i.d. forward draws (`agreement.pit_tests`) for all.
- `check_invariance`: the original-coordinate draws of one program sampled (NUTS) in CP, NCP, a
  random lambda per element and by ``method="auto"`` agree at every element's quartiles, pair by pair.

A check fails when a Holm-adjusted p-value (over all its tests) falls below `FUZZ_ALPHA`; the record
also says whether the run's own diagnostics flagged it (``trustworthy``), so a failure the user would
have been warned about is told apart from a silent one.
"""

from __future__ import annotations

import itertools
import time

import jax
import numpy as np
import numpyro.distributions as dist
from numpyro import handlers
from numpyro.infer import Predictive

from autoreparam.errors import ArgumentError
from autoreparam.lang import compile_program
from autoreparam.reliability.agreement import exact_pit_tests, moment_tests, pit_tests, quartile_agreement
from autoreparam.reliability.methods import MethodSpec, RunSettings, run_spec
from autoreparam.reliability.ranks import flatten_sites
from autoreparam.reliability.sbc import stable_seed
from autoreparam.reliability.statistics import holm
from autoreparam.reparam.selection import select_sites
from autoreparam.reparam.sites import analyse_model

FUZZ_ALPHA = 0.001  # family-wise per check; about 2,000 sampling checks so far, so ~2 chance failures expected in all
NUM_REFERENCE = 4000  # i.i.d. prior draws per program


def without_observations(model, /, *args, **kwargs):
    """``model`` with its observed sites hidden from the trace: its log density is the prior's.

    The sites are hidden by name, those observed in a trace of ``model(*args, **kwargs)``. Hiding
    every observed site as it happens (``hide_fn=is_observed``) would also hide the observed factor
    sites NumPyro emits *while* sampling in unconstrained space (``_<site>_log_det``, the
    log-Jacobian of each constrained latent's transform): the density would then lack those terms,
    and a positive scale's log would drift to -inf where its prior's density vanishes (found by
    this fuzzer: `tau_a ~ half_normal(0.019)` of program 2 reached log tau = -87 under every method,
    NumPyro's own NUTS included).
    """
    trace = handlers.trace(handlers.seed(model, rng_seed=0)).get_trace(*args, **kwargs)
    observed = [name for name, site in trace.items() if site["type"] == "sample" and site["is_observed"]]
    return handlers.block(model, hide=observed)


def _exact_priors(model, kwargs, names) -> dict:
    """The prior distributions of the latents whose prior has constant parameters (no parent)."""
    structure = analyse_model(model, **kwargs)
    trace = handlers.trace(handlers.seed(model, rng_seed=0)).get_trace(**kwargs)
    return {name: trace[name]["fn"] for name in names if not structure[name].depends_on}


def _exact_cdf(fn, draws) -> np.ndarray | None:
    """F(x) of every draw under ``fn`` (scalar events only), or None where NumPyro has no CDF for it."""
    if fn.event_shape:
        return None
    base = fn
    while isinstance(base, dist.ExpandedDistribution):  # a plate's expand has no CDF; its base broadcasts
        base = base.base_dist
    try:
        u = np.asarray(base.cdf(draws), dtype=np.float64)
    except NotImplementedError:
        return None
    return u if u.shape == np.shape(draws) and np.all(np.isfinite(u)) else None


def _exact_moments(fn) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact mean and variance of ``fn``, or None where either is unknown or infinite."""
    try:
        mean, var = np.broadcast_to(np.asarray(fn.mean), fn.shape()), np.broadcast_to(np.asarray(fn.variance), fn.shape())
    except NotImplementedError:
        return None
    return (mean, var) if np.all(np.isfinite(mean)) and np.all(np.isfinite(var)) else None


def _exact_tests(priors: dict, samples: dict) -> tuple[list, list, list]:
    """Tests against the exact priors: through the CDF where it is known (`agreement.exact_pit_tests`),
    else of exact means and variances. Returns (p-values, labels, kinds), in matching order."""
    pvalues, labels, kinds = [], [], []
    for name, fn in priors.items():
        u = _exact_cdf(fn, samples[name])
        if u is not None:
            flat, names = flatten_sites({name: u}, lead=2)
            pvalues.append(exact_pit_tests(flat))
            labels += names * 2
            kinds += ["exact_pit_mean"] * len(names) + ["exact_pit_spread"] * len(names)
            continue
        moments = _exact_moments(fn)
        if moments is None:
            continue
        flat, names = flatten_sites({name: samples[name]}, lead=2)
        mean, _ = flatten_sites({name: moments[0]})
        var, _ = flatten_sites({name: moments[1]})
        pvalues.append(moment_tests(flat, mean, var))
        labels += names * 2
        kinds += ["exact_mean"] * len(names) + ["exact_variance"] * len(names)
    return pvalues, labels, kinds


def check_prior(text: str, data: dict, spec: MethodSpec, seed: int, settings: RunSettings) -> dict:
    """Run ``spec`` on the program without its observations and test the draws against the prior."""
    start = time.perf_counter()
    compiled_model, _, kwargs = compile_program(text, data)
    model = without_observations(compiled_model, **kwargs)
    reference = Predictive(model, num_samples=NUM_REFERENCE)(jax.random.PRNGKey(seed), **kwargs)
    samples, summary = run_spec(spec, model, (), kwargs, seed, settings)
    names = sorted(samples)
    draws, labels = flatten_sites(samples, lead=2)
    ref, _ = flatten_sites({n: np.asarray(reference[n]) for n in names}, lead=1)
    pvalues, kinds = [pit_tests(draws, ref)], ["pit_mean"] * len(labels) + ["pit_spread"] * len(labels)
    exact_p, exact_labels, exact_kinds = _exact_tests(_exact_priors(model, kwargs, names), samples)
    return _verdict(np.concatenate(pvalues + exact_p), labels * 2 + exact_labels, kinds + exact_kinds, summary, start,
                    exact_elements=len(exact_labels) // 2)


def _verdict(pvalues, labels, kinds, summary, start, **extra) -> dict:
    adjusted = holm(pvalues)
    # NaN: a test that could not be computed (``holm`` leaves it out); all NaN: nothing was tested.
    worst = int(np.nanargmin(adjusted)) if np.any(~np.isnan(adjusted)) else 0
    return {
        "tests": int(adjusted.size),
        "min_adjusted_p": float(adjusted[worst]),
        "worst": f"{kinds[worst]} of {labels[worst]}",
        # Failed unless some test passed the line: a check whose every test is NaN tested nothing
        # (it passed before; SBC already failed such a cell; found in review).
        "failed": not bool(adjusted[worst] >= FUZZ_ALPHA),
        **summary,
        **extra,
        "seconds": time.perf_counter() - start,
    }


def random_lambda(model, kwargs, rng: np.random.Generator) -> dict:
    """A lambda in U(0, 1) for every element of every site the default policy rewrites."""
    plan = select_sites(analyse_model(model, **kwargs), "default")
    return {s.name: rng.uniform(0.0, 1.0, size=s.shape) for s in plan.sites}


# The runs of the invariance check: NUTS at lambda = 1, 0 and random (`random_lambda`), and `auto`,
# what a user runs by default (added 2026-11-28: on most generated programs one of CP and NCP is
# flagged, so the three fixed centrings alone gave a pair of trusted runs on few programs).
FIXED_RUNS = ("cp", "ncp", "random")
INVARIANCE_RUNS = FIXED_RUNS + ("auto",)
INVARIANCE_PAIRS = tuple(itertools.combinations(FIXED_RUNS, 2))  # the pairs of records written before `auto`


def invariance_run_labels(runs) -> tuple[str, ...]:
    """``runs`` (labels) in the check's order; every fixed centring is always run."""
    runs = tuple(runs)
    unknown = [r for r in runs if r not in INVARIANCE_RUNS]
    if unknown or not set(FIXED_RUNS) <= set(runs):
        raise ArgumentError(f"invariance runs {', '.join(runs)}: choose {', '.join(FIXED_RUNS)} and optionally auto")
    return tuple(r for r in INVARIANCE_RUNS if r in runs)


def pairs_of(runs) -> tuple[tuple[str, str], ...]:
    """Every pair of runs, in the order of their tests (the fixed centrings' three pairs first)."""
    extra = [r for r in invariance_run_labels(runs) if r not in FIXED_RUNS]
    return INVARIANCE_PAIRS + tuple((a, b) for b in extra for a in FIXED_RUNS)


def invariance_pairs(adjusted: np.ndarray, trusted: dict[str, bool]) -> tuple[dict, bool]:
    """Per pair of runs its smallest Holm-adjusted p, whether it failed, and whether both of its runs
    were trusted by their own diagnostics; and the check's ``trustworthy``.

    ``trusted`` names the runs (in `INVARIANCE_RUNS` order); ``adjusted`` holds each pair's tests in
    `pairs_of` order, as many per pair. Two runs that disagree are a silent failure only if neither
    was flagged: a user who ran the flagged one was warned, and the other is then the likely right
    one. So a failed check is ``trustworthy`` (silent) when some failing pair had both runs trusted;
    a passing check when all runs were. Counting a failure as flagged whenever any run was flagged
    would hide a silent disagreement of two trusted runs behind a flag on a third.
    """
    order = pairs_of(trusted)
    pairs = {}
    for (a, b), p in zip(order, np.split(np.asarray(adjusted), len(order))):
        # nanmin: one NaN test (np.min's answer) hid a pair's p of 1e-12; all NaN tested nothing, a failure.
        smallest = float(np.nanmin(p)) if np.any(~np.isnan(p)) else float("nan")
        pairs[f"{a} vs {b}"] = {"min_adjusted_p": smallest, "failed": not smallest >= FUZZ_ALPHA,
                                "both_trustworthy": bool(trusted[a] and trusted[b])}
    failing = [pair for pair in pairs.values() if pair["failed"]]
    trustworthy = any(pair["both_trustworthy"] for pair in failing) if failing else all(trusted.values())
    return pairs, trustworthy


def _invariance_spec(label: str, lam) -> MethodSpec:
    return MethodSpec("auto", "nuts") if label == "auto" else MethodSpec("given", "nuts", {"parameterisation": lam})


def invariance_run_seed(seed: int, label: str) -> int:
    """The seed of one run of an invariance check: CP keeps the check's seed, every other run its own.

    The agreement test compares two runs as independent samples. Runs at one seed draw the same
    momenta and the same uniforms, so where two centrings give nearly the same geometry their chains
    move together, and the test, which assumes independent errors, loses power. Measured
    (`benchmarks/results/invariance_seeds.json`, 4 corpus programs, CP against NCP): on a funnel
    the two runs' draws correlated by 0.068 in the median element (up to 0.099) at one seed and by
    -0.013 at two; on the other three programs by -0.009 to 0.016 (up to 0.084) against -0.005 to
    0.006. Before 2026-12-02 every run of a program shared the seed.
    """
    return seed if label == "cp" else stable_seed("invariance", seed, label)


def check_invariance(text: str, data: dict, seed: int, settings: RunSettings, runs=INVARIANCE_RUNS,
                     own_seeds: bool = True) -> dict:
    """Sample the program with NUTS at lambda = 1, 0 and random (and with `auto`, by default); test
    every pair of runs for agreement. ``own_seeds``: each run at its own seed (`invariance_run_seed`);
    False runs them all at ``seed``, as checks did before 2026-12-02. The record keeps every run's seed."""
    start = time.perf_counter()
    model, _, kwargs = compile_program(text, data)
    centrings = {"cp": 1.0, "ncp": 0.0, "random": random_lambda(model, kwargs, np.random.default_rng(seed)), "auto": None}
    run_labels = invariance_run_labels(runs)
    seeds = {label: invariance_run_seed(seed, label) if own_seeds else seed for label in run_labels}
    results = {}
    for label in run_labels:
        samples, summary = run_spec(_invariance_spec(label, centrings[label]), model, (), kwargs, seeds[label], settings)
        results[label] = (flatten_sites(samples, lead=2), summary)
    (_, labels), _ = results["cp"]
    pvalues, kinds = [], []
    for a, b in pairs_of(results):
        pvalues.append(quartile_agreement(results[a][0][0], results[b][0][0]))
        kinds += [f"{a} vs {b}, P(x <= q{q})" for q in (25, 50, 75) for _ in labels]
    pvalues = np.concatenate(pvalues)
    pairs, trustworthy = invariance_pairs(holm(pvalues), {label: s["trustworthy"] for label, (_, s) in results.items()})
    summary = {"trustworthy": trustworthy, "pairs": pairs, "runs": {label: s for label, (_, s) in results.items()},
               "seeds": seeds}
    return _verdict(pvalues, labels * (3 * len(pairs)), kinds, summary, start)

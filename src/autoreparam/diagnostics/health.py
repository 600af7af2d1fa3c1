"""Is a run trustworthy? Plain-language warnings from R-hat, effective sample sizes and divergences.

Thresholds follow Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021), "Rank-normalization,
folding, and localization: an improved R-hat for assessing convergence of MCMC", Section 4: use a
sample only if rank-normalised split R-hat < 1.01 and bulk and tail ESS exceed 100 per chain.
Divergences follow Betancourt (2017), "A conceptual introduction to Hamiltonian Monte Carlo",
Section 6.2: a divergent trajectory marks a region the integrator cannot resolve, so a sampler that
diverges may miss part of the posterior.

For interleaved HMC the divergences of each half are told apart: the centred half diverging in a
funnel's neck while the non-centred half keeps moving there costs gradients, not correctness (each
half leaves the posterior invariant and the other half explores the neck), so it is a note; the
chain's health is then judged by R-hat and ESS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autoreparam.diagnostics.standard import StandardDiagnostics

MAX_R_HAT = 1.01
MIN_ESS_PER_CHAIN = 100
# A half of iHMC whose divergences stay below this fraction of iterations, while another half
# diverges more, is the half that moves the chain where the other cannot (as is a half with none).
_QUIET_HALF = 0.01


@dataclass(frozen=True)
class Health:
    """Warnings (the result should not be trusted as it is), notes (worth knowing), and what to try."""

    warnings: tuple[str, ...]
    notes: tuple[str, ...] = ()
    advice: str = ""

    @property
    def trustworthy(self) -> bool:
        return not self.warnings

    def lines(self) -> list[str]:
        out = [f"WARNING: {w}" for w in self.warnings]
        if self.warnings and self.advice:
            out.append(f"what to try: {self.advice}")
        return out + [f"note: {n}" for n in self.notes]


def _worst(per_site: dict, largest: bool) -> tuple[str, float]:
    """The element with the largest (or smallest) value, named like ``theta[3]``, and that value."""
    found_name, found = "", np.nan
    for name, values in per_site.items():
        values = np.asarray(values, dtype=float)
        if values.size == 0 or np.all(np.isnan(values)):
            continue
        flat = values.ravel()
        i = int(np.nanargmax(flat) if largest else np.nanargmin(flat))
        if np.isnan(found) or (flat[i] > found if largest else flat[i] < found):
            index = np.unravel_index(i, values.shape) if values.shape else ()
            found_name = name + (f"[{','.join(map(str, index))}]" if index else "")
            found = float(flat[i])
    return found_name, found


def near_overflow(samples: dict) -> tuple[str, float, np.dtype] | None:
    """The element whose draws reach furthest beyond the square root of its float type's largest value
    (about 1.8e19 in float32), with that magnitude and the type; None if no draw does.

    Beyond it a square overflows (every normal log density squares its argument), and a value there
    is typically a scale like ``exp(z)`` near overflowing itself: NUTS then diverges where the model's
    own values turn infinite, which no parameterisation and no smaller step can resolve (found by
    fuzzing: the prior of ``z3 ~ N(0, exp(z2))`` reached ``|z3| = 2.6e37`` in NCP, with 5% of its
    transitions divergent, while the warning blamed the posterior's curvature). Beyond it gradients
    can be wrong before anything overflows: JAX differentiates ``x / s`` in ``s`` as ``-x * s ** -2``,
    which underflows, so NumPyro's densities lose a term in their scale's derivative. The auxiliary
    densities of rewritten sites divide stably (``families.standardised``; the cause of iHMC's
    divergences on a depth-3 funnel's prior), but the model's other sites use NumPyro's.
    """
    worst, worst_ratio = None, 1.0
    for name, values in samples.items():
        values = np.asarray(values)
        if values.dtype.kind != "f" or values.size == 0:
            continue
        magnitude = np.abs(values)
        magnitude[~np.isfinite(magnitude)] = 0.0  # infinite draws are refused before the diagnostics
        at = int(np.argmax(magnitude))
        ratio = float(magnitude.flat[at]) / float(np.sqrt(np.finfo(values.dtype).max))
        if ratio > worst_ratio:
            element = np.unravel_index(at, values.shape)[2:]  # (chain, draw, *element)
            label = name + (f"[{','.join(map(str, element))}]" if element else "")
            worst, worst_ratio = (label, float(magnitude.flat[at]), values.dtype), ratio
    return worst


def _overflow_text(extreme: tuple[str, float, np.dtype]) -> str:
    name, reach, dtype = extreme
    return (f"{name}'s draws reach {reach:.2g}, beyond {np.sqrt(np.finfo(dtype).max):.2g} where a square overflows "
            f"{np.dtype(dtype).name} and derivatives may lose terms, so the model's own values likely overflow near there")


def assess(
    standard: StandardDiagnostics,
    *,
    num_chains: int,
    num_draws: int,
    divergences: int,
    space_divergences: np.ndarray | None = None,
    space_labels: tuple[str, ...] = (),
    kernel: str = "hmc",
    method: str | None = None,
    reparameterisable: bool = True,
    extreme: tuple[str, float, np.dtype] | None = None,
) -> Health:
    """Warnings and notes for one run, each a sentence that says what is wrong, and what to try.

    ``divergences``: sampling-phase transitions with a divergent (half-)step, all chains.
    ``space_divergences``: (chains, spaces) divergent half-steps per space, for interleaved HMC.
    ``space_labels``: the parameterisation of each space ("cp", "ncp", "vip"); ``kernel``: "hmc" or "nuts".
    ``method``: the method the user ran, never the advice; ``reparameterisable``: whether any latent of
    the model can be rewritten (if none, every method samples the same model).
    ``extreme``: `near_overflow` of the draws; with divergences it is named as their likely cause, and
    64-bit JAX comes first in the advice.
    """
    warnings, notes = [], []
    if num_chains >= 2:
        # The worst R-hat that is not NaN: one constant element (R-hat NaN) must not hide the others.
        name, value = _worst(standard.r_hat, largest=True)
        if not np.isnan(value) and value > MAX_R_HAT:
            warnings.append(
                f"the chains disagree (R-hat {value:.3f} for {name}; trust needs < {MAX_R_HAT}): "
                "the draws are not yet a sample of the posterior."
            )
    else:
        notes.append("one chain: R-hat cannot check that chains agree; run at least 4 chains.")
    # Whole sites only: some elements are constant by their support (an LKJ Cholesky factor's first
    # row and upper triangle, a correlation matrix's diagonal), and they are no sign of stuck chains.
    if standard.stuck_sites:
        warnings.append(
            f"{', '.join(standard.stuck_sites)} never changed: each chain kept one value in every draw, so the "
            "chains did not move and R-hat and ESS cannot judge them."
        )
    wanted = MIN_ESS_PER_CHAIN * num_chains
    bulk_name, bulk = _worst(standard.ess_bulk, largest=False)
    tail_name, tail = _worst(standard.ess_tail, largest=False)
    low = [f"{kind} ESS {value:.0f} for {name}" for kind, name, value in (("bulk", bulk_name, bulk), ("tail", tail_name, tail))
           if np.isfinite(value) and value < wanted]
    if low:
        warnings.append(
            f"too few effective draws ({', '.join(low)}; want >= {wanted}, {MIN_ESS_PER_CHAIN} per chain): "
            "means and quantiles carry large Monte Carlo error."
        )
    more = _divergences(divergences, num_chains * num_draws, space_divergences, space_labels)
    overflowing = extreme is not None and divergences > 0
    if overflowing and more[0]:
        more = ([f"{more[0][0][:-1]}; {_overflow_text(extreme)}, which no parameterisation or smaller step "
                 "fixes."] + more[0][1:], more[1])
    elif extreme is not None:
        notes.append(f"{_overflow_text(extreme)}.")
    warnings += more[0]
    notes += more[1]
    advice = _advice(space_labels, kernel, bool(more[0]), method, reparameterisable) if warnings else ""
    if advice and overflowing and more[0]:
        advice = ("64-bit JAX (jax.config.update('jax_enable_x64', True) before building the model) or a model "
                  f"whose values stay in range; else {advice}")
    return Health(tuple(warnings), tuple(notes), advice)


def _advice(space_labels, kernel, diverged: bool, method: str | None = None, reparameterisable: bool = True) -> str:
    labels = tuple(space_labels)
    if not reparameterisable:
        first = "no latent of this model can be reparameterised, so another parameterisation changes nothing"
        first += "; kernel='nuts' (trajectory lengths that adapt to the posterior)" if kernel in ("hmc", "ihmc") else ""
    elif labels == ("cp",) and method != "auto":
        first = "method='ncp' or method='auto' (a centred latent whose scale can approach zero makes a funnel)"
    elif labels in (("rule",), ("ncp",)) and kernel == "nuts" and diverged and method == "auto":
        # auto's own ladder already redrew divergent draws towards 0.99 and tried CP and NCP there, so
        # target_accept=0.99 was advice it had taken (found in review).
        first = ("auto already adapted towards acceptance 0.99 and tried CP and NCP where its draws diverged "
                 "(result.decision says how far it went); method='vip' (a centring learnt by variational inference)")
    elif labels in (("rule",), ("ncp",)) and kernel == "nuts" and diverged:
        first = "target_accept=0.99"
    elif kernel in ("hmc", "ihmc"):
        first = "kernel='nuts' (trajectory lengths that adapt to the posterior) or method='auto'"
    elif method == "auto":
        first = "method='vip' (a centring learnt by variational inference, beside CP and NCP)"
    else:
        first = "method='auto' (the parameterisation whose pilot chains mix best)"
    if diverged and "target_accept" not in first:
        first += "; against divergences, target_accept=0.95 (smaller steps follow the curvature)"
    return f"{first}; then more warm-up (num_warmup) and more draws (num_samples)."


def _divergences(divergences, transitions, space_divergences, space_labels):
    """(warnings, notes) about divergent transitions."""
    if divergences == 0:
        return [], []
    if space_divergences is not None and np.ndim(space_divergences) == 2 and np.shape(space_divergences)[1] > 1:
        per_space = np.sum(space_divergences, axis=0)
        labels = space_labels or tuple(f"space {k}" for k in range(len(per_space)))
        quiet = [label.upper() for label, n in zip(labels, per_space) if n / transitions < _QUIET_HALF]
        counts = ", ".join(f"{label.upper()} half {int(n)}" for label, n in zip(labels, per_space))
        clean = [label.upper() for label, n in zip(labels, per_space) if n == 0]
        # One half moves the chain where another cannot only if the divergences sit in the other:
        # a half with none, or quiet halves beside a loud one. Every half diverging a little is the
        # plain kernel's case (any divergence may hide a region no half follows): a warning.
        if clean or len(quiet) < len(per_space):
            quiet = clean or quiet
        else:
            quiet = []
        if quiet:
            return [], [
                f"divergent half-steps ({counts}, of {transitions} iterations): where one half cannot integrate "
                f"(a centred half in a funnel's neck) the {' and '.join(quiet)} half keeps the chain moving, so "
                "this costs gradients, not correctness; R-hat and ESS judge the chain."
            ]
        return [
            f"{divergences} of {transitions} iterations diverged ({counts}): in some region no half can "
            "follow the posterior's curvature, so the draws may miss it."
        ], []
    return [
        f"{divergences} of {transitions} transitions ({100 * divergences / transitions:.1f}%) diverged: the "
        "integrator could not follow the posterior's curvature there, so the draws may miss that region."
    ], []


def r_hat_text(value: float) -> str:
    """R-hat to three decimals, or "n/a" where it is NaN (one chain: R-hat compares chains, NaN as in
    ArviZ; or no element varies), which printed as "nan" in decisions (found in review)."""
    return f"{value:.3f}" if np.isfinite(value) else "n/a"

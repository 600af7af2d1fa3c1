"""What ``infer`` returns: samples in the original coordinates, the parameterisation, cost and diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autoreparam.diagnostics.draws import element_names
from autoreparam.diagnostics.ess import EfficiencyMetric, paper_metric
from autoreparam.diagnostics.health import Health, assess, near_overflow, r_hat_text
from autoreparam.diagnostics.masked import diagnostic_views
from autoreparam.diagnostics.standard import StandardDiagnostics, standard_diagnostics
from autoreparam.mcmc.chains import ChainResult
from autoreparam.mcmc.oracle import OracleResult
from autoreparam.reparam.selection import ReparamPlan


@dataclass(frozen=True)
class Diagnostics:
    """The paper's metric, ArviZ's standard diagnostics and the sampler's health counters."""

    efficiency: EfficiencyMetric  # ESS per 1000 gradients: per chain, min over elements (paper, Section 6)
    standard: StandardDiagnostics  # bulk/tail ESS and split R-hat (ArviZ)
    divergences: int  # sampling phase, all chains
    warmup_divergences: int
    acceptance: np.ndarray  # (chains, spaces)
    step_size: np.ndarray  # (chains, spaces)
    num_leapfrog: int | tuple[int, ...] | None  # tuple: one L per space (iHMC)
    health: Health  # warnings (do not trust as it is) and notes, in plain words
    oracle: OracleResult | None = None
    space_divergences: np.ndarray | None = None  # (spaces,) divergent half-steps per space (iHMC)
    grad_evals: np.ndarray | None = None  # (chains,) sampling-phase gradient evaluations

    @property
    def ess_per_1000_grads(self) -> tuple[float, float]:
        return self.efficiency.mean, self.efficiency.se

    @property
    def pooled_ess_per_1000_grads(self) -> float:
        """Min over elements of the pooled rank-normalised bulk ESS per 1000 gradients of all chains."""
        return 1000.0 * self.standard.min_ess_bulk / float(np.sum(self.grad_evals))


def compute_diagnostics(
    samples: dict, chains: ChainResult, oracle: OracleResult | None = None, space_labels: tuple[str, ...] = (),
    method: str | None = None, reparameterisable: bool = True, without_density: dict | None = None,
    standard: StandardDiagnostics | None = None,
) -> Diagnostics:
    """Diagnostics of ``samples``; ``without_density`` ({site: mask}, `Coordinates.without_density`)
    names elements with no density, which the diagnostics leave out (`diagnostics.masked`).
    ``standard``: those of the same samples' standard view, already computed (``auto.run_on``)."""
    views = diagnostic_views(samples, without_density or {})
    if standard is None:
        standard = standard_diagnostics(views.standard)
    for name, mask in (without_density or {}).items():
        # Held at 0, a masked element's ESS read as the number of draws: a meaningless element looked
        # perfectly mixed in the summary (found in review). Its R-hat is already NaN.
        for table in (standard.ess_bulk, standard.ess_tail):
            if name in table:
                table[name] = np.where(mask, np.nan, np.asarray(table[name], dtype=float))
    health = assess(
        standard,
        num_chains=chains.num_chains,
        num_draws=chains.num_draws,
        divergences=int(np.sum(chains.divergences)),
        space_divergences=chains.space_divergences,
        space_labels=space_labels,
        kernel=chains.kernel,
        method=method,
        reparameterisable=reparameterisable,
        extreme=near_overflow(views.standard),
    )
    space_div = None if chains.space_divergences is None else np.sum(chains.space_divergences, axis=0)
    return Diagnostics(
        efficiency=paper_metric(views.efficiency, chains.grad_evals),
        standard=standard,
        divergences=int(np.sum(chains.divergences)),
        warmup_divergences=int(np.sum(chains.warmup_divergences)),
        acceptance=chains.acceptance,
        step_size=chains.step_size,
        num_leapfrog=chains.num_leapfrog,
        health=health,
        oracle=oracle,
        space_divergences=space_div,
        grad_evals=np.asarray(chains.grad_evals),
    )


def search_gradients(gradients: dict, kept: int) -> int:
    """Gradients run after the warm-up beyond the ``kept`` draws' own (auto's pilots, candidates,
    redraws and run-ons; 0 for the fixed methods, whose sampling phase is their draws)."""
    return max(0, gradients.get("pilots", 0) + gradients.get("sampling", 0) - kept)


def _r_hat_text(value: float, num_chains: int) -> str:
    """``health.r_hat_text``, with the reason where R-hat is n/a."""
    text = r_hat_text(value)
    if text != "n/a":
        return text
    return text + (" (one chain: R-hat compares chains)" if num_chains < 2 else " (no element varies)")


def _per_space(space_divergences, chains: ChainResult) -> str:
    if space_divergences is None or len(space_divergences) < 2:
        return ""
    return " [per half: " + ", ".join(str(int(n)) for n in space_divergences) + "]"


def _fmt_lambda(lam: np.ndarray) -> str:
    flat = np.asarray(lam).ravel()
    text = " ".join(f"{x:.2f}" for x in flat[:10])
    return f"[{text}{' ...' if flat.size > 10 else ''}]"


@dataclass(frozen=True)
class InferenceResult:
    """Posterior samples of a centred model, drawn in a better parameterisation.

    ``samples``: {latent site: array (chains, draws, *shape)} in the original, constrained coordinates.
    ``parameterisation``: lambda per reparameterised site and element (1 = centred, 0 = non-centred);
    for iHMC the non-centred half's (the centred half is all ones).
    ``centring``: the `Parameterisation` sampled in, with the location centring a and the scale
    centring b apart (``parameterisation`` holds b, which is lambda when they are tied).
    ``num_grad_evals``: model gradient evaluations of the draws returned, all chains together: what the
    paper's metric (``diagnostics.efficiency``) divides by. A search after the warm-up (HMC's oracle
    over L, auto's pilots, candidates, redraws and run-ons) is not in it, as the paper leaves the
    oracle out; ``gradients`` has it.
    ``gradients``: gradient evaluations of all chains per phase (``warmup``, ``sampling``; for auto also
    ``pilots``, every candidate's re-adaptation and pilot draws, kept or not; for auto ``sampling`` is
    every transition run after the pilots, kept or not) and their ``total``: the cost in gradients that
    ``timing`` gives in seconds (variational fits and HMC's oracle apart).
    """

    method: str
    kernel: str
    samples: dict[str, np.ndarray]
    parameterisation: dict[str, np.ndarray]
    num_grad_evals: int
    diagnostics: Diagnostics
    decision: str
    plan: ReparamPlan = field(repr=False)
    chains: ChainResult = field(repr=False)
    vi: Any = field(repr=False, default=None)
    timing: dict = field(default_factory=dict)
    gradients: dict = field(default_factory=dict)
    centring: Any = field(repr=False, default=None)

    @property
    def health(self) -> Health:
        return self.diagnostics.health

    @property
    def trustworthy(self) -> bool:
        """False when R-hat, ESS or divergences say the draws should not be used as they are."""
        return self.diagnostics.health.trustworthy

    def summary(self) -> str:
        d = self.diagnostics
        mean, se = d.ess_per_1000_grads
        lines = d.health.lines()
        lines += [""] if lines else []
        lines += [
            f"method: {self.method} ({self.kernel}), {self.chains.num_chains} chains x {self.chains.num_draws} draws",
            f"why: {self.decision}",
            f"ESS per 1000 gradient evaluations, min over elements: pooled bulk {d.pooled_ess_per_1000_grads:.3f}; "
            f"per chain (paper metric) {mean:.3f}{f' +- {se:.3f}' if np.isfinite(se) else ' (one chain: no s.e.)'}"
            f"  [worst element: {d.efficiency.min_element_name}]",
            f"min bulk ESS {d.standard.min_ess_bulk:.0f}, min tail ESS {d.standard.min_ess_tail:.0f}, "
            # R-hat compares chains: one chain has none (NaN, as ArviZ's), which printed as "nan" (found in review).
            f"max R-hat {_r_hat_text(d.standard.max_r_hat, self.chains.num_chains)}",
            f"divergences: {d.divergences} (sampling){_per_space(d.space_divergences, self.chains)}, "
            f"{d.warmup_divergences} (warm-up); gradient evaluations of these draws: {self.num_grad_evals}"
            + self._search_note(),
            # Formatted per value: rounded in float32, 0.79 printed as 0.7900000214576721 (found in review).
            "acceptance per space: [" + ", ".join(f"{x:.3f}" for x in np.asarray(d.acceptance, float).mean(axis=0))
            + "]" + (f"; leapfrog steps L = {d.num_leapfrog}" if d.num_leapfrog else ""),
            "",
            f"{'site':<14}{'mean':>10}{'sd':>10}{'5%':>10}{'95%':>10}{'bulk ESS':>10}{'R-hat':>8}",
        ]
        for name, value in self.samples.items():
            flat = value.reshape(value.shape[0] * value.shape[1], -1)
            # A site with no element in the density (e.g. under handlers.mask) has no diagnostics
            # (``diagnostics.masked``): its rows say so instead of raising KeyError.
            nothing = np.full(flat.shape[1], np.nan)
            ess = np.asarray(d.standard.ess_bulk.get(name, nothing)).ravel()
            rhat = np.asarray(d.standard.r_hat.get(name, nothing)).ravel()
            # Named as the warnings and ArviZ index the site (C order: ``b[1,2]``, and ``one[0]`` for
            # shape (1,)); the flat index ``b[5]`` named another element than the warning did.
            labels = element_names(name, value.shape[2:])
            for j in range(flat.shape[1]):
                label = labels[j]
                col = flat[:, j]
                q5, q95 = np.percentile(col, [5, 95])
                ess_text = f"{ess[j]:>10.0f}" if np.isfinite(ess[j]) else f"{'-':>10}"
                rhat_text = f"{rhat[j]:>8.3f}" if np.isfinite(rhat[j]) else f"{'-':>8}"
                lines.append(
                    # ddof 1, as ArviZ's summary (found in review)
                    f"{label:<14}{col.mean():>10.3f}{col.std(ddof=1):>10.3f}{q5:>10.3f}{q95:>10.3f}{ess_text}"
                    f"{rhat_text}"
                )
        untied = self.centring is not None and not self.centring.is_tied
        if untied:  # b alone hid a different location centring a (found in review)
            lines += ["", "parameterisation (a: location centring, b: scale centring; 1 = centred, 0 = non-centred):"]
            lines += [f"  {n}: a {_fmt_lambda(self.centring.loc_centring[n])}, b {_fmt_lambda(v)}"
                      for n, v in self.parameterisation.items()]
        elif self.parameterisation:
            lines += ["", "parameterisation (lambda: 1 = centred, 0 = non-centred):"]
            lines += [f"  {n}: {_fmt_lambda(v)}" for n, v in self.parameterisation.items()]
        timing = ", ".join(f"{k} {v:.1f}s" for k, v in self.timing.items())
        lines += ["", f"wall time: {timing}"]
        return "\n".join(lines)

    def _search_note(self) -> str:
        """The gradients run after the warm-up beyond the draws returned (auto's search), if any."""
        extra = search_gradients(self.gradients, self.num_grad_evals)
        if extra == 0:
            return ""
        after_warmup = self.num_grad_evals + extra
        pooled = 1000.0 * self.diagnostics.standard.min_ess_bulk / after_warmup
        return (f"; the search after the warm-up (pilots, candidates, redraws, run-ons) ran {extra} more: "
                f"{pooled:.3f} pooled bulk ESS per 1000 of all {after_warmup}")

    def to_arviz(self):
        """An ``arviz.InferenceData`` with the posterior and per-draw sample_stats (``step_size``: the
        adapted step of each chain, repeated per draw, as ArviZ's energy-free checks read it)."""
        import arviz as az  # imported lazily: heavy, and only needed here

        stats = {k: np.asarray(v) for k, v in self.chains.draw_stats.items()}
        step = np.asarray(self.chains.step_size, dtype=float)
        step = step[:, 0] if step.ndim == 2 and step.shape[1] == 1 else step
        draws = self.chains.num_draws
        stats["step_size"] = np.broadcast_to(step[:, None, ...], (step.shape[0], draws) + step.shape[1:]).copy()
        return az.from_dict(posterior=dict(self.samples), sample_stats=stats)

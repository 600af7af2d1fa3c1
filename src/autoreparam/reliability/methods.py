"""What SBC and the fuzzer run: every method of ``infer`` with each kernel it takes, and the control.

A `MethodSpec` is one (method, kernel, options) cell. ``method="meta"`` (the meta-learned
parameterisation) does not exist yet: `method_specs` includes it, with both kernels, as soon as
``autoreparam.infer.METHODS`` lists it, so the hook needs no change here.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

import autoreparam as ar
from autoreparam.errors import ArgumentError, ConvergenceWarning
from autoreparam.infer import METHODS as INFER_METHODS
from autoreparam.reliability.negative_control import original_values, wrong_jacobian_model
from autoreparam.vi.protocol import FAST, VIConfig

GIVEN_LAMBDA = 0.3
# The kernels each method takes (``infer`` refuses the others).
KERNELS = {"cp": ("hmc", "nuts"), "ncp": ("hmc", "nuts"), "vip": ("hmc", "nuts"), "given": ("hmc", "nuts"),
           "ihmc": ("hmc",), "auto": ("nuts",), "meta": ("hmc", "nuts")}
CONTROL = "wrong_jacobian"


@dataclass(frozen=True)
class MethodSpec:
    """One cell: ``infer(method=..., kernel=..., **options)``, or the negative control."""

    method: str
    kernel: str
    options: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        lam = self.options.get("parameterisation")
        name = f"given_{lam:g}" if self.method == "given" else self.method
        return f"{name}/{self.kernel}"

    @property
    def is_control(self) -> bool:
        return self.method == CONTROL


def method_specs(include_control: bool = True) -> list[MethodSpec]:
    """Every method and kernel ``infer`` offers (``given`` at lambda = 0.3), then the negative control."""
    specs = []
    for method in [m for m in ("cp", "ncp", "vip", "given", "ihmc", "auto", "meta") if m in INFER_METHODS]:
        options = {"parameterisation": GIVEN_LAMBDA} if method == "given" else {}
        specs += [MethodSpec(method, kernel, options) for kernel in KERNELS[method]]
    return specs + ([MethodSpec(CONTROL, "nuts")] if include_control else [])


def find_spec(label: str) -> MethodSpec:
    for spec in method_specs():
        if spec.label == label:
            return spec
    known = ", ".join(s.label for s in method_specs())
    raise ArgumentError(f"unknown method/kernel '{label}'; choose among {known}")


@dataclass(frozen=True)
class RunSettings:
    """Chain lengths, the variational protocol (``vi="fast"``: `vi.protocol.FAST`) and the step size's
    target acceptance (None: `infer`'s default, 0.8) of every run."""

    num_chains: int = 4
    num_warmup: int = 500
    num_samples: int = 500
    vi: str = "fast"
    target_accept: float | None = None

    def vi_config(self) -> VIConfig:
        return FAST if self.vi == "fast" else VIConfig()


def refuse_mixed_settings(store, settings: RunSettings) -> None:
    """Refuse to add runs with ``settings`` to a ``store`` whose runs had other `RunSettings`.

    A rerun skips every finished key, so new settings planned into an old folder would silently mix
    both in one report (e.g. divergence counts at two target acceptances). Every run is checked
    here, so the first stored run with settings speaks for all (reading thousands of SBC records
    would take minutes). Records written before a setting existed read as its default.
    """
    for path in sorted((store.root / "cells").glob("*.json")):
        stored = store.load(path.stem).get("settings")
        if stored is None:
            continue  # an identity chunk: no sampling settings
        if RunSettings(**stored) != settings:
            raise ArgumentError(f"{store.root} holds runs made with {RunSettings(**stored)}, and this command asks "
                                f"for {settings}; write to another --out folder, or repeat the settings it ran with")
        return


def _summary(result, seconds: float, caught: list) -> dict:
    d = result.diagnostics
    lam = {k: float(np.mean(v)) for k, v in (result.parameterisation or {}).items()}
    return {
        "trustworthy": bool(d.health.trustworthy),
        "warnings": list(d.health.warnings),
        "min_ess_bulk": float(d.standard.min_ess_bulk),
        "max_r_hat": float(d.standard.max_r_hat),
        "divergences": int(d.divergences),
        "ran_as": result.method,
        "mean_lambda": lam,
        "grad_evals": int(result.num_grad_evals),
        "seconds": seconds,
        "convergence_warnings": len(caught),
    }


def run_spec(spec: MethodSpec, model, args: tuple, kwargs: dict, seed: int, settings: RunSettings):
    """Run one cell on ``model(*args, **kwargs)``: (draws of the original latents, run summary)."""
    start = time.perf_counter()
    common = dict(num_chains=settings.num_chains, num_warmup=settings.num_warmup, num_samples=settings.num_samples,
                  seed=seed, progress=False, vi_config=settings.vi_config(), target_accept=settings.target_accept)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        if spec.is_control:
            wrong, _ = wrong_jacobian_model(model, args, kwargs)
            result = ar.infer(wrong, *args, method="cp", kernel=spec.kernel, **common, **kwargs)
            names = [n for n in ar.analyse_model(model, *args, **kwargs).names]
            samples = original_values(wrong, result.samples, names, args, kwargs)
        else:
            result = ar.infer(model, *args, method=spec.method, kernel=spec.kernel, **spec.options, **common, **kwargs)
            samples = result.samples
    caught = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    return samples, _summary(result, time.perf_counter() - start, caught)

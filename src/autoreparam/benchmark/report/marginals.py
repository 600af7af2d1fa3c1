"""Figure 8 analogue (paper 000 Section 6): German credit's (log_tau_d, beta_d) pairs in CP, NCP and
VIP coordinates, prior draws in grey and posterior draws in red.

Posterior draws: the thinned draws (original coordinates) of the CP, NCP and VIP HMC cells at their
oracle L, pooled. Prior draws: ``numpyro.infer.Predictive`` of the centred model. Both are mapped to
each parameterisation's unconstrained coordinates with ``Coordinates.from_original``, using the
parameterisations of the first seed's variational fits. The pairs shown are the features whose
VIP lambda for beta is the smallest (most non-centred) and the largest (most centred).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from autoreparam.benchmark.report.collect import Collected
from autoreparam.benchmark.report.figures import new_figure, save

MODEL = "german_credit"
COLUMNS = (("cp", "CP"), ("ncp", "NCP"), ("vip", "VIP"))
NUM_PRIOR = 1000


def protocol_from_dict(d: dict):
    """The ``Protocol`` of a record (unknown keys ignored, lists back to tuples)."""
    from autoreparam.benchmark.protocol import Protocol
    from autoreparam.vi.protocol import VIConfig

    def fields(cls, values):
        names = {f.name for f in dataclasses.fields(cls)}
        return {k: tuple(v) if isinstance(v, list) else v for k, v in values.items() if k in names}

    return Protocol(**{**fields(Protocol, d), "vi": VIConfig(**fields(VIConfig, d.get("vi") or {}))})


def _posterior(collected: Collected, choices: dict, coords) -> dict | None:
    """Pooled thinned draws of the CP / NCP / VIP cells, split by site (original coordinates)."""
    draws = []
    for method, _ in COLUMNS:
        choice = choices.get((MODEL, method))
        for key in choice.keys if choice else ():
            arrays = collected.store.arrays(key) if collected.store.has_arrays(key) else {}
            if "thinned_draws" not in arrays:
                continue
            thinned = arrays["thinned_draws"]
            draws.append(thinned.reshape(-1, thinned.shape[-1]))
    if not draws:
        return None
    return coords.split_original(np.concatenate(draws))


def _prior(problem, seed: int) -> dict:
    import jax
    from numpyro.infer import Predictive

    kwargs = {k: v for k, v in problem.kwargs.items() if k != "y"}
    samples = Predictive(problem.model, num_samples=NUM_PRIOR)(jax.random.PRNGKey(seed), *problem.args, **kwargs)
    return {k: np.asarray(v) for k, v in samples.items()}


def _to_coordinates(coords, param, z: dict) -> dict:
    import jax

    names = coords.names
    mapped = jax.jit(jax.vmap(coords.from_original, in_axes=(0, None)))({n: z[n] for n in names}, param)
    return {k: np.asarray(v) for k, v in mapped.items()}


def pick_features(lam_beta: np.ndarray) -> list[int]:
    """The most non-centred and the most centred feature by VIP lambda of beta."""
    order = np.argsort(lam_beta)
    return sorted({int(order[0]), int(order[-1])})


def _limits(values: np.ndarray) -> tuple[float, float]:
    lo, hi = np.nanpercentile(values, [0.5, 99.5])
    pad = max(hi - lo, 1e-3)
    return float(lo - pad), float(hi + pad)


def fig8_german(collected: Collected, choices: dict, path: Path, data_dir=None) -> tuple[Path | None, str]:
    """Write the figure; returns (path or None, a note saying what was drawn or why not)."""
    if MODEL not in collected.models:
        return None, "German credit is not in these results, so Figure 8 is skipped."
    vi = sorted(collected.cells("vi", MODEL), key=lambda r: r.get("seed", 0))
    if not vi:
        return None, "German credit has no variational fit in these results, so Figure 8 is skipped."
    from autoreparam.benchmark.workspace import Workspace

    seed = int(vi[0]["seed"])
    # vi cells carry no protocol: take the one the model's other cells recorded.
    recorded = next((r["protocol"] for r in collected.records if r.get("model") == MODEL and "protocol" in r), None)
    ws = Workspace(MODEL, protocol_from_dict(recorded or collected.protocol), collected.store, data_dir=data_dir)
    fits = ws.fits(seed)  # loads the saved fit (the vi cell exists): runs nothing
    posterior = _posterior(collected, choices, ws.coords)
    if posterior is None or not all(label in fits for label, _ in COLUMNS):
        return None, "German credit has no usable CP / NCP / VIP HMC draws, so Figure 8 is skipped."
    prior = _prior(ws.problem, seed)
    features = pick_features(np.asarray(fits["vip"].parameterisation.loc_centring["beta"]).ravel())
    lam = np.asarray(fits["vip"].parameterisation.loc_centring["beta"]).ravel()
    figure = new_figure(9.0, 3.0 * len(features))
    for j, (label, title) in enumerate(COLUMNS):
        param = fits[label].parameterisation
        post_u, prior_u = _to_coordinates(ws.coords, param, posterior), _to_coordinates(ws.coords, param, prior)
        for i, d in enumerate(features):
            axes = figure.add_subplot(len(features), len(COLUMNS), i * len(COLUMNS) + j + 1)
            px, py = post_u["log_tau"][:, d], post_u["beta"][:, d]
            axes.scatter(prior_u["log_tau"][:, d], prior_u["beta"][:, d], s=2, color="0.6", alpha=0.4, label="prior")
            axes.scatter(px, py, s=2, color="tab:red", alpha=0.5, label="posterior")
            axes.set_xlim(*_limits(px))
            axes.set_ylim(*_limits(py))
            axes.set_title(f"{title} coordinates, d = {d} (VIP lambda {lam[d]:.2f})", fontsize=8)
            axes.set_xlabel(f"log_tau[{d}]", fontsize=7)
            axes.set_ylabel(f"beta[{d}]", fontsize=7)
            axes.tick_params(labelsize=6)
    figure.axes[0].legend(fontsize=6, markerscale=3)
    figure.tight_layout()
    note = (
        f"Figure 8: features {features} (smallest and largest VIP lambda of beta); posterior draws pooled from "
        f"the CP, NCP and VIP HMC cells at their oracle L ({len(posterior['beta'])} draws); "
        f"{NUM_PRIOR} prior draws; fits of seed {seed}."
    )
    return save(figure, path), note

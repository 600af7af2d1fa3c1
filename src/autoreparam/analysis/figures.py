"""Figures 2c and 4 of the paper, with the numbers behind them, written to a folder.

Figure 2c: kappa_CP and kappa_NCP against q = N / sigma^2 (log axes), sigma_mu = 1.
Figure 4: kappa(lambda) for lambda in [0, 1] and q in {0.01, 1, 100}, sigma_mu = 1.
Every plotted number is computed live by the general linear-Gaussian machinery; the Figure 2c data
also carry the closed forms of Appendix A (eqs. 5 and 6) beside them.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from autoreparam.analysis.simple_model import kappa_cp, kappa_ncp, kappa_of_lambda, kappa_table
from autoreparam.validation import output_folder

FIG2C_PNG = "fig2c_kappa_vs_q.png"
FIG2C_JSON = "fig2c_kappa_vs_q.json"
FIG4_PNG = "fig4_kappa_vs_lambda.png"
FIG4_JSON = "fig4_kappa_vs_lambda.json"
TABLE_JSON = "kappa_table.json"

FIG4_QS = (0.01, 1.0, 100.0)


def fig2c_data(num_points: int = 121, sigma_mu: float = 1.0) -> dict:
    """kappa_CP and kappa_NCP on a log grid of q from 1e-3 to 1e3 (Figure 2c)."""
    qs = np.logspace(-3.0, 3.0, num_points)
    return {
        "sigma_mu": sigma_mu,
        "q": qs.tolist(),
        "kappa_cp": [kappa_of_lambda(q, sigma_mu, 1.0) for q in qs],
        "kappa_ncp": [kappa_of_lambda(q, sigma_mu, 0.0) for q in qs],
        "kappa_cp_closed_form": [kappa_cp(q, sigma_mu) for q in qs],
        "kappa_ncp_closed_form": [kappa_ncp(q, sigma_mu) for q in qs],
    }


def fig4_data(num_points: int = 101, qs=FIG4_QS, sigma_mu: float = 1.0) -> dict:
    """kappa(lambda) on a grid of lambda in [0, 1], one curve per q (Figure 4)."""
    lams = np.linspace(0.0, 1.0, num_points)
    return {
        "sigma_mu": sigma_mu,
        "lambda": lams.tolist(),
        "kappa": {repr(float(q)): [kappa_of_lambda(q, sigma_mu, lam) for lam in lams] for q in qs},
    }


def write_figures(out_dir) -> dict[str, Path]:
    """Write Figures 2c and 4 (PNG), their data and the kappa table (JSON) into `out_dir`.

    Returns the written paths by file name. The folder is created if missing.
    """
    # Imported here so that importing autoreparam never loads matplotlib. Using Figure with the
    # Agg canvas directly, not pyplot, leaves the caller's global backend untouched.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    out = output_folder(out_dir)
    written = {}

    data2c = fig2c_data()
    figure = Figure(figsize=(4.5, 3.5))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.loglog(data2c["q"], data2c["kappa_cp"], label=r"$\kappa_{CP}$")
    axes.loglog(data2c["q"], data2c["kappa_ncp"], label=r"$\kappa_{NCP}$")
    axes.set_xlabel(r"$q = N / \sigma^2$")
    axes.set_ylabel(r"$\kappa$")
    axes.set_title(r"Figure 2c ($\sigma_\mu = 1$)")
    axes.legend()
    figure.tight_layout()
    written[FIG2C_PNG] = _save_figure(figure, out / FIG2C_PNG)
    written[FIG2C_JSON] = _save_json(data2c, out / FIG2C_JSON)

    data4 = fig4_data()
    figure = Figure(figsize=(4.5, 3.5))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for q, kappas in data4["kappa"].items():
        axes.semilogy(data4["lambda"], kappas, label=f"q = {float(q):g}")
    axes.set_xlabel(r"$\lambda$")
    axes.set_ylabel(r"$\kappa(\lambda)$")
    axes.set_title(r"Figure 4 ($\sigma_\mu = 1$)")
    axes.legend()
    figure.tight_layout()
    written[FIG4_PNG] = _save_figure(figure, out / FIG4_PNG)
    written[FIG4_JSON] = _save_json(data4, out / FIG4_JSON)

    rows = [dataclasses.asdict(row) for row in kappa_table()]
    written[TABLE_JSON] = _save_json({"rows": rows}, out / TABLE_JSON)
    return written


def _save_figure(figure, path: Path) -> Path:
    figure.savefig(path, dpi=150)
    return path


def _save_json(data: dict, path: Path) -> Path:
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path

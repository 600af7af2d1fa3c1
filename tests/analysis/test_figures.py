"""Figures 2c and 4 written to files, and imports that stay free of side effects."""

import json
import subprocess
import sys

import numpy as np
import pytest

from autoreparam.analysis import kappa_cp, kappa_ncp, kappa_table, write_figures


def test_write_figures_writes_pngs_and_their_numbers(tmp_path):
    out = tmp_path / "new" / "figs"
    written = write_figures(out)
    expected = {
        "fig2c_kappa_vs_q.png",
        "fig2c_kappa_vs_q.json",
        "fig4_kappa_vs_lambda.png",
        "fig4_kappa_vs_lambda.json",
        "kappa_table.json",
    }
    assert set(written) == expected
    assert {p.name for p in out.iterdir()} == expected
    for name in ("fig2c_kappa_vs_q.png", "fig4_kappa_vs_lambda.png"):
        import matplotlib.image

        image = matplotlib.image.imread(out / name)
        assert image.shape[0] > 100 and image.shape[1] > 100
        assert image.std() > 0  # not a blank canvas

    fig2c = json.loads((out / "fig2c_kappa_vs_q.json").read_text())
    q = np.array(fig2c["q"])
    assert q[0] == pytest.approx(1e-3) and q[-1] == pytest.approx(1e3)
    np.testing.assert_allclose(fig2c["kappa_cp"], [kappa_cp(x) for x in q], rtol=1e-9)
    np.testing.assert_allclose(fig2c["kappa_ncp"], [kappa_ncp(x) for x in q], rtol=1e-9)

    fig4 = json.loads((out / "fig4_kappa_vs_lambda.json").read_text())
    lam = np.array(fig4["lambda"])
    assert lam[0] == 0.0 and lam[-1] == 1.0
    assert set(fig4["kappa"]) == {"0.01", "1.0", "100.0"}
    for key, kappas in fig4["kappa"].items():
        q = float(key)
        # The curve's minimum on the grid sits next to lambda = q / (1 + q) (sigma_mu = 1).
        assert abs(lam[int(np.argmin(kappas))] - q / (1 + q)) <= lam[1] - lam[0]
        assert kappas[-1] == pytest.approx(kappa_cp(q)) and kappas[0] == pytest.approx(kappa_ncp(q))

    table = json.loads((out / "kappa_table.json").read_text())["rows"]
    assert [row["kappa_ncp"] for row in table] == pytest.approx(
        [row.kappa_ncp for row in kappa_table()]
    )


def test_import_loads_no_plotting_library():
    code = (
        "import sys, autoreparam.analysis; "
        "loaded = [m for m in ('matplotlib', 'arviz') if m in sys.modules]; "
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

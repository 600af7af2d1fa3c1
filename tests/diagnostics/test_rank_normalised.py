"""The vectorised diagnostics equal ArviZ's own functions, element by element."""

from __future__ import annotations

import numpy as np
import pytest

from autoreparam.diagnostics.rank_normalised import ess_bulk, ess_tail, rhat_rank
from autoreparam.diagnostics.standard import _arviz

RELATIVE = 1e-9


def _arviz_functions():
    _arviz()  # imports ArviZ with its once-a-day notice filtered
    from arviz.stats.diagnostics import _ess_bulk, _ess_tail, _rhat_rank

    return {"bulk": (ess_bulk, _ess_bulk), "tail": (ess_tail, _ess_tail), "rhat": (rhat_rank, _rhat_rank)}


def _ar1(rng, chains, draws, k, phi):
    x = np.empty((chains, draws, k))
    x[:, 0] = rng.normal(size=(chains, k))
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + rng.normal(size=(chains, k))
    return x


def _cases():
    rng = np.random.default_rng(0)
    yield "independent", rng.normal(size=(4, 1000, 6))
    yield "autocorrelated", _ar1(rng, 4, 500, 5, np.array([0.0, 0.5, 0.9, 0.99, 0.999]))
    yield "antithetic", _ar1(rng, 4, 400, 3, np.array([-0.3, -0.7, -0.95]))
    yield "odd length, 3 chains", _ar1(rng, 3, 101, 4, 0.6)
    yield "short", rng.normal(size=(2, 9, 3))
    yield "shifted chains", rng.normal(size=(4, 300, 3)) + np.array([0.0, 0.3, 3.0, 9.0])[:, None, None]
    yield "discrete", rng.integers(0, 3, size=(4, 200, 4)).astype(float)
    stuck = rng.normal(size=(4, 200, 3))
    stuck[:, :, 1] = 2.5  # constant: ESS is the number of draws, R-hat NaN
    stuck[1, :, 2] = 0.7  # one chain stuck
    yield "constant and stuck", stuck
    yield "heavy tails", rng.standard_cauchy(size=(4, 300, 4))
    yield "float32, as samplers return", _ar1(rng, 4, 500, 5, 0.8).astype(np.float32)
    yield "integers", rng.poisson(2.0, size=(4, 100, 3))


@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: c[0])
@pytest.mark.parametrize("which", ["bulk", "tail", "rhat"])
def test_equals_arviz_element_by_element(case, which):
    _, x = case
    ours, theirs = _arviz_functions()[which]
    got = ours(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.array([theirs(x[:, :, j]) for j in range(x.shape[2])], dtype=float)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=RELATIVE)


@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: c[0])
def test_together_equals_apart(case):
    from autoreparam.diagnostics.rank_normalised import bulk_tail_rhat

    _, x = case
    for together, apart in zip(bulk_tail_rhat(x), (ess_bulk(x), ess_tail(x), rhat_rank(x))):
        np.testing.assert_array_equal(together, apart)


def test_average_ranks_equal_scipy_with_ties():
    from scipy import stats

    from autoreparam.diagnostics.rank_normalised import average_ranks

    rng = np.random.default_rng(2)
    for values in (rng.normal(size=(5, 301)), np.round(rng.normal(size=(5, 301)), 1), np.zeros((2, 7))):
        np.testing.assert_array_equal(average_ranks(values), stats.rankdata(values, method="average", axis=1))

"""FFT autocovariance against the O(N^2) definition."""

import numpy as np
import pytest

from autoreparam.diagnostics import autocorrelation, autocovariance


def direct_autocovariance(x):
    n = x.size
    c = x - x.mean()
    return np.array([np.dot(c[: n - i], c[i:]) / n for i in range(n)])


@pytest.mark.parametrize("n", [2, 3, 7, 64, 101])
def test_fft_autocovariance_equals_the_definition(n):
    x = np.random.default_rng(n).normal(size=(3, n)) + 5.0
    expected = np.stack([direct_autocovariance(row) for row in x])
    np.testing.assert_allclose(autocovariance(x), expected, rtol=1e-10, atol=1e-12)
    # Fewer lags need less padding but must give the same prefix.
    k = max(n // 3, 1)
    np.testing.assert_allclose(autocovariance(x, max_lag=k), expected[:, : k + 1], atol=1e-12)


def test_hand_computed_autocorrelation():
    # x = 1, 2, 3, 4: centred -1.5, -0.5, 0.5, 1.5; sums of lagged products 5, 1.25, -1.5, -2.25.
    np.testing.assert_allclose(
        autocorrelation(np.array([1.0, 2.0, 3.0, 4.0])), [1.0, 0.25, -0.3, -0.45], atol=1e-14
    )


def test_constant_series_has_zero_autocovariance_and_no_autocorrelation():
    x = np.full((2, 10), 0.1)
    np.testing.assert_array_equal(autocovariance(x), 0.0)
    assert np.all(np.isnan(autocorrelation(x)))

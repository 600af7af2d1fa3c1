"""Autocovariance of many series at once, by FFT.

The estimator is the standard biased one (Box and Jenkins): for a series x_0..x_{N-1} with mean m,

    c_i = (1 / N) sum_{t=0}^{N-1-i} (x_t - m) (x_{t+i} - m),    i = 0..N-1.

Zero-padding to at least N + K points makes the FFT's circular correlation equal the linear one at
lags 0..K (Wiener-Khinchin).
"""

from __future__ import annotations

import numpy as np
import scipy.fft


def autocovariance(
    x: np.ndarray, *, max_lag: int | None = None, workers: int | None = None
) -> np.ndarray:
    """Biased autocovariance c_0..c_K of each series along the last axis of `x`.

    Args:
        x: array (..., N) of real series.
        max_lag: K, the last lag wanted (default and upper bound N - 1). Padding to N + K points
            suffices for lags up to K, so a small K makes the FFTs about twice as cheap.
        workers: threads for scipy.fft (None: scipy's default, -1: all cores).
    """
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[-1]
    max_lag = n - 1 if max_lag is None else min(int(max_lag), n - 1)
    centred = x - x.mean(axis=-1, keepdims=True)
    # The mean of a constant series can differ from its value by round-off; make such series
    # exactly zero so that they are recognisable by c_0 == 0.
    centred[np.ptp(x, axis=-1) == 0] = 0.0
    # Circular correlation of a series zero-padded to N + K points has no wrap-around at lags <= K.
    size = scipy.fft.next_fast_len(n + max_lag, real=True)
    spectrum = scipy.fft.rfft(centred, n=size, axis=-1, workers=workers)
    np.multiply(spectrum, spectrum.conj(), out=spectrum)  # |X|^2 in place (imaginary part 0)
    return scipy.fft.irfft(spectrum, n=size, axis=-1, workers=workers)[..., : max_lag + 1] / n


def autocorrelation(
    x: np.ndarray, *, max_lag: int | None = None, workers: int | None = None
) -> np.ndarray:
    """Biased autocorrelation rho_i = c_i / c_0, i = 0..K, along the last axis; NaN if constant."""
    cov = autocovariance(x, max_lag=max_lag, workers=workers)
    lag0 = cov[..., :1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(lag0 > 0, cov / np.where(lag0 > 0, lag0, 1.0), np.nan)

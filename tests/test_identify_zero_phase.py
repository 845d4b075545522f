"""Butterworth design and zero-phase filtering against scipy.signal, the reference implementation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from hapticam.identify.zero_phase import butter_lowpass, filtfilt_gust, filtfilt_odd, lfilter, lfilter_zi

ORDERS = [1, 2, 3, 4, 6]
CUTOFFS = [0.002, 0.05, 0.3, 0.9]


def _signal(n: int, seed: int) -> np.ndarray:
    """A random walk plus white noise: a slow trend and a broad spectrum, like a probe's position."""
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.normal(size=n)) + rng.normal(size=n)


def _close(ours: np.ndarray, ref: np.ndarray, rtol: float = 1e-10) -> None:
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=rtol * np.max(np.abs(ref)))


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("wn", CUTOFFS)
def test_butter_lowpass_matches_scipy(order, wn):
    b, a = butter_lowpass(order, wn)
    b_ref, a_ref = signal.butter(order, wn)
    _close(b, b_ref, 1e-12)
    _close(a, a_ref, 1e-12)


def test_butter_lowpass_has_unit_dc_gain_and_half_power_at_the_cutoff():
    b, a = butter_lowpass(4, 0.2)
    assert np.polyval(b, 1.0) / np.polyval(a, 1.0) == pytest.approx(1.0, rel=1e-12)
    z = np.exp(1j * np.pi * 0.2)
    assert abs(np.polyval(b, z) / np.polyval(a, z)) ** 2 == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize("wn", [0.0, 1.0, -0.1, 1.5])
def test_butter_lowpass_refuses_a_cutoff_outside_the_band(wn):
    with pytest.raises(ValueError, match="cutoff"):
        butter_lowpass(4, wn)


@pytest.mark.parametrize("order", [2, 4])
def test_lfilter_with_initial_state_matches_scipy(order):
    b, a = signal.butter(order, 0.1)
    x = _signal(500, 1)
    zi = np.random.default_rng(2).normal(size=order)
    y, zf = lfilter(b, a, x, zi)
    y_ref, zf_ref = signal.lfilter(b, a, x, zi=zi)
    _close(y, y_ref)
    _close(zf, zf_ref)


def test_lfilter_normalises_the_leading_denominator_coefficient():
    b, a = signal.butter(3, 0.2)
    x = _signal(100, 3)
    _close(lfilter(2.5 * b, 2.5 * a, x)[0], signal.lfilter(b, a, x))


@pytest.mark.parametrize("order", ORDERS)
def test_lfilter_zi_matches_scipy(order):
    b, a = signal.butter(order, 0.07)
    _close(lfilter_zi(b, a), signal.lfilter_zi(b, a))


@pytest.mark.parametrize("order", [2, 4])
@pytest.mark.parametrize("wn", CUTOFFS)
@pytest.mark.parametrize("n", [13, 16, 200, 5000])
def test_filtfilt_gust_matches_scipy(order, wn, n):
    b, a = signal.butter(order, wn)
    x = _signal(n, n)
    _close(filtfilt_gust(b, a, x), signal.filtfilt(b, a, x, method="gust"), 1e-9)


@pytest.mark.parametrize("zero_phase", [filtfilt_gust, filtfilt_odd])
def test_zero_phase_filter_scales_a_sine_by_the_squared_butterworth_magnitude(zero_phase):
    """Away from the ends a sine comes out in phase, scaled by |H|^2 = 1 / (1 + (tan(w/2) / tan(w_c/2))^2N)."""
    order, wn, w = 4, 0.1, 0.09 * np.pi
    k = np.arange(4000)
    x = np.sin(w * k)
    gain = 1.0 / (1.0 + (np.tan(w / 2) / np.tan(np.pi * wn / 2)) ** (2 * order))
    y = zero_phase(*butter_lowpass(order, wn), x)
    np.testing.assert_allclose(y[1000:3000], gain * x[1000:3000], atol=1e-9)


@pytest.mark.parametrize("order", [2, 4])
@pytest.mark.parametrize("wn", CUTOFFS)
@pytest.mark.parametrize("n", [10, 13, 200, 5000])
def test_filtfilt_odd_matches_scipy(order, wn, n):
    b, a = signal.butter(order, wn)
    x = _signal(n, n + 7)
    if n <= 3 * (order + 1):
        with pytest.raises(ValueError, match="longer than the padding"):
            filtfilt_odd(b, a, x)
        return
    _close(filtfilt_odd(b, a, x), signal.filtfilt(b, a, x))


@pytest.mark.parametrize("padlen", [0, 1, 20])
def test_filtfilt_odd_with_a_given_padding_matches_scipy(padlen):
    b, a = signal.butter(2, 0.1)
    x = _signal(300, 4)
    _close(filtfilt_odd(b, a, x, padlen=padlen), signal.filtfilt(b, a, x, padlen=padlen))

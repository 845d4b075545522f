"""Butterworth low-pass design and zero-phase (forward-backward) IIR filtering.

The same filters as ``scipy.signal.butter`` / ``lfilter`` / ``filtfilt``, written here so that
preprocessing does not pay for importing :mod:`scipy.signal` (about a second on a loaded machine).

- :func:`butter_lowpass`: digital Butterworth low-pass ``(b, a)`` by the bilinear transform of the
  analogue prototype, the cutoff pre-warped (``wn`` is the cutoff over the Nyquist frequency)
- :func:`lfilter`: direct form II transposed IIR filter with an initial state (numba kernel)
- :func:`filtfilt_gust`: forward-backward filter with Gustafsson's initial states, chosen so that
  filtering forward-then-backward and backward-then-forward give the same output
  (F. Gustafsson, IEEE Trans. Signal Processing 44(4):988-992, 1996)
- :func:`filtfilt_odd`: forward-backward filter on the signal extended at both ends by its odd
  reflection, each pass started in the step-response steady state (:func:`lfilter_zi`)
"""

from __future__ import annotations

import numba as nb
import numpy as np


def butter_lowpass(order: int, wn: float) -> tuple[np.ndarray, np.ndarray]:
    """Numerator and denominator ``(b, a)`` of the digital Butterworth low-pass of ``order``.

    ``wn`` is the -3 dB cutoff as a fraction of the Nyquist frequency, ``0 < wn < 1``.
    """
    if order < 1:
        raise ValueError(f"filter order must be at least 1, got {order}")
    if not 0.0 < wn < 1.0:
        raise ValueError(f"normalised cutoff must lie in (0, 1), got {wn:g}")
    m = np.arange(-order + 1, order, 2)
    poles_analog = -np.exp(1j * np.pi * m / (2 * order))            # unit-cutoff prototype
    fs = 2.0                                                         # wn = 1 at Nyquist
    warped = 2.0 * fs * np.tan(np.pi * wn / fs)
    poles_analog = warped * poles_analog
    gain = warped ** order
    fs2 = 2.0 * fs
    poles = (fs2 + poles_analog) / (fs2 - poles_analog)              # bilinear transform
    gain = gain * np.real(1.0 / np.prod(fs2 - poles_analog))
    b = gain * np.real(np.poly(-np.ones(order)))                     # all zeros at z = -1
    a = np.real(np.poly(poles))
    return b, a


@nb.njit(cache=True)
def _lfilter_kernel(b, a, x, zi):                                   # pragma: no cover - numba
    order = b.size - 1
    z = zi.copy()
    y = np.empty_like(x)
    for n in range(x.size):
        xn = x[n]
        yn = b[0] * xn + z[0]
        for i in range(order - 1):
            z[i] = b[i + 1] * xn + z[i + 1] - a[i + 1] * yn
        z[order - 1] = b[order] * xn - a[order] * yn
        y[n] = yn
    return y, z


def _normalised(b: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``b`` and ``a`` as float64 of equal length, scaled so that ``a[0] == 1``."""
    b = np.atleast_1d(np.asarray(b, dtype=np.float64))
    a = np.atleast_1d(np.asarray(a, dtype=np.float64))
    if a[0] == 0.0:
        raise ValueError("the leading denominator coefficient must not be zero")
    n = max(b.size, a.size)
    b = np.concatenate([b, np.zeros(n - b.size)]) / a[0]
    a = np.concatenate([a, np.zeros(n - a.size)]) / a[0]
    return b, a


def lfilter(b: np.ndarray, a: np.ndarray, x: np.ndarray, zi: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """Filter the 1-D ``x`` by ``b/a`` (direct form II transposed); returns ``(y, final state)``.

    ``zi`` is the initial state (``max(len(a), len(b)) - 1`` values; zeros when omitted).
    """
    b, a = _normalised(b, a)
    order = b.size - 1
    x = np.ascontiguousarray(x, dtype=np.float64)
    if order == 0:
        return b[0] * x, np.zeros(0)
    zi = np.zeros(order) if zi is None else np.ascontiguousarray(zi, dtype=np.float64)
    if zi.shape != (order,):
        raise ValueError(f"initial state must hold {order} values, got shape {zi.shape}")
    return _lfilter_kernel(b, a, x, zi)


def lfilter_zi(b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Initial state of :func:`lfilter` for which a unit step input gives the steady-state output."""
    b, a = _normalised(b, a)
    order = b.size - 1
    companion_t = np.zeros((order, order))                           # transpose of the companion matrix
    companion_t[:, 0] = -a[1:]
    companion_t[np.arange(order - 1), np.arange(1, order)] = 1.0
    return np.linalg.solve(np.eye(order) - companion_t, b[1:] - a[1:] * b[0])


def filtfilt_gust(b: np.ndarray, a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Zero-phase filter of the 1-D ``x``, forward then backward, with Gustafsson's initial states.

    The states of both passes minimise the difference between the forward-backward and the
    backward-forward outputs (a least-squares problem over the whole signal).
    """
    b, a = _normalised(b, a)
    order = b.size - 1
    x = np.ascontiguousarray(x, dtype=np.float64)
    if order == 0:
        return b[0] ** 2 * x
    n = x.size
    unit = np.zeros(order)
    unit[0] = 1.0
    obs = np.zeros((n, order))                                       # response to each initial state
    obs[:, 0] = lfilter(b, a, np.zeros(n), unit)[0]
    for k in range(1, order):
        obs[k:, k] = obs[:-k, 0]
    obs_rev = obs[::-1]
    s = np.column_stack([lfilter(b, a, obs_rev[:, k])[0] for k in range(order)])
    s_rev = s[::-1]
    design = np.hstack((s_rev - obs, obs_rev - s))

    y_fb = lfilter(b, a, lfilter(b, a, x)[0][::-1])[0][::-1]
    y_bf = lfilter(b, a, lfilter(b, a, x[::-1])[0][::-1])[0]
    ic_opt = np.linalg.lstsq(design, y_bf - y_fb, rcond=np.finfo(np.float64).eps)[0]
    return y_fb + np.hstack((s_rev, obs_rev)) @ ic_opt


def filtfilt_odd(b: np.ndarray, a: np.ndarray, x: np.ndarray, padlen: int | None = None) -> np.ndarray:
    """Zero-phase filter of the 1-D ``x``: odd extension by ``padlen`` samples at each end
    (``3 max(len(a), len(b))`` by default), forward and backward passes started in steady state.

    ``x`` must be longer than ``padlen``.
    """
    b, a = _normalised(b, a)
    x = np.ascontiguousarray(x, dtype=np.float64)
    edge = 3 * b.size if padlen is None else int(padlen)
    if x.size <= edge:
        raise ValueError(f"the signal must be longer than the padding ({edge} samples), got {x.size}")
    if edge > 0:
        left = 2.0 * x[0] - x[edge:0:-1]
        right = 2.0 * x[-1] - x[-2:-(edge + 2):-1]
        ext = np.concatenate((left, x, right))
    else:
        ext = x
    if b.size == 1:
        return b[0] ** 2 * x
    zi = lfilter_zi(b, a)
    y = lfilter(b, a, ext, zi * ext[0])[0]
    y = lfilter(b, a, y[::-1], zi * y[-1])[0][::-1]
    return y[edge:ext.size - edge] if edge > 0 else y

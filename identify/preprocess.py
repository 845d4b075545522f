"""Data preparation (seed 001 sections 3.1-3.2): derivatives, direction of travel, position sorting.

Velocity and acceleration
-------------------------
When the probe did not measure them, ``v`` and ``a`` come from the position by a zero-phase method:
a 4th-order Butterworth low-pass run forward and backward with Gustafsson's initial states
(:mod:`hapticam.identify.zero_phase`; no phase lag, squared magnitude response) followed by
second-order central differences (``numpy.gradient``). The cutoff is chosen from the excitation band
and the sample rate::

    f_exc = frequency below which 99 % of the detrended position's power lies
    f_c   = min(10 f_exc, 0.25 f_s)

so the filter passes the excitation and its first harmonics untouched and removes the
quantisation and sensor noise that differentiation would amplify. ``cutoff_hz`` overrides it. The
position itself enters the regressor unfiltered, so sharp position-dependent features keep their place.

Direction of travel
-------------------
``+1`` while pressing (x increasing), ``-1`` while releasing, from the sign of the filtered velocity
(seed 001 section 3.2) with the same rule the renderer's kernel applies
(:func:`hapticam.models.impedance.impedance_force`): the direction becomes +1 when ``v > dead band``,
-1 when ``v < -dead band`` and is held otherwise, starting from +1 as the kernel does. The default dead band is
``min(1 mm/s, 0.1 median |v|)``: the model default for fast captures, and a tenth of the typical speed
for quasi-static ones (a switch tester moving at 0.05 mm/s).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.capture import Capture
from hapticam.identify.zero_phase import butter_lowpass, filtfilt_gust

DEFAULT_DEAD_BAND_MPS = 1e-3


def excitation_band_hz(x: np.ndarray, fs: float, fraction: float = 0.99) -> float:
    """Frequency (Hz) below which ``fraction`` of the power of the linearly detrended position lies."""
    n = x.size
    tt = np.arange(n, dtype=np.float64)
    coef = np.polyfit(tt, x, 1)
    xd = x - np.polyval(coef, tt)
    spec = np.abs(np.fft.rfft(xd * np.hanning(n))) ** 2
    spec[0] = 0.0
    total = spec.sum()
    if not total > 0:
        return fs / n
    freqs = np.fft.rfftfreq(n, 1.0 / fs)
    idx = int(np.searchsorted(np.cumsum(spec), fraction * total))
    return float(max(freqs[min(idx, freqs.size - 1)], fs / n))


def default_cutoff_hz(x: np.ndarray, fs: float) -> float:
    """``min(10 f_exc, 0.25 f_s)`` (see the module notes)."""
    return float(min(10.0 * excitation_band_hz(x, fs), 0.25 * fs))


def zero_phase_lowpass(x: np.ndarray, fs: float, cutoff_hz: float, order: int = 4) -> np.ndarray:
    """Butterworth low-pass of ``order`` run forward and backward (zero phase), Gustafsson edges."""
    wn = cutoff_hz / (0.5 * fs)
    if not (0.0 < wn < 1.0):
        raise IdentificationError(f"cutoff {cutoff_hz:g} Hz must lie between 0 and the Nyquist frequency "
                                  f"{0.5 * fs:g} Hz")
    b, a = butter_lowpass(order, wn)
    if x.size <= 3 * max(len(a), len(b)):
        return x.copy()
    return filtfilt_gust(b, a, x)


def derivatives(t_s: np.ndarray, x_m: np.ndarray, cutoff_hz: float | None = None
                ) -> tuple[np.ndarray, np.ndarray, float]:
    """Zero-phase velocity (m/s) and acceleration (m/s^2) of ``x_m``; returns ``(v, a, cutoff_hz)``.

    Central differences use the actual sample times (``numpy.gradient`` with ``t_s``).
    """
    fs = 1.0 / float(np.median(np.diff(t_s)))
    fc = default_cutoff_hz(x_m, fs) if cutoff_hz is None else float(cutoff_hz)
    xf = zero_phase_lowpass(x_m, fs, fc)
    v = np.gradient(xf, t_s)  # v_i = (x_{i+1} - x_{i-1}) / (t_{i+1} - t_{i-1})
    a = np.gradient(v, t_s)
    return v, a, fc


def direction_of_travel(v_mps: np.ndarray, dead_band_mps: float) -> np.ndarray:
    """Direction (+1/-1, int8) per sample with the renderer's dead-band hold (module notes)."""
    d = np.zeros(v_mps.size, dtype=np.int8)
    d[v_mps > dead_band_mps] = 1
    d[v_mps < -dead_band_mps] = -1
    moving = np.flatnonzero(d)
    if moving.size == 0:
        return np.ones(v_mps.size, dtype=np.int8)
    # hold the last direction inside the dead band: forward fill of the last nonzero entry
    idx = np.where(d != 0, np.arange(d.size), 0)
    np.maximum.accumulate(idx, out=idx)
    out = d[idx]
    out[: moving[0]] = 1  # the kernel's initial direction
    return out


def default_dead_band(v_mps: np.ndarray) -> float:
    """``min(1 mm/s, 0.1 median |v|)`` (module notes)."""
    return float(min(DEFAULT_DEAD_BAND_MPS, 0.1 * float(np.median(np.abs(v_mps)))))


@dataclass
class Prepared:
    """A capture ready for estimation: SI arrays, derivatives, directions, the dropout mask.

    Attributes
    ----------
    t, x, v, a, f : numpy.ndarray
        Time (s), position (m), velocity (m/s), acceleration (m/s^2), force (N), all samples.
    direction : numpy.ndarray
        +1/-1 per sample (int8).
    valid : numpy.ndarray
        False for dropouts (excluded from fitting and metrics).
    dead_band_mps, cutoff_hz : float
        The dead band used for the direction and the derivative filter's cutoff (NaN if measured).
    measured_v, measured_a : bool
        Whether ``v``/``a`` came from the capture rather than differentiation.
    """

    t: np.ndarray
    x: np.ndarray
    v: np.ndarray
    a: np.ndarray
    f: np.ndarray
    direction: np.ndarray
    valid: np.ndarray
    dead_band_mps: float
    cutoff_hz: float
    measured_v: bool
    measured_a: bool
    name: str = "<capture>"

    def masked(self, keep: np.ndarray, label: str) -> "Prepared":
        """The same samples with only ``keep & valid`` valid (derivatives and directions unchanged, so a
        hold-out split does not differentiate across its gaps)."""
        return replace(self, valid=self.valid & keep, name=f"{self.name} ({label})")

    def group(self, direction: int) -> np.ndarray:
        """Indices of valid samples travelling in ``direction``, sorted by position (seed 001 §3.2)."""
        idx = np.flatnonzero((self.direction == direction) & self.valid)
        return idx[np.argsort(self.x[idx], kind="stable")]


def prepare(capture: Capture, *, cutoff_hz: float | None = None, dead_band_mps: float | None = None
            ) -> Prepared:
    """Derivatives (measured or zero-phase), directions and the valid mask of ``capture``."""
    t, x = capture.t_s, capture.x_m
    fc = float("nan")
    if capture.v_mps is None or capture.a_mps2 is None:
        v_d, a_d, fc = derivatives(t, x, cutoff_hz)
    v = capture.v_mps if capture.v_mps is not None else v_d
    a = capture.a_mps2 if capture.a_mps2 is not None else a_d
    db = default_dead_band(v) if dead_band_mps is None else float(dead_band_mps)
    if not db >= 0:
        raise IdentificationError(f"dead band must be >= 0 m/s, got {dead_band_mps}")
    return Prepared(t=t, x=x, v=v, a=a, f=capture.f_N, direction=direction_of_travel(v, db),
                    valid=capture.valid, dead_band_mps=db, cutoff_hz=fc,
                    measured_v=capture.v_mps is not None, measured_a=capture.a_mps2 is not None,
                    name=capture.name)

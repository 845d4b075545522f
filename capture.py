"""The capture: what a probe records of an object, and what a recording of a rendered object looks like.

A :class:`Capture` holds SI arrays ``t_s`` (s), ``x_m`` (m), ``f_N`` (N), optional ``v_mps`` (m/s) and
``a_mps2`` (m/s^2), free-form metadata and the indices of detected sensor dropouts (seed 001 section
3.1). Files are read and written by :mod:`hapticam.capture_io`.

Validation
----------
Every problem raises :class:`~hapticam.errors.CaptureError` with one message naming the capture and what
is wrong: NaN/inf, a position, force, velocity or acceleration beyond ``MAX_MAGNITUDE`` (SI), non-increasing
or duplicated time, too few samples, no motion, a sample rate too irregular to differentiate.

Dropouts
--------
Load-cell ADCs such as the HX711 occasionally return one wrong reading (bluepylons' switch tester
reports ~-2 N spikes). :func:`detect_dropouts` flags isolated samples far outside the range of their
neighbours; they are counted in ``Capture.dropouts`` and excluded from fitting and from fit metrics
(``Capture.valid``), never silently kept. Steps such as a tactile click drop are not flagged: the
sample after a step lies inside the range spanned by its neighbours on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hapticam.errors import CaptureError

MAX_SAMPLES = 50_000_000
MIN_SAMPLES = 20
#: the 99th percentile of |dt / median(dt) - 1| above which differentiation is refused
MAX_DT_JITTER = 0.5
#: a capture longer than this (s, 30 days) has its time in the wrong unit
MAX_SPAN_S = 30 * 24 * 3600.0
#: a median sample interval longer than this (s) has its time in the wrong unit
MAX_DT_S = 10.0
#: metadata keys that declare a sample rate (Hz) the time column is checked against
RATE_KEYS = ("rate_hz", "sample_rate_hz")
_TIME_UNITS = ((1e-3, "milliseconds (name the column t_ms)"), (1e-6, "microseconds (name the column t_us)"))
#: the largest magnitude (SI units) of a position, force, velocity or acceleration sample: no probe measures
#: more, and the fits square and sum the samples (1e300 N overflows to inf in them)
MAX_MAGNITUDE = 1e12
#: samples per block of the dropout scan (bounds its working memory to ~100 MB)
DROPOUT_BLOCK = 1 << 20

@dataclass
class Capture:
    """One probe capture in SI units (validate with :meth:`validate`, build with :meth:`from_arrays`).

    Attributes
    ----------
    t_s, x_m, f_N : numpy.ndarray
        Time (s, strictly increasing), position (m, +x into the object), force the probe applies (N).
    v_mps, a_mps2 : numpy.ndarray or None
        Measured velocity (m/s) and acceleration (m/s^2), if the probe recorded them.
    metadata : dict
        ``key: value`` metadata (source, sample rate, ...), plus ``units`` (the file's column units).
    notes : list of str
        Free-form comment lines and loader remarks (ignored columns).
    name : str
        Display name (file path or ``<arrays>``).
    sha256 : str or None
        SHA-256 of the file's bytes, for provenance.
    dropouts : numpy.ndarray
        Indices of samples detected as sensor dropouts (excluded from fits and metrics).
    excluded : numpy.ndarray
        Indices of samples a recording marks as not the model's force (ramp-in, safety interventions;
        from its ``flags`` column), likewise excluded from fits and metrics.
    """

    t_s: np.ndarray
    x_m: np.ndarray
    f_N: np.ndarray
    v_mps: np.ndarray | None = None
    a_mps2: np.ndarray | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    name: str = "<arrays>"
    sha256: str | None = None
    dropouts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    excluded: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @classmethod
    def from_arrays(cls, t_s: Any, x_m: Any, f_N: Any, v_mps: Any = None, a_mps2: Any = None, *,
                    metadata: dict[str, Any] | None = None, notes: list[str] | None = None,
                    name: str = "<arrays>", sha256: str | None = None,
                    detect: bool = True, copy: bool = True) -> "Capture":
        """Build, validate and (with ``detect``) scan for force dropouts. ``copy=False`` keeps float64
        arrays given as they are (a loader's fresh arrays: no second copy of a large capture)."""
        cap = cls(_as_1d(name, "t_s", t_s, copy), _as_1d(name, "x_m", x_m, copy),
                  _as_1d(name, "force_N", f_N, copy),
                  None if v_mps is None else _as_1d(name, "v_mps", v_mps, copy),
                  None if a_mps2 is None else _as_1d(name, "a_mps2", a_mps2, copy),
                  dict(metadata or {}), list(notes or []), name, sha256)
        cap.validate()
        if detect:
            cap.dropouts = detect_dropouts(cap.f_N)
        return cap

    # -- derived ------------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of samples."""
        return int(self.t_s.size)

    @property
    def dt_s(self) -> float:
        """Median sample interval (s)."""
        return float(np.median(np.diff(self.t_s)))

    @property
    def sample_rate_hz(self) -> float:
        """Sample rate from the median interval (Hz)."""
        return 1.0 / self.dt_s

    @property
    def valid(self) -> np.ndarray:
        """Boolean mask: True for samples that are neither dropouts nor excluded."""
        mask = np.ones(self.n, dtype=bool)
        mask[self.dropouts] = False
        mask[self.excluded] = False
        return mask

    def constant_force_spread(self) -> float | None:
        """The valid samples' force spread (N) when the force never changes (within 1e-9 of its largest
        magnitude: all zero, or one value), None when it does change."""
        valid = self.valid
        spread = float(np.ptp(self.f_N[valid])) if valid.any() else 0.0
        changes = spread > 1e-9 * max(1.0, float(np.max(np.abs(self.f_N))) if self.f_N.size else 1.0)
        return None if changes else spread

    def describe(self) -> str:
        """One line: samples, duration, rate, travel, force range, dropouts (a rotary capture in rad and N m)."""
        if self.metadata.get("axis") == "rotary":
            travel = f"theta {self.x_m.min():.4g} to {self.x_m.max():.4g} rad, torque"
            unit = "N m"
        else:
            travel = f"x {1e3 * self.x_m.min():.4g} to {1e3 * self.x_m.max():.4g} mm, force"
            unit = "N"
        return (f"{self.name}: {self.n} samples over {self.t_s[-1] - self.t_s[0]:.3g} s at "
                f"{self.sample_rate_hz:.4g} Hz, {travel} {self.f_N[self.valid].min():.4g} to "
                f"{self.f_N[self.valid].max():.4g} {unit}, {self.dropouts.size} dropout(s) excluded")

    # -- validation ---------------------------------------------------------------------------------
    def validate(self) -> None:
        """Check shapes, finiteness, time order, sample count, motion and sample-rate regularity."""
        name = self.name
        arrays = {"t_s": self.t_s, "x_m": self.x_m, "force_N": self.f_N, "v_mps": self.v_mps,
                  "a_mps2": self.a_mps2}
        n = self.t_s.size
        for col, arr in arrays.items():
            if arr is None:
                continue
            if arr.ndim != 1:
                raise CaptureError(f"{name}: column {col} must be 1-D, got shape {arr.shape}")
            if arr.size != n:
                raise CaptureError(f"{name}: column {col} has {arr.size} samples, t_s has {n}")
            bad = np.flatnonzero(~np.isfinite(arr))
            if bad.size:
                raise CaptureError(f"{name}: column {col} sample {int(bad[0])}: value {arr[bad[0]]} is not "
                                   f"finite ({bad.size} such sample(s))")
            # (time has its own span and unit checks below)
            if col != "t_s" and arr.size and max(float(arr.max()), -float(arr.min())) > MAX_MAGNITUDE:
                big = np.flatnonzero((arr > MAX_MAGNITUDE) | (arr < -MAX_MAGNITUDE))
                raise CaptureError(f"{name}: column {col} sample {int(big[0])}: value {arr[big[0]]:g} is beyond "
                                   f"+-{MAX_MAGNITUDE:g}, more than any probe measures ({big.size} such sample(s); "
                                   "is the column in the unit its name says?)")
        if n < MIN_SAMPLES:
            raise CaptureError(f"{name}: only {n} samples; at least {MIN_SAMPLES} are needed")
        if n > MAX_SAMPLES:
            raise CaptureError(f"{name}: {n} samples exceed the limit of {MAX_SAMPLES}")
        dt = np.diff(self.t_s)
        bad = np.flatnonzero(dt <= 0)
        if bad.size:
            i = int(bad[0]) + 1
            what = "duplicated" if dt[bad[0]] == 0 else "decreasing"
            raise CaptureError(f"{name}: time is {what} at sample {i} (t_s {float(self.t_s[i - 1])!r} then "
                               f"{float(self.t_s[i])!r}); time must increase strictly")
        med = float(np.median(dt))
        check_time_unit(name, med, float(self.t_s[-1] - self.t_s[0]), n, self.metadata)
        dt /= med                                        # |dt / median(dt) - 1|, in place (bounded memory)
        dt -= 1.0
        np.abs(dt, out=dt)
        jitter = float(np.percentile(dt, 99, overwrite_input=True))
        if jitter > MAX_DT_JITTER:
            raise CaptureError(f"{name}: sample times too irregular to differentiate (1 % of intervals "
                               f"deviate from the median {med:.4g} s by more than {100 * jitter:.0f} %); "
                               f"resample the capture to a uniform rate first")
        span = float(self.x_m.max() - self.x_m.min())
        if not span > 1e-9:
            raise CaptureError(f"{name}: no motion (position spans {span:.3g} m); nothing to identify")

    def subset(self, mask: np.ndarray) -> dict[str, np.ndarray]:
        """Arrays restricted to ``mask`` (keys ``t_s, x_m, f_N`` and, if present, ``v_mps, a_mps2``)."""
        out = {"t_s": self.t_s[mask], "x_m": self.x_m[mask], "f_N": self.f_N[mask]}
        if self.v_mps is not None:
            out["v_mps"] = self.v_mps[mask]
        if self.a_mps2 is not None:
            out["a_mps2"] = self.a_mps2[mask]
        return out


def declared_rate_hz(metadata: dict[str, Any]) -> float | None:
    """The sample rate a capture's metadata declares (``rate_hz`` or ``sample_rate_hz``), if a number."""
    for key in RATE_KEYS:
        try:
            rate = float(metadata[key])
        except (KeyError, TypeError, ValueError):
            continue
        if np.isfinite(rate) and rate > 0:
            return rate
    return None


def check_time_unit(name: str, med_dt_s: float, span_s: float, n: int, metadata: dict[str, Any]) -> None:
    """Refuse a time column in the wrong unit, naming the likely one.

    Signs: a median interval over ``MAX_DT_S``, a span over ``MAX_SPAN_S``, or an interval more than a
    factor 2 away from the declared rate's ``1 / rate``. The likely unit is the one (ms or us) whose
    rate ``1 / (med factor)`` is nearest the declared rate, or nearest 1 kHz on a log scale when none is
    declared."""
    declared = declared_rate_hz(metadata)
    mismatch = declared is not None and not (0.5 <= med_dt_s * declared <= 2.0)
    if med_dt_s <= MAX_DT_S and span_s <= MAX_SPAN_S and not mismatch:
        return
    target = declared if declared is not None else 1000.0
    factor, unit = min(_TIME_UNITS, key=lambda fu: abs(np.log(1.0 / (med_dt_s * fu[0]) / target)))
    said = f", the metadata declare {declared:g} Hz" if declared is not None else ""
    raise CaptureError(f"{name}: time column: a sample every {med_dt_s:.4g} s over {span_s:.4g} s ({n} samples"
                       f"{said}); the times look like {unit} (that would be {1.0 / (med_dt_s * factor):.4g} Hz)")


def _as_1d(name: str, col: str, value: Any, copy: bool = True) -> np.ndarray:
    try:
        arr = np.array(value, dtype=np.float64) if copy else np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise CaptureError(f"{name}: column {col}: expected numbers") from None
    if arr.ndim != 1:
        raise CaptureError(f"{name}: column {col} must be 1-D, got shape {arr.shape}")
    return arr


# -- dropouts ---------------------------------------------------------------------------------------
def noise_scale(f: np.ndarray) -> float:
    """Robust white-noise standard deviation of ``f`` from its second differences.

    For white noise of deviation s, ``f[i+1] - 2 f[i] + f[i-1]`` has deviation ``s sqrt(6)``; the
    median absolute value of a normal variable is 0.6745 of its deviation (MAD estimator).
    """
    if f.size < 3:
        return 0.0
    d2 = np.diff(f, 2)
    return float(np.median(np.abs(d2)) / 0.6745 / np.sqrt(6.0))


def detect_dropouts(f_N: np.ndarray, *, half_window: int = 5, noise_multiple: float = 20.0,
                    range_fraction: float = 0.05) -> np.ndarray:
    """Indices of isolated samples far outside the range of their neighbours (sensor dropouts).

    For each sample, the neighbours within ``half_window`` samples on either side (itself excluded)
    give a trimmed range ``[lo, hi]`` (second smallest to second largest, so a second dropout nearby
    does not widen it). The sample is a dropout if it lies below ``lo`` or above ``hi`` by more than
    ``max(hi - lo, noise_multiple * noise, range_fraction * (p99 - p1))``, where ``noise`` is
    :func:`noise_scale` and ``p1, p99`` the force's percentiles. A step (click drop) is not flagged: a
    sample next to it lies inside the range spanned by its neighbours. A monotone ramp is not flagged.
    """
    f = np.asarray(f_N, dtype=np.float64)
    n = f.size
    if n < 2 * half_window + 1:
        return np.zeros(0, dtype=np.int64)
    w = half_window
    # neighbours of i: f[i-w .. i-1] and f[i+1 .. i+w], padded by edge reflection of the window
    padded = np.concatenate([f[w:0:-1], f, f[-2:-w - 2:-1]])
    p1, p99 = np.percentile(f, [1, 99])
    floor = max(noise_multiple * noise_scale(f), range_fraction * float(p99 - p1))
    found = [_dropouts_in(padded, f, start, min(start + DROPOUT_BLOCK, n), w, floor)
             for start in range(0, n, DROPOUT_BLOCK)]
    return np.concatenate(found).astype(np.int64)


def _dropouts_in(padded: np.ndarray, f: np.ndarray, start: int, stop: int, w: int, floor: float) -> np.ndarray:
    """:func:`detect_dropouts` for samples ``start:stop`` (a block, so memory is bounded)."""
    offsets = [o for o in range(-w, w + 1) if o != 0]
    neigh = np.stack([padded[w + o + start: w + o + stop] for o in offsets], axis=1)
    neigh.sort(axis=1)
    lo = neigh[:, 1]
    hi = neigh[:, -2]
    margin = np.maximum(hi - lo, floor)
    seg = f[start:stop]
    flagged = (seg < lo - margin) | (seg > hi + margin)
    return np.flatnonzero(flagged) + start

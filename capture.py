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

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hapticam.errors import CaptureError

#: the most samples a capture may hold: 10 million (2.8 h at 1 kHz, the most the probe records), so that a
#: capture of t, x and F loads in a few seconds and under 500 MB (readers refuse more before allocating)
MAX_SAMPLES = 10_000_000
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
#: samples per block of the dropout scan and of the bounded-memory statistics (the noise, the median
#: interval, percentiles: their working memory is ~15 MB at any length)
DROPOUT_BLOCK = 1 << 18

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
        return median_of_blocks(_intervals_of(self.t_s), self.n - 1)

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
        valid = self.valid
        force = self.f_N if valid.all() else self.f_N[valid]
        return (f"{self.name}: {self.n} samples over {self.t_s[-1] - self.t_s[0]:.3g} s at "
                f"{self.sample_rate_hz:.4g} Hz, {travel} {force.min():.4g} to "
                f"{force.max():.4g} {unit}, {self.dropouts.size} dropout(s) excluded")

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
        intervals = _intervals_of(self.t_s)             # block by block: memory does not grow with n
        for start, dt in zip(range(0, n - 1, DROPOUT_BLOCK), intervals()):
            bad = np.flatnonzero(dt <= 0)
            if bad.size:
                i = start + int(bad[0]) + 1
                what = "duplicated" if dt[bad[0]] == 0 else "decreasing"
                raise CaptureError(f"{name}: time is {what} at sample {i} (t_s {float(self.t_s[i - 1])!r} then "
                                   f"{float(self.t_s[i])!r}); time must increase strictly")
        med = median_of_blocks(intervals, n - 1)
        check_time_unit(name, med, float(self.t_s[-1] - self.t_s[0]), n, self.metadata)
        jitter = percentile_of_blocks(lambda: (np.abs(dt / med - 1.0) for dt in intervals()), n - 1, 99)
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
    median absolute value of a normal variable is 0.6745 of its deviation (MAD estimator). The second
    differences are formed and ranked block by block (:func:`median_of_blocks`), so the working memory
    does not grow with ``f``.
    """
    if f.size < 3:
        return 0.0
    second = [(start, start + DROPOUT_BLOCK + 2) for start in range(0, f.size - 2, DROPOUT_BLOCK)]
    median = median_of_blocks(lambda: (np.abs(np.diff(np.diff(f[a:b]))) for a, b in second), f.size - 2)
    return float(median / 0.6745 / np.sqrt(6.0))


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
    p1, p99 = (percentile_of_blocks(_blocks_of(f), n, q) for q in (1, 99))
    floor = max(noise_multiple * noise_scale(f), range_fraction * float(p99 - p1))
    found = [_dropouts_in(f, start, min(start + DROPOUT_BLOCK, n), w, floor)
             for start in range(0, n, DROPOUT_BLOCK)]
    return np.concatenate(found).astype(np.int64)


def _dropouts_in(f: np.ndarray, start: int, stop: int, w: int, floor: float) -> np.ndarray:
    """:func:`detect_dropouts` for samples ``start:stop`` (a block, so memory is bounded).

    The trimmed range is kept as running two smallest and two largest neighbours (elementwise, one
    neighbour offset at a time): the same values as sorting the ``2 w`` neighbours of each sample."""
    size = stop - start
    near = _reflected(f, start - w, stop + w)          # neighbours of f[start + j]: near[j .. j + 2 w]
    lo1, lo2 = np.full(size, np.inf), np.full(size, np.inf)          # smallest, second smallest
    hi1, hi2 = np.full(size, -np.inf), np.full(size, -np.inf)        # largest, second largest
    scratch = np.empty(size)
    for o in (o for o in range(-w, w + 1) if o != 0):
        s = near[w + o: w + o + size]
        np.minimum(lo2, np.maximum(lo1, s, out=scratch), out=lo2)
        np.minimum(lo1, s, out=lo1)
        np.maximum(hi2, np.minimum(hi1, s, out=scratch), out=hi2)
        np.maximum(hi1, s, out=hi1)
    margin = np.maximum(np.subtract(hi2, lo2, out=scratch), floor, out=scratch)
    seg = f[start:stop]
    flagged = (seg < lo2 - margin) | (seg > hi2 + margin)
    return np.flatnonzero(flagged) + start


def _reflected(f: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """``f[lo:hi]`` with indices outside ``0 .. n-1`` mirrored about the end samples: index ``-k`` reads
    ``f[k]`` and index ``n - 1 + k`` reads ``f[n - 1 - k]`` (``n > hi - lo`` assumed)."""
    n = f.size
    parts = [f[max(lo, 0):min(hi, n)]]
    if lo < 0:
        parts.insert(0, f[-lo:0:-1])
    if hi > n:
        parts.append(f[n - 2:2 * n - 2 - hi:-1])
    return np.concatenate(parts)


# -- order statistics in bounded memory --------------------------------------------------------------
#: about this many values are sampled to bracket an order statistic
BRACKET_SAMPLE = 1 << 16
#: the most values gathered inside a bracket; beyond it the statistic is taken from one full copy
BRACKET_GATHER = 1 << 20


def _blocks_of(values: np.ndarray) -> Callable[[], Iterator[np.ndarray]]:
    """``values`` as consecutive views of ``DROPOUT_BLOCK`` samples (a new iterator on each call)."""
    return lambda: (values[start:start + DROPOUT_BLOCK] for start in range(0, values.size, DROPOUT_BLOCK))


def _intervals_of(t: np.ndarray) -> Callable[[], Iterator[np.ndarray]]:
    """``numpy.diff(t)`` block by block (a new iterator on each call)."""
    return lambda: (np.diff(t[start:start + DROPOUT_BLOCK + 1]) for start in range(0, t.size - 1, DROPOUT_BLOCK))


def order_statistics_of_blocks(blocks: Callable[[], Iterator[np.ndarray]], n: int,
                               ranks: tuple[int, ...]) -> list[float]:
    """The values at 0-based ``ranks`` in ascending order of the ``n`` values that ``blocks()`` yields block
    by block (each call yields the same values), exactly what sorting them would give.

    About ``BRACKET_SAMPLE`` values drawn at random (a fixed seed) bracket the ranks with a margin; one
    more pass counts the values below the bracket, counts those equal to a sampled value inside it (ties,
    however many, cost no memory) and gathers the others. Working memory is the sample and at most
    ``BRACKET_GATHER`` gathered values; a bracket that misses a rank or holds more falls back to
    partitioning one full copy (the same values)."""
    rng = np.random.default_rng(0)
    share = BRACKET_SAMPLE / n
    sample = np.sort(np.concatenate([block.copy() if share >= 1 else
                                     block[rng.integers(0, block.size, size=max(1, round(block.size * share)))]
                                     for block in blocks()]))
    margin = 4 * int(np.sqrt(sample.size)) + 8
    first = max(0, min(ranks) * sample.size // n - margin)
    stop = max(ranks) * sample.size // n + margin + 1
    ties = np.unique(sample[first:stop])
    # a bracket that reaches an end of the sample is open there (the smallest and largest values were
    # perhaps not drawn)
    found = _bracketed(blocks, ranks, ties, ties[0] if first > 0 else -np.inf,
                       ties[-1] if stop < sample.size else np.inf)
    if found is None:
        full = np.concatenate(list(blocks()))
        full.partition(list(ranks))
        found = [float(full[r]) for r in ranks]
    return found


def _bracketed(blocks: Callable[[], Iterator[np.ndarray]], ranks: tuple[int, ...], ties: np.ndarray,
               lo: float, hi: float) -> list[float] | None:
    """The values at ``ranks`` if the bracket ``[lo, hi]`` holds them all and at most ``BRACKET_GATHER``
    values other than ``ties`` (sorted distinct values inside it, counted), else None (one pass)."""
    below = gathered = 0
    tie_counts = np.zeros(ties.size, dtype=np.int64)
    others = []
    for block in blocks():
        below += int(np.count_nonzero(block < lo))
        inside = block[(block >= lo) & (block <= hi)]
        at = np.minimum(np.searchsorted(ties, inside), ties.size - 1)
        tied = ties[at] == inside
        tie_counts += np.bincount(at[tied], minlength=ties.size)
        others.append(inside[~tied])
        gathered += others[-1].size
        if gathered > BRACKET_GATHER:
            return None
    values = np.concatenate([ties, *others])
    order = np.argsort(values, kind="stable")
    values = values[order]
    ends = np.cumsum(np.concatenate([tie_counts, np.ones(gathered, dtype=np.int64)])[order])
    found = []
    for rank in ranks:
        k = rank - below                        # rank among the values in the bracket
        if not 0 <= k < ends[-1]:
            return None
        found.append(float(values[np.searchsorted(ends, k, side="right")]))
    return found


def median_of_blocks(blocks: Callable[[], Iterator[np.ndarray]], n: int) -> float:
    """``numpy.median`` of the ``n`` values ``blocks()`` yields (the mean of the middle two when ``n`` is
    even), in bounded memory (:func:`order_statistics_of_blocks`)."""
    middle = order_statistics_of_blocks(blocks, n, (n // 2,) if n % 2 else (n // 2 - 1, n // 2))
    return float(np.mean(np.array(middle)))


def percentile_of_blocks(blocks: Callable[[], Iterator[np.ndarray]], n: int, q: float) -> float:
    """``numpy.percentile(values, q)`` (its default linear interpolation, the same arithmetic) of the ``n``
    values ``blocks()`` yields, in bounded memory (:func:`order_statistics_of_blocks`)."""
    virtual = (n - 1) * (np.float64(q) / 100)               # numpy's index of the 'linear' method
    below = int(np.floor(virtual))
    if virtual >= n - 1 or below < 0:
        rank = n - 1 if virtual >= n - 1 else 0
        return order_statistics_of_blocks(blocks, n, (rank,))[0]
    a, b = order_statistics_of_blocks(blocks, n, (below, below + 1))
    gamma = virtual - below
    step = b - a
    return float(b - step * (1 - gamma) if gamma >= 0.5 else a + step * gamma)

"""Features a person feels on a key, read off force-displacement curves, and perceptual verdicts.

The features (per capture or rendering, from the pressing curve unless stated):

- ``preload_N``: force at the start of travel, just after the force onset.
- ``travel_stiffness_Npm``: slope of the pressing curve over the travel before any bump and bottom-out.
- ``bump_peak_N`` / ``bump_position_m`` / ``bump_drop_N``: the tactile bump, when there is one: the highest
  point of the pressing curve before bottom-out and the force drop after it. A drop counts as a bump
  only when it exceeds the force JND at the peak (Weber fraction, below), i.e. when a user could feel it.
- ``bottom_out_m``: position where the final steep rise (the stem hitting the housing) begins.
- ``hysteresis_J``: energy dissipated per press/release cycle, the area between the pressing and
  releasing curves, integral of (F+ - F-) dx.

Turning points are not bumps. Where the probe reverses, the velocity passes through zero and every
velocity-dependent force (friction of any law, damping) changes sign, and the inertial force ``m a`` peaks,
while the position barely moves: the F-x loop closes by a near-vertical segment of height about the
friction gap F+ - F- (the hysteresis), not by a drop along the travel. Which curve the samples of that
segment land on is a convention of the direction rule (the direction is held inside the velocity dead
band), so a friction-only key shows a "drop" at the end of its pressing curve that no cam makes. A tactile
bump is a drop while the key keeps travelling one way, so the bump and the travel stiffness are read off
the pressing curve of the samples outside the reversal windows (:func:`reversal_window`); the other
features use every sample.

Perceptual thresholds (all settable through :class:`Thresholds`):

- force: Weber fraction 0.07 (Jones 1989, "Matching forces: constant errors and differential
  thresholds", Perception 18: force JND about 7 %), with an absolute floor so near-zero forces do not
  demand agreement below sensor noise;
- stiffness: Weber fraction 0.23 (Jones & Hunter 1990, "A perceptual analysis of stiffness",
  Exp. Brain Res. 79: stiffness JND about 23 %);
- position: 1 mm (Durlach et al. 1989, "Manual discrimination and identification of length by the
  finger-span method", Percept. Psychophys. 46: length JND about 1 mm for references near 10-20 mm).

A key switch's actuation and release points (where its electrical contact closes on the press and opens on
the release; :func:`switch_point_verdicts`) are compared when both the capture and the model carry them. No
perceptual threshold is published for an actuation point, which a typist meets as when a key registers, not
as a feel; the threshold is a usage one, the tolerance switch makers quote on the pre-travel to actuation,
0.6 mm (Cherry's MX data sheets: pre-travel 2.0 +- 0.6 mm for MX Red, 2.2 +- 0.6 mm for MX Blue): a rendering
whose key registers further than that from the captured switch's point registers where no switch of that
type is specified to.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

FORCE_WEBER = 0.07  # Jones 1989
STIFFNESS_WEBER = 0.23  # Jones & Hunter 1990
POSITION_JND_M = 1.0e-3  # Durlach et al. 1989
#: the pre-travel tolerance switch makers quote (m): Cherry's MX data sheets, e.g. MX Red 2.0 +- 0.6 mm
ACTUATION_TOLERANCE_M = 0.6e-3


@dataclass
class Thresholds:
    """Pass/fail thresholds of a verification. Forces in N, positions in m, fit in percent."""

    fit_percent: float = 95.0
    force_weber: float = FORCE_WEBER
    force_floor_N: float = 0.02
    stiffness_weber: float = STIFFNESS_WEBER
    position_jnd_m: float = POSITION_JND_M
    actuation_tolerance_m: float = ACTUATION_TOLERANCE_M

    def force_jnd(self, reference_N: float) -> float:
        """Smallest force difference (N) a user could feel at ``reference_N`` (Weber law with a floor)."""
        return max(self.force_weber * abs(reference_N), self.force_floor_N)

    def force_jnd_at(self, reference_N: np.ndarray) -> np.ndarray:
        """:meth:`force_jnd` at each of the forces ``reference_N`` (N)."""
        return np.maximum(self.force_weber * np.abs(reference_N), self.force_floor_N)


@dataclass
class FxCurves:
    """Mean force per position bin for each direction of travel (NaN where a bin has no samples)."""

    x_m: np.ndarray
    press_N: np.ndarray
    release_N: np.ndarray
    #: the pressing curve of the samples outside the reversal windows (None: no window was given)
    press_travel_N: np.ndarray | None = None


@dataclass
class KeyFeatures:
    """Features of one force-displacement curve pair (SI units; None when absent or not measurable)."""

    preload_N: float | None = None
    travel_stiffness_Npm: float | None = None
    bump_peak_N: float | None = None
    bump_position_m: float | None = None
    bump_drop_N: float | None = None
    bottom_out_m: float | None = None
    hysteresis_J: float | None = None
    hysteresis_span_m: float | None = None
    onset_m: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FeatureVerdict:
    """One feature compared between reference (captured) and rendering."""

    name: str
    reference: float | None
    rendered: float | None
    difference: float | None
    threshold: float | None
    unit: str
    noticeable: bool
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fx_curves(x_m: np.ndarray, force_N: np.ndarray, direction: np.ndarray, bin_m: float = 1e-5,
              x_range: tuple[float, float] | None = None, turning: np.ndarray | None = None) -> FxCurves:
    """Bin force by position (bin width ``bin_m``, m) separately for direction +1 and -1.

    ``turning`` (bool per sample, from :func:`reversal_window`): also bin the pressing samples outside
    it, as ``press_travel_N``."""
    lo, hi = x_range if x_range is not None else (float(np.min(x_m)), float(np.max(x_m)))
    n_bins = max(int(np.ceil((hi - lo) / bin_m)), 1)
    edges = lo + bin_m * np.arange(n_bins + 1)
    centres = 0.5 * (edges[:-1] + edges[1:])
    idx = np.clip(((x_m - lo) / bin_m).astype(np.int64), 0, n_bins - 1)
    inside = (x_m >= lo) & (x_m <= hi)

    def mean_per_bin(sel: np.ndarray) -> np.ndarray:
        sums = np.bincount(idx[sel], weights=force_N[sel], minlength=n_bins)
        counts = np.bincount(idx[sel], minlength=n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    press, release = mean_per_bin(inside & (direction == 1)), mean_per_bin(inside & (direction == -1))
    travel = None if turning is None else mean_per_bin(inside & (direction == 1) & ~np.asarray(turning, bool))
    return FxCurves(centres, press, release, travel)


def reversal_window(t_s: np.ndarray, v: np.ndarray, dead_band: float, cutoff_hz: float = float("nan")
                    ) -> np.ndarray:
    """Samples at a turning point of the travel (bool per sample): within ``half_width`` s of a sample whose
    velocity ``v`` lies inside the dead band (``|v| <= dead_band``: the direction there is held, not
    measured), of a sign change of ``v`` (a reversal), or of the capture's first and last samples (the
    probe starts from and comes to rest, and the velocity estimate has data on one side only).

    ``half_width = 1 / (2 cutoff_hz)`` when ``v`` was estimated by the zero-phase low-pass of
    :mod:`hapticam.identify.preprocess` (4th-order Butterworth run forward and back, cutoff ``cutoff_hz``):
    its step response rises from 5 % to 95 % in 0.52 / cutoff_hz, so a reversal of the true velocity
    spreads over that long in the estimate, and the window covers the estimate's transition and a true
    one (the probe's servo turning the key round) as long again. With a measured velocity (``cutoff_hz``
    NaN) it is two sample periods. Units: s, and ``v``, ``dead_band`` in the same unit (m/s or rad/s).
    """
    t = np.asarray(t_s, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if t.size == 0:
        return np.zeros(0, dtype=bool)
    dt = float(np.median(np.diff(t))) if t.size > 1 else 0.0
    # 5-95 % rise of filtfilt(butter(4, f_c)) is 0.52 / f_c (computed): half of 1 / f_c each side
    half_width = 0.5 / cutoff_hz if (np.isfinite(cutoff_hz) and cutoff_hz > 0) else 2.0 * dt
    half_width = max(half_width, 2.0 * dt)
    sign_change = np.flatnonzero(np.signbit(v[1:]) != np.signbit(v[:-1])) + 1
    centres = np.union1d(np.flatnonzero(np.abs(v) <= dead_band), sign_change)
    centre_t = np.union1d(t[centres], [t[0], t[-1]])
    if centre_t.size == 1:                           # a single sample
        return np.ones(t.size, dtype=bool)
    k = np.clip(np.searchsorted(centre_t, t), 1, centre_t.size - 1)
    nearest = np.minimum(np.abs(t - centre_t[k - 1]), np.abs(t - centre_t[k]))   # time to the nearest centre
    return nearest <= half_width


def _fill(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ok = np.isfinite(y)
    if ok.sum() < 2:
        return y
    return np.interp(x, x[ok], y[ok])


#: Travel (m) over which an impact is read as an impulse, not a force level: a landing or click lasts a
#: fraction of a millisecond, which through a stiff probe tip is a spike of tens of N over a sample or two
#: (its height set by the tip's stiffness and the sampling) and a dip as the tip rings; a rendering spreads
#: the same impulse over its tick. A running median over this travel keeps levels and steps (a bump's drop)
#: and removes excursions shorter than half of it, so the bump is compared like for like.
IMPACT_WINDOW_M = 1e-4


def _despike(y: np.ndarray, bin_m: float) -> np.ndarray:
    """Running median of a binned curve over ``IMPACT_WINDOW_M`` (an odd number of bins of ``bin_m`` m)."""
    from scipy.ndimage import median_filter

    width = max(int(round(IMPACT_WINDOW_M / bin_m)) // 2 * 2 + 1, 1)
    return y if width <= 1 or y.size < width else median_filter(y, size=width, mode="nearest")


def _smooth(y: np.ndarray, width: int) -> np.ndarray:
    if width <= 1 or y.size < width:
        return y
    kernel = np.ones(width) / width
    pad = width // 2
    padded = np.pad(y, (pad, width - 1 - pad), mode="edge")
    return np.convolve(padded, kernel, mode="valid")


def key_features(curves: FxCurves, thresholds: Thresholds | None = None) -> KeyFeatures:
    """Read the features (module docstring) off a pair of force-displacement curves."""
    th = thresholds or Thresholds()
    x = curves.x_m
    press_raw = curves.press_N
    if np.isfinite(press_raw).sum() < 8:
        return KeyFeatures()
    bin_m = float(x[1] - x[0]) if x.size > 1 else 1e-4
    press = _smooth(_fill(x, press_raw), max(int(round(5e-5 / bin_m)), 1))  # 0.05 mm moving average
    valid = np.flatnonzero(np.isfinite(press_raw))
    first, last = int(valid[0]), int(valid[-1])
    feats = KeyFeatures()

    # Onset: the first position where the pressing force reaches 20 % of its value at mid-travel.
    mid = press[(first + last) // 2]
    onset_level = 0.2 * max(mid, th.force_floor_N)
    above = np.flatnonzero(press[first:last + 1] >= onset_level)
    i_on = first + (int(above[0]) if above.size else 0)
    feats.onset_m = float(x[i_on])

    # Bottom-out: start of the final run where the slope exceeds 10x the travel's median slope
    # (and at least 2 N/mm), searched back from the end of travel.
    i_bottom = _bottom_out(x, press, i_on, first, last, bin_m)
    if i_bottom is not None:
        feats.bottom_out_m = float(x[i_bottom])
    i_end = last if i_bottom is None else i_bottom

    # Preload: median pressing force over the first 0.3 mm after the onset step.
    i_pre0 = min(i_on + max(int(round(5e-5 / bin_m)), 1), i_end)
    i_pre1 = min(i_on + max(int(round(3e-4 / bin_m)), 2), i_end)
    if i_pre1 > i_pre0:
        feats.preload_N = float(np.median(press[i_pre0:i_pre1 + 1]))
    else:
        feats.preload_N = float(press[i_on])

    # Tactile bump: the largest drawdown of the pressing curve before bottom-out (a running maximum
    # followed by the lowest point after it), so a curve that rises again towards bottom-out still shows it.
    # The search starts 0.15 mm past the onset so the ringing of the preload step is not taken for a bump.
    # The bump and the travel stiffness are read off the travel outside the reversal windows (module notes).
    i_b0 = min(i_on + max(int(round(1.5e-4 / bin_m)), 1), i_end)
    travel_raw = press_raw if curves.press_travel_N is None else curves.press_travel_N
    measured = np.isfinite(travel_raw)
    travel = (_smooth(_despike(_fill(x, travel_raw), bin_m), max(int(round(5e-5 / bin_m)), 1)) if measured.sum() >= 2
              else np.full_like(press, np.nan))
    if i_end - i_b0 >= 4 and np.isfinite(travel[i_b0:i_end + 1]).all():
        seg = travel[i_b0:i_end + 1]
        running_max = np.maximum.accumulate(seg)
        drawdown = running_max - seg
        k_valley = int(np.argmax(drawdown))
        k_peak = int(np.argmax(seg[:k_valley + 1]))
        peak = float(seg[k_peak])
        drop = float(drawdown[k_valley])
        has_bump = drop > th.force_jnd(peak)
        if has_bump:
            feats.bump_peak_N = peak
            feats.bump_position_m = float(x[i_b0 + k_peak])
            feats.bump_drop_N = drop
        # Travel stiffness: least-squares slope over the travel up to the bump (or bottom-out).
        i_stop = i_b0 + (k_peak if has_bump else seg.size - 1)
        fit_bins = i_pre0 + np.flatnonzero(measured[i_pre0:i_stop + 1])   # bins the travel visited
        if fit_bins.size >= 4:
            feats.travel_stiffness_Npm = float(np.polyfit(x[fit_bins], travel[fit_bins], 1)[0])

    # Hysteresis: integral of (F+ - F-) dx over the positions both directions covered, empty bins
    # filled by linear interpolation so the integral does not depend on how densely bins were visited.
    has_p = np.flatnonzero(np.isfinite(curves.press_N))
    has_r = np.flatnonzero(np.isfinite(curves.release_N))
    if has_p.size >= 2 and has_r.size >= 2:
        lo_i, hi_i = max(has_p[0], has_r[0]), min(has_p[-1], has_r[-1])
        if hi_i > lo_i:
            span = slice(lo_i, hi_i + 1)
            gap = _fill(x, curves.press_N)[span] - _fill(x, curves.release_N)[span]
            feats.hysteresis_J = float(np.trapezoid(gap, x[span]))
            feats.hysteresis_span_m = float(x[hi_i] - x[lo_i])
    return feats


def _bottom_out(x: np.ndarray, press: np.ndarray, i_on: int, first: int, last: int, bin_m: float) -> int | None:
    """Index where the final steep rise of the pressing curve begins (None without one)."""
    slope = np.gradient(press, x)
    i_travel0 = min(i_on + max(int(round(2e-4 / bin_m)), 1), last)
    travel_slope = np.median(np.abs(slope[i_travel0:last + 1])) if last > i_travel0 else 0.0
    steep = max(10.0 * travel_slope, 2000.0)
    # The steep run may end before the last bin where a force limit flattens the top of the wall, so it
    # is searched for in the last 15 % of the travel rather than required at the very end.
    tail0 = max(i_travel0, last - int(0.15 * (last - first)))
    steep_bins = tail0 + np.flatnonzero(slope[tail0:last + 1] > steep)
    if not steep_bins.size:
        return None
    i_hi = int(steep_bins[-1])
    i_bottom = i_hi
    while i_bottom > i_travel0 and slope[i_bottom] > steep:
        i_bottom -= 1
    return i_bottom if (i_hi - i_bottom >= 1 and i_bottom > i_travel0) else None


def compare_features(reference: KeyFeatures, rendered: KeyFeatures,
                     thresholds: Thresholds | None = None) -> list[FeatureVerdict]:
    """Compare each feature and say whether a user could feel the difference."""
    th = thresholds or Thresholds()
    out: list[FeatureVerdict] = []

    def force(name: str, ref: float | None, ren: float | None, level: float | None = None) -> None:
        if ref is None or ren is None:
            return
        jnd = th.force_jnd(level if level is not None else ref)
        diff = ren - ref
        out.append(FeatureVerdict(name, ref, ren, diff, jnd, "N", abs(diff) > jnd))

    def position(name: str, ref: float | None, ren: float | None) -> None:
        if ref is None and ren is None:
            return
        if ref is None or ren is None:
            out.append(FeatureVerdict(name, ref, ren, None, th.position_jnd_m, "m", True,
                                      "present in the " + ("rendering" if ref is None else "capture")
                                      + " only"))
            return
        diff = ren - ref
        out.append(FeatureVerdict(name, ref, ren, diff, th.position_jnd_m, "m", abs(diff) > th.position_jnd_m))

    force("preload", reference.preload_N, rendered.preload_N)
    if reference.travel_stiffness_Npm is not None and rendered.travel_stiffness_Npm is not None:
        ref_k, ren_k = reference.travel_stiffness_Npm, rendered.travel_stiffness_Npm
        # A stiffness change only matters when it changes the force over the travel by more than a force
        # JND; below that, the Weber fraction of a near-zero slope is meaningless.
        jnd = max(th.stiffness_weber * abs(ref_k), th.force_floor_N / 2e-3)
        out.append(FeatureVerdict("travel stiffness", ref_k, ren_k, ren_k - ref_k, jnd, "N/m",
                                  abs(ren_k - ref_k) > jnd))
    if (reference.bump_peak_N is None) != (rendered.bump_peak_N is None):
        where = "capture" if reference.bump_peak_N is not None else "rendering"
        drop = reference.bump_drop_N if reference.bump_drop_N is not None else rendered.bump_drop_N
        out.append(FeatureVerdict("tactile bump", reference.bump_drop_N, rendered.bump_drop_N, None, None, "N",
                                  True, f"a bump (drop {drop:.3f} N) is present in the {where} only"))
    else:
        force("bump peak force", reference.bump_peak_N, rendered.bump_peak_N)
        position("bump position", reference.bump_position_m, rendered.bump_position_m)
        force("force drop after bump", reference.bump_drop_N, rendered.bump_drop_N, level=reference.bump_peak_N)
    position("bottom-out position", reference.bottom_out_m, rendered.bottom_out_m)
    if reference.hysteresis_J is not None and rendered.hysteresis_J is not None and reference.hysteresis_span_m:
        # Compare hysteresis as its mean force gap over the travel, against the force JND at the preload.
        span = reference.hysteresis_span_m
        ref_f = reference.hysteresis_J / span
        ren_f = rendered.hysteresis_J / span
        jnd = th.force_jnd(reference.preload_N or 0.0)
        out.append(FeatureVerdict("hysteresis (mean force gap)", ref_f, ren_f, ren_f - ref_f, jnd, "N",
                                  abs(ren_f - ref_f) > jnd))
    return out


def switch_point_verdicts(captured: dict[str, Any], model: dict[str, Any], backlash_m: float, offset_m: float,
                          thresholds: Thresholds | None = None) -> list[FeatureVerdict]:
    """The actuation and release points (``actuation_m``, ``release_m``, m) of a capture's metadata against
    a model's (in the model's frame), for each point both carry. The capture's points are moved as verify
    moves its samples: ``backlash_m`` added to the release point, then ``offset_m`` to both. A difference
    beyond ``thresholds.actuation_tolerance_m`` is noticeable (module notes)."""
    th = thresholds or Thresholds()
    out: list[FeatureVerdict] = []
    for key, name, shift in (("actuation_m", "actuation point", offset_m),
                             ("release_m", "release point", backlash_m + offset_m)):
        ref, ren = _length(captured.get(key)), _length(model.get(key))
        if ref is None or ren is None:
            continue
        diff = ren - (ref + shift)
        out.append(FeatureVerdict(name, ref + shift, ren, diff, th.actuation_tolerance_m, "m",
                                  abs(diff) > th.actuation_tolerance_m,
                                  "the switch's electrical contact; the model's point is its source capture's"))
    return out


def _length(value: Any) -> float | None:
    """``value`` as a finite float, None when it is not a finite number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value):
        return float(value)
    return None


@dataclass
class FeatureReport:
    """Reference and rendered features plus the verdicts."""

    reference: KeyFeatures
    rendered: KeyFeatures
    verdicts: list[FeatureVerdict] = field(default_factory=list)

    @property
    def noticeable(self) -> list[str]:
        return [v.name for v in self.verdicts if v.noticeable]

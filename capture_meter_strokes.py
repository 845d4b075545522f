"""Press and release strokes of an Open-Switch-Curve-Meter record: the switch's actuation and release
points, stroke order and resampling onto a uniform time grid.

The meter (bluepylons' Open-Switch-Curve-Meter: a stepper-driven probe, 5 um steps, an HX711 load cell)
presses a keyboard switch until the force passes its reverse limit, then releases it back to the start.
A record is one press (up to the deepest travel) followed by one release. Its ``Actuated?`` column is the
switch's electrical contact (0 or 1) at each sample.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hapticam.capture import MAX_DT_JITTER
from hapticam.errors import CaptureError

#: newtons per gram-force
GF_TO_N = 9.80665e-3
#: the meter's step (m): the lead screw advances 5 um per loop of its firmware
STEP_M = 5e-6
#: samples per second assumed for a record without times (the HX711's nominal 10 readings a second; the
#: converted captures in tests/data/switch_curves assume the same)
NOMINAL_RATE_HZ = 10.0
#: a stroke may run against its direction by this fraction of the record's travel span (a jittered
#: reading), no more: beyond it the record holds more than one press
STROKE_SLACK = 0.01
#: the most intervals (fraction) whose times run against the stroke order before the times are refused
MAX_REVERSED_TIMES = 0.01


@dataclass
class MeterRecord:
    """One press and release, in SI units and stroke order.

    Attributes
    ----------
    x_m, f_N : numpy.ndarray
        Probe travel into the switch (m) and the force on the switch (N).
    t_s : numpy.ndarray or None
        Sample times (s); None when the record has none (a nominal ``NOMINAL_RATE_HZ`` is then assumed).
    actuated : numpy.ndarray or None
        The switch's electrical contact per sample (bool), None when the record has no such column.
    metadata : dict
        What the reader learned (format, tare, the sheet's own points...).
    notes : list of str
        Loader remarks.
    """

    x_m: np.ndarray
    f_N: np.ndarray
    t_s: np.ndarray | None = None
    actuated: np.ndarray | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def press_end(x_m: np.ndarray) -> int:
    """Index of the last press sample: the first sample at the deepest travel (the firmware prints the
    deepest position twice, the second time as the release's first sample)."""
    return int(np.argmax(x_m))


def check_one_press(where: str, x_m: np.ndarray) -> None:
    """Refuse a record whose travel does not rise to one deepest point and fall back (more than
    ``STROKE_SLACK`` of the span against the stroke's direction), naming the sample."""
    if x_m.size < 2:
        return
    turn = press_end(x_m)
    slack = STROKE_SLACK * float(np.ptp(x_m))
    press, release = x_m[:turn + 1], x_m[turn:]
    back = np.maximum.accumulate(press) - press
    ahead = release - np.minimum.accumulate(release)
    for stroke, excess, offset in (("press", back, 0), ("release", ahead, turn)):
        bad = np.flatnonzero(excess > slack)
        if bad.size:
            i = int(bad[0]) + offset
            raise CaptureError(f"{where}: sample {i + 1}: the {stroke} runs back by {1e3 * float(excess[bad[0]]):.4g} "
                               "mm; a meter record holds one press and one release (split the file)")


def stroke_order(x_m: np.ndarray) -> np.ndarray:
    """The permutation that orders a record by stroke: the press by rising travel, then the release by
    falling travel, each stable (equal travels keep their order)."""
    turn = press_end(x_m)
    press = np.argsort(x_m[:turn + 1], kind="stable")
    release = turn + 1 + np.argsort(-x_m[turn + 1:], kind="stable")
    return np.concatenate([press, release])


def switch_points(x_m: np.ndarray, actuated: np.ndarray) -> tuple[dict[str, Any], list[str]]:
    """``(metadata, notes)``: where the switch actuates and releases, from its ``Actuated?`` column.

    ``actuation_m`` is the travel (m) of the first press sample that reads actuated; ``release_m`` the
    travel of the first release sample that reads not actuated after one that does (both in the
    capture's frame, resolved to one step, given to the nanometre). A switch whose contact changes more
    than twice bounced: the count is kept as ``actuation_changes``."""
    turn = press_end(x_m)
    on = np.asarray(actuated, dtype=bool)
    meta: dict[str, Any] = {"actuation_changes": int(np.count_nonzero(on[1:] != on[:-1]))}
    notes: list[str] = []
    pressed = np.flatnonzero(on[:turn + 1])
    if pressed.size:
        meta["actuation_m"] = round(float(x_m[pressed[0]]), 9)
    else:
        notes.append("the switch never read actuated during the press (Actuated? stays 0): no actuation point")
    released = np.flatnonzero(~on[turn + 1:] & on[turn:-1]) + turn + 1
    if released.size:
        meta["release_m"] = round(float(x_m[released[0]]), 9)
    elif on[turn + 1:].any():
        notes.append("the switch still reads actuated at the end of the release: no release point")
    if meta["actuation_changes"] > 2:
        notes.append(f"the switch contact changed {meta['actuation_changes']} times (contact bounce); "
                     "actuation and release are the first changes")
    return meta, notes


def compare_points(meta: dict[str, Any]) -> list[str]:
    """Notes comparing the actuation and release points from ``Actuated?`` with the sheet's own
    (``sheet_actuation_m``, ``sheet_release_m``), and whether they agree within one step."""
    notes = []
    for what in ("actuation", "release"):
        mine, sheet = meta.get(f"{what}_m"), meta.get(f"sheet_{what}_m")
        if mine is None or sheet is None:
            continue
        gap_um = round(1e6 * abs(mine - sheet), 3)
        verdict = "agrees with" if gap_um <= 1e6 * STEP_M + 1e-6 else "DISAGREES with"
        notes.append(f"{what} point {1e3 * mine:.4g} mm from Actuated? {verdict} the sheet's own "
                     f"{1e3 * sheet:.4g} mm ({gap_um:.3g} um apart; one step is {1e6 * STEP_M:g} um)")
    return notes


def irregular_times(t_s: np.ndarray) -> bool:
    """True when the times are not strictly increasing or 1 % of the intervals are off their median by
    more than ``MAX_DT_JITTER`` (what :class:`~hapticam.capture.Capture` refuses to differentiate)."""
    dt = np.diff(t_s)
    if dt.size == 0:
        return False
    if np.any(dt <= 0):
        return True
    med = float(np.median(dt))
    return float(np.percentile(np.abs(dt / med - 1.0), 99)) > MAX_DT_JITTER


def resample_uniform(where: str, t_s: np.ndarray, x_m: np.ndarray,
                     f_N: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """``(t, x, f, note)``: a record in stroke order moved onto a uniform time grid.

    The grid runs from the first to the last time at the median positive interval. Each grid time is
    placed between the two samples (in stroke order) whose times enclose it, and travel and force are
    interpolated linearly there: the force of a quasi-static press is a function of the travel along its
    stroke, so the curve keeps its shape and only the times change. Refuses times that run against the
    stroke order in more than ``MAX_REVERSED_TIMES`` of the intervals (the times are not the samples')."""
    dt = np.diff(t_s)
    reversed_count = int(np.count_nonzero(dt <= 0))
    if reversed_count > MAX_REVERSED_TIMES * max(dt.size, 1):
        raise CaptureError(f"{where}: {reversed_count} of {dt.size} sample times run backwards in stroke order; "
                           "the times do not belong to the samples")
    positive = dt[dt > 0]
    if positive.size == 0:
        raise CaptureError(f"{where}: every sample has the same time")
    step = float(np.median(positive))
    order = np.argsort(t_s, kind="stable")
    t_sorted = t_s[order]
    count = int(np.floor((t_sorted[-1] - t_sorted[0]) / step + 1e-9)) + 1
    grid = t_sorted[0] + step * np.arange(count)
    index = np.interp(grid, t_sorted, order.astype(np.float64))    # fractional sample index in stroke order
    samples = np.arange(t_s.size, dtype=np.float64)
    x_grid, f_grid = np.interp(index, samples, x_m), np.interp(index, samples, f_N)
    note = (f"sample times irregular (1 % of intervals off the median by more than {100 * MAX_DT_JITTER:.0f} %, "
            f"or out of order): resampled from {t_s.size} samples onto a uniform grid of {count} samples every "
            f"{1e3 * step:.4g} ms, travel and force interpolated along the stroke")
    return grid, x_grid, f_grid, note

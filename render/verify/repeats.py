"""Item 3 within the key's own repeatability: impact onsets judged against repeat presses of the same key.

Item 3 as the criterion states it (:mod:`hapticam.render.verify.impacts`) demands every captured onset matched
within ``MATCH_S`` and no rendered one unmatched. A hammer's later bounces in its backcheck are not repeated
by the key itself. Measured on the simulated piano action of ``hapticam demo --target piano-key``, its
held-out 4 s press against the same key pressed again, each press's onsets found by the same detector and
put on the first press's clock by the probe's position (:func:`press_clock`):

- pressed 0.25-2 % slower or faster (eight presses from 3.92 to 4.08 s): six miss late bounce onsets of
  the 4 s press or add some (one to three each); items 1 and 2 pass;
- its hammer 1 % heavier, its key 1 % lighter or its backcheck felt 1 % softer: one late onset unmatched;
  its lever 1 % longer: two, and the window of the key meeting the tip again at the release misses its
  impulse by 1.2 mN s.

The key does not repeat its late bounces under a 1 % change of its press's speed or of one of its parameters,
and 1 % is the order of the identified model's standard errors (the demo's hammer mass 1.4 %, lever ratio
1.0 %, key mass 0.4 %): the strict item asks of a model what the key does not repeat. Within its presses 1 %
slower and faster, each of the eight passes. A validation metric judges a model's disagreement with an
experiment against the experiment's own variability (Oberkampf & Barone, "Measures of agreement between
computation and experiment: validation metrics", Journal of Computational Physics 217, 2006). With repeat
presses of the same key given (``verify(..., repeats=...)``, ``hapticam verify --repeat``), item 3 is judged
so (:func:`judge_repeated_onsets`), and the strict item stays in the report beside it:

- a captured onset is demanded when every repeat shows one within ``MATCH_S`` of it;
- each demanded onset must be matched by a rendered one within ``MATCH_S``, one to one;
- a rendered onset is unmatched only when neither the capture nor any repeat has an onset within
  ``MATCH_S`` of it: an impact the key never gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy.ndimage import uniform_filter1d

from hapticam.capture import Capture
from hapticam.errors import UsageError
from hapticam.render.verify.features import Thresholds
from hapticam.render.verify.impact_report import MATCH_S
from hapticam.render.verify.impacts import impact_onsets, match_onsets

#: The probe's position is smoothed over this span (s) before a stroke is read from it: the key's knocks
#: move a stiff probe's tip by micrometres within a few milliseconds.
SMOOTHING_S = 0.05
#: A stroke turns where the smoothed position reverses by at least this share of the press's range.
TURN_SHARE = 0.05


@dataclass
class RepeatedOnsets:
    """Item 3 judged within the key's repeatability (module notes); times in s on the capture's clock."""

    repeats: int
    #: every repeat's onsets on the capture's clock, one list per repeat
    repeat_onsets_s: list[list[float]] = field(default_factory=list)
    demanded_s: list[float] = field(default_factory=list)
    #: captured onsets some repeat does not show: not demanded
    unrepeated_s: list[float] = field(default_factory=list)
    unmatched_captured_s: list[float] = field(default_factory=list)
    unmatched_rendered_s: list[float] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.unmatched_captured_s and not self.unmatched_rendered_s

    def to_dict(self) -> dict[str, Any]:
        return {"repeats": self.repeats, "repeat_onsets_s": self.repeat_onsets_s, "demanded_s": self.demanded_s,
                "unrepeated_captured_s": self.unrepeated_s, "unmatched_captured_s": self.unmatched_captured_s,
                "unmatched_rendered_s": self.unmatched_rendered_s, "passed": self.passed, "tolerance_s": MATCH_S}


def smoothed(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The probe's position ``x`` (m, at times ``t``, s) averaged over ``SMOOTHING_S``."""
    n = max(1, int(round(SMOOTHING_S / float(np.median(np.diff(t))))))
    return uniform_filter1d(np.asarray(x, float), n, mode="nearest")


def strokes(t: np.ndarray, x: np.ndarray) -> list[tuple[int, int, int]]:
    """The monotone strokes of a probe's position ``x`` (m) at times ``t`` (s): (start, stop, sign) index
    ranges of the smoothed position between its turns (a reversal of at least ``TURN_SHARE`` of the range);
    sign +1 where the position rises."""
    xs = smoothed(t, x)
    least = TURN_SHARE * max(float(np.ptp(xs)), 1e-12)
    turns, start, sign = [], 0, 0
    low = high = 0
    for i in range(1, xs.size):
        high = i if xs[i] > xs[high] else high
        low = i if xs[i] < xs[low] else low
        if sign >= 0 and xs[high] - xs[i] >= least:          # falling from a peak
            if sign > 0:
                turns.append((start, high + 1, 1))
                start = high
            sign, low = -1, i
        elif sign <= 0 and xs[i] - xs[low] >= least:        # rising from a trough
            if sign < 0:
                turns.append((start, low + 1, -1))
                start = low
            sign, high = 1, i
    turns.append((start, xs.size, sign or 1))
    return turns


def press_clock(times_s: np.ndarray, t: np.ndarray, x: np.ndarray, t_ref: np.ndarray, x_ref: np.ndarray
                ) -> np.ndarray:
    """Put ``times_s`` of a repeat press (its position ``x``, m, at times ``t``, s) on the reference press's
    clock (``x_ref`` at ``t_ref``): the time the reference reached the same smoothed position on the same
    stroke. Raises UsageError when the two presses do not have the same strokes."""
    own, ref = same_strokes(t, x, t_ref, x_ref)
    xs, xs_ref = smoothed(t, x), smoothed(t_ref, x_ref)
    paths = [np.maximum.accumulate(sign * xs_ref[a:b]) for a, b, sign in ref]    # monotone along each stroke
    out = np.empty(len(times_s))
    for k, when in enumerate(np.asarray(times_s, float)):
        i = int(np.clip(np.searchsorted(t, when), 0, t.size - 1))
        stroke = next(j for j, (a, b, _s) in enumerate(own) if a <= i < b or j == len(own) - 1)
        a, b, sign = ref[stroke]
        out[k] = float(np.interp(sign * xs[i], paths[stroke], t_ref[a:b]))
    return out


def same_strokes(t: np.ndarray, x: np.ndarray, t_ref: np.ndarray, x_ref: np.ndarray, name: str = "a repeat press"
                 ) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """The :func:`strokes` of a repeat press and of the reference; UsageError when they differ."""
    if t.size < 2 or t_ref.size < 2:
        raise UsageError(f"{name}: a press needs at least two samples")
    own, ref = strokes(t, x), strokes(t_ref, x_ref)
    if [s for _a, _b, s in own] != [s for _a, _b, s in ref]:
        raise UsageError(f"{name} must follow the capture's strokes: it has {len(own)} ({_said(own)}), the "
                         f"capture {len(ref)} ({_said(ref)})")
    return own, ref


def check_repeats(capture: Capture, repeats: Sequence[Capture]) -> None:
    """Refuse, before any replay, repeat presses that do not follow ``capture``'s strokes (UsageError)."""
    for repeat in repeats:
        same_strokes(repeat.t_s, repeat.x_m, capture.t_s, capture.x_m, repr(repeat.name or "a repeat press"))


def _said(found: list[tuple[int, int, int]]) -> str:
    return ", ".join("press" if s > 0 else "release" for _a, _b, s in found)


def judge_repeated_onsets(captured: np.ndarray, rendered: np.ndarray, repeats: list[np.ndarray]) -> RepeatedOnsets:
    """Item 3 within the key's repeatability (module notes) for onsets (s, the capture's clock): ``captured``,
    ``rendered`` and each repeat's (already on the capture's clock, :func:`press_clock`)."""
    captured, rendered = np.sort(np.asarray(captured, float)), np.sort(np.asarray(rendered, float))
    repeats = [np.sort(np.asarray(r, float)) for r in repeats]

    def near(onsets: np.ndarray, when: float) -> bool:
        return bool(onsets.size) and float(np.min(np.abs(onsets - when))) <= MATCH_S

    demanded = np.array([c for c in captured if all(near(r, c) for r in repeats)])
    _pairs, missed, extra = match_onsets(demanded, rendered)
    known = np.concatenate([captured, *repeats]) if repeats else captured
    return RepeatedOnsets(len(repeats), [r.tolist() for r in repeats], demanded.tolist(),
                          [float(c) for c in captured if c not in demanded], missed,
                          [float(r) for r in extra if not near(known, r)])


def repeat_onsets(capture: Capture, repeats: Sequence[Capture], th: Thresholds) -> list[np.ndarray]:
    """Each repeat press's impact onsets (the detector of :func:`~hapticam.render.verify.impacts.impact_onsets`
    on its valid samples) on ``capture``'s clock (s from its first sample), by the probe's position."""
    t_ref = capture.t_s - capture.t_s[0]
    out = []
    for repeat in repeats:
        t = repeat.t_s - repeat.t_s[0]
        ok = repeat.valid
        onsets = impact_onsets(t[ok], repeat.f_N[ok], th)
        out.append(press_clock(onsets, t, repeat.x_m, t_ref, capture.x_m))
    return out

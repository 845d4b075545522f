"""Impacts in a press: where the capture or the rendering shows them, and the criterion verify applies then.

A key with a hammer knocks: when a piano action's hammer lands in its backcheck, the capture holds sharp
pulses of several newtons lasting about a millisecond, each the shape of what carried it (the probe's stiff
tip), while a rendering gives the same landing as a smooth thump through the key coupled to the handle. The
fit of the two forces sample for sample then measures the instrument as much as the key, and no model
passes it, the exact one included. A press has impacts where either side shows them; verify then judges
(:func:`assess_impacts`, :class:`ImpactReport`):

1. the fit (seed 003 eq. 53) outside the impact windows, at least the fit threshold (95 %);
2. each window's impulse, rendered against captured: within ``IMPULSE_TOLERANCE`` (15 %) of the
   capture's, or within one force JND times the window's length for small impulses;
3. each captured onset matched by a rendered one within ``MATCH_S`` (10 ms), and no rendered one unmatched;
4. every perceptual feature "same", as without impacts (:mod:`hapticam.render.verify.compare`).

Detector of impacts in one force signal (:func:`impact_onsets`):

- baseline: the running median over ``BASELINE_S``. A median keeps steps and monotone stretches as they
  are (a smooth press, the probe's touch, a let-off drop leave no residual) and passes over pulses
  narrower than half its span: the residual ``f - baseline`` holds the peaks;
- a sharp rise: the residual reaches ``RISE_JNDS`` force JNDs (at the baseline's level: Weber law with its
  floor, :class:`~hapticam.render.verify.features.Thresholds`) after rising by as much within ``RISE_S``
  (two ticks of a 1 kHz servo); its onset is where the rise began (the last sample within ``RISE_S`` before
  it within one JND of the lowest residual there), and a rise within ``MATCH_S`` of the last onset belongs
  to that impact. A signal sampled more coarsely than ``RISE_S`` cannot show such a rise and has none;
- an impact: a sharp rise whose pulse carries momentum: its residual over the baseline, integrated from
  ``LEAD_S`` before the onset until the residual's envelope falls below the JND, the next rise's lead, or
  ``MAX_WINDOW_S``, exceeds one force JND times that length. This is item 2's small-impulse bound: a pulse
  whose impulse a rendering without it would match is not demanded as an impact either. A vibration about
  the level (a probe tip ringing, a click jacket striking its lip) has next to no net impulse.

The real switch captures (tests/data/switch_curves, 10 samples a second) have no impact: a click there is
a force step between two positions 5 um and 0.1 s apart, read as the curve's bump and drop. A simulated
clicky switch sampled at 4 kHz shows its click as a vibration: 3.2 N above the level for one sample, then
ringing, with a net impulse of 0.05 mN s against 0.35 mN s for one JND over its 9.7 ms (not an impact);
a piano action's first landing, 9.1 N above the level, carries 30 mN s against 0.6 mN s.

The rendering's impacts are the ticks in which the model flags one (``FLAG_IMPACT``) whose pulse in the
rendered force carries momentum by the test above (:func:`felt_flagged`: a landing too soft to tell in the
force is no impact on either side), and the impacts the detector finds in the rendered force. Windows (:func:`impact_spans`): from ``LEAD_S`` before each onset of
either side until the envelope of the residual ``F_captured - F_rendered`` (its largest magnitude over the
next ``ENVELOPE_S``) falls below the force JND at the capture's level, at most ``MAX_WINDOW_S``; windows
that overlap are one. A window's impulse (:func:`window_impulse`), on either side, is the force above the
capture's local baseline integrated over it: the capture's level before the window's first onset until
it, its level after the window from it on (a hammer's weight coming onto the key with its landing is the
baseline's). The two impulses then differ by the residual's integral over the window, and the small-impulse
bound is a mean force difference of one JND over it.

Before any of this, verify read the key's features outside a span after each impact the rendering flags
(:func:`impact_windows`, :func:`impact_residual`); it still does, and reports where the residual lies.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.ndimage import maximum_filter1d, median_filter, minimum_filter1d

from hapticam.identify.metrics import fit_report
from hapticam.models.hybrid_key.layout import FLAG_IMPACT
from hapticam.render.result import RenderResult
from hapticam.render.verify.features import Thresholds
from hapticam.render.verify.impact_report import (CRITERION_FIT, CRITERION_IMPACTS,  # noqa: F401
                                                  IMPULSE_TOLERANCE, MATCH_S, ImpactReport, ImpactWindow)

#: Span of the running median that gives a force signal's local baseline (s): ten times a 1 ms impact,
#: four periods of a key ringing on a probe's tip at 200 Hz.
BASELINE_S = 0.02
#: A rise counts as sharp within this time (s): two ticks of a 1 kHz servo.
RISE_S = 2e-3
#: ... by at least this many force JNDs, to at least as many above the baseline.
RISE_JNDS = 5.0
#: An impact window opens this long before the onset (s).
LEAD_S = 5e-3
#: The residual's envelope at t is its largest magnitude over [t, t + ENVELOPE_S] (s): it bridges the zero
#: crossings of any oscillation above 50 Hz.
ENVELOPE_S = 0.01
#: Longest impact window (s).
MAX_WINDOW_S = 0.15
#: Span (s) after an impact the rendering flags within which the key's features are not read (compare's
#: notes): the coupled key settles in about 4 / (zeta omega_n) = 80 ms (hybrid_key_coupling), a hammer's
#: bounces on the backcheck last about as long.
IMPACT_WINDOW_S = 0.1

# -- one signal ---------------------------------------------------------------------------------------
def local_baseline(f: np.ndarray, dt_s: float) -> np.ndarray:
    """Running median of ``f`` over ``BASELINE_S`` (an odd number of samples, at least 3; ``dt_s`` in s)."""
    half = max(int(round(0.5 * BASELINE_S / dt_s)), 1)
    return median_filter(np.asarray(f, dtype=np.float64), size=2 * half + 1, mode="nearest")


def envelope(values: np.ndarray, dt_s: float) -> np.ndarray:
    """The largest of ``values`` over [t, t + ENVELOPE_S] at each sample (``dt_s``: the sample interval, s)."""
    half = max(int(round(0.5 * ENVELOPE_S / dt_s)), 1)
    return maximum_filter1d(values, size=2 * half + 1, origin=-half, mode="nearest")


def _level(t: np.ndarray, f: np.ndarray, a: float, b: float, fallback: float) -> float:
    sel = (t >= a) & (t <= b)
    return float(np.median(f[sel])) if sel.any() else fallback


def window_levels(t: np.ndarray, f: np.ndarray, start_s: float, onset_s: float, end_s: float) -> tuple[float, float]:
    """The local baseline of a window (N): the level before its first onset (the median of ``f`` over [start,
    onset]) and the level after it (the median over [end, end + ENVELOPE_S]); ``t`` in s."""
    sel = (t >= start_s) & (t <= end_s)
    first = float(f[sel][0]) if sel.any() else float(np.interp(start_s, t, f))
    last = float(f[sel][-1]) if sel.any() else first
    return _level(t, f, start_s, onset_s, first), _level(t, f, end_s, end_s + ENVELOPE_S, last)


def window_impulse(t: np.ndarray, f: np.ndarray, start_s: float, onset_s: float, end_s: float,
                   levels: tuple[float, float] | None = None) -> float:
    """Impulse (N s) of ``f`` (N at times ``t``, s) above the window's local baseline over [start, end]: the
    level before the onset until it, the level after the window from it on (``levels``, N; by default
    :func:`window_levels` of ``f``). A step in the level at the onset (a hammer's weight coming onto the key
    with its landing) is the baseline's; the transient on top of it is the impulse."""
    before, after = window_levels(t, f, start_s, onset_s, end_s) if levels is None else levels
    return _integral(t, f - np.where(t < onset_s, before, after), start_s, end_s)


def sharp_rises(t: np.ndarray, f: np.ndarray, th: Thresholds) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Onset indices of the sharp rises in ``f`` (N at times ``t``, s; module notes), its residual over the
    baseline (N) and the force JND at the baseline (N) per sample. A rise's onset is the last sample within
    ``RISE_S`` before it where the residual lay within one JND of its lowest there: where the rise began. A
    rise from the record's first sample on has no onset in the record (a capture that starts mid-press)."""
    dt = float(np.median(np.diff(t)))
    steps = int(np.floor(RISE_S / dt + 1e-9))
    base = local_baseline(f, dt)
    jnd = th.force_jnd_at(base)
    residual = f - base
    if steps < 1:
        return [], residual, jnd
    # the lowest residual over the ``steps`` samples before each one
    low = np.r_[np.inf, minimum_filter1d(residual, size=steps, origin=(steps - 1) // 2, mode="constant",
                                         cval=np.inf)[:-1]]
    sharp = (residual >= RISE_JNDS * jnd) & (residual - low >= RISE_JNDS * jnd)
    onsets: list[int] = []
    last = -math.inf                    # the last onset's time, a hidden one at the record's start included
    for i in np.flatnonzero(sharp & ~np.r_[False, sharp[:-1]]):
        j = max(int(i) - steps, 0)
        before = residual[j:i + 1]
        onset = j + int(np.flatnonzero(before <= before.min() + jnd[i])[-1])
        if t[onset] - last < MATCH_S:
            continue
        last = t[onset]
        if onset > 0:                   # rising from the first sample on: where it began lies before the record
            onsets.append(onset)
    return onsets, residual, jnd


def _window_ends(t: np.ndarray, quiet: np.ndarray, onsets: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Where each window closes (s): the first quiet sample at or after its onset, at most ``MAX_WINDOW_S``
    after its start (``onsets``: sample indices; ``starts``: s)."""
    calm = np.flatnonzero(quiet)
    k = np.searchsorted(calm, onsets)
    first = np.full(onsets.size, t.size - 1)
    found = k < calm.size
    first[found] = calm[k[found]]
    return np.minimum(t[first], starts + MAX_WINDOW_S)


def impact_onsets(t: np.ndarray, f: np.ndarray, th: Thresholds) -> np.ndarray:
    """Onset times (s) of the impacts in the force ``f`` (N at times ``t``, s; module notes)."""
    t, f = np.asarray(t, dtype=np.float64), np.asarray(f, dtype=np.float64)
    if t.size < 3:
        return np.zeros(0)
    rises, residual, jnd = sharp_rises(t, f, th)
    return _with_momentum(t, residual, jnd, np.asarray(rises, dtype=np.int64))


def _with_momentum(t: np.ndarray, residual: np.ndarray, jnd: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The onsets (s) among the sample indices ``idx`` (ascending) whose pulse carries momentum: the residual
    over the baseline (N), integrated from ``LEAD_S`` before the onset until its envelope falls below the
    JND (N), the next onset's lead or ``MAX_WINDOW_S``, exceeds one JND times that length (module notes)."""
    if idx.size == 0:
        return np.zeros(0)
    starts = t[idx] - LEAD_S
    ends = _window_ends(t, envelope(np.abs(residual) / jnd, float(np.median(np.diff(t)))) < 1.0, idx, starts)
    ends = np.minimum(ends, np.r_[starts[1:], np.inf])            # a pulse ends where the next one's lead begins
    kept = [t[i] for i, a, b in zip(idx, starts, ends) if _integral(t, residual, a, b) > jnd[i] * (b - a)]
    return np.asarray(kept, dtype=np.float64)


def felt_flagged(t: np.ndarray, f: np.ndarray, flagged: np.ndarray, th: Thresholds) -> np.ndarray:
    """Of the impacts the model flagged at ``flagged`` (s), those whose pulse in the rendered force ``f`` (N
    at times ``t``, s) carries momentum, by the test that decides a captured impact (:func:`impact_onsets`):
    a landing too soft to tell in the force is no more an impact on the rendered side than on the captured
    one (a hammer's last bounces in its backcheck, a jack meeting the hammer at the touch)."""
    t, f = np.asarray(t, dtype=np.float64), np.asarray(f, dtype=np.float64)
    if t.size < 3 or flagged.size == 0:
        return np.zeros(0)
    base = local_baseline(f, float(np.median(np.diff(t))))
    idx = np.unique(np.clip(np.searchsorted(t, flagged), 0, t.size - 1))
    return _with_momentum(t, f - base, th.force_jnd_at(base), idx)


def _integral(t: np.ndarray, y: np.ndarray, a: float, b: float) -> float:
    """Trapezoid integral of ``y`` over the samples of ``t`` within [a, b]."""
    sel = (t >= a) & (t <= b)
    ts, ys = t[sel], y[sel]
    return float(np.sum(0.5 * (ys[1:] + ys[:-1]) * np.diff(ts))) if ts.size >= 2 else 0.0


def _merge_onsets(times: np.ndarray) -> np.ndarray:
    """Sorted onsets, each at least ``MATCH_S`` after the one kept before it."""
    kept: list[float] = []
    for t in np.sort(times):
        if not kept or t - kept[-1] >= MATCH_S:
            kept.append(float(t))
    return np.asarray(kept, dtype=np.float64)


def flagged_onsets(result: RenderResult, t_replay: np.ndarray, t_capture: np.ndarray) -> np.ndarray:
    """Onsets (s, capture's clock) of the runs of ticks in which the model flagged an impact (``FLAG_IMPACT``);
    ``t_replay``: the replay times of the capture's samples ``t_capture``."""
    flagged = (result.model_flags & FLAG_IMPACT) != 0
    first = flagged & ~np.r_[False, flagged[:-1]]
    ticks = result.t_s[first]
    ticks = ticks[(ticks >= t_replay[0]) & (ticks <= t_replay[-1])]
    return _merge_onsets(np.interp(ticks, t_replay, t_capture))


# -- capture against rendering ------------------------------------------------------------------------
def match_onsets(captured: np.ndarray, rendered: np.ndarray) -> tuple[list[tuple[float, float]], list[float],
                                                                        list[float]]:
    """Pair captured with rendered onsets (s) one to one within ``MATCH_S``, closest pairs first; return the
    pairs (captured, rendered) in time order and the captured and rendered onsets left unmatched."""
    candidates = []
    for i, c in enumerate(captured):
        lo, hi = np.searchsorted(rendered, [c - MATCH_S, c + MATCH_S], side="left")[0], \
            np.searchsorted(rendered, c + MATCH_S, side="right")
        candidates += [(abs(float(rendered[j]) - float(c)), i, j) for j in range(lo, hi)
                       if abs(float(rendered[j]) - float(c)) <= MATCH_S]
    used_c, used_r, pairs = set(), set(), []
    for _gap, i, j in sorted(candidates):
        if i not in used_c and j not in used_r:
            used_c.add(i)
            used_r.add(j)
            pairs.append((float(captured[i]), float(rendered[j])))
    return (sorted(pairs), [float(c) for i, c in enumerate(captured) if i not in used_c],
            [float(r) for j, r in enumerate(rendered) if j not in used_r])


def impact_spans(t: np.ndarray, residual: np.ndarray, jnd: np.ndarray, onsets: np.ndarray) -> list[tuple[float, float]]:
    """The union of the impact windows (s) of ``onsets`` (s, both sides'; module notes): ``residual`` (N,
    captured minus rendered) and ``jnd`` (N, at the capture's level) at times ``t`` (s)."""
    if onsets.size == 0:
        return []
    onsets = np.sort(onsets)
    quiet = envelope(np.abs(residual) / jnd, float(np.median(np.diff(t)))) < 1.0
    starts = np.maximum(onsets - LEAD_S, t[0])                 # a capture may open with an impact
    ends = _window_ends(t, quiet, np.searchsorted(t, onsets), starts)
    spans: list[list[float]] = []
    for a, b in zip(starts, np.maximum(ends, onsets)):
        if spans and a <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], float(b))
        else:
            spans.append([float(a), float(b)])
    return [(a, b) for a, b in spans]


def judge_window(t: np.ndarray, f_captured: np.ndarray, f_rendered: np.ndarray, span: tuple[float, float],
                 first_onset_s: float, th: Thresholds) -> ImpactWindow:
    """Item 2 on one window (s): the rendered impulse within ``IMPULSE_TOLERANCE`` of the captured one or
    within the force JND (at the capture's level before the onset) times the window's length. Both impulses
    are taken above the capture's baseline, so that their difference is the residual's integral over the
    window: the small-impulse bound is a mean force difference of one JND over it."""
    a, b = span
    levels = window_levels(t, f_captured, a, first_onset_s, b)
    captured = window_impulse(t, f_captured, a, first_onset_s, b, levels)
    rendered = window_impulse(t, f_rendered, a, first_onset_s, b, levels)
    relative = IMPULSE_TOLERANCE * abs(captured)
    small = th.force_jnd(levels[0]) * (b - a)
    bound = (f"{100 * IMPULSE_TOLERANCE:g} % of the captured impulse" if relative >= small
             else "force JND x length")
    tolerance = max(relative, small)
    return ImpactWindow(a, b, captured, rendered, tolerance, bound, abs(rendered - captured) <= tolerance)


def judge_impacts(t: np.ndarray, f_captured: np.ndarray, f_rendered: np.ndarray, valid: np.ndarray,
                  captured: np.ndarray, rendered: np.ndarray, th: Thresholds,
                  flagged: np.ndarray | None = None) -> ImpactReport:
    """Items 1-3 (module notes) for the onsets (s) ``captured`` and ``rendered`` of the forces (N) at times
    ``t`` (s, capture's clock; ``valid``: the samples compared); a press without onsets keeps the fit."""
    captured, rendered = np.sort(np.asarray(captured, float)), np.sort(np.asarray(rendered, float))
    report = ImpactReport(CRITERION_IMPACTS if captured.size or rendered.size else CRITERION_FIT,
                          captured.tolist(), rendered.tolist(),
                          [] if flagged is None else np.sort(flagged).tolist(), fit_threshold_percent=th.fit_percent)
    if not report.has_impacts:
        return report
    tv, fc, fr = t[valid], f_captured[valid], f_rendered[valid]
    spans = impact_spans(tv, fc - fr, th.force_jnd_at(local_baseline(fc, float(np.median(np.diff(tv))))),
                         np.r_[captured, rendered])
    onsets = np.sort(np.r_[captured, rendered])
    report.windows = [judge_window(tv, fc, fr, span, float(onsets[np.searchsorted(onsets, span[0])]), th)
                      for span in spans]
    inside = _inside(tv, spans)
    if (~inside).sum() >= 2:
        report.fit_outside_percent = float(fit_report(fc[~inside], fr[~inside])["fit_percent"])
    report.matched, report.unmatched_captured_s, report.unmatched_rendered_s = match_onsets(captured, rendered)
    report.recontacts_s = sorted(recontacts(tv, fc, captured, th) + recontacts(tv, fr, rendered, th))
    return report


def recontacts(t: np.ndarray, f: np.ndarray, onsets: np.ndarray, th: Thresholds) -> list[float]:
    """The ``onsets`` (s) of the force ``f`` (N at times ``t``, s) whose rise began from zero force: within one
    force JND of it somewhere in the ``RISE_S`` before (the probe meeting the key again,
    :mod:`hapticam.render.verify.impact_report`)."""
    zero = th.force_jnd(0.0)
    out = []
    for onset in onsets:
        before = (t >= onset - RISE_S) & (t <= onset)
        if before.any() and float(np.min(np.abs(f[before]))) <= zero:
            out.append(float(onset))
    return out


def _inside(t: np.ndarray, spans: list[tuple[float, float]]) -> np.ndarray:
    inside = np.zeros(t.size, dtype=bool)
    for a, b in spans:
        inside |= (t >= a) & (t <= b)
    return inside


def assess_impacts(t: np.ndarray, f_captured: np.ndarray, f_rendered: np.ndarray, valid: np.ndarray,
                   result: RenderResult, t_replay: np.ndarray, th: Thresholds, rotary: bool = False) -> ImpactReport:
    """Find the impacts on either side of a replay and judge them (module notes). ``t``: the capture's
    times (s, from 0); ``t_replay``: the same samples on the replay's clock; ``result``: the rendering. On a
    rotary axis (torques in N m, for which no JND is sourced) impacts are not looked for."""
    if rotary:
        return ImpactReport(CRITERION_FIT, fit_threshold_percent=th.fit_percent,
                            note="not looked for on a rotary axis (the force JND is a key's, in N)")
    captured = impact_onsets(t[valid], f_captured[valid], th)
    flagged = flagged_onsets(result, t_replay, t)
    felt = felt_flagged(t[valid], f_rendered[valid], flagged, th)
    rendered = _merge_onsets(np.r_[felt, impact_onsets(t[valid], f_rendered[valid], th)])
    return judge_impacts(t, f_captured, f_rendered, valid, captured, rendered, th, felt)


# -- the spans after flagged impacts where the key's features are not read ----------------------------
def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) index pairs of the runs of True in ``mask``."""
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)))


def impact_windows(result: RenderResult, t_replay: np.ndarray) -> tuple[np.ndarray, int]:
    """Samples (bool, at the capture's replay times ``t_replay``, s) within ``IMPACT_WINDOW_S`` after a tick in
    which the model flagged an impact (``FLAG_IMPACT``, hybrid key), from 2 ms before it; and how many
    separate windows there are."""
    ticks = result.t_s[(result.model_flags & FLAG_IMPACT) != 0]
    near = np.zeros(t_replay.size, dtype=bool)
    if ticks.size == 0:
        return near, 0
    i = np.searchsorted(ticks, t_replay + 0.002, side="right") - 1          # the last impact before t + 2 ms
    near = (i >= 0) & (t_replay - ticks[np.maximum(i, 0)] <= IMPACT_WINDOW_S)
    return near, int(1 + np.count_nonzero(np.diff(ticks) > IMPACT_WINDOW_S))


def feature_spans(t: np.ndarray, near: np.ndarray) -> list[tuple[float, float]]:
    """The runs of ``near`` (from :func:`impact_windows`) as (start, end) times of ``t`` (s)."""
    return [(float(t[a]), float(t[b - 1])) for a, b in _runs(near)]


def impact_residual(f_captured: np.ndarray, f_rendered: np.ndarray, valid: np.ndarray,
                    impacts: tuple[np.ndarray, int]) -> dict[str, float]:
    """Where the residual lies when the rendering flags impacts: ``impact_residual_share`` (0-1, of the
    residual's sum of squares over the valid samples, the share within :func:`impact_windows`) and
    ``fit_percent_outside_impacts`` (seed 003 eq. 53 over the valid samples outside them); empty without
    flagged impacts or when either side has fewer than two samples."""
    near, count = impacts
    inside, outside = valid & near, valid & ~near
    if count == 0 or inside.sum() < 2 or outside.sum() < 2:
        return {}
    residual = f_captured - f_rendered
    total = float(np.sum(residual[valid] ** 2))
    share = float(np.sum(residual[inside] ** 2)) / total if total > 0.0 else 0.0
    return {"impact_residual_share": share,
            "fit_percent_outside_impacts": fit_report(f_captured[outside], f_rendered[outside])["fit_percent"]}

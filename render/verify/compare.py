"""Probe the rendered object the way the real one was probed, and compare the forces.

:func:`verify` drives the simulated device's handle along a capture's recorded probe trajectory with a
stiff position servo (the probe), runs the model through the real render loop (the compiled servo
step and the safety layer, at the device rate, on the simulated clock), records the rendered force,
and compares it with the captured force:

- fit (seed 003 eq. 53), RMS and max error, overall and per direction of travel;
- force-displacement curves per direction and the energy dissipated per cycle;
- the features a person feels on a key and a perceptual verdict for each
  (:mod:`hapticam.render.verify.features`).

Replay details, all reported in the result:

- The probe holds the handle through a spring-damper of ``PROBE_STIFFNESS_N_PER_M`` (1 N deflects it by
  1 um, the encoder's resolution), critically damped on the handle's mass. ``device`` replays it through
  a device as displayed instead (:mod:`hapticam.render.verify.device_replay`; ``VerifyResult.device``).
- A capture that names its probe (a one-sided tip and the carriage's servo, ``metadata["probe"]``) is
  replayed with the model's hybrid key held by that tip and the handle the carriage, moving as the capture
  measured it (:mod:`hapticam.render.verify.probe_tip`; ``VerifyResult.device["probe"]``): the key rings on
  the tip and leaves it as the real one did.
- The handle first rests at the capture's start position for the safety layer's ramp-in time plus
  ``SETTLE_S``; that lead-in is not compared.
- Quasi-static replay: when the model's force does not depend on speed or acceleration (only on
  position and direction of travel) and the capture is slow (median speed under
  ``QUASI_STATIC_MPS``), the trajectory is replayed faster, at a median speed of ``REPLAY_MPS``. The
  rendered force is then the same as at the capture's speed, and the velocity estimate of the loop is
  far above its noise, as on a real device pressed by a finger. ``speedup`` overrides the choice.
- The simulated device is sized to the capture: its workspace covers the capture's travel and its
  force limit is at least twice the largest captured force (``max_force_N`` overrides).

What is compared is like for like on either axis (rotary: rad, N m): the capture's force is what the
probe applied to the object behind its force sensor (the probe's own carriage is not in it), and the
rendered force is what the device writes, without its handle's inertia. So the object's own inertia is
in the capture and in the rendering only when the model carries it and the loop renders it (the loop
drops an inertia below a quarter of the device's apparent mass: :data:`hapticam.render.loop.AUTO_PROXY_FRACTION`).
A friction model identified from turns or presses has none, and a capture with speed changes then holds a
force ``J a`` the rendering cannot: verify regresses the residual on the capture's acceleration
(:func:`unmodelled_inertia`) and says how much of the residual that inertia is and what the fit would be
with it, in ``unmodelled_inertia`` and in the failure when the fit is low.

Impacts (a hybrid key's hammer landing or striking; :mod:`hapticam.render.verify.impacts`): a press has
impacts when the capture's force or the rendering shows them. Its verdict is then not the fit of the two
forces sample for sample, which an impact's transient dominates with the shape of what carried it (a stiff
probe tip rings for milliseconds, a coupled key at 1 kHz for tens), but the fit outside the impact windows,
each window's impulse, the onsets matched within 10 ms, and the features (``VerifyResult.impacts``; the
plain fit stays in the report). The key's features (bump, drop, travel stiffness) are properties of the
pressing curve, not of an impact's transient: they are read outside ``IMPACT_WINDOW_S`` after each impact
the rendering flags, in both curves alike (:func:`~hapticam.render.verify.impacts.impact_windows`; the count
is in ``replay["impact_windows"]``, the share of the residual in those spans in
``replay["impact_residual_share"]``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from hapticam.world.sim import SimParams
from hapticam.errors import ParameterError, UsageError
from hapticam.capture import Capture
from hapticam.capture_columns import AXIS_UNITS, axis_of
from hapticam.identify.alignment import contact_offset, remove_backlash
from hapticam.identify.metrics import fit_report
from hapticam.identify.preprocess import prepare
from hapticam.models.base import Model
from hapticam.models.kernels import model_force
from hapticam.render.loop import AUTO_PROXY_FRACTION, MAX_SIMULATED_TICKS, LoopConfig, run_simulated
from hapticam.render.result import RenderResult
from hapticam.render.safety import SafetyConfig
from hapticam.render.verify.features import (FeatureReport, FxCurves, Thresholds, compare_features, fx_curves,
                                             key_features, reversal_window, switch_point_verdicts)
from hapticam.render.verify.device_replay import (PROBE_STIFFNESS_N_PER_M, check_device, ideal_section, probe_user,
                                                  replay_on_device)
from hapticam.world.users import position_user
from hapticam.render.verify.repeats import check_repeats, judge_repeated_onsets, repeat_onsets
from hapticam.render.verify.probe_tip import (HELD_NOTE, capture_probe, held_by_tip, held_key, held_rate_hz,
                                              servo_reference)
from hapticam.render.verify.impacts import (IMPACT_WINDOW_S, ImpactReport, assess_impacts, feature_spans,
                                            impact_residual, impact_windows)

SETTLE_S = 0.05
QUASI_STATIC_MPS = 1e-3
#: a low fit is put down to unmodelled inertia when J a makes up at least this share of the residual's
#: mean square (half: then it is the main part of what the rendering misses)
INERTIA_SHARE = 0.5
#: ... and when adding it raises the fit by at least this much (percentage points): an inertia that does
#: not explain the residual is not named as its cause
INERTIA_GAIN = 10.0
#: ... and the fit with it reaches at least this (%): a residual an inertia leaves mostly unexplained has
#: another cause (a piano key's impacts gave m = 72 kg and a fit of -1248 % with it)
INERTIA_FIT_MIN = 50.0
REPLAY_MPS = 5e-3

#: on a rotary axis the feature differences are reported, not judged: the perceptual thresholds (force and
#: position JNDs, Weber fractions) are measured on keys pressed by a finger; no source here gives a knob's
ROTARY_FEATURE_NOTE = "not judged on a rotary axis (the thresholds are a key's, in N and mm)"


@dataclass
class VerifyResult:
    """Everything a verification measured. Forces in N, positions in m, times in s (capture's clock)."""

    model_name: str
    capture_name: str
    t_s: np.ndarray
    x_reference_m: np.ndarray
    x_rendered_m: np.ndarray
    force_reference_N: np.ndarray
    force_rendered_N: np.ndarray
    direction: np.ndarray
    valid: np.ndarray
    fit_percent: float
    rms_N: float
    max_error_N: float
    #: the NRMSE fit of the same forces (MATLAB's ``compare``); no threshold reads it
    nrmse_fit_percent: float
    per_direction: dict[str, dict[str, float]]
    curves_reference: FxCurves
    curves_rendered: FxCurves
    features: FeatureReport
    thresholds: Thresholds
    passed: bool
    failures: list[str]
    replay: dict[str, Any] = field(default_factory=dict)
    capture_source: str = ""
    safety_events: dict[str, int] = field(default_factory=dict)
    passive: bool = True
    passivity_issues: list[str] = field(default_factory=list)
    #: the capture's axis kind: linear (m, N) or rotary (rad, N m; the fields named _m, _N then hold those)
    axis: str = "linear"
    #: the inertia in the capture that the rendering lacks (:func:`unmodelled_inertia`), None if not measurable
    unmodelled_inertia: dict[str, float] | None = None
    #: the spans (start, end) in the capture's time (s) after the impacts the rendering flags, outside which
    #: the features were read
    impact_spans_s: list[tuple[float, float]] = field(default_factory=list)
    #: the impacts of either side and, for a press with impacts, the verdict that replaces the plain fit's
    impacts: ImpactReport | None = None
    #: the device replayed through and what the hand received (``device_replay.device_section``), or the ideal
    #: replay's note (``name`` None)
    device: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every number, JSON-ready (arrays left out; see the figure and the recording for those)."""
        return {
            "model": self.model_name, "capture": self.capture_name, "capture_source": self.capture_source,
            "passed": self.passed,
            "failures": self.failures, "fit_percent": self.fit_percent,
            "nrmse_fit_percent": self.nrmse_fit_percent, "rms_N": self.rms_N,
            "max_error_N": self.max_error_N, "per_direction": self.per_direction,
            "features": {"captured": self.features.reference.to_dict(),
                         "rendered": self.features.rendered.to_dict()},
            "verdicts": [v.to_dict() for v in self.features.verdicts],
            "noticeable_differences": self.features.noticeable,
            "thresholds": vars(self.thresholds).copy(), "replay": self.replay,
            "safety_events": self.safety_events, "samples_compared": int(self.valid.sum()),
            "passive": self.passive, "passivity_issues": self.passivity_issues,
            "axis": self.axis, "units": AXIS_UNITS[self.axis], "unmodelled_inertia": self.unmodelled_inertia,
            "impact_spans_s": [list(span) for span in self.impact_spans_s],
            "impacts": None if self.impacts is None else self.impacts.to_dict(), "device": self.device,
        }


def is_quasi_static(model: Model, x_probe_m: np.ndarray) -> bool:
    """True when the model's force depends only on position and direction of travel: the same force at
    two speeds of the same sign and with or without acceleration, at a few positions."""
    compiled = model.compile()
    for x in x_probe_m:
        for sign in (1.0, -1.0):
            f_slow = _once(compiled, x, sign * 1e-3, 0.0, sign)
            f_fast = _once(compiled, x, sign * 5e-2, 0.0, sign)
            f_acc = _once(compiled, x, sign * 1e-3, 10.0, sign)
            scale = max(abs(f_slow), 1e-3)
            if abs(f_fast - f_slow) > 1e-6 * scale or abs(f_acc - f_slow) > 1e-6 * scale:
                return False
    return True


def _once(compiled, x: float, v: float, a: float, sign: float) -> float:
    state = compiled.reset_state()
    # Two calls: the first sets any direction state held in the model, the second is the reading.
    model_force(compiled.params, state, float(x), sign * 0.1, 0.0, 1e-3)
    return float(model_force(compiled.params, state, float(x), float(v), float(a), 1e-3))


def verify(model: Model, capture: Capture, *, model_name: str = "<model>", rate_hz: float = 1000.0,
           thresholds: Thresholds | None = None, speedup: float | None = None,
           max_force_N: float | None = None, seed: int = 0, align: bool = True,
           x_offset_m: float | None = None, device: str | None = None,
           model_switch_points: dict[str, Any] | None = None, repeats: Sequence[Capture] = ()) -> VerifyResult:
    """Replay ``capture``'s probe trajectory on the rendered ``model`` and compare forces (module notes).

    ``align``: remove the probe's backlash from the releasing samples and shift the capture so that its
    contact point lies on the model's (:mod:`hapticam.identify.alignment`); ``x_offset_m`` sets the shift
    (m, added to the capture's positions) instead of finding it. The report gives both. ``device``: replay
    through that device as displayed (:data:`~hapticam.render.verify.device_replay.DEVICE_CHOICES`).
    ``model_switch_points``: the model's actuation and release points (``actuation_m``, ``release_m``, m, as
    its provenance ``metrics`` carry them), compared with the capture's as features
    (:func:`~hapticam.render.verify.features.switch_point_verdicts`). ``repeats``: other presses of the same
    key, within which a press's impact onsets are judged (:mod:`hapticam.render.verify.repeats`)."""
    th = thresholds or Thresholds()
    LoopConfig(rate_hz=rate_hz).checked()      # the loop's own range, before any speed-up is reasoned on
    axis = axis_of(capture.metadata)
    check_device(device, rate_hz, axis, max_force_N)
    check_repeats(capture, repeats)
    prepared = prepare(capture)
    backlash = remove_backlash(prepared) if align else 0.0
    offset = contact_offset(model, prepared) if (align and x_offset_m is None) else float(x_offset_m or 0.0)
    if not math.isfinite(offset):
        raise UsageError(f"x offset must be a finite length in m, got {x_offset_m}")
    t_cap, x_cap = capture.t_s - capture.t_s[0], prepared.x + offset
    median_speed = float(np.median(np.abs(prepared.v)))
    chosen = _automatic_speedup(model, x_cap, median_speed)
    if speedup is not None:
        _check_speedup(speedup, chosen, capture, rate_hz)
    speedup = chosen if speedup is None else speedup
    _check_replay(capture, float(t_cap[-1]), rate_hz, speedup)
    result, t_replay, plant, lead_s, section = _replay(model, capture, t_cap, x_cap, speedup, rate_hz, max_force_N,
                                                       seed, device)
    # Rendered force and handle position at the capture's sample times (tick values interpolated).
    f_ren = np.interp(t_replay, result.t_s, result.force_N)
    x_ren = np.interp(t_replay, result.t_s, result.x_m)
    valid = capture.valid.copy()
    direction = prepared.direction.astype(np.int64)
    overall = fit_report(capture.f_N[valid], f_ren[valid])
    per_direction = _per_direction(capture.f_N, f_ren, valid, direction)
    flagged = impact_windows(result, t_replay)
    turning = reversal_window(prepared.t, prepared.v, prepared.dead_band_mps, prepared.cutoff_hz) | flagged[0]
    curves_ref, curves_ren, report = _features(x_cap, x_ren, capture.f_N, f_ren, direction, valid, th, turning)
    failures: list[str] = []
    passivity = model.passivity()
    if not passivity.passive:
        failures.append("the model is not passive: " + "; ".join(passivity.issues[:2]))
    inertia = unmodelled_inertia(prepared.a, capture.f_N, f_ren, valid)
    inertia_note = _inertia_note(inertia, axis)
    impact_share = impact_residual(capture.f_N, f_ren, valid, flagged)
    impact_report = _impacts(capture, t_cap, f_ren, valid, result, t_replay, th, axis, repeats)
    if impact_report.has_impacts:
        failures += impact_report.failures()
    elif overall["fit_percent"] < th.fit_percent:
        failures.append(f"fit {overall['fit_percent']:.2f} % is below {th.fit_percent:g} %" + inertia_note)
    if inertia_note:
        without = _features(x_cap, x_ren, capture.f_N - inertia["inertia"] * prepared.a, f_ren, direction, valid,
                            th, turning)[2]
        _note_inertial_differences(report, without, axis)
    report.verdicts += switch_point_verdicts(capture.metadata, model_switch_points or {}, backlash, offset, th)
    spans = feature_spans(t_cap, flagged[0])
    failures += _judge_features(report, spans, axis == "rotary")
    impact_report.features_same = not report.noticeable
    counts = _event_counts(result)
    if counts.get("saturation"):
        failures.append(_saturation_failure(counts["saturation"], plant.max_force_N, axis))
    return VerifyResult(
        model_name=model_name, capture_name=capture.name, t_s=t_cap, x_reference_m=x_cap, x_rendered_m=x_ren,
        force_reference_N=capture.f_N, force_rendered_N=f_ren, direction=direction, valid=valid,
        fit_percent=overall["fit_percent"], rms_N=overall["rms_N"], max_error_N=overall["max_N"],
        nrmse_fit_percent=overall["nrmse_fit_percent"], per_direction=per_direction, curves_reference=curves_ref, curves_rendered=curves_ren, features=report,
        thresholds=th, passed=not failures, failures=failures,
        replay={"rate_hz": rate_hz, "speedup": speedup, "lead_in_s": lead_s, "ticks": int(result.t_s.size),
                "probe_stiffness_N_per_m": PROBE_STIFFNESS_N_PER_M, "device_max_force_N": plant.max_force_N,
                "median_capture_speed_mps": median_speed, "backlash_m": backlash, "x_offset_m": offset,
                "impact_windows": flagged[1], **impact_share},
        safety_events=counts, capture_source=str(capture.metadata.get("source", "")),
        passive=passivity.passive, passivity_issues=list(passivity.issues), axis=axis,
        unmodelled_inertia=inertia, impact_spans_s=spans, impacts=impact_report, device=section)


def _note_inertial_differences(report: FeatureReport, without_inertia: FeatureReport, axis: str) -> None:
    """Note on each noticeable difference of ``report`` that is not noticeable in ``without_inertia`` (the
    capture read again without its inertial force ``J a``) that the capture's inertia is what differs."""
    for verdict in report.verdicts:
        if verdict.noticeable and verdict.name not in without_inertia.noticeable:
            what = "torque J alpha" if axis == "rotary" else "force m a"
            verdict.note = ((verdict.note + "; ") if verdict.note else "") + (
                f"the capture's inertial {what}, which the rendering lacks: without it, below the JND")


def _saturation_failure(events: int, max_force: float, axis: str) -> str:
    """The failure line for ``events`` saturation events at the device's limit ``max_force`` (N, or N m)."""
    return (f"the device's force limit ({max_force:g} {AXIS_UNITS[axis]['force']}) clipped the rendering "
            f"({events} saturation event{'s' if events > 1 else ''}): the features past it are the limit's")


def _per_direction(f_cap: np.ndarray, f_ren: np.ndarray, valid: np.ndarray,
                   direction: np.ndarray) -> dict[str, dict[str, float]]:
    """Fit report (seed 003 eq. 53, RMS, max) of the valid samples of each direction with two or more."""
    out: dict[str, dict[str, float]] = {}
    for name, d in (("pressing", 1), ("releasing", -1)):
        sel = valid & (direction == d)
        if sel.sum() >= 2:
            out[name] = fit_report(f_cap[sel], f_ren[sel])
    return out


def _event_counts(result: RenderResult) -> dict[str, int]:
    """How many safety events of each name the rendering had."""
    counts: dict[str, int] = {}
    for event in result.events:
        counts[event.name] = counts.get(event.name, 0) + 1
    return counts


#: The features read off the travel outside reversal and impact windows (``press_travel_N``).
IMPACT_READ_FEATURES = ("travel stiffness", "bump peak force", "bump position", "force drop after bump")


def _check_replay(capture: Capture, duration_s: float, rate_hz: float, speedup: float) -> None:
    """Refuse what no replay can compare: a capture whose force never changes, or a speed-up (positive:
    :func:`_check_speedup` or :func:`_automatic_speedup`) that makes the replay longer than
    ``MAX_SIMULATED_TICKS``."""
    spread = capture.constant_force_spread()
    if spread is not None:
        raise UsageError(f"{capture.name}: the force never changes ({spread:g} over the capture): there is "
                         "nothing to compare a rendering with")
    ticks = duration_s * rate_hz / speedup
    if ticks > MAX_SIMULATED_TICKS:
        raise UsageError(f"speedup {speedup:g}: the replay would take {ticks:.3g} ticks at {rate_hz:g} Hz, "
                         f"more than {MAX_SIMULATED_TICKS:,} (it holds every tick in memory); slow it down less")


def _automatic_speedup(model: Model, x_cap: np.ndarray, median_speed: float) -> float:
    """The quasi-static replay's speed-up (module notes), 1 for a model whose force depends on speed."""
    quasi = median_speed < QUASI_STATIC_MPS and is_quasi_static(model, np.linspace(x_cap.min(), x_cap.max(), 9))
    return max(1.0, REPLAY_MPS / max(median_speed, 1e-12)) if quasi else 1.0


def _check_speedup(speedup: float, chosen: float, capture: Capture, rate_hz: float) -> None:
    """A speed-up given: at most one capture sample per servo tick, or the replay skips the capture's motion;
    a quasi-static model may go as fast as the speed-up verify itself chooses (``chosen``)."""
    fastest = max(1.0, float(np.median(np.diff(capture.t_s))) * rate_hz, chosen)
    if not (math.isfinite(speedup) and 0 < speedup <= fastest * (1.0 + 1e-9)):
        raise ParameterError("speedup", f"must be between 0 and {fastest:.6g} for this model and capture at "
                         f"{rate_hz:g} Hz (one servo tick per capture sample, or the quasi-static replay's "
                         f"speed), got {speedup:g}")


def _judge_features(report: FeatureReport, spans: list[tuple[float, float]], rotary: bool) -> list[str]:
    """Note on the verdicts what they were read around (impact windows, a rotary axis) and return the
    failures: a noticeable difference on a key (on a rotary axis features are reported, not judged)."""
    failures: list[str] = []
    for verdict in report.verdicts:
        if spans and verdict.name in IMPACT_READ_FEATURES:
            verdict.note = ((verdict.note + "; ") if verdict.note else "") + (
                f"read outside {len(spans)} impact window{'s' if len(spans) > 1 else ''} "
                f"({IMPACT_WINDOW_S:g} s after each impact)")
        if rotary:      # the JNDs (N, mm, Weber fractions of key forces) are a key's; none is sourced for a knob
            verdict.note = ((verdict.note + "; ") if verdict.note else "") + ROTARY_FEATURE_NOTE
        elif verdict.noticeable:
            failures.append(f"{verdict.name}: a user could feel the difference"
                            + (f" ({verdict.note})" if verdict.note else ""))
    return failures


def unmodelled_inertia(a: np.ndarray, f_captured: np.ndarray, f_rendered: np.ndarray,
                       valid: np.ndarray) -> dict[str, float] | None:
    """The inertia whose force ``J a`` the capture holds and the rendering does not.

    Least squares of the residual ``r = F_captured - F_rendered`` on ``[a, 1]`` (``a`` the capture's
    acceleration, m/s^2 or rad/s^2; the constant takes a force sensor's offset):
    ``r = J a + c + e``. Returns ``inertia`` (kg or kg m^2), ``offset`` (N or N m), ``share`` (the part of
    the residual's mean square that ``J a`` accounts for, 0-1) and ``fit_percent_with_inertia`` (seed 003
    eq. 53 of the capture against ``F_rendered + J a``); None without acceleration to regress on.
    """
    sel = valid & np.isfinite(a) & np.isfinite(f_captured) & np.isfinite(f_rendered)
    if sel.sum() < 10:
        return None
    acc, resid = a[sel], f_captured[sel] - f_rendered[sel]
    acc_c = acc - acc.mean()
    denom = float(acc_c @ acc_c)
    if not denom > 0.0:
        return None
    inertia = float(acc_c @ (resid - resid.mean())) / denom        # normal equations of r = J a + c
    offset = float(resid.mean() - inertia * acc.mean())
    share = float(np.mean((inertia * acc) ** 2) / max(float(np.mean(resid ** 2)), 1e-300))
    with_inertia = fit_report(f_captured[sel], f_rendered[sel] + inertia * acc)["fit_percent"]
    without = fit_report(f_captured[sel], f_rendered[sel])["fit_percent"]
    return {"inertia": inertia, "offset": offset, "share": min(share, 1.0),
            "fit_percent_with_inertia": float(with_inertia), "fit_percent_without_inertia": float(without)}


def _inertia_note(inertia: dict[str, float] | None, axis: str) -> str:
    """Why the fit is low when unmodelled inertia is most of the residual (empty otherwise)."""
    if (inertia is None or inertia["inertia"] <= 0.0 or inertia["share"] < INERTIA_SHARE
            or not inertia["fit_percent_with_inertia"] >= max(inertia["fit_percent_without_inertia"] + INERTIA_GAIN,
                                                              INERTIA_FIT_MIN)):
        return ""
    rotary = axis == "rotary"
    what, unit = ("torque J alpha", "kg m^2") if rotary else ("force m a", "kg")
    return (f": the capture holds an inertial {what} that the rendering does not (the model carries no such "
            f"inertia, or the loop does not render one below {AUTO_PROXY_FRACTION:g} of the device's own); "
            f"{'J' if rotary else 'm'} = {inertia['inertia']:.3g} {unit} by least squares of the residual on the "
            f"capture's acceleration is {100 * inertia['share']:.0f} % of the residual's mean square, and with it "
            f"the fit would be {inertia['fit_percent_with_inertia']:.2f} %")


def _replay(model: Model, capture: Capture, t_cap: np.ndarray, x_cap: np.ndarray, speedup: float, rate_hz: float,
            max_force_N: float | None, seed: int, device: str | None = None
            ) -> tuple[RenderResult, np.ndarray, Any, float, dict[str, Any]]:
    """Drive the handle along ``x_cap`` (sped up) through the render loop, on the ideal device sized to the
    capture or through ``device`` as displayed; return the result, the replay times of the capture's samples,
    the device's parameters (its ``max_force_N``), the lead-in (s) and the ``device`` section."""
    safety = SafetyConfig()
    lead_s = safety.ramp_s + SETTLE_S
    t_replay = lead_s + t_cap / speedup
    duration_s = float(t_replay[-1]) + 2.0 / rate_hz
    if device is not None:
        result, spec, section = replay_on_device(model, device, t_replay, x_cap, duration_s, rate_hz, safety, seed,
                                                 capture.name)
        return result, t_replay, spec, lead_s, section
    f_peak = float(np.max(np.abs(capture.f_N[capture.valid]))) if capture.valid.any() else 1.0
    span = float(x_cap.max() - x_cap.min())
    base = SimParams()
    plant = replace(base, max_force_N=max_force_N if max_force_N is not None else max(base.max_force_N, 2.0 * f_peak),
                    max_force_rate_N_per_s=max(base.max_force_rate_N_per_s, 1000.0 * 2.0 * f_peak),
                    workspace_m=(float(x_cap.min()) - 0.2 * span - 1e-3, float(x_cap.max()) + 0.2 * span + 1e-3))
    user = probe_user(t_replay, x_cap, plant.handle_mass_kg, f"replay of {capture.name}")
    section = ideal_section()
    probe = capture_probe(capture.metadata)
    key = held_key(model) if probe is not None else None
    if key is not None:             # the key held as the capture's probe held it (probe_tip)
        rate_hz = held_rate_hz(probe, key.key_mass_kg, rate_hz)
        duration_s = float(t_replay[-1]) + 2.0 / rate_hz
        _check_replay(capture, duration_s, rate_hz, 1.0)
        model = held_by_tip(model, probe, 1.0 / rate_hz)
        plant = replace(plant, handle_mass_kg=probe.carriage_mass_kg, resolution_m=probe.encoder_resolution_m,
                        noise_m=0.0)
        ok = capture.valid                                       # a dropout's reading is no force the servo felt
        force = capture.f_N if ok.all() else np.interp(t_replay, t_replay[ok], capture.f_N[ok])
        reference = servo_reference(probe, t_replay, x_cap, force)
        user = position_user(np.concatenate([[0.0], t_replay]), np.concatenate([[reference[0]], reference]),
                             stiffness_N_per_m=probe.servo_k_Npm, damping_N_s_per_m=probe.servo_b_Nspm,
                             name=f"replay of {capture.name} by its probe")
        section = {**section, "note": HELD_NOTE, "probe": {**probe.to_dict(), "replay_rate_hz": rate_hz}}
    result = run_simulated(model, plant, user, rate_hz=rate_hz, duration_s=duration_s, safety=safety,
                           config=LoopConfig(rate_hz=rate_hz, realtime=False, display="off"), seed=seed)
    return result, t_replay, plant, lead_s, section


def _impacts(capture: Capture, t_cap: np.ndarray, f_ren: np.ndarray, valid: np.ndarray, result: RenderResult,
             t_replay: np.ndarray, th: Thresholds, axis: str, repeats: Sequence[Capture]) -> ImpactReport:
    """The impacts of either side and their verdict (:func:`assess_impacts`), with item 3 judged within the
    key's ``repeats`` too when given (:mod:`hapticam.render.verify.repeats`)."""
    report = assess_impacts(t_cap, capture.f_N, f_ren, valid, result, t_replay, th, axis == "rotary")
    if repeats and report.has_impacts:
        report.repeated = judge_repeated_onsets(np.asarray(report.captured_onsets_s),
                                                np.asarray(report.rendered_onsets_s),
                                                repeat_onsets(capture, repeats, th))
    return report


def _features(x_cap, x_ren, f_cap, f_ren, direction, valid, th, turning):
    """F-x curves of the capture and the rendering and the perceptual feature comparison. ``turning``: the
    samples in a reversal window, the same for both (the rendering replays the capture's trajectory)."""
    lo, hi = float(x_cap.min()), float(x_cap.max())
    # Bins of 10 um, or wider where the probe moves further than that between samples (fast excitations),
    # so that every bin holds samples of several passes.
    step_m = float(np.median(np.abs(np.diff(x_cap)))) if x_cap.size > 1 else 0.0
    bin_m = max(1e-5, (hi - lo) / 5000.0, 2.0 * step_m)
    curves_ref = fx_curves(x_cap[valid], f_cap[valid], direction[valid], bin_m, (lo, hi), turning[valid])
    curves_ren = fx_curves(x_ren[valid], f_ren[valid], direction[valid], bin_m, (lo, hi), turning[valid])
    feats_ref = key_features(curves_ref, th)
    feats_ren = key_features(curves_ren, th)
    return curves_ref, curves_ren, FeatureReport(feats_ref, feats_ren, compare_features(feats_ref, feats_ren, th))

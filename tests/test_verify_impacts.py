"""``hapticam verify`` on a press with impacts: the detector, the four items of the criterion against forces
whose answers are known in closed form, and the piano action's held-out press end to end.

A half-sine pulse ``A sin(pi (t - t0) / tau)`` over ``tau`` carries the impulse ``2 A tau / pi``; one full
period of a sine carries none.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from hapticam.capture import Capture
from hapticam.capture_io import load_capture
from hapticam.render.verify.features import Thresholds
from hapticam.render.verify.impacts import (CRITERION_FIT, CRITERION_IMPACTS, LEAD_S, MATCH_S, impact_onsets,
                                            judge_impacts, sharp_rises, window_impulse)

from conftest import SWITCH_FILES as REAL

TH = Thresholds()
LEVEL_N = 0.5                   # force JND there: 0.07 x 0.5 = 0.035 N


def half_sine(t: np.ndarray, t0: float, amplitude_N: float, tau_s: float) -> np.ndarray:
    on = (t >= t0) & (t <= t0 + tau_s)
    return np.where(on, amplitude_N * np.sin(np.pi * (t - t0) / tau_s), 0.0)


def impulse_of(amplitude_N: float, tau_s: float) -> float:
    return 2.0 * amplitude_N * tau_s / math.pi


def clock(rate_hz: float = 4000.0, duration_s: float = 1.0) -> np.ndarray:
    return np.arange(int(round(duration_s * rate_hz)) + 1) / rate_hz


def press_level(t: np.ndarray) -> np.ndarray:
    """0.5 N over the middle 0.4 s, rising at 2 N/s away from it on both sides (the fit's variance)."""
    return LEVEL_N + 2.0 * np.clip(np.abs(t - 0.5) - 0.2, 0.0, None)


# -- the detector -----------------------------------------------------------------------------------------
def test_a_knock_is_found_at_its_onset_and_its_impulse_is_the_closed_form() -> None:
    """A 6 N half-sine over 2 ms on a level that steps up by 0.3 N with it (a hammer's weight coming onto the
    key with its landing): one onset, at the pulse's start, and the window's impulse is 2 A tau / pi, the
    step being the baseline's."""
    t = clock(20_000.0)
    t0 = 0.4
    f = LEVEL_N + 0.3 * (t >= t0) + half_sine(t, t0, 6.0, 2e-3)
    onsets = impact_onsets(t, f, TH)
    assert onsets.size == 1 and abs(onsets[0] - t0) <= 1.0 / 20_000.0
    assert window_impulse(t, f, t0 - LEAD_S, t0, t0 + 0.05) == pytest.approx(impulse_of(6.0, 2e-3), rel=1e-3)


def test_a_knock_just_after_one_from_the_records_first_sample_is_the_same_impact() -> None:
    """Two rises 3 ms apart are one impact (``MATCH_S``): at the record's start, neither has an onset in it."""
    t = clock(20_000.0)
    f = LEVEL_N + half_sine(t, 0.0, 6.0, 2e-3) + half_sine(t, 3e-3, 6.0, 2e-3)
    assert impact_onsets(t, f, TH).size == 0
    later = LEVEL_N + half_sine(t, 0.4, 6.0, 2e-3) + half_sine(t, 0.403, 6.0, 2e-3)
    assert impact_onsets(t, later, TH).size == 1


@pytest.mark.parametrize("t0, found", [(0.0, 0), (0.5e-3, 1), (0.4, 1)])
def test_a_knock_rising_from_the_records_first_sample_has_no_onset_in_it(t0: float, found: int) -> None:
    """A record that starts mid-rise does not show where the rise began: no onset at its first sample; the
    same knock starting 0.5 ms in (ten flat samples before it) or later has its onset."""
    t = clock(20_000.0)
    f = LEVEL_N + half_sine(t, t0, 6.0, 2e-3)
    onsets = impact_onsets(t, f, TH)
    assert onsets.size == found
    if found:
        assert abs(onsets[0] - t0) <= 1.0 / 20_000.0


def test_a_vibration_about_the_level_rises_sharply_but_is_not_an_impact() -> None:
    """One period of a 3 N sine over 2 ms (a click jacket's ringing) rises as sharply as the half-sine of
    the same amplitude, but carries no net impulse: the half-sine is an impact, the full period is not."""
    t = clock()
    vibration = LEVEL_N + np.where((t >= 0.4) & (t <= 0.402), 3.0 * np.sin(2 * np.pi * (t - 0.4) / 2e-3), 0.0)
    assert len(sharp_rises(t, vibration, TH)[0]) == 1
    assert impact_onsets(t, vibration, TH).size == 0
    assert impact_onsets(t, LEVEL_N + half_sine(t, 0.4, 3.0, 1e-3), TH).size == 1


@pytest.mark.parametrize("jnds, found", [(4.0, 0), (6.0, 1)])
def test_a_knock_is_sharp_from_five_force_jnds_above_the_level(jnds: float, found: int) -> None:
    """Half-sines over 3 ms (peak within 1.5 ms) 4 and 6 force JNDs high at 0.5 N: only the second is a
    sharp rise, and it carries the impulse of an impact (0.4 mN s, above one JND over its 8 ms)."""
    t = clock()
    f = LEVEL_N + half_sine(t, 0.4, jnds * TH.force_jnd(LEVEL_N), 3e-3)
    assert len(sharp_rises(t, f, TH)[0]) == found
    assert impact_onsets(t, f, TH).size == found


def test_a_smooth_press_with_a_touch_a_bump_and_a_bottom_out_has_no_impact() -> None:
    """A 4 kHz press and release: the probe's touch (0.3 N within 1 ms), a tactile bump, a stiff bottom-out at
    the turning point (0.5 N over the last 0.4 mm, 0.1 s either side) and sensor noise: no sharp rise."""
    t = clock(4000.0, 2.0)
    x = np.where(t < 1.0, 4e-3 * t, 8e-3 - 4e-3 * t)
    f = np.clip((x - 0.1e-3) / 0.004e-3, 0.0, 1.0) * (0.3 + 60.0 * x)                   # the touch
    f += 0.15 * np.exp(-0.5 * ((x - 1.5e-3) / 0.2e-3) ** 2)                             # the bump
    f += np.where(x > 3.6e-3, 0.5 * (x - 3.6e-3) / 0.4e-3, 0.0)                        # the bottom-out
    f += np.random.default_rng(1).normal(0.0, 0.002, t.size)
    assert sharp_rises(t, f, TH)[0] == []
    assert impact_onsets(t, f, TH).size == 0


@pytest.mark.parametrize("path", REAL, ids=[p.stem for p in REAL])
def test_the_real_switch_captures_have_no_impact(path: Path) -> None:
    """Ten samples a second, 5 um apart: a rise within 2 ms cannot be seen, so the clicks of the Cherry MX
    Blue, the Box Jade and the Outemu Ocean are force steps of the curve (read as its bump and drop)."""
    cap = load_capture(path)
    assert impact_onsets(cap.t_s[cap.valid], cap.f_N[cap.valid], TH).size == 0


def test_the_simulated_clicky_switchs_click_is_a_vibration_not_an_impact() -> None:
    """At 4 kHz the click jacket striking its lip shows as a spike of more than 3 N above the level for one
    sample, then ringing: a sharp rise, with next to no net impulse."""
    from hapticam.demos.camera import _probe_capture

    cap = _probe_capture("clicky-switch", "triangle", seed=12)
    rises, residual, _jnd = sharp_rises(cap.t_s, cap.f_N, TH)
    assert rises and residual.max() > 3.0
    assert impact_onsets(cap.t_s, cap.f_N, TH).size == 0


# -- the four items against closed forms ------------------------------------------------------------------
T0 = 0.45                       # the captured knock
KNOCK_N, KNOCK_S = 8.0, 3e-3
THUMP_S = 0.03                  # the rendering's smooth thump


def _knock_and_thump(t: np.ndarray, ratio: float, delay_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Captured: an 8 N knock over 3 ms at T0; rendered: a half-sine thump over 30 ms ``delay_s`` later whose
    impulse is ``ratio`` times the knock's."""
    level = press_level(t)
    thump_N = ratio * impulse_of(KNOCK_N, KNOCK_S) * math.pi / (2.0 * THUMP_S)
    return level + half_sine(t, T0, KNOCK_N, KNOCK_S), level + half_sine(t, T0 + delay_s, thump_N, THUMP_S)


def _judge(t, f_cap, f_ren, rendered_onsets):
    return judge_impacts(t, f_cap, f_ren, np.ones(t.size, dtype=bool), impact_onsets(t, f_cap, TH),
                         np.asarray(rendered_onsets, dtype=float), TH)


def test_a_thump_with_the_knocks_impulse_5_ms_late_passes_every_item() -> None:
    t = clock(20_000.0)
    f_cap, f_ren = _knock_and_thump(t, ratio=1.10, delay_s=0.005)
    report = _judge(t, f_cap, f_ren, [T0 + 0.005])
    assert report.criterion == CRITERION_IMPACTS
    assert report.items() == {"fit_outside_impacts": True, "impulses": True, "onsets": True}
    (window,) = report.windows
    assert window.start_s == pytest.approx(T0 - LEAD_S, abs=1e-4)
    assert window.captured_impulse_Ns == pytest.approx(impulse_of(KNOCK_N, KNOCK_S), rel=1e-3)
    # the thump's last 0.04 % of impulse lies where it differs from the capture by less than a JND
    assert window.rendered_impulse_Ns == pytest.approx(1.10 * impulse_of(KNOCK_N, KNOCK_S), rel=2e-3)
    assert window.bound.startswith("15 %")
    assert report.fit_outside_percent == pytest.approx(100.0, abs=1e-3)      # the thump's tail is outside
    assert report.matched == [(pytest.approx(T0), pytest.approx(T0 + 0.005))]
    assert report.failures() == []


def test_an_impulse_30_percent_off_fails_item_2_only() -> None:
    t = clock(20_000.0)
    f_cap, f_ren = _knock_and_thump(t, ratio=1.30, delay_s=0.005)
    report = _judge(t, f_cap, f_ren, [T0 + 0.005])
    assert report.items() == {"fit_outside_impacts": True, "impulses": False, "onsets": True}
    assert report.windows[0].rendered_impulse_Ns == pytest.approx(1.30 * impulse_of(KNOCK_N, KNOCK_S), rel=2e-3)
    (failure,) = report.failures()
    assert failure.startswith("impulse of 1 of 1 impact window")


def test_an_onset_15_ms_late_is_unmatched_on_both_sides() -> None:
    t = clock(20_000.0)
    f_cap, f_ren = _knock_and_thump(t, ratio=1.0, delay_s=0.015)
    report = _judge(t, f_cap, f_ren, [T0 + 0.015])
    assert report.items()["onsets"] is False and report.matched == []
    assert report.unmatched_captured_s == [pytest.approx(T0)]
    assert report.unmatched_rendered_s == [pytest.approx(T0 + 0.015)]
    assert 0.015 > MATCH_S > 0.005


def test_an_onset_rising_from_zero_force_is_named_a_re_contact() -> None:
    """The key leaves the probe's tip for 10 ms (zero force) and strikes it again, a 2 N half-sine over 3 ms: on
    both sides, 15 ms apart, so both are unmatched; both are re-contacts and the failure says so. A knock on
    the level (the press's other onsets) is not one."""
    t = clock(20_000.0)
    t1 = 0.6

    def restrike(at_s: float) -> np.ndarray:
        f = press_level(t) + half_sine(t, at_s, 2.0, 3e-3)
        return np.where((t >= at_s - 0.01) & (t < at_s), 0.0, f)
    f_cap, f_ren = restrike(t1), restrike(t1 + 0.015)
    report = _judge(t, f_cap, f_ren, impact_onsets(t, f_ren, TH))
    assert report.unmatched_captured_s == [pytest.approx(t1, abs=1e-4)]
    assert report.unmatched_rendered_s == [pytest.approx(t1 + 0.015, abs=1e-4)]
    assert report.recontacts_s == report.unmatched_captured_s + report.unmatched_rendered_s
    (failure,) = [f for f in report.failures() if f.startswith("impact onsets")]
    assert failure.endswith(f"of these, re-contacts (rising from zero force: the probe meeting the key again) "
                            f"{t1:.3f}, {t1 + 0.015:.3f} s")
    f_cap, f_ren = _knock_and_thump(t, ratio=1.0, delay_s=0.015)
    knocked = _judge(t, f_cap, f_ren, [T0 + 0.015])
    assert knocked.unmatched_captured_s and knocked.recontacts_s == []
    assert "re-contact" not in " ".join(knocked.failures())


def test_a_rendered_impact_without_a_captured_one_fails_item_3() -> None:
    """The rendering knocks twice, the capture once: the second rendered onset has no captured one."""
    t = clock(20_000.0)
    f_cap, f_ren = _knock_and_thump(t, ratio=1.0, delay_s=0.005)
    f_ren = f_ren + half_sine(t, 0.55, 0.5, THUMP_S)
    report = _judge(t, f_cap, f_ren, [T0 + 0.005, 0.55])
    assert report.unmatched_captured_s == [] and report.unmatched_rendered_s == [pytest.approx(0.55)]
    assert report.items()["onsets"] is False
    assert any(f.startswith("impact onsets: 1 of 2 rendered without a captured one") for f in report.failures())


@pytest.mark.parametrize("thump_N, passes", [(0.1, True), (0.2, False)])
def test_a_small_impulse_within_one_jnd_times_the_windows_length(thump_N: float, passes: bool) -> None:
    """Captured: a 0.5 N knock over 2 ms (0.64 mN s); rendered: a thump over 20 ms of 0.1 N (1.27 mN s) or
    0.2 N (2.55 mN s). Both differ from the capture by far more than 15 %; the first by less than one force
    JND (0.035 N at 0.5 N) times the window's length (about 23 ms: 0.8 mN s), the second by more."""
    t = clock(20_000.0)
    f_cap = press_level(t) + half_sine(t, T0, 0.5, 2e-3)
    f_ren = press_level(t) + half_sine(t, T0, thump_N, 0.02)
    report = _judge(t, f_cap, f_ren, [T0])
    (window,) = report.windows
    assert window.captured_impulse_Ns == pytest.approx(impulse_of(0.5, 2e-3), rel=1e-3)
    assert abs(window.rendered_impulse_Ns - window.captured_impulse_Ns) > 0.15 * window.captured_impulse_Ns
    assert window.bound == "force JND x length"
    assert window.tolerance_Ns == pytest.approx(TH.force_jnd(LEVEL_N) * (window.end_s - window.start_s))
    assert window.passed is passes and report.items()["onsets"]


def test_the_fit_outside_the_windows_is_seed_003s_fit_of_the_samples_left() -> None:
    """A rendering 0.05 N above the capture everywhere: the windows of both onsets run their 150 ms and make
    one, and the fit outside it is 100 (1 - n d^2 / sum (F - mean F)^2) over the samples left, below 95 %."""
    t = clock(20_000.0)
    f_cap, f_ren = _knock_and_thump(t, ratio=1.0, delay_s=0.005)
    report = _judge(t, f_cap, f_ren + 0.05, [T0 + 0.005])
    (window,) = report.windows
    assert (window.start_s, window.end_s) == (pytest.approx(T0 - LEAD_S), pytest.approx(T0 + 0.005 - LEAD_S + 0.15))
    out = (t < window.start_s) | (t > window.end_s)
    expected = 100.0 * (1.0 - out.sum() * 0.05 ** 2 / np.sum((f_cap[out] - f_cap[out].mean()) ** 2))
    assert report.fit_outside_percent == pytest.approx(expected, rel=1e-9) and expected < 95.0
    assert report.items()["fit_outside_impacts"] is False
    assert report.failures()[0].startswith("fit outside the impact windows")


def test_a_press_without_impacts_keeps_the_plain_criterion() -> None:
    t = clock()
    report = judge_impacts(t, press_level(t), press_level(t) + 0.01, np.ones(t.size, dtype=bool),
                           np.zeros(0), np.zeros(0), TH)
    assert report.criterion == CRITERION_FIT and report.items() == {} and report.failures() == []


# -- verify end to end ------------------------------------------------------------------------------------
def _knocked_press() -> Capture:
    """A 4 kHz press of a linear key (0.3 N + 60 N/m over 4 mm) knocked once by 4 N over 1 ms at 0.5 s."""
    t = clock(4000.0, 2.0)
    x = np.where(t < 1.0, 4e-3 * t, 8e-3 - 4e-3 * t)
    return Capture.from_arrays(t, x, 0.3 + 60.0 * x + half_sine(t, 0.5, 4.0, 1e-3), name="<knocked press>")


def test_verify_applies_the_impact_criterion_when_only_the_capture_shows_an_impact() -> None:
    """The key's exact model against a press knocked once: the knock holds most of the force's variance
    (the plain fit, still reported, is far below 95 %); outside its window the fit is the key's, 100 %; the
    knock's impulse and onset have nothing rendered to match."""
    from hapticam.models import position_table
    from hapticam.render.verify import verify

    xs = np.linspace(0.0, 4e-3, 41)
    result = verify(position_table(xs, 0.3 + 60.0 * xs, dead_band_mps=1e-6), _knocked_press())
    assert result.fit_percent < 95.0
    impacts = result.impacts
    assert impacts.criterion == CRITERION_IMPACTS
    assert impacts.captured_onsets_s == [pytest.approx(0.5, abs=1e-3)] and impacts.rendered_onsets_s == []
    assert impacts.fit_outside_percent > 99.9
    assert impacts.items() == {"fit_outside_impacts": True, "impulses": False, "onsets": False}
    assert not result.passed and not any(f.startswith("fit ") for f in result.failures)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["fit_percent"] == result.fit_percent and "nrmse_fit_percent" in data
    assert data["impacts"]["criterion"] == "impacts" and data["impacts"]["items"]["features"] is True
    assert data["impacts"]["onsets"]["unmatched_captured_s"] == [pytest.approx(0.5, abs=1e-3)]
    # the knock as sampled at 4 kHz: four intervals of A sin over tau, A tau (1 + sqrt 2) / 4 (5 % below 2 A tau / pi)
    sampled = 4.0 * 1e-3 * (1.0 + math.sqrt(2.0)) / 4.0
    assert data["impacts"]["windows"][0]["captured_impulse_Ns"] == pytest.approx(sampled, rel=2e-3)


# -- the piano action's held-out press (``hapticam demo --target piano-key``) -----------------------------
WRONG = {"hammer 30 % heavier": ("hammer_mass_kg", lambda v: 1.3 * v),
         "let-off 0.5 mm early": ("let_off_m", lambda v: v - 0.5e-3),
         "lever 4 % longer": ("lever_ratio", lambda v: 1.04 * v),
         "preload 50 % larger": ("preload_N", lambda v: 1.5 * v)}


@pytest.fixture(scope="module")
def piano(tmp_path_factory):
    """The demo's identified model (hybrid key with friction and let-off bump, seed 0) and its held-out slow
    press and release (seed 1), with the time the press reaches the action's let-off."""
    from hapticam.demos.camera import CameraRun, _probe_capture
    from hapticam.demos.camera_hybrid import probe_and_identify
    from hapticam.world.targets import get_target

    out = tmp_path_factory.mktemp("piano")
    model = probe_and_identify(CameraRun(out_dir=out), out, "piano-key", 0, lambda _line: None)
    held_out = _probe_capture("piano-key", "triangle", seed=1)
    truth = get_target("piano-key")
    top = int(np.argmax(held_out.x_m))
    t_letoff = float(np.interp(truth.pretravel_m + truth.letoff_m, held_out.x_m[:top], held_out.t_s[:top]))
    return model, held_out, t_letoff


@pytest.fixture(scope="module")
def identified(piano):
    from hapticam.render.verify import verify

    return verify(piano[0], piano[1])


def _wrong(model, parameter: str, change):
    from hapticam.models.composite import Composite

    data = json.loads(json.dumps(model.to_dict()))
    key = next(c for c in data["components"] if c["kind"] == "hybrid-key")["parameters"]
    key[parameter] = change(key[parameter])
    return Composite.from_dict(data)


def _passed_checks(result, t_letoff: float) -> set[str]:
    """What a verification passed: item 1, the features, each captured onset's match, and the impulse of the
    window holding the hammer's landing (the first captured onset after let-off)."""
    impacts = result.impacts
    landing = min(t for t in impacts.captured_onsets_s if t > t_letoff)
    checks = {f"onset {c:.4f} s" for c, _r in impacts.matched}
    checks |= {"landing impulse" for w in impacts.windows if w.passed and w.start_s <= landing <= w.end_s}
    if impacts.items()["fit_outside_impacts"]:
        checks.add("fit outside impacts")
    if not result.features.noticeable:
        checks.add("features")
    return checks


def test_the_identified_piano_model_fits_outside_the_impacts_and_renders_the_landings_momentum(piano, identified):
    """The bare fit fails far below 95 % (the impacts' spikes through the probe's tip hold most of the
    variance); outside the impact windows the fit passes, every feature is the same, and the hammer's landing
    after let-off is rendered within 10 ms through the key held by the capture's probe tip, its carriage
    pulled by the probe's servo (render/verify/probe_tip.py). The landing window carries 89 % of the
    captured impulse (104.1 against 117.0 mN s, tolerance 15 %); a carriage following the captured positions
    took none of the key's rattle and gave 82 %."""
    _model, _held_out, t_letoff = piano
    result = identified
    assert result.device["probe"]["tip_k_Npm"] == 1e5   # the key held by the tip
    assert result.fit_percent < 50.0
    assert result.impacts.criterion == CRITERION_IMPACTS
    assert result.impacts.fit_outside_percent >= 95.0
    assert {"fit outside impacts", "features"} <= _passed_checks(result, t_letoff)
    landing = min(t for t in result.impacts.captured_onsets_s if t > t_letoff)
    window = next(w for w in result.impacts.windows if w.start_s <= landing <= w.end_s)
    assert window.rendered_impulse_Ns >= 0.85 * window.captured_impulse_Ns
    assert any(c == landing and abs(r - c) <= MATCH_S for c, r in result.impacts.matched)


@pytest.mark.xfail(strict=True, reason="strictly, one rendered onset of the hammer's late bounces in its backcheck "
                   "(1.954 s) has no captured one; the key does not repeat those (docs/verification.md)")
def test_the_identified_piano_model_passes_the_impact_criterion(identified):
    """The criterion's four items on the demo's held-out press. Known to fail: strict, so that a model that passes
    turns this test red until the mark is removed."""
    assert identified.impacts.items() == {"fit_outside_impacts": True, "impulses": True, "onsets": True}
    assert identified.passed


@pytest.fixture(scope="module")
def repeat_presses():
    """The demo's repeats of the held-out press: the key pressed 1 % slower and 1 % faster."""
    from hapticam.demos.camera import HELD_OUT_S, REPEAT_SPEEDS, _probe_capture

    return [_probe_capture("piano-key", "triangle", 1, HELD_OUT_S / speed) for speed in REPEAT_SPEEDS]


@pytest.fixture(scope="module")
def identified_within_repeats(piano, repeat_presses):
    from hapticam.render.verify import verify

    return verify(piano[0], piano[1], repeats=repeat_presses)


def test_the_identified_piano_model_passes_within_the_keys_repeat_presses(identified_within_repeats):
    """The demo's verdict: item 3 judged within the held-out press repeated 1 % slower and faster, the
    contact's k identified from the tap (with k at its prior, 5e6, one onset the key repeats was missed and
    one no press shows was rendered)."""
    result = identified_within_repeats
    assert result.impacts.deciding() == {"fit_outside_impacts": True, "impulses": True,
                                         "onsets_within_repeats": True}
    assert result.passed


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_piano_model_fails_a_check_the_identified_one_passes(piano, identified, name: str) -> None:
    from hapticam.render.verify import verify

    model, held_out, t_letoff = piano
    result = verify(_wrong(model, *WRONG[name]), held_out)
    assert not result.passed
    assert _passed_checks(identified, t_letoff) - _passed_checks(result, t_letoff), name


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_piano_model_fails_within_the_keys_repeats_an_item_the_identified_one_passes(
        piano, repeat_presses, identified_within_repeats, name: str) -> None:
    """The demo's criterion (item 3 within the repeats) still tells each wrong model: it fails the fit outside
    the windows, an impulse or a feature, which the identified model passes."""
    from hapticam.render.verify import verify

    model, held_out, _t_letoff = piano
    result = verify(_wrong(model, *WRONG[name]), held_out, repeats=repeat_presses)
    judged = {**identified_within_repeats.impacts.deciding(),
              "features": not identified_within_repeats.features.noticeable}
    wrong = {**result.impacts.deciding(), "features": not result.features.noticeable}
    assert not result.passed
    assert any(judged[item] and not wrong[item] for item in ("fit_outside_impacts", "impulses", "features")), wrong


def test_a_flagged_landing_counts_as_an_impact_only_if_its_pulse_carries_momentum():
    """The model flags three landings; the rendered force holds a 9 N pulse of 1 ms at the first, a 0.05 N bump
    of 4 ms at the second and nothing at the third. Only the first carries momentum above one force JND times
    its window's length (the test a captured impact passes), so only it is a rendered impact."""
    from hapticam.render.verify.features import Thresholds
    from hapticam.render.verify.impacts import felt_flagged

    t = np.arange(0.0, 1.0, 2.5e-4)
    f = np.full(t.size, 0.5)
    f[(t >= 0.3) & (t < 0.301)] += 9.0
    f[(t >= 0.6) & (t < 0.604)] += 0.05
    felt = felt_flagged(t, f, np.array([0.3, 0.6, 0.8]), Thresholds())
    assert felt.tolist() == pytest.approx([0.3], abs=2.5e-4)

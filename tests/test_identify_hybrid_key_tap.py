"""The contact's stiffness from a tap (identify/hybrid_key/tap.py, world/key_tap.py): the key held past let-off
and rocked by micrometres on the probe's resting tip, against targets whose felt is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hapticam.errors import UsageError
from hapticam.identify.hybrid_key.fit import _contact_stiffness
from hapticam.identify.hybrid_key.params import PARAMETERS, classify, prepare
from hapticam.identify.hybrid_key.tap import contact_stiffness, held_samples
from hapticam.world.excitations import StepHold, Triangle
from hapticam.world.key_tap import KeyTap
from hapticam.world.piano_key import HybridKeyTarget
from hapticam.world.probe import probe

RATE_HZ = 10_000.0
TIP = (1e5, 5.0)                         # the resting pad's stiffness (N/m) and alpha (s/m)


def target_with_felt(k_Npm: float) -> HybridKeyTarget:
    """A hybrid key resting on the probe's pad, its felt k (N/m^1.5) given, alpha 3 s/m."""
    return HybridKeyTarget(key_mass_kg=0.06, hammer_mass_kg=0.007, lever_ratio=5.0, contact_k_Npm=k_Npm,
                           contact_b_Nspm=3.0 * k_Npm, let_off_m=8.8e-3, check_drop_m=12e-3, repetition_m=1e-3,
                           keybed_m=10e-3, keybed_k_Npm=5e4, keybed_b_Nspm=20.0, string_height_m=0.06,
                           return_spring_Npm=5.0, preload_N=0.2, pad_Npm=TIP[0], pad_alpha_spm=TIP[1],
                           overdrive_m=0.1e-3)


def tapped(target: HybridKeyTarget):
    """A frictionless key tapped at 1 um: the hammer stays on a felt up to 5e6 N/m^1.5 (world/key_tap.py)."""
    tap = KeyTap(0.0, 9.4e-3, amplitude_m=1e-6)
    cap = probe(target, tap, sample_rate_hz=RATE_HZ, seed=2)
    return cap, prepare("tap", "tap", cap.t_s, cap.x_m, cap.f_N, (TIP[0], 0.0))


def values_of(target: HybridKeyTarget, k_start: float) -> dict[str, float]:
    """The target's own parameters as the fit's mapping, its felt's k replaced by ``k_start``."""
    values = {n: float(getattr(target, n)) for n in PARAMETERS if hasattr(target, n)}
    values.update(contact_k_Npm=k_start, contact_b_Nspm=3.0 * k_start, jack_pickup_m=0.0, hammer_rail=0.0)
    return values


def test_the_tap_is_smooth_and_holds_the_key_at_its_depth():
    """Velocity and acceleration are the position's derivatives; the key is pressed from and returned to
    ``lo_m``, and the sweep stays within its amplitude about the depth."""
    tap = KeyTap(0.0, 9.4e-3, 2e-6)
    t = np.linspace(0.0, tap.duration_s, 620_001)
    dt = t[1] - t[0]
    x, v, a = tap.position(t), tap.velocity(t), tap.acceleration(t)
    assert np.max(np.abs(np.gradient(x, dt) - v)) <= 1e-3 * np.max(np.abs(v))
    assert np.max(np.abs(np.gradient(v, dt) - a)) <= 0.02 * np.max(np.abs(a))
    assert x[0] == 0.0 and x[-1] == pytest.approx(0.0, abs=1e-12)
    held = (t > 1.0) & (t < 5.0)
    assert np.max(np.abs(x[held] - 9.4e-3)) <= 2e-6 + 1e-12 and np.ptp(x[held]) > 3.9e-6
    with pytest.raises(UsageError):
        KeyTap(0.0, 9.4e-3, amplitude_m=0.0)
    with pytest.raises(UsageError):
        KeyTap(0.0, 9.4e-3, sweep_s=0.1, taper_s=0.1)


def test_a_tap_is_told_by_its_motion_and_a_slow_press_or_a_held_key_is_not():
    cap, prep = tapped(target_with_felt(1e6))
    assert classify(cap.t_s, cap.x_m) == "tap"
    held = StepHold((0.0,) + (9.4e-3,) * 12 + (0.0,), hold_s=0.5, rise_s=0.05)     # held still, no rocking
    still = probe(target_with_felt(1e6), held, sample_rate_hz=RATE_HZ, seed=2)
    assert classify(still.t_s, still.x_m) != "tap"
    assert classify(cap.t_s, cap.x_m, kind="step") != "tap"           # a known kind is not overruled
    press = Triangle(center_m=4.7e-3, amplitude_m=4.7e-3, period_s=4.0, cycles=1)
    slow = probe(target_with_felt(1e6), press, sample_rate_hz=RATE_HZ, seed=2)
    assert classify(slow.t_s, slow.x_m) == "slow"
    idx = held_samples(prep)
    assert idx.size > 3.5 * RATE_HZ and np.ptp(prep.x_m[idx]) < 5e-6


@pytest.mark.parametrize("k_true", [7e5, 2e6, 5e6])
def test_the_tap_recovers_the_felts_stiffness_of_a_key_of_the_models_own_physics(k_true: float):
    """The target is the model itself resting on the pad: from a start at the prior (5e6) the fit finds the
    felt's k within 3 % (a landing's spike through the pad does not tell it: docs/verification.md)."""
    target = target_with_felt(k_true)
    _cap, prep = tapped(target)
    k, se, note = contact_stiffness([(prep, prep.f_N)], values_of(target, 5e6), {}, TIP)
    assert k == pytest.approx(k_true, rel=0.03), note
    assert 0.0 < se < 0.05 * k
    assert "tap" in note and "%" in note


def test_a_k_at_the_edge_of_the_range_or_a_tap_the_model_does_not_fit_is_not_taken():
    target = target_with_felt(1e6)
    _cap, prep = tapped(target)
    shuffled = np.random.default_rng(0).permutation(prep.f_N)        # a force the key on the tip cannot give
    k, se, note = contact_stiffness([(prep, shuffled)], values_of(target, 5e6), {}, TIP)
    assert math.isnan(k) and math.isnan(se) and "not taken" in note
    soft = target_with_felt(3e4)                                     # below the range searched
    _cap, prep = tapped(soft)
    k, se, note = contact_stiffness([(prep, prep.f_N)], values_of(soft, 5e6), {}, TIP)
    assert math.isnan(k) and "not taken" in note


def test_without_the_resting_tip_k_stays_at_its_prior_and_the_notes_say_why():
    target = target_with_felt(1e6)
    _cap, prep = tapped(target)
    values, se, fixed, notes = values_of(target, 5e6), {"contact_b_Nspm": 0.1 * 5e6}, {"contact_k_Npm": "prior"}, []
    assert not _contact_stiffness([prep], values, se, fixed, notes, {}, None)
    assert values["contact_k_Npm"] == 5e6 and "contact_k_Npm" in fixed and "contact_k_Npm" not in se
    assert "not fitted" in notes[-1]
    assert _contact_stiffness([prep], values, se, fixed, notes, {}, TIP)
    assert values["contact_k_Npm"] == pytest.approx(1e6, rel=0.03)
    assert values["contact_b_Nspm"] == pytest.approx(3.0 * values["contact_k_Npm"])     # alpha kept
    assert "contact_k_Npm" not in fixed and math.isfinite(se["contact_k_Npm"])
    k = values["contact_k_Npm"]                                       # b = alpha k, alpha's error 0.1 s/m
    assert se["contact_b_Nspm"] == pytest.approx(math.hypot(0.1 * k, 3.0 * se["contact_k_Npm"]))


def test_the_command_reads_the_resting_tips_stiffness_and_alpha_from_the_captures():
    """``identify hybrid-key`` takes the tip from the captures' probe metadata, all naming the same one."""
    from hapticam.commands.identify_hybrid_key import _resting_tip

    cap, _prep = tapped(target_with_felt(1e6))
    assert _resting_tip([cap.metadata, cap.metadata]) == TIP
    assert _resting_tip([cap.metadata, {}]) is None

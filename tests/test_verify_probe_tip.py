"""verify holds a hybrid key as the capture's probe held the real one (render/verify/probe_tip.py): the key a
body on the probe's one-sided pad (the hybrid key's pad coupling), the handle the probe's carriage. References:
closed forms of the pad-held key (its static deflection under its own load, its rest on the back rail once the
pad leaves it) and the reading of a capture's probe from its metadata or a capture file's header."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hapticam.errors import ModelValidationError
from hapticam.models.composite import Composite
from hapticam.models.contact import Contact
from hapticam.models.friction import Friction
from hapticam.models.hybrid_key.model import EV_LANDING, FLAG_IMPACT, HybridKey
from hapticam.render.verify.probe_tip import CaptureProbe, capture_probe, held_by_tip

G = 9.81
KEY = dict(key_mass_kg=0.05, return_spring_Npm=20.0, preload_N=0.18, hammer_mass_kg=0.007, lever_ratio=5.0,
           contact=dict(law="hunt-crossley", k_Npm=5e6, b_Nspm=1e7, n=1.5), let_off_m=8.8e-3,
           check_drop_m=11.5e-3, repetition_m=0.1e-3, keybed_m=10e-3, keybed_k_Npm=5e4, keybed_b_Nspm=50.0,
           hammer_rail=True, jack_pickup_m=0.3e-3, touch_m=0.2e-3)
PROBE = {"carriage_mass_kg": 0.5, "kp_Npm": 7.9e5, "kd_Nspm": 880.0, "encoder_resolution_m": 1e-7,
         "tip": {"law": "hunt-crossley", "k_Npm": 1e5, "alpha_spm": 5.0, "one_sided": True}}


def pad_key(**extra) -> HybridKey:
    return HybridKey(**KEY, coupling_k_Npm=1e5, coupling_pad_alpha_spm=5.0, **extra)


def test_the_capture_names_its_probe_in_its_metadata_or_in_a_files_header_text():
    want = CaptureProbe(1e5, 5.0, 0.5, 7.9e5, 880.0, 1e-7)
    assert capture_probe({"probe": PROBE}) == want
    assert capture_probe({"probe": json.dumps(PROBE)}) == want          # load_capture keeps it as JSON text
    assert capture_probe({}) is None
    assert capture_probe({"probe": {**PROBE, "tip": {**PROBE["tip"], "one_sided": False}}}) is None   # bolted
    assert capture_probe({"probe": {k: v for k, v in PROBE.items() if k != "kp_Npm"}}) is None


def test_a_pad_needs_a_coupling_stiffness_and_no_coupling_damper():
    with pytest.raises(ModelValidationError, match="coupling_pad_alpha_spm"):
        HybridKey(**KEY, coupling_pad_alpha_spm=5.0)
    with pytest.raises(ModelValidationError, match="coupling_pad_alpha_spm"):
        HybridKey(**KEY, coupling_k_Npm=1e5, coupling_b_Nspm=3.0, coupling_pad_alpha_spm=5.0)
    assert pad_key().key_damping_Nspm == 0.0                 # a physical pad: no key damper of the model's
    assert HybridKey.from_dict(pad_key().to_dict()).coupling_pad_alpha_spm == 5.0


def test_the_held_key_carries_its_own_load_and_rests_on_its_rail_when_the_pad_leaves_it():
    """Pressed slowly to 2 mm the pad carries the key's springs and the hammer's weight through the lever (the
    kinematic key's force there); drawn back above the key's surface it leaves the key (force 0), which rests
    at ``touch_m``."""
    key = pad_key()
    dt = 1e-4
    t = np.arange(0.0, 3.0, dt)
    x = np.interp(t, [0.0, 0.2, 1.2, 1.8, 2.8, 3.0], [0.0, 0.0, 2e-3, 2e-3, 0.0, 0.0])
    f = key.simulate(x, dt).force_N
    hold = (t > 1.5) & (t < 1.8)
    want = KEY["return_spring_Npm"] * 2e-3 + KEY["preload_N"] + 5.0 * 0.007 * G
    assert np.median(f[hold]) == pytest.approx(want, rel=1e-3)
    assert np.all(f[(t > 2.9)] == 0.0)                                     # the pad has left the key
    kinematic = HybridKey(**KEY).simulate(x, dt).force_N
    assert np.median(kinematic[hold]) == pytest.approx(want, rel=1e-3)


def test_the_key_leaves_a_pad_that_stops_and_strikes_it_again():
    """A pad pressing the key at 50 mm/s that stops dead: the key runs on, the force drops to 0 while it is
    away, and it comes back onto the pad (a second rise): the tip's bounce the captures hold."""
    key = pad_key()
    dt = 1e-4
    t = np.arange(0.0, 0.4, dt)
    x = np.clip((t - 0.05) * 0.05, 0.0, 1.5e-3)
    f = key.simulate(x, dt).force_N
    after = t > 0.05 + 1.5e-3 / 0.05
    assert np.any(f[after] == 0.0)
    first_zero = np.flatnonzero(after & (f == 0.0))[0]
    assert np.any(f[first_zero:] > 0.1)


def test_held_by_tip_puts_the_keys_friction_and_bump_on_the_key_and_leaves_out_transients():
    probe = capture_probe({"probe": PROBE})
    friction = Friction(law="coulomb-viscous", Fc_N=0.1, b_v_Nspm=0.0, v_eps_mps=2e-3, active_from_m=0.2e-3)
    bump = Contact(law="linear", x_c_m=8.4e-3, k_Npm=300.0, b_Nspm=0.0, n=1.0, side=1)
    coupled = HybridKey(**KEY, coupling_k_Npm=1000.0, coupling_b_Nspm=1.5)
    model = Composite([coupled, friction, bump])
    model.transients = ("a landing pulse",)
    held = held_by_tip(model, probe, 1e-4)
    assert isinstance(held, HybridKey) and held.transients == ()
    assert held.coupling_k_Npm == 1e5 and held.coupling_pad_alpha_spm == 5.0 and held.coupling_b_Nspm == 0.0
    # the key's friction over the width its 50 g need at a 0.1 ms tick: F_c dt / m_k = 0.2 mm/s, not the handle's
    assert held.held_key_forces == pytest.approx((0.1, 0.1 * 1e-4 / 0.05, 300.0, 8.4e-3))
    assert held_by_tip(Composite([friction, bump]), probe, 1e-4) is None          # no key to hold


def test_a_hammer_landing_on_its_rail_is_logged_but_is_no_impact_of_the_keys():
    """Released past the kink where the backcheck meets the rail, the hammer's landings there are events of
    the model's, but the key feels none of them (lever 0): FLAG_IMPACT marks only the landings it feels, as
    the transients' ``hybrid_key_impact`` reads them."""
    plain = {k: v for k, v in KEY.items() if k != "touch_m"}
    key = HybridKey(**plain)
    dt = 1e-4
    t = np.arange(0.0, 6.0, dt)
    x = np.interp(t, [0.0, 2.0, 2.3, 5.0, 6.0], [0.0, 9.9e-3, 9.9e-3, 0.0, 0.0])
    trace = key.simulate(x, dt)
    landings = trace.event_tick[trace.event_code == EV_LANDING]
    kink = plain["jack_pickup_m"] + plain["check_drop_m"] / plain["lever_ratio"]
    on_rail = landings[(t[landings] > 2.3) & (x[landings] < kink - 0.05e-3)]
    felt = landings[(t[landings] > 2.0) & (t[landings] < 2.3)]
    assert felt.size and np.all(trace.flags[felt] & FLAG_IMPACT)
    assert on_rail.size and np.all((trace.flags[on_rail] & FLAG_IMPACT) == 0)


def test_the_exact_key_replayed_through_its_capture_s_probe_reproduces_that_capture():
    """Ground truth for the held replay: a hybrid key target resting on the probe's one-sided pad, probed by
    the simulated probe (a slow press past let-off into the keybed and back), verified with its own exact
    model. The replay's carriage is the probe's servo pulled along the reference reconstructed from the
    capture (servo_reference), at 10 kHz (held_rate_hz): plain fit 98.6 %. A carriage following the captured
    positions gave 98.0 % (it does not answer the model's force, and the key's rattle on the tip outlasts the
    target's), a replica pulled along the captured positions 89.8 % (it answers the key's force a second
    time)."""
    from hapticam.render.verify import verify
    from hapticam.render.verify.impacts import MATCH_S
    from hapticam.world.excitations import Triangle
    from hapticam.world.piano_key import HybridKeyTarget
    from hapticam.world.probe import probe

    target = HybridKeyTarget(key_mass_kg=0.06, hammer_mass_kg=0.007, lever_ratio=5.0, contact_k_Npm=1e6,
                             contact_b_Nspm=3e6, let_off_m=8.8e-3, check_drop_m=12e-3, repetition_m=1e-3,
                             keybed_m=10e-3, keybed_k_Npm=5e4, keybed_b_Nspm=20.0, string_height_m=0.06,
                             return_spring_Npm=5.0, preload_N=0.2, pad_Npm=1e5, pad_alpha_spm=5.0,
                             overdrive_m=0.1e-3)
    capture = probe(target, Triangle(center_m=5.15e-3, amplitude_m=5.15e-3, period_s=4.0, cycles=1),
                    sample_rate_hz=4000.0, seed=1)
    result = verify(target.model(), capture)
    assert result.device["probe"]["tip_k_Npm"] == 1e5               # held by the capture's pad
    assert result.device["probe"]["replay_rate_hz"] == 10000.0
    assert result.fit_percent >= 98.5
    assert not result.features.noticeable
    landings = [c for c in result.impacts.captured_onsets_s if c > 1.0]
    offsets = {c: r - c for c, r in result.impacts.matched}
    assert len(landings) >= 8
    assert all(abs(offsets[c]) <= 2.5e-3 for c in landings[:-1] if c in offsets), offsets
    assert sum(c in offsets for c in landings) >= len(landings) - 2         # soft late ones may fall out
    assert all(abs(o) <= MATCH_S for o in offsets.values())


def test_the_servo_reference_is_the_command_of_a_servo_that_moved_the_carriage_so():
    """Closed form: a servo (m, K_p, K_d) moving the carriage at a constant speed against a constant force F
    has its reference F / K_p ahead (the damper sees equal speeds). And the reference rebuilt from a servo's
    simulated motion against a ringing force is that servo's command with its feed-forward ``m a_cmd`` folded
    in (the offset d with ``K_d d' + K_p d = m a_cmd``)."""
    from hapticam.render.verify.probe_tip import servo_reference

    probe = capture_probe({"probe": PROBE})
    t = np.arange(0.0, 0.2, 1e-4)
    x = 1e-3 + 5e-3 * t                                        # 5 mm/s against 0.4 N
    reference = servo_reference(probe, t, x, np.full(t.size, 0.4))
    np.testing.assert_allclose(reference - x, 0.4 / probe.servo_k_Npm, rtol=1e-9, atol=1e-15)
    # a servo tracking a smooth command against a ringing force, integrated finely, sampled at 10 kHz
    m, kp, kd, h = probe.carriage_mass_kg, probe.servo_k_Npm, probe.servo_b_Nspm, 1e-6
    tf = np.arange(0.0, 0.1, h)
    command = 2e-3 * np.sin(2 * np.pi * 5.0 * tf)
    v_cmd, a_cmd = np.gradient(command, h), np.gradient(np.gradient(command, h), h)
    force = 0.3 + 0.2 * np.sin(2 * np.pi * 180.0 * tf)
    x, v, d = np.empty(tf.size), 0.0, np.zeros(tf.size)
    x[0] = command[0] - force[0] / kp
    for i in range(tf.size - 1):
        u = m * a_cmd[i] + kd * (v_cmd[i] - v) + kp * (command[i] - x[i])
        v += h * (u - force[i]) / m
        x[i + 1] = x[i] + h * v
        d[i + 1] = d[i] + h * (m * a_cmd[i] - kp * d[i]) / kd      # feed-forward as an offset of the reference
    every = slice(0, None, 100)
    rebuilt = servo_reference(probe, tf[every], x[every], force[every])
    settled = tf[every] > 0.02
    error = rebuilt - (command + d)[every]
    assert np.max(np.abs(error[settled])) < 0.02e-6                # within a fifth of the encoder's step

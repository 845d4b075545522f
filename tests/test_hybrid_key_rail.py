"""The hybrid key with a hammer rail (models/hybrid_key/geometry.py): the hammer rests on a fixed rail
whenever the jack or the backcheck is below it, the jack picks it up after the key's lost motion, and the
escaped backcheck keeps its whole drop. References: the quasi-static closed forms of the geometry's
docstring (the key's springs plus the hammer's weight through the lever where the jack or backcheck
carries it, nothing of it where the rail does), for the key driven directly and for the coupled key.
"""

from __future__ import annotations

import numpy as np
import pytest

from hapticam.errors import ModelValidationError
from hapticam.models.files import load_model, save_model
from hapticam.models.hybrid_key.model import EV_LANDING, HybridKey
from hapticam.models.passivity import check_passivity

G = 9.81
BASE = dict(key_mass_kg=0.05, return_spring_Npm=20.0, preload_N=0.18, hammer_mass_kg=0.007, lever_ratio=5.0,
            contact=dict(law="hunt-crossley", k_Npm=5e6, b_Nspm=1e7, n=1.5), let_off_m=8.8e-3,
            check_drop_m=11.5e-3, repetition_m=0.1e-3, keybed_m=10e-3, keybed_k_Npm=5e4, keybed_b_Nspm=50.0,
            hammer_rail=True, jack_pickup_m=0.1e-3)
WEIGHT = 5.0 * 0.007 * G                                   # r m_h g at the key front (N)
KINK = 0.1e-3 + 11.5e-3 / 5.0                               # x_j + d_c / r: the backcheck meets the rail (m)


def slow_stroke(model: HybridKey, dt: float, seconds: float = 8.0):
    """A triangle 0 -> 9.9 mm -> 0 over ``seconds``; returns t, x and the model's force."""
    t = np.arange(0.0, seconds, dt)
    x = np.where(t < seconds / 2, t / (seconds / 2), 2.0 - t / (seconds / 2)) * 9.9e-3
    return t, x, model.simulate(x, dt).force_N


def levels(t, x, f, seconds: float = 8.0):
    """Median of the force minus the key's springs on each stretch of the stroke (N)."""
    e = f - (BASE["return_spring_Npm"] * x + BASE["preload_N"])
    press, release = t < seconds / 2, t > seconds / 2 + 0.3
    return {"press before the pickup": np.median(e[press & (x > 0.01e-3) & (x < 0.08e-3)]),
            "press on the jack": np.median(e[press & (x > 1e-3) & (x < 8e-3)]),
            "release on the backcheck": np.median(e[release & (x > KINK + 0.2e-3) & (x < 8e-3)]),
            "release on the rail": np.median(e[release & (x > 0.3e-3) & (x < KINK - 0.2e-3)])}


EXPECTED = {"press before the pickup": 0.0, "press on the jack": WEIGHT, "release on the backcheck": WEIGHT,
            "release on the rail": 0.0}


def test_key_driven_directly_carries_the_weight_only_off_the_rail():
    t, x, f = slow_stroke(HybridKey(**BASE), 1e-4)
    assert np.isfinite(f).all()
    got = levels(t, x, f)
    for name, want in EXPECTED.items():
        assert got[name] == pytest.approx(want, abs=2e-3), name


def test_release_step_lies_where_the_backcheck_meets_the_rail():
    t, x, f = slow_stroke(HybridKey(**BASE), 1e-4)
    e = f - (BASE["return_spring_Npm"] * x + BASE["preload_N"])
    rel = np.flatnonzero((t > 4.3) & (x > 0.3e-3) & (x < 8e-3))     # past the landings after let-off
    first_on_rail = rel[np.flatnonzero(e[rel] < 0.5 * WEIGHT)[0]]
    assert x[first_on_rail] == pytest.approx(KINK, abs=5e-6)      # one sample is 2.5 um of travel


def test_coupled_key_at_1kHz_gives_the_same_levels_away_from_the_steps():
    """The coupled key's preload is r m_h g whatever the rail (hybrid_key_coupling, passivity (3)), so with
    the hammer on the rail the key sits F_0 / k_c = 0.34 mm deeper than the handle: the weight leaves over
    that much handle travel below the kink, and with a pickup closer than that to rest it is on from the
    start. Away from the steps the levels are the direct key's."""
    coupled = HybridKey(**{**BASE, "coupling_k_Npm": 1000.0, "coupling_b_Nspm": 1.5})
    t, x, f = slow_stroke(coupled, 1e-3)
    assert np.isfinite(f).all()
    e = f - (BASE["return_spring_Npm"] * x + BASE["preload_N"])
    release = t > 4.3
    offset = WEIGHT / 1000.0                                        # F_0 / k_c (m)
    assert np.median(e[(t < 4.0) & (x > 1e-3) & (x < 8e-3)]) == pytest.approx(WEIGHT, abs=0.01)
    assert np.median(e[release & (x > KINK + 0.2e-3) & (x < 8e-3)]) == pytest.approx(WEIGHT, abs=0.01)
    assert np.median(e[release & (x > 0.3e-3) & (x < KINK - offset - 0.2e-3)]) == pytest.approx(0.0, abs=0.01)
    ramp = release & (x > KINK - offset) & (x < KINK)
    assert np.all((e[ramp] > -0.01) & (e[ramp] < WEIGHT + 0.01))    # the weight leaves over the offset


def test_without_the_rail_the_release_has_one_closing_level():
    plain = {k: v for k, v in BASE.items() if k not in ("hammer_rail", "jack_pickup_m")}
    t, x, f = slow_stroke(HybridKey(**plain), 1e-4)
    got = levels(t, x, f)
    slope = 5.0 - 11.5e-3 / (8.8e-3 - 0.1e-3)                      # r - d_c / (x_l - x_r)
    assert got["release on the rail"] == pytest.approx(slope * 0.007 * G, abs=2e-3)
    e = f - (BASE["return_spring_Npm"] * x + BASE["preload_N"])
    assert np.median(e[(t < 4.0) & (x > 1e-3) & (x < 8e-3)]) == pytest.approx(WEIGHT, abs=2e-3)   # on the jack


def test_rail_fields_round_trip_and_old_files_are_unchanged(tmp_path):
    key = HybridKey(**BASE)
    path = tmp_path / "k.yaml"
    save_model(path, key)
    back = load_model(path)
    back = back[0] if isinstance(back, tuple) else back
    assert back.hammer_rail and back.jack_pickup_m == BASE["jack_pickup_m"]
    np.testing.assert_array_equal(back.params_block(), key.params_block())
    plain = HybridKey(**{k: v for k, v in BASE.items() if k not in ("hammer_rail", "jack_pickup_m")})
    assert "hammer_rail" not in plain.to_dict() and "jack_pickup_m" not in plain.to_dict()
    assert check_passivity(key).passive


@pytest.mark.parametrize("changes, field", [
    ({"hammer_rail": False}, "jack_pickup_m"),                   # lost motion with nothing to hold the hammer
    ({"repetition_m": 0.5e-3}, "repetition_m"),                  # the jack would come back above the hammer
    ({"hammer_rail": "yes"}, "hammer_rail"),
    ({"jack_pickup_m": 9e-3}, "jack_pickup_m"),                  # beyond let-off
    ({"touch_m": 0.2e-3}, "touch_m"),                            # the jack would lift the hammer before the touch
    ({"hammer_rail": False, "jack_pickup_m": 0.0, "touch_m": 0.0}, "touch_m"),
])
def test_bad_rail_geometry_is_refused_with_the_field_named(changes, field):
    with pytest.raises(ModelValidationError, match=field):
        HybridKey(**{**BASE, **changes})


@pytest.mark.parametrize("coupling", [None, (1000.0, 1.5)])
def test_nothing_is_felt_above_the_keys_surface(coupling):
    """With ``touch_m`` the force is 0 above the surface and the key's own at it: a finger above a key feels
    nothing, on it the key's preload."""
    extra = {} if coupling is None else {"coupling_k_Npm": coupling[0], "coupling_b_Nspm": coupling[1]}
    key = HybridKey(**{**BASE, "touch_m": 0.05e-3, **extra})
    dt = 1e-4 if coupling is None else 1e-3
    t = np.arange(0.0, 2.0, dt)
    x = 0.1e-3 * np.sin(2 * np.pi * 1.0 * t) - 0.02e-3               # in and out of touch, below the pickup
    f = key.simulate(x, dt).force_N
    above, on = x < 0.05e-3, x > 0.06e-3
    assert np.all(f[above] == 0.0)
    # on it, the key's preload; the coupled key's preload offset (0.34 mm) takes it to the pickup (0.05 mm
    # below the surface), which carries part of the hammer's weight
    on_key = np.median(f[on] - BASE["return_spring_Npm"] * x[on])
    if coupling is None:
        assert on_key == pytest.approx(BASE["preload_N"], abs=1e-3)
    else:
        assert BASE["preload_N"] - 1e-3 < on_key < BASE["preload_N"] + WEIGHT + 1e-3
    back = HybridKey.from_dict(key.to_dict())
    assert back.touch_m == 0.05e-3


@pytest.mark.parametrize("frequency_hz", [5.0, 10.0])
def test_coupled_key_oscillated_across_the_pickup_absorbs_energy(frequency_hz):
    """A handle oscillating +-0.05 mm about the jack's pickup at 1 kHz: the coupled key does net positive work
    on the user's side (it absorbs energy). A preload that followed the rail (0 on it, r m_h g on the jack)
    switched with the key behind the handle and gained 4-9 uJ per cycle here."""
    key = HybridKey(**{**BASE, "coupling_k_Npm": 1000.0, "coupling_b_Nspm": 1.5})
    dt = 1e-3
    t = np.arange(0.0, 10.0 + dt / 2, dt)
    x = BASE["jack_pickup_m"] + 0.05e-3 * np.sin(2 * np.pi * frequency_hz * t)
    f = key.simulate(x, dt, v_mps=2 * np.pi * frequency_hz * 0.05e-3 * np.cos(2 * np.pi * frequency_hz * t)).force_N
    start = int(round(2.0 / dt))
    work_per_cycle = np.sum(f[start + 1:] * np.diff(x[start:])) / (8.0 * frequency_hz)
    assert work_per_cycle > 0.0


def test_let_off_onto_the_rail_logs_the_hammers_speed_off_the_check():
    """With a check drop below the rail at let-off (d_c > r (x_l - x_j)) the escaped drive point lies on the
    rail and stands still: the rigid hammer leaves it at the jack's speed r v."""
    key = HybridKey(**{**BASE, "jack_pickup_m": 2e-3, "repetition_m": 2e-3, "check_drop_m": 40e-3,
                       "contact": dict(law="rigid", restitution=0.3)})
    dt = 1e-4
    x = np.arange(0.0, 0.03, dt) * 0.5                         # 0.5 m/s through let-off at 8.8 mm
    trace = key.simulate(x, dt)
    from hapticam.models.hybrid_key.layout import EV_LIFTOFF
    first = trace.event_speed_mps[trace.event_code == EV_LIFTOFF][0]
    assert first == pytest.approx(5.0 * 0.5, rel=1e-6)


def test_without_a_surface_far_positions_are_clamped_not_zeroed():
    plain = HybridKey(**{k: v for k, v in BASE.items() if k not in ("hammer_rail", "jack_pickup_m")})
    f = plain.simulate(np.array([-1e31, -1e31]), 1e-3).force_N
    assert np.all(f < -100.0)                                  # the return spring at the clamped -10 m


def _landing_impulse_mNs(model, hold_m: float, dt: float = 1e-3) -> tuple[float, float]:
    """Press the key to ``hold_m`` in 1 s and hold it there; return the impulse (mN s) the handle receives
    from the hammer's fastest landing on, beyond the resting force (by the hammer's momentum, r m_h v), and
    that landing's speed v (m/s)."""
    t = np.arange(0.0, 3.0, dt)
    x = np.minimum(t, 1.0) * hold_m
    trace = model.simulate(x, dt)
    landing = trace.event_code == EV_LANDING
    t_land = trace.event_time_s[landing][np.argmax(trace.event_speed_mps[landing])]
    after = t >= t_land - dt
    return (float(np.sum(trace.force_N[after] - trace.force_N[-1]) * dt * 1e3),
            float(np.max(trace.event_speed_mps[landing])))


@pytest.mark.parametrize("past_let_off_m", [0.5e-3, 1.3e-3])
def test_the_coupled_key_passes_the_hammers_landing_momentum_to_the_handle(past_let_off_m: float) -> None:
    """Held past let-off, the hammer lands on the backcheck at about 0.57 m/s: the kinematic key hands the
    handle about r m_h v = 28 mN s, and so must the key coupled for a 1 kHz device. The landing swings the
    simulated key up to 1.7 mm off the handle, back above let-off into the closing check: read at the key,
    its lever (0.56 for 5) passes the handle 17.3 mN s (9.2 held 0.5 mm past let-off); read where the handle
    holds the key (hybrid_key_geometry), all of it. A stiff 1e5 N/m coupling is the reference that never
    strays."""
    import dataclasses

    from hapticam.world.piano_key import HybridKeyTarget
    from hapticam.models.hybrid_key.coupling import coupling_for_device

    target = HybridKeyTarget()
    hold = target.let_off_m + past_let_off_m
    kc, bc = coupling_for_device(2.0, 1000.0, target.key_mass_kg + target.lever_ratio ** 2 * target.hammer_mass_kg)
    kinematic, speed = _landing_impulse_mNs(target.model(), hold)
    stiff, _ = _landing_impulse_mNs(dataclasses.replace(target, pad_Npm=1e5, pad_Nspm=15.0).model(coupled=True), hold)
    coupled, _ = _landing_impulse_mNs(dataclasses.replace(target, pad_Npm=kc, pad_Nspm=bc).model(coupled=True), hold)
    assert kinematic == pytest.approx(target.lever_ratio * target.hammer_mass_kg * speed * 1e3, rel=0.15)
    assert stiff == pytest.approx(kinematic, rel=0.01)
    assert coupled == pytest.approx(kinematic, rel=0.1)


PLAIN = {k: v for k, v in BASE.items() if k not in ("hammer_rail", "jack_pickup_m")}


def test_coupled_key_without_the_rail_releases_on_the_direct_keys_closing_level():
    """The closing check on a simulated key (hybrid_key_geometry): a slow release feels the direct key's
    lever r - d_c / (x_l - x_r) between let-off and repetition and gets the weight r m_h g back at x_r.
    With the coupling's preload held at r m_h g in the check, the key rested 0.14 mm deeper than the
    handle there and the weight came back at 2.81 mm for 3."""
    x_r = 3e-3
    coupled = HybridKey(**{**PLAIN, "repetition_m": x_r, "coupling_k_Npm": 1000.0, "coupling_b_Nspm": 1.5})
    t, x, f = slow_stroke(coupled, 1e-3)
    assert np.isfinite(f).all()
    e = f - (BASE["return_spring_Npm"] * x + BASE["preload_N"])
    closing = (5.0 - 11.5e-3 / (8.8e-3 - x_r)) * 0.007 * G                  # (r - d_c / (x_l - x_r)) m_h g
    release = np.flatnonzero((t > 4.3) & (x < 8e-3))
    assert np.median(e[release][x[release] > x_r + 0.5e-3]) == pytest.approx(closing, abs=5e-3)
    assert np.median(e[release][x[release] < x_r - 0.5e-3]) == pytest.approx(WEIGHT, abs=5e-3)
    back = release[np.flatnonzero(e[release] > 0.5 * (closing + WEIGHT))[0]]
    assert x[back] == pytest.approx(x_r, abs=2e-5)
    assert np.median(e[(t < 4.0) & (x > 1e-3) & (x < 8e-3)]) == pytest.approx(WEIGHT, abs=5e-3)


@pytest.mark.parametrize("center_mm", [8.8, 6.0, 0.2])
@pytest.mark.parametrize("amplitude_mm", [0.05, 0.3])
def test_coupled_key_oscillated_in_and_out_of_the_closing_check_absorbs_energy(center_mm, amplitude_mm):
    """Pressed past let-off, then a handle oscillating +-0.05 and +-0.3 mm at 5 Hz across let-off, inside
    the closing check and about the repetition point: the coupled key does net positive work on the user's
    side (it absorbs energy). (A check read at the handle everywhere, its drop moved by the handle under a key
    resting 0.44 mm deeper, gives 0.5-4.4 uJ per cycle back across let-off.)"""
    key = HybridKey(**{**PLAIN, "coupling_k_Npm": 1000.0, "coupling_b_Nspm": 1.5})
    dt, f_hz, center = 1e-3, 5.0, center_mm * 1e-3
    t = np.arange(0.0, 12.0 + dt / 2, dt)
    down = np.clip(t / 0.5, 0.0, 1.0) * 9.5e-3                          # past let-off onto the backcheck
    back = np.clip((t - 1.0) / 1.0, 0.0, 1.0) * (9.5e-3 - center)        # to the centre
    x = down - back + amplitude_mm * 1e-3 * np.sin(2 * np.pi * f_hz * np.clip(t - 2.0, 0.0, None))
    f = key.simulate(x, dt).force_N
    assert np.isfinite(f).all()
    start = int(round(4.0 / dt))
    work_per_cycle = np.sum(f[start + 1:] * np.diff(x[start:])) / ((t[-1] - 4.0) * f_hz)
    assert work_per_cycle > 0.0

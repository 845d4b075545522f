"""The simulated probe, its excitations and the physical targets, each against a reference.

References: closed forms (spring laws, quasi-static force balances, the free-flight parabola, sweep
frequency), SciPy (Hermite profiles, a Hunt-Crossley impact integrated by solve_ivp), the real switch
captures in tests/data/switch_curves (resemblance), and the sensor model's statistics.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from hapticam.cli import main
from hapticam.world.excitations import (Multisine, Sine, StepHold, SweptSine, Triangle, make_excitation)
from hapticam.world.keyswitch import Keyswitch
from hapticam.world.physics import hermite_profile, hermite_profile_np, profile_slopes
from hapticam.world.piano_key import FLAG_BACKCHECK, FLAG_CONTACTS, FLAG_ENGAGED, FLAG_STRING
from hapticam.world.probe import ProbeSpec, probe, simulate
from hapticam.world.targets import TARGETS, describe, get_target
from hapticam.errors import UsageError
from hapticam.capture import Capture
from hapticam.capture_io import load_capture

from conftest import SWITCH_DIR as SWITCH_CURVES

#: a noiseless, unquantised probe: for physics checks against closed forms
EXACT = ProbeSpec(force_noise_N=0.0, force_bias_N=0.0, force_resolution_N=0.0, encoder_resolution_m=0.0)


def _press_release(target, period_s=4.0, spec=EXACT):
    """Slow triangular press and release over the target's travel: run, press slice, release slice."""
    lo, hi = target.probe_range_m()
    run = simulate(target, Triangle(0.5 * (lo + hi), 0.5 * (hi - lo), period_s=period_s), spec)
    turn = int(np.argmax(run.x_true_m))
    return run, slice(0, turn + 1), slice(turn, None)


# -- excitations ------------------------------------------------------------------------------------

def test_swept_sine_instantaneous_frequency_goes_1_to_4_hz():
    ex = SweptSine(center_m=0.025, amplitude_m=0.025)                  # seed 001: 90 s, 1-4 Hz, 50 mm
    t = np.arange(0.0, ex.duration_s, 1.0 / 4000.0)
    x = ex.position(t)
    assert x[0] == pytest.approx(0.0, abs=1e-15) and ex.velocity(0.0) == 0.0   # starts at rest, low end
    assert x.min() >= -1e-12 and x.max() <= 0.05 + 1e-12
    # instantaneous frequency from successive maxima of x: 1 / (t_{k+1} - t_k) at the midpoint
    peaks = np.nonzero((x[1:-1] > x[:-2]) & (x[1:-1] >= x[2:]))[0] + 1
    tp = t[peaks]
    f_est = 1.0 / np.diff(tp)
    f_true = ex.frequency(0.5 * (tp[1:] + tp[:-1]))
    assert np.max(np.abs(f_est / f_true - 1.0)) < 0.01
    assert ex.frequency(0.0) == 1.0 and ex.frequency(90.0) == 4.0
    assert 1.0 < f_est[0] < 1.05 and 3.95 < f_est[-1] < 4.0             # first and last cycles
    assert len(peaks) == pytest.approx(0.5 * (1.0 + 4.0) * 90.0, abs=1.5)   # cycles = mean frequency x T


def test_log_sweep_frequency_is_exponential():
    ex = SweptSine(0.0, 1.0, 1.0, 4.0, duration_s=10.0, log_sweep=True)
    assert ex.frequency(5.0) == pytest.approx(2.0)                        # geometric mean at mid-time
    t = np.linspace(0, 10, 200001)
    phase_rate = np.gradient(np.unwrap(np.arctan2(ex.velocity(t) / ex.frequency(t) / (2 * np.pi),
                                                  -ex.position(t))), t) / (2 * np.pi)
    assert np.median(np.abs(phase_rate[100:-100] / ex.frequency(t[100:-100]) - 1.0)) < 1e-3


@pytest.mark.parametrize("ex", [
    SweptSine(0.01, 0.01, duration_s=5.0), SweptSine(0.0, 0.01, 0.5, 3.0, 4.0, log_sweep=True),
    Sine(0.002, 0.002, 3.0, 2.0), Multisine(0.01, 0.005, duration_s=4.0, seed=3),
    StepHold((0.0, 0.002, 0.001), hold_s=0.5, rise_s=0.1)])
def test_velocity_and_acceleration_are_derivatives_of_position(ex):
    t = np.linspace(0.0, ex.duration_s, 400001)
    h = t[1] - t[0]
    x, v, a = ex.position(t), ex.velocity(t), ex.acceleration(t)
    dv = (x[2:] - x[:-2]) / (2 * h)
    da = (v[2:] - v[:-2]) / (2 * h)
    assert np.max(np.abs(dv - v[1:-1])) <= 1e-4 * np.abs(v).max()
    jumps = []                                                            # where acceleration may jump
    if isinstance(ex, StepHold):                                          # raised-cosine transitions
        for i in range(1, len(ex.levels_m)):
            t0 = i * ex.hold_s + (i - 1) * ex.rise_s
            jumps += [t0, t0 + ex.rise_s]
    if isinstance(ex, Multisine):                                         # ends of the fade-in and fade-out
        jumps += [ex.ramp_s, ex.duration_s - ex.ramp_s]
    smooth = np.ones(t.size - 2, dtype=bool)
    for tj in jumps:
        smooth &= np.abs(t[1:-1] - tj) > 2 * h
    assert np.max(np.abs(da - a[1:-1])[smooth]) <= 1e-4 * np.abs(a).max()


def test_triangle_is_constant_speed_press_and_release():
    ex = Triangle(0.002, 0.002, period_s=4.0, cycles=2)
    t = np.linspace(0, ex.duration_s, 8001)
    x, v = ex.position(t), ex.velocity(t)
    assert ex.duration_s == 8.0 and x.min() == pytest.approx(0.0) and x.max() == pytest.approx(0.004)
    assert set(np.round(np.abs(v[:-1]) / 0.002, 12)) == {1.0}            # 4 A / P = 2 mm/s
    assert x[np.searchsorted(t, 2.0)] == pytest.approx(0.004) and x[np.searchsorted(t, 4.0)] == pytest.approx(0.0)


def test_multisine_tones_phases_and_bounds():
    ex = Multisine(0.01, 0.004, f_min_hz=1.0, f_max_hz=4.0, n_tones=4, duration_s=20.0, seed=7, ramp_s=0.0)
    t = np.arange(0.0, 20.0, 1.0 / 1000.0)
    x = ex.position(t) - 0.01
    assert np.abs(x).max() <= 0.004 + 1e-12 and np.abs(x).max() > 0.9 * 0.004
    spec = np.abs(np.fft.rfft(x)) / x.size
    f = np.fft.rfftfreq(x.size, 1e-3)
    tones = np.round(ex.frequencies_hz / 0.05).astype(int)                # 0.05 Hz bins: tones on bins
    assert np.allclose(f[tones], [1.0, 2.0, 3.0, 4.0])
    others = np.delete(spec, tones)
    assert others.max() < 1e-9 * spec[tones].min()
    np.testing.assert_allclose(np.angle(np.fft.rfft(x)[tones]), np.angle(np.exp(1j * ex.phases_rad)), atol=1e-6)
    again = Multisine(0.01, 0.004, f_min_hz=1.0, f_max_hz=4.0, n_tones=4, duration_s=20.0, seed=7, ramp_s=0.0)
    other = Multisine(0.01, 0.004, f_min_hz=1.0, f_max_hz=4.0, n_tones=4, duration_s=20.0, seed=8, ramp_s=0.0)
    assert np.array_equal(again.phases_rad, ex.phases_rad) and not np.allclose(other.phases_rad, ex.phases_rad)
    ramped = Multisine(0.01, 0.004, duration_s=5.0, seed=1)
    assert ramped.position(0.0) == pytest.approx(0.01) and ramped.velocity(0.0) == pytest.approx(0.0)
    assert ramped.metadata()["kind"] == "multisine" and len(ramped.metadata()["phases_rad"]) == 16


def test_step_hold_levels_and_metadata_round_trip_json():
    ex = StepHold((0.0, 0.001, 0.003), hold_s=0.5, rise_s=0.1)
    assert ex.duration_s == pytest.approx(1.7)
    assert ex.position([0.25, 0.85, 1.5]) == pytest.approx([0.0, 0.001, 0.003])
    assert ex.position(0.5 + 0.05) == pytest.approx(0.0005)               # half way through the first rise
    for e in (ex, SweptSine(0, 1), Sine(0, 1), Triangle(0, 1), Multisine(0, 1, duration_s=2)):
        meta = json.loads(json.dumps(e.metadata()))
        assert meta["kind"] in ("sweep", "sine", "triangle", "multisine", "step")
        assert meta["duration_s"] == pytest.approx(e.duration_s)


@pytest.mark.parametrize("build", [
    lambda: SweptSine(0.0, -1.0), lambda: SweptSine(0.0, 1.0, duration_s=float("nan")),
    lambda: SweptSine(0.0, 1.0, 2.0, 2.0, log_sweep=True), lambda: Sine(0.0, 1.0, frequency_hz=0.0),
    lambda: Triangle(0.0, 1.0, cycles=0), lambda: Triangle(0.0, 1.0, cycles=1.5),
    lambda: Multisine(0.0, 1.0, f_min_hz=5.0, f_max_hz=1.0), lambda: Multisine(0.0, 1.0, n_tones=0),
    lambda: Multisine(0.0, 1.0, duration_s=1.0, ramp_s=0.6), lambda: StepHold(()),
    lambda: StepHold((0.0, float("inf"))), lambda: Sine(0.0, 1.0, duration_s=1e7),
    lambda: make_excitation("chirp", 0.0, 1.0), lambda: make_excitation("sine", 1.0, 0.0)])
def test_bad_excitations_raise_usage_error(build):
    with pytest.raises(UsageError):
        build()


# -- profiles and the registry ----------------------------------------------------------------------

def test_hermite_profile_matches_scipy_and_never_overshoots():
    ks = np.array([0.0, 0.4e-3, 1.1e-3, 1.7e-3, 2.0e-3, 2.9e-3])
    kd = np.array([0.3e-3, 0.25e-3, 0.21e-3, 0.32e-3, 0.31e-3, 0.0])
    km = profile_slopes(ks, kd)
    s = np.linspace(-0.5e-3, 3.5e-3, 2001)
    ref_d, ref_dd = hermite_profile_np(s, ks, kd)
    got = np.array([hermite_profile(v, ks, kd, km, ks.size) for v in s])
    np.testing.assert_allclose(got[:, 0], ref_d, rtol=0, atol=1e-15)
    np.testing.assert_allclose(got[:, 1], ref_dd, rtol=0, atol=1e-12)
    for i in range(ks.size - 1):                                          # monotone between knots
        inside = (s >= ks[i]) & (s <= ks[i + 1])
        lo, hi = sorted((kd[i], kd[i + 1]))
        assert got[inside, 0].min() >= lo - 1e-18 and got[inside, 0].max() <= hi + 1e-18
    fd = np.gradient(got[:, 0], s)                                       # d' is the derivative of d
    assert np.max(np.abs(fd - got[:, 1])[5:-5]) < 5e-3 * np.abs(got[:, 1]).max()


def test_registry_names_describe_and_overrides():
    assert {"clicky-switch", "linear-switch", "piano-key", "tactile-switch", "test-device", "toggle-switch",
            "knob", "friction-key"} <= set(TARGETS)
    lines = describe()
    assert set(lines) == set(TARGETS) and all(len(v) > 20 and "\n" not in v for v in lines.values())
    assert len(set(lines.values())) == len(lines)
    for name in TARGETS:
        target = get_target(name)
        assert target.name == name and target.__doc__ and "Physics" in type(target).__doc__
        lo, hi = target.probe_range_m()
        assert 0.0 <= lo < hi < (7.0 if getattr(target, "axis", "linear") == "rotary" else 0.1)   # a turn, or 10 cm
        json.dumps(target.to_dict())
    assert get_target("tactile-switch", preload_N=0.35).preload_N == 0.35
    assert get_target("tactile-switch").preload_N != 0.35                 # factories return fresh targets
    for bad in (dict(bogus=1.0), dict(preload_N=-1.0), dict(stem_cam_s_m=(2e-3, 1e-3), stem_cam_d_m=(0, 0))):
        with pytest.raises(UsageError):
            get_target("linear-switch", **bad)
    with pytest.raises(UsageError, match="known targets"):
        get_target("harpsichord")


# -- the probe: servo and sensor --------------------------------------------------------------------

def test_servo_lag_is_load_over_stiffness():
    """Quasi-static tracking error e = x - x_cmd equals -F / K_p (the servo's documented stiffness)."""
    target = get_target("test-device")
    run = simulate(target, Triangle(0.025, 0.025, period_s=10.0), EXACT)
    e = run.x_true_m - run.x_cmd_m
    away = (np.abs(run.t_s - 5.0) > 0.1) & (run.t_s > 0.1) & (run.t_s < 9.9)   # away from the corners
    # e = -F / K_p + (K_d / K_p^2) dF/dt + ...: the second term stays below 3e-8 m here (dF/dt < 14 N/s)
    np.testing.assert_allclose(e[away], -run.force_true_N[away] / EXACT.kp_Npm, rtol=0, atol=3e-8)
    assert np.max(np.abs(e)) > 30e-6                                      # the load is felt: 36 N / 7.9e5 N/m
    assert EXACT.kp_Npm == pytest.approx(0.5 * (2 * math.pi * 200.0) ** 2)


def test_servo_tracks_free_motion_and_sample_rate_is_settable():
    target = get_target("toggle-switch", plunger_Npm=0.0, pivot_friction_N=0.0)
    spec = dataclasses.replace(EXACT, sample_rate_hz=1000.0)
    run = simulate(target, Sine(0.003, 0.002, frequency_hz=4.0, duration_s=1.0), spec)
    assert run.t_s.size == 1001 and np.allclose(np.diff(run.t_s), 1e-3)
    assert spec.substeps == 40 and spec.dt_s == pytest.approx(25e-6)
    # the only load is the 2 g lever's inertia: the servo lags by F / K_p (3 nm) and otherwise tracks
    # a 4 mm stroke within 10 nm, the remainder being the discretisation of the servo loop
    e = run.x_true_m - run.x_cmd_m
    later = run.t_s > 0.05                                                # after the start-up transient
    assert np.max(np.abs(run.force_true_N[later])) == pytest.approx(2e-3 * 0.002 * (2 * math.pi * 4.0) ** 2,
                                                                    rel=0.05)
    assert np.max(np.abs(e + run.force_true_N / spec.kp_Npm)) < 1e-8


def test_force_sensor_noise_bias_quantisation_and_encoder():
    spec = ProbeSpec(force_noise_N=3e-3, force_bias_N=0.02, force_resolution_N=1e-3, encoder_resolution_m=1e-6)
    target = get_target("test-device")
    run = simulate(target, StepHold((0.01,), hold_s=5.0), spec, seed=11)
    err = run.force_N - run.force_true_N
    n = err.size
    assert np.allclose(run.force_N / 1e-3, np.round(run.force_N / 1e-3), atol=1e-6)
    assert err.mean() == pytest.approx(0.02, abs=4 * 3e-3 / math.sqrt(n))
    assert err.std() == pytest.approx(math.sqrt(3e-3 ** 2 + 1e-3 ** 2 / 12), rel=0.03)
    assert np.allclose(run.x_m / 1e-6, np.round(run.x_m / 1e-6), atol=1e-6)
    assert np.max(np.abs(run.x_m - run.x_true_m)) <= 0.5e-6 + 1e-15
    same = simulate(target, StepHold((0.01,), hold_s=5.0), spec, seed=11)
    other = simulate(target, StepHold((0.01,), hold_s=5.0), spec, seed=12)
    assert np.array_equal(same.force_N, run.force_N) and not np.array_equal(other.force_N, run.force_N)


def test_probe_returns_a_capture_with_metadata(tmp_path):
    target = get_target("linear-switch")
    cap = probe(target, make_excitation("sine", *target.probe_range_m(), 0.5), sample_rate_hz=2000.0, seed=3)
    assert isinstance(cap, Capture) and cap.n == 1001 and cap.sample_rate_hz == pytest.approx(2000.0)
    meta = cap.metadata
    assert meta["target"]["target"] == "linear-switch" and meta["excitation"]["kind"] == "sine"
    assert meta["probe"]["sample_rate_hz"] == 2000.0 and meta["seed"] == 3
    from hapticam.capture_io import save_capture
    save_capture(tmp_path / "c.csv", cap)
    back = load_capture(tmp_path / "c.csv")
    assert back.n == cap.n and np.allclose(back.f_N, cap.f_N)
    excitation = back.metadata["excitation"]
    assert (json.loads(excitation) if isinstance(excitation, str) else excitation)["kind"] == "sine"


def test_bad_probe_settings_raise():
    for bad in (dict(sample_rate_hz=0.0), dict(bandwidth_hz=float("nan")), dict(force_noise_N=-1.0),
                dict(sample_rate_hz=2e6)):
        with pytest.raises(UsageError):
            ProbeSpec(**bad)
    with pytest.raises(UsageError):
        simulate(object(), Sine(0, 1))


# -- the seed 001 test device -----------------------------------------------------------------------

def test_test_device_quasi_static_force_is_its_spring_law():
    target = get_target("test-device")
    run = simulate(target, Triangle(0.025, 0.025, period_s=20.0), EXACT)   # 5 mm/s
    xd, vd = run.observable("device_x_m"), run.observable("device_v_mps")
    steady = (np.abs(run.t_s - 10.0) > 0.1) & (run.t_s > 0.1) & (run.t_s < 19.9)   # away from the corners
    expected = target.spring_force(xd) + target.damping_Nspm * vd + target.coulomb_N * np.sign(vd)
    assert np.max(np.abs(run.force_true_N - expected)[steady]) < 1e-5
    np.testing.assert_allclose(run.observable("spring_force_N"), target.spring_force(xd), rtol=1e-12)
    # the stiffness law is the derivative of the spring law: constant over ranges, rapid in between
    x = np.linspace(0.0, 0.05, 50001)
    np.testing.assert_allclose(np.gradient(target.spring_force(x), x)[1:-1], target.stiffness(x)[1:-1],
                               rtol=1e-3)
    assert target.stiffness(0.010) == 200.0 and target.stiffness(0.025) == 600.0
    assert target.stiffness(0.045) == 1400.0


def test_test_device_dynamic_force_is_m_a_plus_b_v_plus_spring_plus_friction():
    target = get_target("test-device")
    run = simulate(target, Sine(0.025, 0.02, frequency_hz=3.0, duration_s=1.0), EXACT)
    xd, vd = run.observable("device_x_m"), run.observable("device_v_mps")
    a = np.gradient(vd, run.t_s)
    expected = (target.mass_kg * a + target.damping_Nspm * vd + target.spring_force(xd)
                + target.coulomb_N * np.sign(vd))
    moving = np.abs(vd) > 0.01
    moving[:40] = moving[-40:] = False
    assert np.sqrt(np.mean((run.force_true_N - expected)[moving] ** 2)) < 0.01
    assert np.max(np.abs(target.mass_kg * a)) > 1.5                      # inertia matters at 3 Hz


# -- keyswitches ------------------------------------------------------------------------------------

def _real_branches(name):
    d = np.genfromtxt(SWITCH_CURVES / f"{name}.csv", delimiter=",", comments="#", skip_header=4)
    t, x, f = d.T
    keep = f > -0.5                                                       # HX711 dropouts (folder README)
    x, f = x[keep], f[keep]
    turn = int(np.argmax(x))
    return (x[:turn + 1], f[:turn + 1]), (x[turn:][::-1], f[turn:][::-1])


def _bin_median(grid, x, f, half_width=0.01e-3):
    order = np.argsort(x)
    xs, fs = x[order], f[order]
    lo = np.searchsorted(xs, grid - half_width)
    hi = np.searchsorted(xs, grid + half_width)
    return np.array([np.median(fs[a:b]) if b > a else np.nan for a, b in zip(lo, hi)])


def _resemblance_rms(target, real):
    run, press, release = _press_release(target)
    (xd, fd), (xu, fu) = _real_branches(real)
    lo, hi = target.pretravel_m + 0.1e-3, target.pretravel_m + target.travel_m - 0.05e-3
    g = np.arange(lo, hi, 0.02e-3)
    # median per 0.02 mm bin, as the real curve is read: a click's sub-millisecond transient is a few
    # samples of the simulated curve and none of the real one (10 samples per second)
    sim_d = _bin_median(g, run.x_true_m[press], run.force_true_N[press])
    sim_u = _bin_median(g, run.x_true_m[release], run.force_true_N[release])
    real_d = np.interp(g, xd, fd)
    real_u = np.interp(g, np.maximum.accumulate(xu), fu)
    return float(np.sqrt(np.mean(np.r_[sim_d - real_d, sim_u - real_u] ** 2)))


@pytest.mark.parametrize("name,real,tol", [("linear-switch", "Cherry-MX-Red", 0.012),
                                           ("tactile-switch", "Gateron-Brown", 0.012),
                                           ("clicky-switch", "Cherry-MX-Blue-RGB", 0.035)])
def test_switches_resemble_their_real_captures(name, real, tol):
    rms = _resemblance_rms(get_target(name), real)
    assert rms < tol, f"{name} vs {real}: RMS {rms:.4f} N"


def test_linear_switch_static_force_is_preload_plus_k_x():
    target = get_target("linear-switch")
    run, press, release = _press_release(target)
    s_d, f_d = run.observable("stem_m")[press], run.force_true_N[press]
    s_u, f_u = run.observable("stem_m")[release][::-1], run.force_true_N[release][::-1]
    s = np.linspace(0.2e-3, target.travel_m - 0.2e-3, 200)
    mean = 0.5 * (np.interp(s, s_d, f_d) + np.interp(s, np.maximum.accumulate(s_u), f_u))
    half = 0.5 * (np.interp(s, s_d, f_d) - np.interp(s, np.maximum.accumulate(s_u), f_u))
    ref_mean = 0.5 * (target.quasi_static_force(s, +1) + target.quasi_static_force(s, -1))
    ref_half = 0.5 * (target.quasi_static_force(s, +1) - target.quasi_static_force(s, -1))
    np.testing.assert_allclose(mean, ref_mean, atol=2e-3)
    np.testing.assert_allclose(half, ref_half, atol=2e-3)
    beyond_leaf = s > target.stem_cam_s_m[-1]                             # leaf off the stem: a plain spring
    np.testing.assert_allclose(mean[beyond_leaf], target.preload_N + target.spring_Npm * s[beyond_leaf], atol=1e-3)
    np.testing.assert_allclose(half[beyond_leaf], target.housing_friction_N, atol=1e-3)
    # bottom-out: the force rises steeply past the travel
    assert run.force_true_N.max() > target.preload_N + target.spring_Npm * target.travel_m + 0.4


def test_tactile_switch_bump_and_drop_follow_the_closed_form():
    target = get_target("tactile-switch")
    run, press, _ = _press_release(target)
    s, f = run.observable("stem_m")[press], run.force_true_N[press]
    grid = np.linspace(0.1e-3, target.travel_m - 0.2e-3, 800)
    sim = np.interp(grid, s, f)
    ref = target.quasi_static_force(grid, +1)
    assert np.sqrt(np.mean((sim - ref) ** 2)) < 2e-3
    i_peak = int(np.argmax(np.where(grid < 2.2e-3, sim, -np.inf)))
    i_valley = i_peak + int(np.argmin(sim[i_peak:np.searchsorted(grid, 2.9e-3)]))
    assert grid[i_peak] == pytest.approx(grid[np.argmax(np.where(grid < 2.2e-3, ref, -np.inf))], abs=0.03e-3)
    drop = sim[i_peak] - sim[i_valley]
    assert drop > 0.1                                                     # a bump with a drop (~0.12 N)
    assert drop == pytest.approx(ref[i_peak] - ref[i_valley], abs=5e-3)
    linear = Keyswitch.linear()
    _, lp, _ = _press_release(linear)
    assert np.all(np.diff(linear.quasi_static_force(grid, +1)[::40]) > -0.01)   # no drop on the linear switch


def test_clicky_switch_clicks_once_and_has_hysteresis():
    target = get_target("clicky-switch")
    run, press, release = _press_release(target)
    clicks = run.observable("clicks")
    assert clicks[press][-1] == 1 and clicks[-1] == 1                     # one click, on the press
    i_click = int(np.argmax(clicks > 0))
    assert run.observable("click_speed_mps")[-1] > 1.0                    # the jacket strikes the lip hard
    assert 1.6e-3 < run.x_true_m[i_click] < 2.4e-3
    # the click is seen in the force: a sharp drop within a millisecond of the strike
    window = run.force_true_N[i_click - 8:i_click + 8]
    assert window.max() - window.min() > 0.2
    # press and release curves differ: release well below press while the jacket is dragged back
    x_d, f_d = run.x_true_m[press], run.force_true_N[press]
    x_u, f_u = run.x_true_m[release][::-1], run.force_true_N[release][::-1]
    g = np.linspace(1.15e-3, 1.8e-3, 50)                                 # Cherry MX Blue: 0.15 to 0.25 N
    assert np.all(np.interp(g, x_d, f_d) - np.interp(g, np.maximum.accumulate(x_u), f_u) > 0.15)
    work = np.trapezoid(f_d, x_d) - np.trapezoid(f_u, x_u)                # energy lost per cycle (J)
    lin_run, lp, lr = _press_release(get_target("linear-switch"))
    lin_work = (np.trapezoid(lin_run.force_true_N[lp], lin_run.x_true_m[lp])
                - np.trapezoid(lin_run.force_true_N[lr][::-1], lin_run.x_true_m[lr][::-1]))
    assert work > 0.2e-3 and work > 1.5 * lin_work
    assert get_target("linear-switch").jacket_mass_kg == 0.0 and lin_run.observable("clicks").max() == 0


# -- piano key --------------------------------------------------------------------------------------

def test_piano_key_slow_press_lets_off_below_the_string():
    target = get_target("piano-key")
    run, press, release = _press_release(target, period_s=4.0)
    h = run.observable("hammer_m")
    flags = run.observable("flags").astype(int)
    assert h.max() < target.string_m and not np.any(flags & FLAG_STRING)
    assert h.max() == pytest.approx(target.letoff_hammer_m(), abs=0.05e-3)
    assert np.any(flags[press] & FLAG_ENGAGED) and not flags[int(np.argmax(run.x_true_m))] & FLAG_ENGAGED
    # touch weight (quasi-static, mid-travel): balance + hammer weight through the lever +- key friction
    q = run.observable("key_m")
    lift = target.balance_N + target.ratio * target.hammer_mass_kg * target.gravity_mps2
    mid_d = (q[press] > 3e-3) & (q[press] < 7e-3)
    mid_u = (q[release] > 3e-3) & (q[release] < 7e-3) & ~(flags[release] & FLAG_ENGAGED).astype(bool)
    assert np.median(run.force_true_N[press][mid_d]) == pytest.approx(lift + target.key_friction_N, abs=3e-3)
    # on the release the jack has escaped and the backcheck carries the hammer: the same lever load
    assert np.all(flags[release][mid_u] & FLAG_BACKCHECK)
    assert np.median(run.force_true_N[release][mid_u]) == pytest.approx(lift - target.key_friction_N, abs=3e-3)
    assert flags[-1] & FLAG_ENGAGED                                       # the jack resets near rest


def test_piano_hammer_flies_a_free_parabola_to_the_string():
    target = get_target("piano-key")
    lo, hi = target.probe_range_m()
    run = simulate(target, Sine(0.5 * (lo + hi), 0.5 * (hi - lo), frequency_hz=3.0, duration_s=0.25), EXACT)
    h, vh = run.observable("hammer_m"), run.observable("hammer_mps")
    flags = run.observable("flags").astype(int)
    i_strike = int(np.argmax(flags & FLAG_STRING))
    assert i_strike > 0
    assert not flags[i_strike] & FLAG_ENGAGED                              # let-off came first
    free = np.nonzero((flags[:i_strike] & (FLAG_CONTACTS | FLAG_ENGAGED)) == 0)[0]
    k0 = free[0]
    assert np.all(np.diff(free) == 1) and free[-1] == i_strike - 1       # one flight, up to the string
    t = run.t_s[k0:i_strike] - run.t_s[k0]
    g = target.gravity_mps2
    parabola = h[k0] + vh[k0] * t - 0.5 * g * t * t                       # h0 + v0 t - g t^2 / 2
    np.testing.assert_allclose(h[k0:i_strike], parabola, rtol=0, atol=1e-9)
    np.testing.assert_allclose(vh[k0:i_strike], vh[k0] - g * t, rtol=0, atol=1e-9)
    # the string is reached when the parabola meets it
    t_hit = (vh[k0] - math.sqrt(vh[k0] ** 2 - 2 * g * (target.string_m - h[k0]))) / g
    assert run.t_s[k0] + t_hit == pytest.approx(run.t_s[i_strike], abs=1.0 / EXACT.sample_rate_hz)


def test_piano_felt_rebound_matches_a_hunt_crossley_reference():
    """Hammer on the string: rebound speed vs solve_ivp of m h'' = -k d^1.5 (1 + alpha d') - m g."""
    from scipy.integrate import solve_ivp

    target = get_target("piano-key")
    lo, hi = target.probe_range_m()
    run = simulate(target, Sine(0.5 * (lo + hi), 0.5 * (hi - lo), frequency_hz=3.0, duration_s=0.25),
                   dataclasses.replace(EXACT, sample_rate_hz=40000.0))
    h, vh = run.observable("hammer_m"), run.observable("hammer_mps")
    on = (run.observable("flags").astype(int) & FLAG_STRING) > 0
    i0 = int(np.argmax(on))
    i1 = i0 + int(np.argmax(~on[i0:]))
    v_in = vh[i0 - 1] - target.gravity_mps2 * (target.string_m - h[i0 - 1]) / vh[i0 - 1]
    m, k, alpha, g = target.hammer_mass_kg, target.felt_k, target.felt_alpha, target.gravity_mps2

    def rhs(_t, y):
        d = max(y[0], 0.0)
        return [y[1], (-k * d ** 1.5 * (1.0 + alpha * y[1]) if d > 0 else 0.0) / m - g]

    def leave(_t, y):
        return y[0] + 1e-12 if y[1] < 0 else 1.0
    leave.terminal = True
    ref = solve_ivp(rhs, (0.0, 0.01), [0.0, v_in], rtol=1e-10, atol=1e-14, events=leave, max_step=1e-6)
    v_out_ref = ref.y[1, -1]
    v_out = vh[i1]
    assert v_out < 0 < v_in
    assert v_out == pytest.approx(v_out_ref, rel=0.03)
    assert -v_out_ref / v_in == pytest.approx(1.0 - 2.0 / 3.0 * alpha * v_in, abs=0.03)   # Hunt-Crossley e


# -- toggle switch ----------------------------------------------------------------------------------

def test_toggle_detent_follows_its_cam_and_snaps_over_centre():
    target = get_target("toggle-switch")
    run, press, release = _press_release(target, period_s=4.0)
    x, v = run.observable("lever_m"), run.observable("lever_mps")
    moving = (np.abs(v) > 1e-4) & (x > 0.05e-3) & (x < target.throw_m - 0.05e-3)
    friction = target.pivot_friction_N + target.cam_mu * target.plunger_normal_force(x)
    expected = target.detent_force(x) + friction * np.sign(v)
    assert np.max(np.abs(run.force_true_N - expected)[moving]) < 2e-3
    f = target.detent_force(np.linspace(0, target.throw_m, 6001))
    assert f[:2900].min() >= 0.0 and f[3100:].max() <= 0.0               # resists, then pulls over the centre
    assert f.max() > 1.0 and f.min() < -1.0
    assert run.force_true_N[press].min() < -0.5                            # the probe must hold the lever back


# -- the command line -------------------------------------------------------------------------------

def _main(argv):
    """Exit code of ``hapticam argv`` (argparse's own errors exit through SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code

def test_cli_list(capsys):
    assert main(["probe", "--list"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == len(TARGETS) and all(line.split()[0] in TARGETS for line in out)


def test_cli_params_prints_the_target_as_json(capsys):
    assert main(["probe", "piano-key", "--params", "--set", "ratio=4.5"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["target"] == "piano-key" and doc["parameters"]["ratio"] == 4.5
    assert doc["parameters"]["string_m"] == get_target("piano-key").string_m


def test_cli_probe_writes_a_loadable_capture(tmp_path, capsys):
    out = tmp_path / "press.csv"
    code = main(["probe", "tactile-switch", "--excitation", "triangle", "--duration", "2", "--rate", "2000",
                 "--seed", "4", "--set", "preload_N=0.3", "-o", str(out)])
    assert code == 0
    assert "tactile-switch" in capsys.readouterr().out
    cap = load_capture(out)
    assert cap.n == 4001 and cap.sample_rate_hz == pytest.approx(2000.0)
    meta = {k: json.loads(v) if isinstance(v, str) and v.startswith("{") else v for k, v in cap.metadata.items()}
    assert meta["target"]["parameters"]["preload_N"] == 0.3
    assert meta["excitation"]["kind"] == "triangle"
    assert cap.x_m.max() == pytest.approx(get_target("tactile-switch").probe_range_m()[1], abs=20e-6)
    npz = tmp_path / "s.npz"
    assert main(["probe", "test-device", "--excitation", "sine", "--frequency-hz", "2", "--duration", "0.5",
                 "--amplitude-mm", "10", "-o", str(npz)]) == 0
    cap = load_capture(npz)
    assert cap.x_m.min() == pytest.approx(0.0, abs=0.05e-3) and cap.x_m.max() == pytest.approx(0.02, abs=0.1e-3)


@pytest.mark.parametrize("args", [
    ["probe", "harpsichord", "-o", "{out}"],
    ["probe", "tactile-switch"],
    ["probe", "tactile-switch", "-o", "{dir}/x.txt"],
    ["probe", "tactile-switch", "-o", "{dir}/missing/x.csv"],
    ["probe", "tactile-switch", "--rate", "nan", "-o", "{out}"],
    ["probe", "tactile-switch", "--rate", "0", "-o", "{out}"],
    ["probe", "tactile-switch", "--duration", "-1", "-o", "{out}"],
    ["probe", "tactile-switch", "--duration", "1e9", "-o", "{out}"],
    ["probe", "tactile-switch", "--excitation", "chirp", "-o", "{out}"],
    ["probe", "tactile-switch", "--frequency-hz", "2", "-o", "{out}"],
    ["probe", "tactile-switch", "--set", "bogus=1", "-o", "{out}"],
    ["probe", "tactile-switch", "--set", "preload_N=abc", "-o", "{out}"],
    ["probe", "tactile-switch", "--set", "preload_N", "-o", "{out}"],
    ["probe", "tactile-switch", "--seed", "-3", "-o", "{out}"],
    ["probe", "tactile-switch", "--amplitude-mm", "5000", "-o", "{out}"],
    ["probe"],
])
def test_cli_bad_input_is_one_line_exit_2_and_no_file(args, tmp_path, capsys):
    out = tmp_path / "c.csv"
    argv = [a.format(out=out, dir=tmp_path) for a in args]
    assert _main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hapticam: error:") and len(err.splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_bench_probe_reports_both_loops(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert _main(["bench", "probe", "--duration", "0.5", "--peer-seconds", "0.02", "--json-file", str(out)]) == 0
    assert "speedup" in capsys.readouterr().out
    results = json.loads(out.read_text())
    assert set(results["targets"]) == set(TARGETS)
    for row in results["targets"].values():
        assert row["samples"] == 2001 and row["python_samples"] == 81
        assert row["speedup"] > 1.0
    assert _main(["bench", "probe", "--duration", "1e5", "--no-python"]) == 2

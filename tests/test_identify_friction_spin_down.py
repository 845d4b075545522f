"""Spin-downs told from their motion, and their detents against the simulated knob's ground truth
(world/knob.py: 24 detents per revolution of 1 mN m, J = 1e-3 kg m^2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.signal import savgol_filter

from hapticam.capture import Capture
from hapticam.world.excitations import make_excitation
from hapticam.world.knob import DetentKnob, turns
from hapticam.world.probe import simulate
from hapticam.errors import IdentificationError
from hapticam.identify.friction.experiment import detect_experiment, spin_down_motion
from hapticam.identify.friction.press_speeds import fit_press_speeds
from hapticam.identify.friction.spin_down import derivative_gain, fit_spin_downs

#: detent amplitude tolerance on the simulated knob (its coast is fitted 1.7 % low; an exact ODE's 0.1 %)
DETENT_REL = 0.03


@pytest.fixture(scope="module")
def knob_runs():
    """The simulated knob spun down by the probe as ``hapticam probe knob --excitation spin-down`` does (3 s of
    coast; its torque sensor records the launch: 2 mN m noise, 5 mN m offset), and turned both ways."""
    knob = DetentKnob(name="knob")
    spin = simulate(knob, make_excitation("spin-down", 0.0, 2 * math.pi)).to_capture()
    turned = simulate(knob, turns(0.0, speeds=(0.5, 2.0, 8.0), hold_s=0.5)).to_capture()
    return knob, spin, turned


def test_a_spin_down_is_told_from_its_motion_whatever_its_columns(knob_runs):
    _, spin, turned = knob_runs
    assert not spin.metadata.get("force_absent") and np.ptp(spin.f_N) > 0.05   # the drive's torque is recorded
    assert spin_down_motion(spin).spin_down
    assert detect_experiment([spin]) == "spin-down"
    assert not spin_down_motion(turned).spin_down and detect_experiment([turned]) == "speeds"
    with pytest.raises(IdentificationError, match="mix"):
        detect_experiment([spin, turned])


def test_a_spin_down_is_not_fitted_as_sliding_at_several_speeds(knob_runs):
    """Its coast is not steady sliding; the knob's creep at rest passed for sliding both ways (it was fitted)."""
    _, spin, _ = knob_runs
    with pytest.raises(IdentificationError, match="is a spin-down"):
        fit_press_speeds([spin], "stribeck", axis="rotary")


def test_spin_down_with_its_launch_torque_gives_inertia_friction_and_the_knobs_detents(knob_runs):
    knob, spin, _ = knob_runs
    fit, _ = fit_spin_downs([spin], "stribeck")                  # no inertia given: the launch gives it
    assert fit.extra["inertia_kgm2"] == pytest.approx(knob.inertia_kgm2, rel=0.01)
    assert fit.detents_per_rev == knob.detents_per_rev
    amplitude, se = fit.detent_amplitude()
    assert amplitude == pytest.approx(knob.detent_Nm, rel=DETENT_REL) and 0.0 < se < 0.1 * amplitude
    truth = knob.truth()
    for key in ("coulomb", "viscous"):
        assert fit.levels[key] == pytest.approx(truth[key], rel=0.05)
    for key in ("stribeck_peak", "shape_speed"):
        assert fit.levels[key] == pytest.approx(truth[key], rel=0.10)


def test_derivative_gain_is_the_filters_response_to_a_sine():
    dt, n = 2.5e-4, 21
    t = np.arange(2001) * dt
    for f_hz in (5.0, 47.0, 120.0):
        x = np.cos(2 * math.pi * f_hz * (t - t[1000]))                      # its crest at sample 1000
        filtered = savgol_filter(x, n, 3, deriv=2, delta=dt)[1000]
        sampled = (x[1001] - 2 * x[1000] + x[999]) / dt ** 2
        assert derivative_gain(2 * math.pi * f_hz, n, dt) == pytest.approx(filtered / sampled, rel=1e-9)


def test_detents_seen_through_the_derivative_filter_keep_their_amplitude():
    """An exact coast (J theta'' = -A sin(24 theta) - T_f(theta'), integrated to 1e-11): the filter takes 4 % off
    the detents at 12 rad/s; the fit puts it back (the amplitude was 1.6 % low)."""
    knob = DetentKnob(name="knob")
    j, a, n = knob.inertia_kgm2, knob.detent_Nm, knob.detents_per_rev

    def rhs(_t, s):
        return [s[1], -(float(knob.friction(s[1])) + a * math.sin(n * s[0])) / j]

    t = np.arange(0.0, 1.0, 2.5e-4)
    coast = solve_ivp(rhs, (0.0, 1.0), [0.0, 12.5], t_eval=t, rtol=1e-11, atol=1e-13, method="DOP853").y[0]
    held = 12.5 * np.arange(-800, 0) * 2.5e-4                                   # 0.2 s held at 12.5 rad/s first
    x = np.concatenate([held, coast])
    cap = Capture.from_arrays(np.arange(x.size) * 2.5e-4, x, np.zeros_like(x), detect=False)
    cap.metadata["force_absent"] = True
    fit, _ = fit_spin_downs([cap], "stribeck", inertia=j, window_s=5e-3)
    assert fit.detents_per_rev == n
    assert fit.detent_amplitude()[0] == pytest.approx(a, rel=0.005)


def test_the_command_line_fits_a_probed_spin_down_as_one(tmp_path, capsys):
    import json

    from hapticam.cli import main

    capture = tmp_path / "spin.csv"
    assert main(["probe", "knob", "--excitation", "spin-down", "-o", str(capture)]) == 0
    capsys.readouterr()
    assert main(["identify", "friction", str(capture), "-o", str(tmp_path / "f.yaml"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["experiment"] == "spin-down"
    assert any("24 per revolution" in note for note in summary["notes"]), summary["notes"]

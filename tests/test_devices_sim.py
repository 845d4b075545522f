"""The simulated device against closed-form physics, and the device interface and registry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hapticam.devices import registry
from hapticam.world.sim import D_FM, SimParams, SimulatedDevice
from hapticam.world.users import GRID_DT_S, force_user, make_user, position_user, press, sine
from hapticam.errors import DependencyMissingError, DeviceError, UsageError


def test_device_lifecycle_is_idempotent_and_write_clamps():
    dev = SimulatedDevice()
    with pytest.raises(DeviceError, match="not open"):
        dev.read()
    with dev as d:
        assert d.is_open and d.open() is d              # second open does nothing
        assert d.write(100.0) == dev.spec.max_force_N
        assert d.write(-100.0) == -dev.spec.max_force_N
        assert d.write(float("nan")) == 0.0
        assert d.read().v_mps is None                   # position only, like an encoder
    assert not dev.is_open
    dev.close()                                         # second close does nothing


def test_spec_max_stiffness_is_the_passivity_bound():
    spec = SimParams(damping_N_s_per_m=1.5).spec()
    assert spec.max_stiffness_N_per_m == pytest.approx(2 * 1.5 / 1e-3)   # K < 2 b / T at 1 kHz
    assert spec.max_stable_stiffness(2000.0) == pytest.approx(2 * 1.5 / 5e-4)
    assert spec.to_dict()["workspace_m"] == list(spec.workspace_m)


def test_free_handle_under_constant_force_matches_closed_form():
    m, b, F = 0.05, 2.0, 1.0
    dev = SimulatedDevice(SimParams(handle_mass_kg=m, damping_N_s_per_m=b, motor_bandwidth_hz=0.0,
                                    resolution_m=0.0, noise_m=0.0))
    with dev:
        dev.write(F)                                    # the handle feels -F
        for _ in range(200):
            dev.step(1e-3)
        t = 0.2
        x = -(F / b) * (t - (m / b) * (1 - math.exp(-b * t / m)))  # m x'' = -F - b x'
        assert dev.true_position_m == pytest.approx(x, rel=2e-3)


def test_motor_is_a_first_order_lag():
    p = SimParams(motor_bandwidth_hz=200.0)
    dev = SimulatedDevice(p)
    with dev:
        dev.write(2.0)
        dev.step(1e-3)
        tau = 1 / (2 * math.pi * 200.0)
        assert dev.dev[D_FM] == pytest.approx(2.0 * (1 - math.exp(-1e-3 / tau)), rel=1e-9)


def test_encoder_quantises_and_noise_is_seeded():
    p = SimParams(resolution_m=1e-6, noise_m=2e-6)
    a = SimulatedDevice(p, user=sine(0.001, 1.0, 1.0), seed=7)
    b = SimulatedDevice(p, user=sine(0.001, 1.0, 1.0), seed=7)
    xs_a, xs_b, err = [], [], []
    with a, b:
        for _ in range(2000):
            xs_a.append(a.read().x_m)
            xs_b.append(b.read().x_m)
            err.append(xs_a[-1] - a.true_position_m)
            a.step(5e-4)
            b.step(5e-4)
    assert xs_a == xs_b
    q = np.array(xs_a) / 1e-6
    np.testing.assert_allclose(q, np.round(q), atol=1e-6)
    assert np.std(err) == pytest.approx(math.sqrt(2e-6 ** 2 + 1e-6 ** 2 / 12), rel=0.1)


def test_position_user_drives_the_handle_along_its_trajectory():
    user = sine(0.002, 2.0, 1.0)
    dev = SimulatedDevice(SimParams(noise_m=0.0), user=user)
    xs, refs = [], []
    with dev:
        for k in range(1000):
            dev.step(1e-3)
            xs.append(dev.true_position_m)
            refs.append(0.002 + 0.002 * math.sin(2 * math.pi * 2.0 * (k + 1) * 1e-3))
    # a 20 kN/m, 40 N s/m hand on a 50 g handle tracks a 2 Hz sine within a few um
    assert np.max(np.abs(np.array(xs) - refs)[100:]) < 5e-6


def test_force_user_and_periodic_repetition():
    user = force_user(np.array([0.0, 1.0]), np.array([0.5, 0.5]))
    dev = SimulatedDevice(SimParams(noise_m=0.0, damping_N_s_per_m=2.0), user=user)
    with dev:
        for _ in range(1000):
            dev.step(1e-3)
        # terminal velocity of a damped handle pushed by 0.5 N: v = F / b
        x1 = dev.true_position_m
        dev.step(1e-3)
        assert (dev.true_position_m - x1) / 1e-3 == pytest.approx(0.25, rel=1e-2)
    once = press(0.003, 0.5)
    rep = once.repeating()
    assert rep.period_s == pytest.approx(GRID_DT_S * once.value.size)
    a = SimulatedDevice(SimParams(noise_m=0.0), user=rep)
    with a:
        pos = []
        for _ in range(int(round(2 * rep.period_s / 1e-3))):
            a.step(1e-3)
            pos.append(a.true_position_m)
    half = len(pos) // 2
    assert np.max(np.abs(np.array(pos[half:half + 300]) - np.array(pos[:300]))) < 5e-5


@pytest.mark.parametrize("t, x", [([0.0, 0.0, 1.0], [0, 1, 2]), ([0.0, 1.0], [0.0, np.nan]), ([0.0], [0.0])])
def test_bad_trajectories_are_refused(t, x):
    with pytest.raises(UsageError):
        position_user(np.array(t), np.array(x, dtype=float))


def test_named_users():
    for name in ("press", "sine", "sweep", "finger"):
        u = make_user(name, 1.0, 0.004)
        assert u.duration_s == pytest.approx(1.0, abs=2 * GRID_DT_S)
        assert np.all(np.isfinite(u.value))
    with pytest.raises(UsageError, match="user"):
        make_user("robot", 1.0)


def test_registry_opens_sim_and_reports_missing_drivers(monkeypatch):
    dev = registry.open_device("sim", seed=1)
    assert dev.is_open and isinstance(dev, SimulatedDevice)
    dev.close()
    with pytest.raises(DeviceError, match="unknown device"):
        registry.open_device("nope")
    monkeypatch.setitem(registry.ADAPTERS, "fake", ("hapticam_no_such_driver:Device", "fake"))
    with pytest.raises(DependencyMissingError, match=r"hapticam\[fake\]"):
        registry.open_device("fake")
    assert "sim" in registry.available_devices()

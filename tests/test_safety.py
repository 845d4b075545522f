"""The safety layer: each injected fault ends with bounded force and the event logged."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from hapticam.world.sim import SimParams, SimulatedDevice, sim_binding_actuate, sim_binding_sense
from hapticam.world.users import finger, force_user, press
from hapticam.models.base import CompiledModel
from hapticam.models.contact import Contact
from hapticam.models.files import load_model_only
from hapticam.models.kernels import model_force
from hapticam.render.layout import (C_DF_MAX, C_DT, C_F_MAX, C_OVERRUN_TICKS, C_WS_HI, C_WS_LO, CFG_SIZE,
                                    CTL_SIZE, EV_OVERRUN, EV_STALE, K_MISS_RUN, SRV_SIZE)
from hapticam.render.loop import LoopConfig, ServoLoop, run_simulated
from hapticam.render.safety import SafetyConfig, safety_filter
from hapticam.render.servo import build_servo

F_MAX = SimParams().max_force_N


@njit(cache=True, nogil=True)
def nan_past_2mm(p, s, x, v, a, dt):
    """A spring that returns NaN beyond x = 2 mm (a model bug)."""
    if x > 0.002:
        return np.nan
    return p[0] * x


@njit(cache=True, nogil=True)
def step_force(p, s, x, v, a, dt):
    """0 N below x = 1 mm, p[0] N above: a force step."""
    return p[0] if x > 0.001 else 0.0


@njit(cache=True, nogil=True)
def no_flags(p, s):
    return 0


def test_nan_from_model_zeroes_force_stops_loop_and_is_logged():
    kernels = build_servo(nan_past_2mm, no_flags, sim_binding_sense, sim_binding_actuate)
    model = CompiledModel(params=np.array([200.0]), state0=np.zeros(0))
    r = run_simulated(model, user=press(0.004, 1.0), duration_s=1.0, kernels=kernels)
    assert r.stats.fault == "nan"
    assert r.t_s.size < 1000                                   # the loop stopped early
    bad = np.flatnonzero(~np.isfinite(r.force_cmd_N))
    assert bad.size == 1 and bad[0] == r.t_s.size - 1          # stopped at the first NaN tick
    assert r.force_N[-1] == 0.0 and np.all(np.isfinite(r.force_N))
    assert np.all(np.abs(r.force_N) <= F_MAX)
    names = [e.name for e in r.events]
    assert "nan" in names and names[-1] == "stop"
    assert r.events_named("nan")[0].tick == bad[0]


def _oscillation_um(r, start=1000):
    return float(np.std(r.x_true_m[start:]) * 1e6)


def test_too_stiff_wall_oscillates_force_stays_bounded_and_passivity_controller_tames_it():
    spec = SimParams().spec()
    k_max = spec.max_stable_stiffness(1000.0)                  # K < 2 b / T (Colgate & Schenkel)
    user = finger(0.004, 2.0, press_s=0.2, release_s=10.0)    # finger held pressing into the wall
    soft = Contact(law="linear", x_c_m=0.002, k_Npm=0.5 * k_max, b_Nspm=0.0)
    stiff = Contact(law="linear", x_c_m=0.002, k_Npm=10.0 * k_max, b_Nspm=0.0)
    stable = run_simulated(soft, user=user, duration_s=2.0)
    bare = LoopConfig(display="off")                         # the wall at the handle, no display stage
    unstable = run_simulated(stiff, user=user, duration_s=2.0, config=bare)
    tamed = run_simulated(stiff, user=user, duration_s=2.0, safety=SafetyConfig(passivity=True), config=bare)
    assert _oscillation_um(stable) < 5.0                       # below the bound: settles on the wall
    assert _oscillation_um(unstable) > 200.0                   # above it: bounces off the wall for ever
    for r in (stable, unstable, tamed):
        assert np.all(np.abs(r.force_N) <= F_MAX + 1e-12)
    assert unstable.events_named("saturation")                 # the bounce is clipped and logged
    assert _oscillation_um(tamed) < _oscillation_um(unstable) / 5.0
    assert tamed.stats.interventions["passivity"] > 0 and tamed.events_named("passivity")
    # the observer's energy: the unstable wall generates energy, the controlled one does not keep doing so
    def generated_J(r):
        w = np.cumsum(np.concatenate([[0.0], r.force_N[:-1] * np.diff(r.x_m)]))  # W = sum F(n-1) dx(n)
        return float(w[1000] - w[-1])
    assert generated_J(unstable) > 0.0 and generated_J(tamed) < 0.2 * generated_J(unstable)


def test_stale_device_data_zeroes_force_then_ramps_back_in():
    model = load_model_only("example:linear-key")
    params = SimParams(stale_s=(0.40, 0.50))
    r = run_simulated(model, device=params, user=press(0.0037, 1.0), duration_s=1.0)
    i0, i1 = 400, 500
    # the sensor freezes from tick 400; the third tick without a fresh sample (stale_ticks = 3) zeroes
    assert np.all(np.abs(r.force_N[i0:i0 + 2]) > 0.1)
    assert np.all(r.force_N[i0 + 2:i1] == 0.0)                  # zeroed while stale
    ev = r.events_named("stale-device")
    assert len(ev) == 1 and ev[0].tick == i0 + 2
    assert r.stats.interventions["stale-device"] == i1 - i0 - 2
    assert [e.tick for e in r.events_named("ramp-in")][-1] == i1  # recovery ramps in, no step
    after = r.force_N[i1:i1 + 10]
    assert np.all(np.abs(after) <= np.abs(r.force_cmd_N[i1:i1 + 10]) * np.arange(10) / 100 + 1e-9)
    assert np.all(np.abs(r.force_N) <= F_MAX)


def test_runaway_user_is_bounded_and_leaving_the_workspace_zeroes_force():
    user = force_user(np.array([0.0, 0.3, 0.31, 1.0]), np.array([0.0, 0.0, 30.0, 30.0]))  # 30 N shove
    wall = Contact(law="linear", x_c_m=0.002, k_Npm=2000.0, b_Nspm=1.0)
    r = run_simulated(wall, user=user, duration_s=1.0)
    hi = SimParams().workspace_m[1]
    assert np.max(r.x_true_m) > hi                              # the user overpowered the 8 N motor
    assert np.all(np.abs(r.force_N) <= F_MAX + 1e-12)
    out = r.x_m > hi
    assert out.any() and np.all(r.force_N[out] == 0.0)
    assert r.events_named("workspace") and r.events_named("saturation")
    assert r.stats.fault is None


def test_force_rate_limit_turns_a_step_into_a_ramp():
    kernels = build_servo(step_force, no_flags, sim_binding_sense, sim_binding_actuate)
    model = CompiledModel(params=np.array([5.0]), state0=np.zeros(0))
    rate = 2000.0  # N/s -> 2 N per tick at 1 kHz
    r = run_simulated(model, user=press(0.003, 1.0), duration_s=1.0, kernels=kernels, config=LoopConfig(display="off"),
                      safety=SafetyConfig(max_force_rate_N_per_s=rate, ramp_s=0.0))
    df = np.abs(np.diff(r.force_N))
    assert df.max() <= rate * 1e-3 + 1e-12
    assert r.events_named("rate-limit") and np.max(r.force_N) == pytest.approx(5.0)


def test_overrun_watchdog_and_filter_order_on_the_compiled_function():
    cfg = np.zeros(CFG_SIZE)
    ctl = np.zeros(CTL_SIZE, dtype=np.int64)
    srv = np.zeros(SRV_SIZE)
    events = np.zeros((16, 3))
    cfg[C_DT], cfg[C_F_MAX], cfg[C_DF_MAX] = 1e-3, 8.0, 1e9
    cfg[C_WS_LO], cfg[C_WS_HI], cfg[C_OVERRUN_TICKS] = -1.0, 1.0, 5
    f, mask = safety_filter(0, 0.0, 0.0, 0.0, 0.0, 3.0, False, 0, cfg, ctl, srv, events)
    assert f == 3.0 and mask == 0
    f, _ = safety_filter(1, 0.001, 0.0, 0.0, 0.0, 30.0, False, 0, cfg, ctl, srv, events)
    assert f == 8.0
    ctl[K_MISS_RUN] = 5
    f, mask = safety_filter(2, 0.002, 0.0, 0.0, 0.0, 3.0, False, 0, cfg, ctl, srv, events)
    assert f == 0.0 and mask & (1 << EV_OVERRUN)
    f, mask = safety_filter(3, 0.003, 0.0, 0.0, 0.0, 3.0, True, 0, cfg, ctl, srv, events)
    assert f == 0.0 and mask & (1 << EV_STALE)


def test_model_swap_mid_press_ramps_in_without_a_force_step():
    linear = load_model_only("example:linear-key")
    tactile = load_model_only("example:tactile-key")
    dev = SimulatedDevice(user=press(0.0037, 1.0))
    loop = ServoLoop(linear, dev, LoopConfig(display="off"))
    first = loop.run_simulated(0.4)                             # mid-press: key half down
    loop.load_model(tactile)
    second = loop.run_simulated(0.6)
    f = np.concatenate([first.force_N, second.force_N])
    swap = [e for e in loop.all_events() if e.name == "model-swap"]
    assert len(swap) == 1 and swap[0].tick == 400
    assert abs(f[400]) < 0.05 * abs(f[399])                     # ramp restarts from zero ...
    rate = SimParams().max_force_rate_N_per_s * 1e-3
    assert np.max(np.abs(np.diff(f))) <= rate + 1e-12           # ... and never steps beyond the rate limit
    assert np.all(np.abs(f) <= F_MAX)
    # after the ramp the new model is rendered: its kernel along the sensed path from the swap on
    c = tactile.compile()
    s = c.reset_state()
    ref = np.array([model_force(c.params, s, second.x_m[i], second.v_mps[i], 0.0, 1e-3)
                    for i in range(second.x_m.size)])
    np.testing.assert_allclose(second.force_cmd_N, ref, atol=1e-12)
    np.testing.assert_allclose(second.force_N[150:], ref[150:], atol=1e-12)


def test_set_parameter_keeps_state_and_rejects_invalid_values():
    model = load_model_only("example:linear-key")
    loop = ServoLoop(model, SimulatedDevice(user=press(0.0037, 1.0)), LoopConfig())
    loop.run_simulated(0.3)
    new = loop.set_parameter("components.0.parameters.dead_band_mps", 0.002)
    loop.run_simulated(0.1)
    assert [e.name for e in loop.all_events()].count("set-param") == 1
    assert new.to_dict()["components"][0]["parameters"]["dead_band_mps"] == 0.002
    from hapticam.errors import ControlError, ModelValidationError

    with pytest.raises(ModelValidationError):
        loop.set_parameter("components.0.parameters.dead_band_mps", -1.0)
    with pytest.raises(ControlError, match="no parameter"):
        loop.set_parameter("components.0.parameters.nope", 1.0)
    assert loop.model is new

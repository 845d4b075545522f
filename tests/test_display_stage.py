"""The display stage (hapticam.render.display, render.display_stage) against closed forms and the simulated
device's own energy books: the series stiffness of a coupled wall, passivity at the hand over a sweep of rates
and handle masses (the bare wall as the contrast), the passivity observer's bounded credit, the energy-out
statistic, and what the plan says."""

from dataclasses import replace

import numpy as np
import pytest

from hapticam.world.sim import D_V, D_WU, SimParams, SimulatedDevice
from hapticam.world.users import finger, position_user
from hapticam.errors import UsageError
from hapticam.models.contact import Contact
from hapticam.render.display import DISPLAY_MARGIN, plan_display
from hapticam.render.layout import (C_DF_MAX, C_DT, C_F_MAX, C_PASSIVITY, C_PO_CAP, C_ALPHA_MAX, C_WS_HI, C_WS_LO,
                                    C_OVERRUN_TICKS, CFG_SIZE, CTL_SIZE, EV_PASSIVITY, SRV_SIZE)
from hapticam.render.loop import LoopConfig, ServoLoop, run_simulated
from hapticam.render.safety import safety_filter

SPEC = SimParams().spec()
K_PASSIVE = SPEC.max_stable_stiffness(1000.0)          # 2 b / T = 4000 N/m on the default simulated device


def _wall(k_Npm, b_Nspm=0.0):
    return Contact(law="linear", x_c_m=0.002, k_Npm=k_Npm, b_Nspm=b_Nspm)


def test_a_coupled_wall_displays_the_series_stiffness():
    k = 10.0 * K_PASSIVE
    t = np.linspace(0.0, 2.0, 2001)
    r = run_simulated(_wall(k), user=position_user(t, 0.004 * t / 2.0), duration_s=2.0)
    kc = DISPLAY_MARGIN * K_PASSIVE
    inside = (r.x_m > 0.0025) & (r.x_m < 0.0038)
    slope = np.polyfit(r.x_m[inside], r.force_N[inside], 1)[0]
    assert slope == pytest.approx(k * kc / (k + kc), rel=0.01)      # series springs: k k_c / (k + k_c)
    assert r.stats.display["displayed_Npm"] == pytest.approx(k * kc / (k + kc))
    assert r.stats.interventions["saturation"] == 0


def test_a_wall_within_the_passive_bound_is_rendered_at_the_handle():
    t = np.linspace(0.0, 2.0, 2001)
    r = run_simulated(_wall(0.5 * K_PASSIVE), user=position_user(t, 0.004 * t / 2.0), duration_s=2.0)
    inside = (r.x_m > 0.0025) & (r.x_m < 0.0038)
    assert np.polyfit(r.x_m[inside], r.force_N[inside], 1)[0] == pytest.approx(0.5 * K_PASSIVE, rel=0.01)
    assert r.stats.display["coupling_Npm"] == 0.0


def _oscillation_um(r, start=1000):
    return float(np.std(r.x_true_m[start:]) * 1e6)


def test_a_finger_rests_on_a_stiff_displayed_floor_where_the_bare_wall_chatters():
    user = finger(0.004, 2.0, press_s=0.2, release_s=10.0)
    wall = _wall(10.0 * K_PASSIVE)
    shown = run_simulated(wall, user=user, duration_s=2.0)
    bare = run_simulated(wall, user=user, duration_s=2.0, config=LoopConfig(display="off"))
    assert _oscillation_um(shown) < 5.0 and shown.stats.interventions["saturation"] == 0
    assert _oscillation_um(bare) > 200.0 and bare.stats.interventions["saturation"] > 0


def _energy_to_hand_per_cycle_J(rate_hz, mass_kg, display, cycles=4):
    """The energy the device gave the hand per cycle of a 2 Hz finger-soft press into a wall 50 times the
    passive bound: minus the user's work on the handle (the simulator integrates it per sub-step), with the
    handle's kinetic energy change, over whole cycles."""
    params = replace(SimParams(), handle_mass_kg=mass_kg)
    wall = _wall(50.0 * params.spec().max_stable_stiffness(rate_hz))
    t = np.linspace(0.0, 0.5 + cycles * 0.5 + 0.1, 30001)
    user = position_user(t, 0.002 + 0.002 * np.sin(2 * np.pi * 2.0 * t), stiffness_N_per_m=500.0,
                         damping_N_s_per_m=2.0)
    device = SimulatedDevice(params, user)
    with device:
        loop = ServoLoop(wall, device, LoopConfig(rate_hz=rate_hz, realtime=False, display=display))
        loop.run_simulated(0.5)
        w0, ke0 = device.dev[D_WU], 0.5 * mass_kg * device.dev[D_V] ** 2
        loop.run_simulated(cycles * 0.5)
        w1, ke1 = device.dev[D_WU], 0.5 * mass_kg * device.dev[D_V] ** 2
    return (-(w1 - w0) + (ke1 - ke0)) / cycles


@pytest.mark.parametrize("rate_hz", [500.0, 1000.0, 4000.0])
@pytest.mark.parametrize("mass_kg", [0.02, 0.05, 0.2])
def test_the_coupling_is_passive_at_the_hand_over_rates_and_handle_masses(rate_hz, mass_kg):
    assert _energy_to_hand_per_cycle_J(rate_hz, mass_kg, "auto") <= 0.0
    assert _energy_to_hand_per_cycle_J(rate_hz, mass_kg, "off") > 1e-3     # the bare wall gives mJ per cycle


def _cfg(cap_J):
    cfg = np.zeros(CFG_SIZE)
    cfg[C_DT], cfg[C_F_MAX], cfg[C_DF_MAX] = 1e-3, 10.0, 1e6
    cfg[C_WS_LO], cfg[C_WS_HI], cfg[C_OVERRUN_TICKS] = -1.0, 1.0, 5.0
    cfg[C_PASSIVITY], cfg[C_ALPHA_MAX] = 1.0, 1e3
    cfg[C_PO_CAP], cfg[C_PO_CAP + 1] = cap_J, cap_J
    return cfg


def _observer_acts_after(cap_J):
    """Dissipate 10 mJ (a 1 N drag over 10 mm), then generate: a force pushing the handle along its motion
    (-1 N while it moves +1 um per tick). The tick at which the passivity controller first acts."""
    cfg, ctl, srv = _cfg(cap_J), np.zeros(CTL_SIZE, dtype=np.int64), np.zeros(SRV_SIZE)
    events = np.zeros((64, 3))
    x = 0.0
    for k in range(1000):                              # 1 N against +10 um per tick: the observer's credit
        x += 1e-5
        safety_filter(k, k * 1e-3, x, 1e-5, 1e-2, 1.0, False, 0, cfg, ctl, srv, events)
    for k in range(1000, 30000):                       # -1 N along +1 um per tick: 1 uJ generated per tick
        x += 1e-6
        _, mask = safety_filter(k, k * 1e-3, x, 1e-6, 1e-3, -1.0, False, 0, cfg, ctl, srv, events)
        if mask & (1 << EV_PASSIVITY):
            return k - 1000
    return None


def test_earlier_dissipation_cannot_hide_later_generation():
    # unbounded (cap 0): the 9.99 mJ dissipated (999 ticks of 10 uJ: the first tick has no held force yet)
    # stand as credit for about 9,990 ticks of 1 uJ generated (the controller acts on the predicted W)
    assert _observer_acts_after(0.0) == pytest.approx(9_990, abs=3)
    # bounded at 1 mJ: the controller acts once the generation exceeds what the model could give back
    assert _observer_acts_after(1e-3) == pytest.approx(1_000, abs=3)


def test_energy_out_is_the_work_of_the_written_force_on_the_hand():
    t = np.linspace(0.0, 2.0, 2001)
    x = 0.003 * np.sin(np.pi * t / 2.0) ** 2
    r = run_simulated(_wall(10.0 * K_PASSIVE, 5.0), user=position_user(t, x), duration_s=2.0)
    dx = np.diff(r.x_m)
    books = -float(np.sum(r.force_N[:-1] * dx + SPEC.damping_N_s_per_m * dx ** 2 * 1e3))  # -sum(F dx + b dx^2/T)
    assert r.stats.energy_out_J == pytest.approx(books, rel=1e-9, abs=1e-12)
    assert abs(books) > 1e-7                                          # the press did move the force


def test_the_plan_says_what_the_display_keeps_and_gives_up():
    plan = plan_display(("press.k_Npm[12]", 23000.0), SPEC, 1000.0)
    kc = DISPLAY_MARGIN * K_PASSIVE
    assert plan.coupling_Npm == pytest.approx(kc)
    assert plan.displayed_Npm == pytest.approx(23000.0 * kc / (23000.0 + kc))
    text = plan.summary()
    assert f"{plan.displayed_Npm:.4g} N/m of 2.3e+04" in text and "press.k_Npm[12]" in text
    assert plan_display(("k", 23000.0), SPEC, 1000.0, mode="off").coupling_Npm == 0.0
    with pytest.raises(UsageError):
        plan_display(("k", 1.0), SPEC, 1000.0, mode="sometimes")
    with pytest.raises(UsageError):
        LoopConfig(display="sometimes").checked()



def test_a_transient_adds_no_energy_beyond_its_bounded_pulse():
    """The piano key pressed by the finger with and without a landing transient: the energy the device puts
    into the hand grows by no more than the pulses' bound (pulse_energy_bound_J: the largest handle speed
    times each clipped pulse's force integral), and the clipped pulses never saturate the device."""
    import copy

    from hapticam.world.users import finger as finger_user
    from hapticam.models.files import load_model_only
    from hapticam.models.transients import Transient, pulse_energy_bound_J
    from hapticam.render.display_stage import TRANSIENT_FORCE_SHARE, TRANSIENT_RATE_SHARE

    press = finger_user(0.012, 1.0, press_s=0.2, release_s=0.6)
    plain = load_model_only("example:piano-key")
    pulse = Transient(event="landing", gain_N_per_mps=20.0, frequency_hz=150.0, decay_s=0.004)
    staged = copy.copy(plain)
    staged.transients = (pulse,)
    runs = {}
    for name, model in (("plain", plain), ("staged", staged)):
        device = SimulatedDevice(SimParams(), press)
        with device:
            runs[name] = ServoLoop(model, device, LoopConfig(realtime=False)).run_simulated(1.0)
    started = runs["staged"].events_named("transient")
    assert runs["plain"].stats.transients == 0 and len(started) == runs["staged"].stats.transients > 0
    assert runs["staged"].stats.interventions["saturation"] == 0
    speed = float(np.max(np.abs(np.diff(runs["staged"].x_m)))) / 1e-3
    bound = sum(pulse_energy_bound_J(pulse, e.value / pulse.gain_N_per_mps, TRANSIENT_FORCE_SHARE * SPEC.max_force_N,
                                     TRANSIENT_RATE_SHARE * SPEC.max_force_rate_N_per_s, handle_speed_mps=speed,
                                     tick_s=1e-3) for e in started)
    assert runs["staged"].stats.energy_out_J - runs["plain"].stats.energy_out_J <= bound

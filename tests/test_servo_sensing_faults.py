"""The servo tick after a corrupted reading, a parameter change that switches the inertia proxy on, and loop
settings that would make the velocity filter diverge.

The device here is the simulator with a velocity sensor whose reading of one tick is NaN (a corrupted frame),
compiled into the tick like any device binding."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from hapticam.devices.base import IO_HAS_V, IO_V, IO_X, ServoBinding
from hapticam.devices.registry import open_device
from hapticam.world.sim import D_T, D_V, SimParams, SimulatedDevice, sim_binding_actuate, sim_sense
from hapticam.world.users import force_user, position_user
from hapticam.errors import UsageError
from hapticam.models.contact import Contact
from hapticam.models.impedance import ImpedanceTable, SegmentedImpedance
from hapticam.render.layout import EV_NAN, EV_PASSIVITY, S_ENERGY
from hapticam.render.loop import LoopConfig, ServoLoop
from hapticam.render.safety import SafetyConfig

GLITCH_S = 0.3


@njit(cache=True, nogil=True)
def _sense_with_a_bad_frame(state, io):
    dev = state[0]
    sim_sense(dev, state[2], io)
    if state[3][1] > 0.0:
        io[IO_V] = dev[D_V]
        io[IO_HAS_V] = 1.0
    if state[3][0] > 0.0 and GLITCH_S <= dev[D_T] < GLITCH_S + 0.5e-3:
        io[IO_X] = np.nan
    return 0


class BadFrameSim(SimulatedDevice):
    """The simulator; one NaN position at ``GLITCH_S`` when ``glitch``; its own velocity when ``senses_v``."""

    def __init__(self, glitch: bool, senses_v: bool, **kw):
        self.flags = np.array([1.0 if glitch else 0.0, 1.0 if senses_v else 0.0])
        super().__init__(**kw)

    def servo_binding(self) -> ServoBinding:
        return ServoBinding(_sense_with_a_bad_frame, sim_binding_actuate, (self.dev, self.utab, self.rng, self.flags),
                            True)


def _wall_run(glitch: bool, senses_v: bool):
    wall = Contact("linear", 0.005, 30000.0, 0.0)       # beyond 2 b / T: the passivity controller's job
    user = force_user(np.array([0.0, 0.05, 2.0]), np.array([0.0, 2.0, 2.0]))
    loop = ServoLoop(wall, BadFrameSim(glitch, senses_v, params=SimParams(), user=user), LoopConfig(),
                     SafetyConfig(passivity=True, stop_on_nan=False))
    return loop, loop.run_simulated(1.0)


@pytest.mark.parametrize("senses_v", [True, False])
def test_one_nan_reading_is_zeroed_and_the_passivity_observer_keeps_working(senses_v: bool) -> None:
    """The energy sum W(n) = W(n-1) + F(n-1) dx stayed NaN after one NaN reading, so 'W < 0' never held again
    and the controller asked for was off for good (the handle shook 3.8 mm instead of 0.8); without a velocity
    sensor the filtered velocity stayed NaN and the force stayed zero for the rest of the run."""
    loop, r = _wall_run(True, senses_v)
    _, clean = _wall_run(False, senses_v)
    bad = ~np.isfinite(r.x_m)
    assert bad.sum() == 1 and r.force_N[bad][0] == 0.0 and (r.safety_flags[bad] >> EV_NAN) & 1
    assert math.isfinite(loop.srv[S_ENERGY]) and np.isfinite(r.force_N).all()
    after = r.t_s > GLITCH_S + 0.2
    acting = (r.safety_flags[after] >> EV_PASSIVITY) & 1
    acting_clean = (clean.safety_flags[after] >> EV_PASSIVITY) & 1
    assert acting.sum() > 0.5 * acting_clean.sum()
    assert np.ptp(r.x_true_m[after]) < 1.5 * np.ptp(clean.x_true_m[after])
    assert np.abs(r.force_N[after]).max() > 1.0                     # the wall is rendered again


def _press(m_kg: float) -> SegmentedImpedance:
    return SegmentedImpedance(ImpedanceTable([-0.02, 0.03], [m_kg], [0.0], [100.0], [0.0], where="press"), None,
                              interpolation="constant")


@pytest.mark.parametrize("how", ["set_parameter", "load_model"])
def test_switching_the_inertia_proxy_on_starts_it_at_the_handle(how: str) -> None:
    """A mass of 1 g gets no proxy, 50 g gets one. Set as a parameter, the proxy started where the handle was at
    the loop's first tick, 20 mm away, and pushed 8 N (the limit) at a handle held still under 2 N."""
    t = np.linspace(0, 1.0, 1001)
    dev = open_device("sim", params=SimParams(), user=position_user(t, np.clip(t / 0.3, 0, 1) * 0.020), seed=0)
    loop = ServoLoop(_press(0.001), dev, LoopConfig(rate_hz=1000.0))
    before = loop.run_simulated(n_ticks=500)
    if how == "set_parameter":
        loop.set_parameter("press.m_kg.0", 0.05)
    else:
        loop.load_model(_press(0.05))
    after = loop.run_simulated(n_ticks=100)
    static = 100.0 * before.x_m[-1]                               # k x, the handle at rest
    assert before.force_N[-1] == pytest.approx(static, rel=0.01)
    assert np.abs(after.force_N).max() <= static * 1.02
    assert after.force_N[-1] == pytest.approx(static, rel=0.02)


@pytest.mark.parametrize("field, value", [("velocity_cutoff_hz", -50.0), ("velocity_cutoff_hz", 0.0),
                                          ("velocity_cutoff_hz", math.nan), ("velocity_cutoff_hz", math.inf),
                                          ("spin_us", -1.0), ("spin_us", math.nan)])
def test_loop_settings_that_would_diverge_are_refused(field: str, value: float) -> None:
    """beta = 1 - exp(-2 pi f_c T) must lie in (0, 1]: a cut-off of -50 Hz made the velocity 5e132 m/s and a
    damper push 8 N at a handle held still."""
    with pytest.raises(UsageError, match="cut-off|spin"):
        LoopConfig(**{field: value}).checked()

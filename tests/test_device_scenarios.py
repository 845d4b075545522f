"""The render scenarios (press, sine, finger) with a real switch model on the Phantom adapter and its HDAPI
emulator, against the simulator: equal forces (the vendor's frame has the simulator's timing, so the
documented effect of the I/O is rounding: positions pass through millimetres and a 3-D projection), on the
default axis and on a slanted one. (The serial and remote adapters' scenario tests, with their one tick
of delay and micronewton quantisation, are in test_device_serial.py and test_device_remote.py.)"""

from __future__ import annotations

import importlib.util
import shutil

import numpy as np
import pytest

if importlib.util.find_spec("pyOpenHaptics") is None:
    pytest.skip("pyOpenHaptics is not installed (pip install 'hapticam[phantom]')", allow_module_level=True)

from hapticam.devices import phantom_hd as hd  # noqa: E402
from hapticam.devices.base import ServoBinding  # noqa: E402
from hapticam.devices.phantom import PhantomDevice  # noqa: E402
from hapticam.devices.phantom_emulator import HdEmulator, build_hd_emulator  # noqa: E402
from hapticam.world.sim import SimParams, SimulatedDevice  # noqa: E402
from hapticam.world.users import finger, press, sine  # noqa: E402
from hapticam.models.files import load_model_only  # noqa: E402
from hapticam.render.loop import LoopConfig, ServoLoop  # noqa: E402
from hapticam.render.result import RenderResult  # noqa: E402
from hapticam.render.servo import servo_for  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")

PARAMS = SimParams(noise_m=0.0)
DUR = 0.5
MODEL = load_model_only("example:gateron-brown")        # tactile: direction- and history-dependent
SCENARIOS = {"press": press(0.004, DUR, hold_s=0.1), "sine": sine(0.0018, 3.0, DUR, center_m=0.0018),
             "finger": finger(0.0045, DUR, press_s=0.1, release_s=0.35)}
SLANT = (1.0, -2.0, 0.5)


@pytest.fixture(scope="module")
def emu():
    return HdEmulator(build_hd_emulator())          # one per process, shared by the test modules


@pytest.fixture(scope="module")
def kernels():
    return (servo_for(ServoBinding(hd.phantom_sense, hd.phantom_actuate, (), False)),
            servo_for(SimulatedDevice(PARAMS).servo_binding()))


@pytest.mark.parametrize("axis", [(0.0, -1.0, 0.0), SLANT], ids=["down", "slanted"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenarios_render_the_simulators_forces_on_the_phantom(emu, kernels, name, axis):
    user = SCENARIOS[name]
    emu.configure(PARAMS, user, axis=axis)
    dev = PhantomDevice(str(emu.path), axis=axis, origin_mm=(0.0, 0.0, 0.0), resolution_m=PARAMS.resolution_m,
                        apparent_mass_kg=PARAMS.handle_mass_kg).open()
    try:
        loop = ServoLoop(MODEL, dev, LoopConfig(ring_capacity=4096), kernels=kernels[0])
        loop.start(DUR)
        assert loop.wait(DUR + 10.0)
        stats = loop.stop()
        res = RenderResult.from_rows(loop.ring[:loop.ticks].copy(), stats, loop.all_events())
    finally:
        dev.close()
    frames = emu.frames()
    ref = ServoLoop(MODEL, SimulatedDevice(PARAMS, user), kernels=kernels[1]).run_simulated(DUR)
    n = ref.force_N.size
    assert stats.fault is None and res.force_N.size == n and np.ptp(res.force_N) > 0.2
    np.testing.assert_allclose(res.x_m, ref.x_m, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.force_N, ref.force_N, rtol=0, atol=1e-9)
    a = np.asarray(axis) / np.linalg.norm(axis)
    applied = np.column_stack([frames["fx_N"][:n], frames["fy_N"][:n], frames["fz_N"][:n]])
    np.testing.assert_allclose(applied, -np.outer(res.force_N, a), rtol=0, atol=1e-9)   # -F along the axis only

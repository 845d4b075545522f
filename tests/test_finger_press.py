"""Every bundled key and the identified models, pressed by the virtual finger past their travel, on the simulated
device and on the Phantom adapter over its HDAPI emulator: no saturated tick, and the device puts no more than
1 mJ into the hand over the press and release (a passive key takes energy from it)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from hapticam.world.sim import SimParams, SimulatedDevice
from hapticam.world.users import finger
from hapticam.models.files import example_names, load_model_only
from hapticam.render.loop import LoopConfig, ServoLoop

DATA = Path(__file__).parent / "data" / "models"
MODELS = [f"example:{name}" for name in example_names()] + sorted(str(p) for p in DATA.glob("*.yaml"))
DUR = 1.0
#: the finger aims 12 mm down: past every key's floor (switches bottom out near 4 mm, the piano key's keybed at 10)
PRESS = finger(0.012, DUR, press_s=0.2, release_s=0.6)
MAX_ENERGY_OUT_J = 1e-3


def _check(stats, name):
    assert stats.fault is None, name
    assert stats.interventions["saturation"] == 0, (name, stats.display["summary"])
    assert stats.energy_out_J <= MAX_ENERGY_OUT_J, (name, stats.energy_out_J)


@pytest.mark.parametrize("spec", MODELS, ids=[Path(m).stem.replace("example:", "") for m in MODELS])
def test_a_finger_pressing_past_the_travel_on_the_simulated_device(spec):
    device = SimulatedDevice(SimParams(), PRESS)
    with device:
        result = ServoLoop(load_model_only(spec), device, LoopConfig(realtime=False)).run_simulated(DUR)
    _check(result.stats, spec)
    assert result.x_true_m.max() > 0.0035                    # the finger did reach the floor


phantom = pytest.mark.skipif(importlib.util.find_spec("pyOpenHaptics") is None
                             or (shutil.which("cc") is None and shutil.which("gcc") is None),
                             reason="needs pyOpenHaptics and a C compiler for the HDAPI emulator")


@phantom
def test_a_finger_pressing_past_the_travel_on_the_phantom_emulator():
    from hapticam.devices.phantom import PhantomDevice
    from hapticam.devices.phantom_emulator import HdEmulator, build_hd_emulator

    emu = HdEmulator(build_hd_emulator())
    params = SimParams(noise_m=0.0)
    for spec in MODELS:
        emu.configure(params, PRESS, axis=(0.0, -1.0, 0.0))
        device = PhantomDevice(str(emu.path), axis=(0.0, -1.0, 0.0), origin_mm=(0.0, 0.0, 0.0),
                               resolution_m=params.resolution_m, apparent_mass_kg=params.handle_mass_kg).open()
        try:
            loop = ServoLoop(load_model_only(spec), device, LoopConfig(ring_capacity=4096))
            loop.start(DUR)
            assert loop.wait(DUR + 10.0)
            stats = loop.stop()
        finally:
            device.close()
        _check(stats, spec)

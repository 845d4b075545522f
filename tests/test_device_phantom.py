"""The Phantom/Touch adapter against the HDAPI emulator (a C libHD.so built here): forces against the
simulator, the rail, the device's specification and safety, loading errors, and every injected fault."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess

import numpy as np
import pytest

if importlib.util.find_spec("pyOpenHaptics") is None:      # the phantom extra (importing it needs libHD.so)
    pytest.skip("pyOpenHaptics is not installed (pip install 'hapticam[phantom]')", allow_module_level=True)

from hapticam.devices import phantom_hd as hd  # noqa: E402
from hapticam.devices.phantom import PhantomDevice, axis_interval_m  # noqa: E402
from hapticam.devices.phantom_emulator import (COMM_ERROR, EXCEED_FORCE, FAIL_INIT, STOP_RESPONDING,  # noqa: E402
                                               HdEmulator, build_hd_emulator)
from hapticam.devices.registry import device_from_spec  # noqa: E402
from hapticam.world.sim import SimulatedDevice, sim_binding_actuate, sim_binding_sense  # noqa: E402
from hapticam.world.users import press  # noqa: E402
from hapticam.errors import DeviceError, UsageError  # noqa: E402
from hapticam.render.loop import LoopConfig, ServoLoop  # noqa: E402
from hapticam.render.result import RenderResult  # noqa: E402
from hapticam.render.scheduled import SILENT_FAULT  # noqa: E402
from hapticam.render.servo import build_servo  # noqa: E402

CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")


from device_scenarios import DUR, MODEL, PARAMS, USERS, no_flags, spring_force  # noqa: E402
SIM_LIKE = dict(origin_mm=(0.0, 0.0, 0.0), resolution_m=PARAMS.resolution_m, apparent_mass_kg=PARAMS.handle_mass_kg)


@pytest.fixture(scope="module")
def emu():
    return HdEmulator(build_hd_emulator())          # one per process, shared by the test modules


@pytest.fixture(scope="module")
def kernels():
    return (build_servo(spring_force, no_flags, hd.phantom_sense, hd.phantom_actuate),
            build_servo(spring_force, no_flags, sim_binding_sense, sim_binding_actuate))


def run_phantom(emu, kd, user, duration_s=DUR, model=MODEL, config=None, **dev_kw):
    dev = PhantomDevice(str(emu.path), **{**SIM_LIKE, **dev_kw}).open()
    try:
        loop = ServoLoop(model, dev, config or LoopConfig(ring_capacity=4096), kernels=kd)
        loop.start(duration_s)
        assert loop.wait(duration_s + 5.0), "the loop must end by itself"
        stats = loop.stop()
        res = RenderResult.from_rows(loop.ring[:loop.ticks].copy(), stats, loop.all_events())
    finally:
        dev.close()
    return dev, res, emu.frames()


def _events(res, name):
    return [e for e in res.events if e.name == name]


# -- forces: the simulator's, tick for tick ---------------------------------------------------------------------
@pytest.mark.parametrize("name", list(USERS))
def test_forces_equal_the_simulator_and_reach_the_emulated_handle(emu, kernels, name):
    """The vendor's frame samples, the tick computes and commands, the plant runs one period: the
    simulator's own timing, so forces agree to rounding (positions pass through mm and back)."""
    user = USERS[name]
    emu.configure(PARAMS, user)
    dev, res, frames = run_phantom(emu, kernels[0], user)
    ref = ServoLoop(MODEL, SimulatedDevice(PARAMS, user), kernels=kernels[1]).run_simulated(DUR)
    n = round(DUR * 1000)
    assert res.stats.fault is None and res.force_N.size == n and np.max(np.abs(res.force_N)) > 0.3
    np.testing.assert_allclose(res.x_m, ref.x_m, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.force_N, ref.force_N, rtol=0, atol=1e-9)
    # the force on the emulated handle: -F along the axis (0, -1, 0), nothing across it
    np.testing.assert_allclose(frames["fy_N"][:n], res.force_N, rtol=0, atol=1e-12)
    assert np.all(frames["fx_N"][:n] == 0.0) and np.all(frames["fz_N"][:n] == 0.0)
    np.testing.assert_allclose(frames["x_true_m"][:n], ref.x_true_m, rtol=0, atol=1e-12)
    assert frames["fy_N"][n] == 0.0                       # the last frame: zero force, then unscheduled
    assert dev.counters()["frames"] == n + 1


def test_the_rail_holds_the_handle_on_the_axis_with_a_passive_spring(emu, kernels):
    off = (0.002, 0.0, -0.001)                            # the handle held 2 mm right and 1 mm back
    emu.configure(PARAMS, USERS["press"], offaxis_m=off)
    dev, res, frames = run_phantom(emu, kernels[0], USERS["press"], duration_s=0.2)
    k_rail = 0.5 * 4000.0                                 # half the passive bound K < 2 b / T = 4000 N/m
    assert dev.session_notes()["rail_stiffness_N_per_m"] == k_rail
    n = res.force_N.size
    np.testing.assert_allclose(frames["fx_N"][:n], -k_rail * off[0], rtol=1e-12)
    np.testing.assert_allclose(frames["fz_N"][:n], -k_rail * off[2], rtol=1e-12)
    np.testing.assert_allclose(frames["fy_N"][:n], res.force_N, rtol=0, atol=1e-12)   # the key is unchanged
    np.testing.assert_allclose(res.x_true_m, np.hypot(off[0], off[2]), rtol=1e-9)    # diagnostic: distance from the rail
    with pytest.raises(DeviceError, match="passive bound"):
        PhantomDevice(str(emu.path), rail_stiffness_N_per_m=5000.0, **SIM_LIKE).open()


def test_the_devices_own_clamping_bounds_the_total_force(emu, kernels):
    emu.configure(PARAMS, USERS["press"], offaxis_m=(0.005, 0.0, 0.0))   # the rail alone asks for 10 N
    _, res, frames = run_phantom(emu, kernels[0], USERS["press"], duration_s=0.2)
    n = res.force_N.size
    total = np.sqrt(frames["fx_N"][:n] ** 2 + frames["fy_N"][:n] ** 2 + frames["fz_N"][:n] ** 2)
    np.testing.assert_allclose(total, PARAMS.max_force_N, rtol=1e-12)        # scaled to HD_NOMINAL_MAX_FORCE
    np.testing.assert_allclose(frames["fy_N"][:n] / frames["fx_N"][:n], -res.force_N / (2000.0 * 0.005), rtol=1e-9)  # direction kept
    assert emu.counters()["clamped"] >= n and res.stats.fault is None


# -- the device ------------------------------------------------------------------------------------------------
def test_spec_strings_and_the_devices_own_safety_come_from_the_device(emu):
    emu.configure(PARAMS, None)
    with PhantomDevice(str(emu.path), **SIM_LIKE) as dev:
        s = dev.spec
        assert (s.max_force_N, s.max_force_rate_N_per_s, s.damping_N_s_per_m) == (8.0, 8000.0, 2.0)
        assert s.max_stiffness_N_per_m == pytest.approx(4000.0) and s.workspace_m == pytest.approx((-0.02, 0.03))
        assert dev.info == {"model": "Touch (hd_emu)", "vendor": "3D Systems (emulated by hapticam)",
                            "serial": "EMU-00001"}
        assert dev.update_rate_hz == 1000.0
        assert emu.enabled() == {"force output", "max force clamping", "force ramping", "software force limit",
                                 "software velocity limit", "force impulse limit"}
    assert emu.enabled() == set() and dev.notes[-1] == ("closed: callback unscheduled, force output disabled, "
                                                        "scheduler stopped, device disabled")
    frames = emu.counters()["frames"]
    dev.close()                                             # idempotent
    assert emu.counters()["frames"] == frames               # the scheduler is stopped


def test_origin_defaults_to_the_handle_at_open_and_the_workspace_follows_the_axis(emu):
    emu.configure(PARAMS, press(0.004, 1.0))               # the user holds the handle at -0.5 mm
    with PhantomDevice(str(emu.path), resolution_m=1e-6) as dev:
        assert dev.session_notes()["origin_mm"] == pytest.approx([0.0, 0.5, 0.0])
        assert dev.spec.workspace_m == pytest.approx((-0.0195, 0.0305))
        assert dev.read().x_m == pytest.approx(0.0, abs=1e-12)
    box = np.array([-10.0, -10.0, -10.0, 10.0, 10.0, 10.0])
    a = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
    assert axis_interval_m(a, np.zeros(3), box) == pytest.approx((-0.01 * np.sqrt(2.0), 0.01 * np.sqrt(2.0)))
    assert axis_interval_m(np.array([0.0, 0.0, 1.0]), np.array([20.0, 0.0, 0.0]), box) == (0.0, 0.0)


def test_device_option_parsing():
    dev = device_from_spec("phantom:axis=0,0,-2:origin=1,2,3:lib=/opt/x/libHD.so:rail=100")
    assert isinstance(dev, PhantomDevice) and dev.axis.tolist() == [0.0, 0.0, -1.0]
    assert dev.origin_mm.tolist() == [1.0, 2.0, 3.0] and dev.library == "/opt/x/libHD.so" and dev.rail_request == 100.0
    for bad, msg in (("phantom:axis=0,0,0", "must not be zero"), ("phantom:axis=1,2", "three"),
                     ("phantom:speed=3", "unknown part"), ("phantom:rail=stiff", "not a number")):
        with pytest.raises(UsageError, match=msg):
            device_from_spec(bad)


def test_a_missing_library_or_symbol_is_one_clear_error(tmp_path, monkeypatch):
    with pytest.raises(DeviceError, match="does not exist; install OpenHaptics"):
        PhantomDevice(str(tmp_path / "nowhere" / "libHD.so")).open()
    monkeypatch.setenv(hd.LIB_ENV, str(tmp_path / "env" / "libHD.so"))
    with pytest.raises(DeviceError, match=r"env/libHD.so does not exist"):
        PhantomDevice().open()
    src = tmp_path / "partial.c"
    src.write_text("void hdBeginFrame(unsigned int h) { (void)h; }\n")
    lib = tmp_path / "libpartial.so"
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    with pytest.raises(DeviceError, match="lacks hdInitDevice"):
        PhantomDevice(str(lib)).open()


def test_a_failed_init_is_refused_with_its_code(emu, monkeypatch):
    emu.configure(PARAMS, None)
    emu.inject(FAIL_INIT, 0, 1)
    with pytest.raises(DeviceError, match=r"hdInitDevice failed \(HDAPI error 0x0300\)"):
        PhantomDevice(str(emu.path)).open()
    emu.configure(PARAMS, None)
    monkeypatch.setenv("HDEMU_FAIL_INIT", "1")                # the emulator's switch in the environment
    with pytest.raises(DeviceError, match=r"hdInitDevice failed \(HDAPI error 0x0300\).*Touch_Setup"):
        PhantomDevice(str(emu.path)).open()
    monkeypatch.delenv("HDEMU_FAIL_INIT")
    PhantomDevice(str(emu.path)).open().close()


def test_the_loop_rate_must_be_the_devices(emu, kernels):
    emu.configure(PARAMS, USERS["press"])
    with PhantomDevice(str(emu.path), **SIM_LIKE) as dev:
        loop = ServoLoop(MODEL, dev, LoopConfig(rate_hz=500.0), kernels=kernels[0])
        loop.start(0.1)
        loop.wait(5.0)
        with pytest.raises(Exception, match=r"runs at 1000 Hz \(HD_UPDATE_RATE\).*--rate 1000"):
            loop.stop()


# -- faults ------------------------------------------------------------------------------------------------------
def test_force_errors_zero_the_force_are_logged_counted_and_the_loop_goes_on(emu, kernels):
    emu.configure(PARAMS, USERS["press"])
    emu.inject(EXCEED_FORCE, 200, 5)
    dev, res, frames = run_phantom(emu, kernels[0], USERS["press"])
    errors = _events(res, "device-error")
    assert [e.value for e in errors] == [0x0201] * 5 and [e.tick for e in errors] == list(range(200, 205))
    assert res.stats.interventions["device-error"] == 5 and dev.counters()["force_errors"] == 5
    assert np.all(frames["fy_N"][200:205] == 0.0) and np.all(frames["fy_N"][195:200] != 0.0)
    assert res.stats.fault is None and res.force_N.size == round(DUR * 1000)


def test_a_communication_error_stops_the_loop_with_zero_force(emu, kernels):
    emu.configure(PARAMS, USERS["press"])
    emu.inject(COMM_ERROR, 150)
    dev, res, frames = run_phantom(emu, kernels[0], USERS["press"], duration_s=2.0)
    fault = _events(res, "device-fault")
    assert res.stats.fault == "device-fault" and fault and fault[0].value == -0x0302 and fault[0].tick == 150
    assert res.force_N[-1] == 0.0 and res.force_N.size == 151
    assert dev.counters()["fatal_errors"] >= 1 and dev.faulted
    assert np.all(frames["fy_N"][150:] == 0.0) and np.all(frames["fy_N"][140:150] != 0.0)


def test_a_device_that_stops_responding_stops_the_loop(emu, kernels):
    emu.configure(PARAMS, USERS["press"])
    emu.inject(STOP_RESPONDING, 150)
    dev, res, frames = run_phantom(emu, kernels[0], USERS["press"], duration_s=3.0, silence_ms=100.0)
    fault = _events(res, "device-fault")
    assert res.stats.fault == "device-fault" and fault and fault[0].value == SILENT_FAULT
    assert res.force_N.size == 150 and _events(res, "stop")
    counters = emu.counters()
    assert counters["stalled"] >= 90                        # the device zeroed its output meanwhile
    assert dev.notes[-2].startswith("force output disabled: the device's scheduler stopped")
    assert dev.notes[-1].startswith("closed: callback unscheduled")


def test_hapticam_devices_lists_adapters_drivers_and_what_to_install(emu, tmp_path, monkeypatch, capsys):
    import json

    from hapticam.cli import main

    monkeypatch.setenv(hd.LIB_ENV, str(emu.path))
    assert main(["devices", "--json"]) == 0
    found = {d["name"]: d for d in json.loads(capsys.readouterr().out)["devices"]}
    assert set(found) >= {"sim", "serial", "zmq", "phantom"}
    assert found["phantom"]["present"] and found["phantom"]["extra"] == "phantom" and found["sim"]["present"]
    monkeypatch.setenv(hd.LIB_ENV, str(tmp_path / "libHD.so"))
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "phantom  MISSING" in out and "install: install OpenHaptics for Linux" in out and "HAPTICAM_LIBHD" in out


def test_a_stop_before_the_first_tick_ends_cleanly_with_a_zero_force_frame(emu, kernels):
    emu.configure(PARAMS, USERS["press"])
    with PhantomDevice(str(emu.path), **SIM_LIKE) as dev:
        loop = ServoLoop(MODEL, dev, LoopConfig(ring_capacity=4096), kernels=kernels[0])
        loop.request_stop()
        loop.start(1.0)
        assert loop.wait(5.0)
        stats = loop.stop()
    assert stats.fault is None and stats.ticks == 0 and [e.name for e in loop.all_events()][-1] == "stop"
    frames = emu.frames()
    assert frames["fy_N"].size == 1 and frames["fy_N"][0] == 0.0

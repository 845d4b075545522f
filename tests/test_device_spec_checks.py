"""One check of a device's specification for every adapter, zero as the last command on every stop, and
faults told by their cause.

A ZeroMQ server or a firmware that states an infinite, NaN or negative peak force is refused before a force
is commanded (``render`` exits 2 with one line naming the field); on each adapter's emulator the device's
last received force is zero after the loop stops at its end and after it stops on a fault (a model force
turned NaN mid-run); a device fault's message names its cause and keeps its code."""

from __future__ import annotations

import importlib.util
import math
import shutil
import time

import numpy as np
import pytest

pytest.importorskip("serial")
pytest.importorskip("zmq")

from hapticam.cli import main  # noqa: E402
from hapticam.devices import phantom_hd as hd  # noqa: E402
from hapticam.devices import remote, serial_device  # noqa: E402
from hapticam.devices.base import (IO_SIZE, Device, DeviceSpec, DeviceState, UnopenedDeviceSpec,  # noqa: E402
                                   spec_problem)
from hapticam.devices.hsp_emulator import HspEmulator, build_emulator  # noqa: E402
from hapticam.devices.phantom import PhantomDevice  # noqa: E402
from hapticam.devices.remote import RemoteDevice, remote_actuate, remote_sense  # noqa: E402
from hapticam.devices.remote_server import DeviceServer  # noqa: E402
from hapticam.devices.serial_device import SerialDevice, serial_actuate, serial_sense  # noqa: E402
from hapticam.world.sim import D_FCMD, SimulatedDevice  # noqa: E402
from hapticam.errors import DeviceError  # noqa: E402
from hapticam.models.base import CompiledModel  # noqa: E402
from hapticam.commands.render import _event_value  # noqa: E402
from hapticam.render.loop import LoopConfig, ServoLoop  # noqa: E402
from hapticam.render.result import RenderResult  # noqa: E402
from hapticam.render.scheduled import SILENT_FAULT  # noqa: E402
from hapticam.render.servo import build_servo  # noqa: E402

from device_scenarios import MODEL, PARAMS, USERS, no_flags, spring_force  # noqa: E402

HAS_CC = shutil.which("cc") is not None or shutil.which("gcc") is not None
needs_cc = pytest.mark.skipif(not HAS_CC, reason="no C compiler")
UNPHYSICAL = pytest.mark.parametrize("value", [math.inf, math.nan, -5.0], ids=["inf", "nan", "negative"])
#: the spring-damper key with its damping turned NaN: the loop's NaN fault, at a tick of our choosing
NAN_MODEL = CompiledModel(params=np.array([0.0, math.nan, 400.0]), state0=np.zeros(1))
RUN_S = 0.3                                 # the press user holds the key down at 0.3 s: forces are on
FAULT_AT_S = 0.15


def _refused_in_one_line(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _render(device: str) -> list[str]:
    return ["render", "example:linear-key", "--device", device, "--duration", "0.2"]


def _run(loop: ServoLoop, fault: bool) -> RenderResult:
    """Run ``loop`` for RUN_S (real time); with ``fault``, turn the model's force NaN at FAULT_AT_S."""
    loop.start(RUN_S)
    if fault:
        time.sleep(FAULT_AT_S)
        loop.load_model(NAN_MODEL)
    assert loop.wait(RUN_S + 5.0), "the loop must end by itself"
    stats = loop.stop()
    return RenderResult.from_rows(loop.ring[:loop.ticks].copy(), stats, loop.all_events())


def _check_the_run(res: RenderResult, fault: bool) -> None:
    """The run ended as asked (at its end, or on the NaN fault), with forces on during it (10 mN: a host that
    runs fewer real-time ticks before the fault leaves the press shallower, 32 mN in one CI run)."""
    if fault:
        assert res.stats.fault == "nan" and res.t_s[-1] < RUN_S - 0.05
    else:
        assert res.stats.fault is None and res.t_s[-1] > RUN_S - 0.01
    assert np.max(np.abs(res.force_N)) > 0.01


class _StatedSpec:
    """What a served device's spec says in the handshake (a server is a peer: it may say anything)."""

    def __init__(self, stated: dict) -> None:
        self.stated = stated

    def to_dict(self) -> dict:
        return dict(self.stated)


@pytest.fixture(scope="module")
def emu_exe(tmp_path_factory):
    if not HAS_CC:
        pytest.skip("no C compiler")
    return build_emulator(tmp_path_factory.mktemp("hsp"))


# -- the spec is checked once, for every adapter ----------------------------------------------------------------
@UNPHYSICAL
def test_render_refuses_a_zmq_server_stating_an_unphysical_peak_force(value, capsys):
    served = SimulatedDevice(PARAMS)
    served.spec = _StatedSpec({**SimulatedDevice(PARAMS).spec.to_dict(), "max_force_N": value})
    server = DeviceServer(served)
    with server as endpoint:
        with pytest.raises(DeviceError, match="max_force_N"):     # (a patient first handshake: a loaded machine)
            RemoteDevice(endpoint, timeout_s=10.0).open()
        line = _refused_in_one_line(_render(f"zmq:{endpoint}"), capsys)
    assert "max_force_N" in line and repr(value) in line and f"zmq:sim@{endpoint}" in line
    assert server.stats.ticks == 0                       # refused at the handshake: not one force commanded


@pytest.mark.parametrize("field, value", [("workspace_m", [0.03, -0.02]), ("damping_N_s_per_m", -2.0),
                                          ("max_stiffness_N_per_m", 1e300), ("max_force_rate_N_per_s", 0.0),
                                          ("apparent_mass_kg", 0.0), ("resolution_m", math.nan),
                                          ("name", "sim\nFAULT: none"), ("max_force_N", "8")])
def test_every_field_a_zmq_server_states_is_checked(field, value):
    """A remote device requires the passivity controller, whose bounds scale with the handle's mass: a mass
    of 0 is refused there though a local spec may leave it unstated."""
    served = SimulatedDevice(PARAMS)
    served.spec = _StatedSpec({**SimulatedDevice(PARAMS).spec.to_dict(), field: value})
    with DeviceServer(served) as endpoint:
        dev = RemoteDevice(endpoint, timeout_s=10.0)
        with pytest.raises(DeviceError) as refused:
            dev.open()
    assert field in str(refused.value) and "\n" not in str(refused.value) and not dev.is_open


@needs_cc
@UNPHYSICAL
def test_render_refuses_a_firmware_stating_an_unphysical_peak_force(emu_exe, value, capsys):
    emu = HspEmulator(PARAMS, None, executable=emu_exe, reported={"max_force_N": value})
    with emu as port:
        with pytest.raises(DeviceError, match="max_force_N"):     # (a patient first handshake: a loaded machine)
            SerialDevice(port, timeout_s=10.0).open()
        line = _refused_in_one_line(_render(f"serial:{port}"), capsys)
    assert "max_force_N" in line and repr(value) in line and f"serial:hsp-emu@{port}" in line
    assert emu.summary["forces"] == 0                    # refused at INFO: not one FORCE frame sent


@needs_cc
def test_a_firmwares_bad_damping_is_named_as_itself(emu_exe):
    """The serial adapter derives the passive stiffness bound from the damping: the damping is named."""
    with HspEmulator(PARAMS, None, executable=emu_exe, reported={"damping_N_s_per_m": -2.0}) as port:
        with pytest.raises(DeviceError, match="damping_N_s_per_m = -2.0"):
            SerialDevice(port, timeout_s=10.0).open()


def test_specs_within_the_bounds_pass_and_the_placeholder_renders_nothing():
    spec = SimulatedDevice(PARAMS).spec
    assert spec_problem(spec) is None
    with pytest.raises(DeviceError, match="max_force_N"):
        DeviceSpec(**{**spec.to_dict(), "max_force_N": 2e4})        # past any haptic device (MAX_FORCE_N)
    assert DeviceSpec(**{**spec.to_dict(), "max_stiffness_N_per_m": 0.0, "damping_N_s_per_m": 0.0})   # frictionless
    placeholder = UnopenedDeviceSpec.named("serial:/dev/ttyACM0")
    assert placeholder.max_force_N == 0.0 and placeholder.workspace_m == (0.0, 0.0)
    with pytest.raises(DeviceError):
        UnopenedDeviceSpec(**{**placeholder.to_dict(), "max_force_N": 8.0})


def test_an_adapter_that_opens_without_stating_its_spec_is_closed_and_refused():
    class Silent(Device):
        closed = 0

        def __init__(self) -> None:
            super().__init__()
            self.spec = UnopenedDeviceSpec.named("silent")

        def _open(self) -> None:
            pass

        def _close(self) -> None:
            Silent.closed += 1

        def _read(self) -> DeviceState:
            return DeviceState(0.0, 0.0)

        def _write(self, force_N: float) -> None:
            pass

    dev = Silent()
    with pytest.raises(DeviceError, match="silent"):
        dev.open()
    assert not dev.is_open and Silent.closed == 1


# -- the last command on any stop is zero ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def remote_kernels():
    return build_servo(spring_force, no_flags, remote_sense, remote_actuate)


@pytest.fixture(scope="module")
def serial_kernels():
    return build_servo(spring_force, no_flags, serial_sense, serial_actuate)


@pytest.mark.parametrize("fault", [False, True], ids=["stop", "fault"])
def test_zmq_the_served_devices_last_force_is_zero(remote_kernels, fault):
    served = SimulatedDevice(PARAMS, USERS["press"])
    with DeviceServer(served) as endpoint:
        dev = RemoteDevice(endpoint, timeout_s=10.0).open()
        try:
            res = _run(ServoLoop(MODEL, dev, LoopConfig(ring_capacity=4096), kernels=remote_kernels), fault)
            binding, io = dev.servo_binding(), np.zeros(IO_SIZE)
            deadline = time.monotonic() + 2.0
            while dev.ist[remote.I_SEEN] != dev.ist[remote.I_SEQ]:   # the reply to the last request: applied
                binding.sense(binding.state, io)
                assert time.monotonic() < deadline, "the server must answer the loop's last request"
                time.sleep(1e-3)
            last_force = float(served.dev[D_FCMD])
        finally:
            dev.close()
    _check_the_run(res, fault)
    assert last_force == 0.0


def test_zmq_a_client_gone_silent_with_a_force_on_is_zeroed_by_the_server():
    served = SimulatedDevice(PARAMS, USERS["press"])
    server = DeviceServer(served, watchdog_ms=50.0)
    with server as endpoint:
        dev = RemoteDevice(endpoint, timeout_s=10.0).open()
        dev.write(2.0)
        deadline = time.monotonic() + 2.0
        while served.dev[D_FCMD] != 2.0 and time.monotonic() < deadline:
            time.sleep(1e-3)
        assert served.dev[D_FCMD] == 2.0                 # the force is on, and no request follows
        time.sleep(0.3)
        held = float(served.dev[D_FCMD])
        dev.close()
    assert held == 0.0 and server.stats.watchdog_zeroes == 1


@needs_cc
@pytest.mark.parametrize("fault", [False, True], ids=["stop", "fault"])
def test_serial_the_firmwares_last_force_is_zero(emu_exe, serial_kernels, fault):
    with HspEmulator(PARAMS, USERS["press"], executable=emu_exe) as port:
        dev = SerialDevice(port, timeout_s=10.0).open()
        try:
            res = _run(ServoLoop(MODEL, dev, LoopConfig(ring_capacity=4096), kernels=serial_kernels), fault)
            binding, io = dev.servo_binding(), np.zeros(IO_SIZE)
            deadline = time.monotonic() + 2.0
            while dev.ist[serial_device.I_ECHO] != dev.ist[serial_device.I_SEQ]:   # the STATE answering the last FORCE
                binding.sense(binding.state, io)
                assert time.monotonic() < deadline, "the firmware must answer the loop's last FORCE"
                time.sleep(1e-3)
            applied = float(dev.fst[serial_device.F_APPLIED_N])    # what the firmware applies since that FORCE
        finally:
            dev.close()
    _check_the_run(res, fault)
    assert np.max(np.abs(res.x_true_m)) > 0.1             # the firmware reported forces on during the run
    assert applied == 0.0


@pytest.fixture(scope="module")
def hd_emu():
    if importlib.util.find_spec("pyOpenHaptics") is None:
        pytest.skip("pyOpenHaptics is not installed (pip install 'hapticam[phantom]')")
    if not HAS_CC:
        pytest.skip("no C compiler")
    from hapticam.devices.phantom_emulator import HdEmulator, build_hd_emulator

    return HdEmulator(build_hd_emulator())               # one per process, shared by the test modules


@pytest.fixture(scope="module")
def phantom_kernels():
    return build_servo(spring_force, no_flags, hd.phantom_sense, hd.phantom_actuate)


@pytest.mark.parametrize("fault", [False, True], ids=["stop", "fault"])
def test_phantom_the_last_frame_commands_zero_with_the_rail_released(hd_emu, phantom_kernels, fault):
    hd_emu.configure(PARAMS, USERS["press"], offaxis_m=(0.002, 0.0, -0.001))   # the rail pulls on the handle
    dev = PhantomDevice(str(hd_emu.path), origin_mm=(0.0, 0.0, 0.0), resolution_m=PARAMS.resolution_m,
                        apparent_mass_kg=PARAMS.handle_mass_kg).open()
    try:
        res = _run(ServoLoop(MODEL, dev, LoopConfig(ring_capacity=4096), kernels=phantom_kernels), fault)
    finally:
        dev.close()
    frames = hd_emu.frames()
    force = np.stack([frames["fx_N"], frames["fy_N"], frames["fz_N"]], axis=1)   # on the handle (N)
    n = res.force_N.size
    _check_the_run(res, fault)
    assert force.shape[0] == n + 1                       # every tick's frame, then the stop's
    assert np.all(force[n - 1, [0, 2]] != 0.0)           # the rail held the handle up to the last tick
    assert np.all(force[n] == 0.0)


# -- fault messages name the cause -------------------------------------------------------------------------------
def test_hdapi_errors_and_a_silent_scheduler_are_told_by_their_cause():
    dev = PhantomDevice()
    for code, cause in hd.ERROR_TEXT.items():
        status = hd.classify(code)                       # as the compiled tick returns it
        assert cause in dev.status_text(status) and f"{status:#06x}" in dev.status_text(status)
    assert dev.status_text(SILENT_FAULT) != f"device code {SILENT_FAULT:#06x}"


@pytest.mark.parametrize("module", [serial_device, remote], ids=["serial", "zmq"])
def test_every_status_code_an_adapter_returns_has_a_cause(module):
    codes = {v for k, v in vars(module).items() if k.startswith(("ERR_", "FAULT_")) and isinstance(v, int)}
    assert codes and codes <= set(module.STATUS_TEXT)


def test_a_device_fault_is_printed_with_its_cause_and_its_code(remote_kernels):
    server = DeviceServer(SimulatedDevice(PARAMS, USERS["press"]))
    dev = RemoteDevice(server.start(), silence_ms=100, timeout_s=10.0).open()
    loop = ServoLoop(MODEL, dev, LoopConfig(ring_capacity=4096), kernels=remote_kernels)
    loop.start(3.0)
    time.sleep(0.1)
    server.stop()
    assert loop.wait(5.0)
    loop.stop()
    dev.close()
    fault = [e for e in loop.all_events() if e.name == "device-fault"][0]
    text = _event_value(fault, dev)
    assert remote.STATUS_TEXT[remote.FAULT_SILENT] in text and f"{remote.FAULT_SILENT:#06x}" in text
    assert _event_value(fault) == f"device code {remote.FAULT_SILENT:#06x}"   # without the device: the code alone

"""``hapticam probe --device serial:PORT`` against the hsp firmware emulator pressing an emulated keyswitch.

The emulator (``devices/emulators/hsp_emu.c``) hosts the object: a piecewise-linear force-travel curve
from a contact point, with an electrical contact. The ground truth is that curve, evaluated here from the
same table the emulator was given.
"""

from __future__ import annotations

import os
import select
import threading
import time
import tty

import numpy as np
import pytest

pytest.importorskip("serial")

import hapticam  # noqa: E402
from hapticam.capture import Capture  # noqa: E402
from hapticam.capture_io import load_capture  # noqa: E402
from hapticam.cli import main  # noqa: E402
from hapticam.devices import hsp_frames as hf  # noqa: E402
from hapticam.devices.hsp_emulator import HspEmulator, build_emulator  # noqa: E402
from hapticam.devices.serial_device import SerialDevice  # noqa: E402
from hapticam.devices.serial_probe import SerialProbe  # noqa: E402
from hapticam.world.sim import ROTARY_PARAMS, turning_hand  # noqa: E402

#: the object: its plunger meets the probe at 1 mm; preload 0.3 N, a tactile bump at 1.6 mm of travel,
#: the contact closing at 2.0 mm (opening at 1.9 mm), bottom-out from 3.8 mm (travel m, force N)
TARGET_AT_M = 1e-3
CURVE = np.array([[0.0, 0.30], [1.0e-3, 0.45], [1.6e-3, 0.65], [2.2e-3, 0.40], [3.5e-3, 0.55], [3.8e-3, 0.60],
                  [4.0e-3, 3.0]])
CONTACT_AT_M, RELEASE_AT_M = 2.0e-3, 1.9e-3
STROKE = ["--center-mm", "2.4", "--amplitude-mm", "2.4"]        # 0 to 4.8 mm: 3.8 mm of travel into the object


def true_force(x_m: np.ndarray) -> np.ndarray:
    """The emulated object's push on the probe (N) at probe position ``x_m``."""
    d = np.asarray(x_m) - TARGET_AT_M
    return np.where(d > 0, np.interp(d, CURVE[:, 0], CURVE[:, 1]), 0.0)


class KeyswitchEmulator(HspEmulator):
    """The hsp emulator with the keyswitch above in front of its handle (and the faults given)."""

    def __init__(self, *extra: str, **kw):
        super().__init__(**kw)
        self.extra = ["--target-at", repr(TARGET_AT_M), "--target-curve", ",".join(repr(float(v)) for v in CURVE.ravel()),
                      "--contact-at", repr(CONTACT_AT_M), "--release-at", repr(RELEASE_AT_M), *extra]

    def _args(self, exe, master):
        return super()._args(exe, master) + self.extra


@pytest.fixture(scope="module")
def emu_exe(tmp_path_factory):
    return build_emulator(tmp_path_factory.mktemp("hsp"))


def test_a_probe_run_identifies_a_model_that_verifies_against_the_objects_own_force(emu_exe, tmp_path, capsys):
    out = tmp_path / "press.csv"
    with KeyswitchEmulator(executable=emu_exe) as port:
        started = time.monotonic()
        assert main(["probe", "--device", f"serial:{port}", "--excitation", "triangle", "--duration", "2", *STROKE,
                     "-o", str(out)]) == 0
        run_s = time.monotonic() - started
    assert "stopped: complete" in capsys.readouterr().out
    capture = load_capture(out)
    assert capture.n == 2000 and capture.metadata["stopped"] == "complete"
    assert capture.x_m.max() > TARGET_AT_M + 3.5e-3                       # the stroke reached the bottom-out region
    # the load cell reads the object's own force at the probe's position, to one encoder count (1 um; the
    # steepest part of the curve, 12 N/mm, changes by 12 mN over a count)
    around = np.stack([true_force(capture.x_m - 1e-6), true_force(capture.x_m + 1e-6)])
    assert np.all(capture.f_N >= around.min(axis=0) - 0.013) and np.all(capture.f_N <= around.max(axis=0) + 0.013)
    fit = hapticam.identify_impedance(capture)
    truth = Capture.from_arrays(capture.t_s, capture.x_m, true_force(capture.x_m), name="emulated keyswitch",
                                metadata=dict(capture.metadata))
    result = hapticam.verify(fit.model, truth, model_name="identified")
    print(f"serial probe: run {run_s:.1f} s, fit {result.fit_percent:.2f} %")
    assert result.fit_percent >= 99.0, result.failures


def test_the_contact_column_closes_at_the_switchs_actuation_point(emu_exe, tmp_path, capsys):
    out = tmp_path / "contact.csv"
    with KeyswitchEmulator(executable=emu_exe) as port:
        assert main(["probe", "--device", f"serial:{port}", "--excitation", "triangle", "--duration", "1", *STROKE,
                     "-o", str(out)]) == 0
    table = _columns(out)
    travel, contact = table["x_m"] - TARGET_AT_M, table["contact"]
    closes = np.flatnonzero(np.diff(contact) > 0) + 1
    opens = np.flatnonzero(np.diff(contact) < 0) + 1
    assert len(closes) == 1 and len(opens) == 1
    step = np.max(np.abs(np.diff(table["x_m"])))                           # travel per sample at the stroke's speed
    assert abs(travel[closes[0]] - CONTACT_AT_M) <= step + 1e-6
    assert abs(travel[opens[0]] - RELEASE_AT_M) <= step + 1e-6


def test_the_force_limit_stops_the_stroke_and_retracts(emu_exe, tmp_path, capsys):
    out = tmp_path / "limited.csv"
    with KeyswitchEmulator(executable=emu_exe) as port:
        assert main(["probe", "--device", f"serial:{port}", "--excitation", "triangle", "--duration", "2", *STROKE,
                     "--force-limit-N", "0.5", "-o", str(out)]) == 0
        probe = SerialProbe(port)                        # after the run: where the probe was left
        try:
            left_at = probe.begin().x_m
        finally:
            probe.end()
    assert "force-limit" in capsys.readouterr().err
    capture = load_capture(out)
    assert capture.metadata["stopped"] == "force-limit" and capture.n < 1000       # stopped on the way in
    assert 0.5 < capture.f_N[-1] < 0.5 + 0.05 and np.all(capture.f_N[:-1] <= 0.5)  # the first sample past it
    assert left_at < TARGET_AT_M                                                     # retracted off the object


@pytest.mark.parametrize("fault", [("--fault-at-ms", "400"), ("--unplug-at-ms", "400")])
def test_a_fault_mid_stroke_ends_with_zero_force_and_a_readable_partial_capture(emu_exe, tmp_path, capsys, fault):
    out = tmp_path / "cut.csv"
    emu = KeyswitchEmulator(*fault, executable=emu_exe)
    with emu as port:
        started = time.monotonic()
        assert main(["probe", "--device", f"serial:{port}", "--excitation", "triangle", "--duration", "2", *STROKE,
                     "-o", str(out)]) == 2
        assert time.monotonic() - started < 5.0                             # no hang on a dead port
    err = capsys.readouterr().err.strip().splitlines()
    assert len([line for line in err if line.startswith("hapticam: error")]) == 1 and "Traceback" not in "".join(err)
    capture = load_capture(out)
    assert 100 < capture.n < 2000 and capture.metadata["stopped"] == "fault"
    assert not os.path.exists(str(out) + ".partial")
    if fault[0] == "--fault-at-ms":                 # the device stayed: the host turned it off (FORCE 0, DISABLE)
        assert emu.summary["disables"] == 1


@pytest.mark.parametrize("argv", [
    ["--device", "nosuch:x"],
    ["--device", "serial:/dev/nonexistent-port"],
    ["--device", "serial:"],
    ["--device", "serial:/dev/null", "--amplitude-mm", "1"],             # no --center-mm
    ["tactile-switch", "--device", "serial:/dev/null"],
])
def test_bad_device_input_is_one_line_and_exit_2(argv, tmp_path, capsys):
    full = ["probe", *argv, "-o", str(tmp_path / "x.csv")]
    if "--amplitude-mm" not in argv and argv[0] != "tactile-switch":
        full += STROKE
    assert main(full) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hapticam: error") and not captured.out
    assert not (tmp_path / "x.csv").exists()


def test_a_rotary_firmware_is_refused_before_it_is_enabled(emu_exe, tmp_path, capsys):
    """A probe strokes a linear axis (m, N): on a knob's firmware (AXIS answered rotary) it would read angles
    (rad) as positions and torques (N m) as forces."""
    out = tmp_path / "turn.csv"
    knob = HspEmulator(ROTARY_PARAMS, turning_hand(2.0), executable=emu_exe, name="knob-emu")
    with knob as port:
        code = main(["probe", "--device", f"serial:{port}", *STROKE, "--duration", "0.5", "-o", str(out)])
        summary = knob.stop()
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "rotary" in err[0] and not captured.out
    assert not out.exists()
    assert summary["frames_rx"] == 2                    # HELLO and AXIS: no CONFIG, ENABLE, POSITION or FORCE


def test_a_v1_host_sees_the_v1_firmware(emu_exe):
    with KeyswitchEmulator(executable=emu_exe) as port:
        dev = SerialDevice(port).open()                                      # HELLO 1 -> INFO 1, ENABLE, STATE
        try:
            assert dev.info.version == 1 and dev.spec.max_force_N == 8.0
            dev._send(hf.pack_force(1, 0))                                   # FORCE -> STATE, as in v1
            assert [t for t, _ in _frames_within(dev._serial.fileno(), 0.3)] == [hf.T_STATE]
        finally:
            dev.close()


def test_v1_firmware_is_reported_as_having_no_probing(tmp_path, capsys):
    master, slave = os.openpty()
    tty.setraw(slave)
    done = threading.Event()

    def v1_firmware():                                 # the handshake as v1, and POSITION an unknown type
        info = hf.Info(1, 1e6, 8.0, 4.0, (-0.02, 0.03), 2.0, 0.05, 8000.0, "v1-only")
        state = hf.State(0, 0, 0, 0, hf.ST_ENABLED, 0)
        replies = {hf.T_HELLO: hf.pack_info(info), hf.T_CONFIG: hf.frame(hf.T_ACK, bytes([hf.T_CONFIG])),
                   hf.T_ENABLE: hf.frame(hf.T_ACK, bytes([hf.T_ENABLE])) + hf.pack_state(state),
                   hf.T_FORCE: hf.pack_state(state), hf.T_DISABLE: hf.frame(hf.T_ACK, bytes([hf.T_DISABLE]))}
        while not done.is_set():
            if select.select([master], [], [], 0.05)[0]:
                frames, _, _ = hf.parse_frames(os.read(master, 4096))
                for ftype, _ in frames:
                    os.write(master, replies.get(ftype, hf.frame(hf.T_ERROR, bytes([ftype, hf.E_TYPE]))))

    worker = threading.Thread(target=v1_firmware, daemon=True)
    worker.start()
    try:
        assert main(["probe", "--device", f"serial:{os.ttyname(slave)}", *STROKE, "-o", str(tmp_path / "x.csv")]) == 2
    finally:
        done.set()
        worker.join()
        os.close(master)
        os.close(slave)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "POSITION" in err[0] and not (tmp_path / "x.csv").exists()


def _columns(path) -> dict[str, np.ndarray]:
    """Every column of a streamed probe capture, by name (the ones the capture loader ignores too)."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    values = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    return dict(zip(lines[0].split(","), values.T))


def _frames_within(fd: int, seconds: float) -> list[tuple[int, bytes]]:
    """The frames read from ``fd`` for ``seconds``."""
    data, end = b"", time.monotonic() + seconds
    while time.monotonic() < end:
        if select.select([fd], [], [], 0.05)[0]:
            data += os.read(fd, 4096)
    return hf.parse_frames(data)[0]

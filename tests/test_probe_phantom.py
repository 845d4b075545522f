"""``hapticam probe --device phantom`` against the HDAPI emulator pressing an emulated keyswitch.

The emulator (``devices/emulators/hd_emu.c``, loaded in this process) hosts the object along the arm's
axis (``hdemu_set_target``, or ``HDEMU_TARGET`` in the environment); the probe estimates the object's
force from the force it commands. The ground truth is the object's curve the emulator was given.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import time

import numpy as np
import pytest

if importlib.util.find_spec("pyOpenHaptics") is None:      # the phantom extra (importing it needs libHD.so)
    pytest.skip("pyOpenHaptics is not installed (pip install 'hapticam[phantom]')", allow_module_level=True)

import hapticam  # noqa: E402
from hapticam.capture import Capture  # noqa: E402
from hapticam.capture_io import load_capture  # noqa: E402
from hapticam.cli import main  # noqa: E402
from hapticam.devices.phantom_emulator import COMM_ERROR, STOP_RESPONDING, HdEmulator, build_hd_emulator  # noqa: E402
from hapticam.world.sim import SimParams  # noqa: E402

pytestmark = pytest.mark.skipif((shutil.which("cc") or shutil.which("gcc")) is None, reason="no C compiler")

#: the object: plunger met at 1 mm along the axis; preload 0.3 N, a tactile bump, bottom-out (travel m, force N)
TARGET_AT_M = 1e-3
CURVE = np.array([[0.0, 0.30], [1.0e-3, 0.45], [1.6e-3, 0.65], [2.2e-3, 0.40], [3.5e-3, 0.55], [3.8e-3, 0.60],
                  [4.0e-3, 3.0]])
STROKE = ["--center-mm", "2.4", "--amplitude-mm", "2.4"]


def true_force(x_m: np.ndarray) -> np.ndarray:
    """The emulated object's push on the probe (N) at probe position ``x_m`` along the axis."""
    d = np.asarray(x_m) - TARGET_AT_M
    return np.where(d > 0, np.interp(d, CURVE[:, 0], CURVE[:, 1]), 0.0)


@pytest.fixture(scope="module")
def emu():
    emulator = HdEmulator(build_hd_emulator())          # one per process, shared by the test modules
    emulator.lib.hdemu_set_target.argtypes = [ctypes.c_double, ctypes.POINTER(ctypes.c_double), ctypes.c_long]
    emulator.lib.hdemu_set_target.restype = ctypes.c_int
    emulator.lib.hdemu_object_force.restype = ctypes.c_double
    yield emulator
    emulator.lib.hdemu_set_target(0.0, None, 0)         # the next module's emulator has no object in the way


def _with_object(emu: HdEmulator) -> None:
    """The emulator reset to the simulator's plant, with the keyswitch on its axis."""
    emu.configure(SimParams())
    curve = np.ascontiguousarray(CURVE.ravel())
    assert emu.lib.hdemu_set_target(TARGET_AT_M, curve.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), len(CURVE)) == 0


def test_a_phantom_probe_run_identifies_a_model_that_verifies_against_the_objects_own_force(emu, tmp_path, capsys):
    _with_object(emu)
    out = tmp_path / "press.csv"
    started = time.monotonic()
    assert main(["probe", "--device", f"phantom:lib={emu.path}", "--excitation", "triangle", "--duration", "3",
                 *STROKE, "-o", str(out)]) == 0
    run_s = time.monotonic() - started
    assert "stopped: complete" in capsys.readouterr().out
    assert emu.lib.hdemu_object_force() == 0.0                              # retracted: off the object
    capture = load_capture(out)
    assert capture.n == 3000 and np.allclose(np.diff(capture.t_s), 1e-3)    # every servo frame, in order
    assert capture.x_m.max() > TARGET_AT_M + 3.0e-3
    fit = hapticam.identify_impedance(capture)
    truth = Capture.from_arrays(capture.t_s, capture.x_m, true_force(capture.x_m), name="emulated keyswitch",
                                metadata=dict(capture.metadata))
    result = hapticam.verify(fit.model, truth, model_name="identified")
    print(f"phantom probe: run {run_s:.1f} s, fit {result.fit_percent:.2f} %, {result.failures}")
    assert result.fit_percent >= 99.0


@pytest.mark.parametrize("fault", [COMM_ERROR, STOP_RESPONDING])
def test_a_fault_mid_stroke_ends_with_zero_force_and_a_readable_partial_capture(emu, tmp_path, capsys, fault):
    _with_object(emu)
    emu.inject(fault, at_frame=1500)                # frames from the first tick: approach, settle, then the stroke
    out = tmp_path / "cut.csv"
    assert main(["probe", "--device", f"phantom:lib={emu.path}", "--excitation", "triangle", "--duration", "2",
                 *STROKE, "-o", str(out)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("hapticam: error")]
    assert len(err) == 1 and "force off" in err[0]
    capture = load_capture(out)
    assert 100 < capture.n < 2000 and capture.metadata["stopped"] == "fault"
    assert not os.path.exists(str(out) + ".partial")
    if fault == COMM_ERROR:                         # the tick saw the error: its frame commanded no force
        frames = emu.frames()
        assert np.all(np.c_[frames["fx_N"], frames["fy_N"], frames["fz_N"]][-1] == 0.0)
    else:                                           # no frame came: the host turned force output off
        assert emu.counters()["stalled"] > 0
    assert "force output" not in emu.enabled()


def test_bad_phantom_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["probe", "--device", "phantom:nonsense", *STROKE, "-o", str(tmp_path / "x.csv")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hapticam: error")
    assert not (tmp_path / "x.csv").exists()

"""How a render ends when something fails at the end: a full disk under the recording, a firmware too slow to
take the shutdown, a ``kill -9``. Each is a real ``hapticam render`` process: the statistics are printed, the
force is zeroed and the device disabled, and a killed recording loses at most 100 ms of ticks."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hapticam.render.recording import partial_path
from hapticam.render.recover import recover
from hapticam.render.soak import kill_trials

#: runs the command line twice in one process: once to compile (numba writes its cache files), then under a
#: file size limit (argv[1], bytes) with SIGXFSZ ignored, so that a write past it fails with EFBIG as on a
#: full disk; argv[2:] is the command
FULL_DISK = r"""
import contextlib, io, resource, signal, sys
from hapticam.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    main(["render", "example:linear-key", "--duration", "0.05"])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.exit(main(sys.argv[2:]))
"""


def _ticks_in(recording: Path) -> np.ndarray:
    """The ``t_s`` column of a completed recording (s)."""
    with open(recording, encoding="utf-8") as fh:
        lines = [line for line in fh if not line.startswith("#")]
    return np.array([float(line.split(",")[0]) for line in lines[1:]])      # after the column header


def _contiguous_from_zero(t_s: np.ndarray, rate_hz: float) -> bool:
    return bool(np.allclose(t_s, np.arange(t_s.size) / rate_hz, atol=1e-7))


def test_a_full_disk_cuts_the_recording_short_and_the_statistics_are_still_printed(tmp_path: Path) -> None:
    limit = 8000                                     # the header and about 90 ticks of 85 bytes
    record = tmp_path / "run.csv"
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(limit), "render", "example:linear-key",
                           "--duration", "0.5", "--record", str(record), "--json"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 2, done.stderr
    report = json.loads(done.stdout)                 # the statistics of the whole run, despite the disk
    assert report["stats"]["ticks"] == 500 and report["stats"]["fault"] is None
    assert report["events"][-1]["event"] == "stop"   # the loop's last act: zero force
    assert report["recording"] is None
    part = partial_path(record)
    errors = [line for line in done.stderr.splitlines() if line.startswith("hapticam: error:")]
    assert len(errors) == 1 and str(part) in errors[0] and report["errors"] and str(part) in report["errors"][0]
    assert part.stat().st_size == limit and not record.exists()
    recovered = recover(part)                        # what was written before the disk filled is a capture
    t_s = _ticks_in(recovered.path)
    assert 0 < recovered.ticks == t_s.size < 500 and _contiguous_from_zero(t_s, 1000.0)


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_a_slow_firmware_is_disabled_at_shutdown_and_the_statistics_are_printed(tmp_path: Path) -> None:
    """A firmware that takes 4 ms a frame at 1 kHz: its input backs up until the line is full (about 1.5 s,
    16 kB, over 1000 FORCE frames). The render still ends with its statistics (exit 0), and DISABLE
    reaches the firmware ahead of the FORCE frames still queued in the line, which are dropped rather than
    applied after the loop stopped: the firmware handles hundreds fewer than the loop sent."""
    pytest.importorskip("serial")
    from hapticam.devices import hsp_frames as hf
    from hapticam.devices.hsp_emulator import HspEmulator, build_emulator
    from hapticam.world.users import press

    emu = HspEmulator(None, press(0.003, 1.0), plant_clock="wall", slow_us=4000,
                      executable=build_emulator(tmp_path))
    with emu as port:
        done = subprocess.run([sys.executable, "-m", "hapticam", "render", "example:linear-key", "--device",
                               f"serial:{port}", "--duration", "2", "--json"],
                              capture_output=True, text=True, cwd=tmp_path, timeout=600)
        assert done.returncode in (0, 1), done.stderr                     # 1: the loop stopped on a fault
        report = json.loads(done.stdout)
        stats = report["stats"]
        assert stats["ticks"] == 2000 and stats["fault"] is None and report["errors"] == [], (stats, done.stderr)
        assert done.returncode == 0
        acked = _disable_acked(port, hf, time.monotonic() + 20.0)
    assert acked and emu.summary["disables"] == 1
    sent = stats["ticks"] - stats["interventions"]["device-error"]     # a tick the port refused is counted
    assert emu.summary["forces"] <= sent - 500, (emu.summary, sent)


def _disable_acked(port: str, hf, deadline: float) -> bool:
    """Whether the firmware's ACK to DISABLE shows on ``port`` by ``deadline`` (``time.monotonic()`` s)."""
    fd = os.open(port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    pending = b""
    try:
        while time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                pending += os.read(fd, 4096)
                frames, _bad, pending = hf.parse_frames(pending)
                if (hf.T_ACK, bytes([hf.T_DISABLE])) in frames:
                    return True
    finally:
        os.close(fd)
    return False


def test_kill_9_of_a_recording_render_loses_at_most_100_ms(tmp_path: Path) -> None:
    """The ticks a trial lost are known to within the ticks between its status request and the kill: at
    least ``lost_ticks_min``, at most ``lost_ticks``. On a machine so loaded that the kill came over 50 ms
    after the request, only the first bounds the loss."""
    result = kill_trials(2, out_dir=str(tmp_path), seed=3)
    for k, trial in enumerate(result["trials"]):
        t_s = _ticks_in(tmp_path / f"kill-{k}.csv")
        assert t_s.size == trial["recovered_ticks"] and _contiguous_from_zero(t_s, 1000.0)
        assert trial["lost_ticks_min"] <= 100, trial                          # 100 ticks at 1 kHz
    timed = [trial for trial in result["trials"] if trial["kill_window_ticks"] <= 50]
    if not timed:
        pytest.skip(f"no kill came within 50 ms of its status request on this machine: {result['trials']}")
    assert all(trial["lost_ticks"] <= 100 for trial in timed), timed

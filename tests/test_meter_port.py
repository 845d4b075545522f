"""Recording from the Open-Switch-Curve-Meter's serial port, against an emulator of its firmware's stream.

References: the emulator's own lines (what it sent, what it would read without noise and drop-outs), its
switch's closed-form curve and contact points, and the firmware's rules (one step per line, reverse on a
reading over the limit, the release back to 0). Faults: a meter that falls silent or is unplugged mid-stroke,
a recorder killed or interrupted mid-stroke (each leaves a readable partial record and nothing at the output's
name), malformed and over-long lines (skipped and counted, with bounds), a port that is not a meter.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import pytest

pytest.importorskip("serial")

from hapticam.capture_io import load_capture  # noqa: E402
from hapticam.capture_meter import load_meter_capture  # noqa: E402
from hapticam.cli import main  # noqa: E402
from hapticam.devices.meter_emulator import HEADER, MeterEmulator, MeterFirmware  # noqa: E402
from hapticam.commands.probe_device import meter_probe, probe_meter  # noqa: E402
from hapticam.devices.meter_port import MAX_LINE_BYTES, MAX_MALFORMED_BYTES, record_meter  # noqa: E402
from hapticam.streamed_file import partial_csv_path  # noqa: E402
from hapticam.errors import DeviceError, HapticError  # noqa: E402

GF = 9.80665e-3            # N per gram-force
STEP_M = 5e-6


def _expected(measurement, first=0, count=None):
    """The capture the emulator's lines ``first:first+count`` make: travel (m) and tared force (N)."""
    stop = None if count is None else first + count
    x_m = measurement.position_um[first:stop] * 1e-6
    f_gf = measurement.reading_gf[first:stop]
    return x_m, (f_gf - f_gf[0]) * GF


def test_a_recording_is_the_meters_stream_with_its_points(tmp_path):
    firmware = MeterFirmware(dropout_at=(0, 300, 900), seed=1)
    out = tmp_path / "press.csv"
    status = io.StringIO()
    with MeterEmulator(firmware) as emu:
        result = record_meter(emu.port, out, progress=status)
    m = emu.measurement
    assert "Start button" in status.getvalue() and " samples, " in status.getvalue()     # progress, then cleared
    assert result.complete and result.path == out and not partial_csv_path(out).exists()
    assert result.leading_dropouts == 1 and result.malformed == 0
    cap = load_capture(out)
    x_m, f_N = _expected(m, first=1)                       # the first reading, a drop-out, is not the tare
    np.testing.assert_allclose(cap.x_m, x_m, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cap.f_N, f_N, rtol=0, atol=1e-9)
    # the drop-outs near -207 gf (those asked for and the emulator's random ones), found and excluded
    assert {300, 900} <= set(m.dropouts) and sorted(cap.dropouts + 1) == sorted(m.dropouts[1:])
    assert "bluepylons" in cap.metadata["instrument"]      # the meter's author credited
    curve = firmware.curve
    assert abs(cap.metadata["actuation_m"] - 1e-6 * curve.actuation_um) <= STEP_M + 1e-12
    assert abs(cap.metadata["release_m"] - 1e-6 * curve.release_um) <= STEP_M + 1e-12
    assert result.actuation_m == cap.metadata["actuation_m"] and result.release_m == cap.metadata["release_m"]
    # the firmware's reverse rule: no press reading passes the limit, the first release reading does
    k = cap.metadata["press_samples"]
    assert k == result.press_samples and m.reading_gf[1:k + 1].max() <= firmware.reverse_limit_gf
    assert m.reading_gf[k + 1] > firmware.reverse_limit_gf and cap.x_m[-1] == 0.0


def test_the_recording_identifies_and_verifies_against_the_emulators_curve(tmp_path, capsys):
    firmware = MeterFirmware(dropout_at=(250, 1000), seed=2)
    out = tmp_path / "press.npz"
    with MeterEmulator(firmware) as emu:
        result = record_meter(emu.port, out, credit="a tester")
    assert result.complete and result.dropouts == 2
    cap = load_capture(out)
    assert cap.metadata["credit"] == "a tester" and "bluepylons" in cap.metadata["instrument"]
    assert cap.metadata["port"] == emu.port and cap.metadata["malformed_lines"] == 0
    reference = tmp_path / "curve.txt"          # the emulator's curve: its stream without noise or drop-outs
    reference.write_text(HEADER + "\n" + "\n".join(emu.measurement.exact_lines()) + "\n")
    model = tmp_path / "switch.yaml"
    assert main(["identify", "impedance", str(out), "-o", str(model), "--quiet"]) == 0
    capsys.readouterr()
    status = main(["verify", str(model), str(reference), "--json"])
    verdict = json.loads(capsys.readouterr().out)
    assert status == 0 and verdict["passed"], verdict["failures"]
    assert verdict["fit_percent"] >= 99.0
    points = {v["name"]: v for v in verdict["verdicts"] if v["name"] in ("actuation point", "release point")}
    assert set(points) == {"actuation point", "release point"}


def test_a_meter_that_falls_silent_mid_stroke_leaves_a_readable_partial(tmp_path):
    out = tmp_path / "press.csv"
    start = time.monotonic()
    with MeterEmulator(MeterFirmware(seed=3), stall_after=300) as emu:
        result = record_meter(emu.port, out, timeout_s=0.5)
    assert time.monotonic() - start < 5.0
    assert not result.complete and "no data" in result.reason and not out.exists()
    assert result.path == partial_csv_path(out) and result.samples == 300
    partial = load_meter_capture(result.path)
    x_m, f_N = _expected(emu.measurement, count=300)
    np.testing.assert_allclose(partial.x_m, x_m, atol=1e-12)
    np.testing.assert_allclose(partial.f_N, f_N, atol=1e-9)
    assert str(result.path) in result.describe() and "cut short" in result.describe()


def test_an_unplugged_meter_leaves_a_readable_partial(tmp_path):
    out = tmp_path / "press.csv"
    with MeterEmulator(MeterFirmware(seed=4), hangup_after=200) as emu:
        result = record_meter(emu.port, out, timeout_s=3.0)
    assert not result.complete and "hung up" in result.reason and not out.exists()
    partial = load_meter_capture(result.path)
    assert partial.n == result.samples == 200
    x_m, f_N = _expected(emu.measurement, count=200)
    np.testing.assert_allclose(partial.x_m, x_m, atol=1e-12)
    np.testing.assert_allclose(partial.f_N, f_N, atol=1e-9)


_RECORDER = ("import sys; from hapticam.commands.probe_device import meter_probe; "
             "sys.exit(meter_probe(sys.argv[1], sys.argv[2]))")


def _recorder_mid_stroke(emu, out):
    """A recorder in another process, once it has streamed 150 lines to the partial file."""
    proc = subprocess.Popen([sys.executable, "-c", _RECORDER, f"meter:{emu.port}", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    part = partial_csv_path(out)
    deadline = time.monotonic() + 20.0
    while time.monotonic() < deadline and (not part.exists() or part.read_text().count("\n") < 1 + 150):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    return proc


@pytest.mark.parametrize("how", ["kill", "ctrl-c"])
def test_a_recorder_stopped_mid_stroke_leaves_a_readable_partial(tmp_path, how):
    out = tmp_path / "press.csv"
    with MeterEmulator(MeterFirmware(seed=5), line_period_s=0.005) as emu:
        proc = _recorder_mid_stroke(emu, out)
        proc.send_signal(signal.SIGKILL if how == "kill" else signal.SIGINT)
        _stdout, stderr = proc.communicate(timeout=20.0)
    assert not out.exists(), stderr
    partial = load_meter_capture(partial_csv_path(out))
    x_m, f_N = _expected(emu.measurement, count=partial.n)
    assert 150 <= partial.n < len(emu.measurement.lines())
    np.testing.assert_allclose(partial.x_m, x_m, atol=1e-12)
    np.testing.assert_allclose(partial.f_N, f_N, atol=1e-9)
    if how == "ctrl-c":
        assert proc.returncode == 1 and "Ctrl-C" in stderr and str(partial_csv_path(out)) in stderr
        assert "Traceback" not in stderr


def test_malformed_and_over_long_lines_are_skipped_and_counted(tmp_path):
    garbage = {10: b"xyz\n", 20: b"1,2\n", 30: b"\xff\xfe\x00\n", 40: b"9999, 5.00,0\n",
               50: b"A" * (10 * MAX_LINE_BYTES) + b"\n",
               60: b"15, 1.00,2\n", 70: b"nan, 1.00,0\n", 80: b"345, inf,0\n", 90: b"\r\n"}
    out = tmp_path / "press.csv"
    with MeterEmulator(MeterFirmware(seed=6), garbage=garbage) as emu:
        result = record_meter(emu.port, out)
    assert result.complete and result.malformed == 8          # the blank line is not malformed
    x_m, f_N = _expected(emu.measurement)
    cap = load_capture(out)
    np.testing.assert_allclose(cap.x_m, x_m, atol=1e-12)
    np.testing.assert_allclose(cap.f_N, f_N, atol=1e-9)


def test_too_many_malformed_lines_stop_the_recording(tmp_path):
    garbage = {i: b"12, garbage,0\n" for i in range(100, 200)}
    out = tmp_path / "press.csv"
    with MeterEmulator(MeterFirmware(seed=7), garbage=garbage) as emu:
        result = record_meter(emu.port, out, max_malformed=20)
    assert not result.complete and "malformed" in result.reason and result.malformed == 21
    assert load_meter_capture(result.path).n == result.samples and not out.exists()


def test_an_endless_line_is_bounded(tmp_path):
    endless = b"7" * (16 * 2 ** 20)                          # 16 MiB and no line ending
    out = tmp_path / "press.csv"
    with MeterEmulator(MeterFirmware(seed=8), garbage={50: endless}) as emu:
        tracemalloc.start()
        try:
            result = record_meter(emu.port, out)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert not result.complete and "malformed" in result.reason and result.samples == 50
    assert MAX_MALFORMED_BYTES < result.malformed_bytes <= MAX_MALFORMED_BYTES + 8192
    assert peak < 1 * 2 ** 20, peak                          # not the line: a few reads of 4 KiB


def test_a_port_that_is_not_a_meter_is_refused_and_leaves_nothing(tmp_path):
    out = tmp_path / "press.csv"
    with MeterEmulator(MeterFirmware(), preamble=b"boot\r\nready\r\n", header=False) as emu:
        start = time.monotonic()
        with pytest.raises(DeviceError, match="header"):
            record_meter(emu.port, out, header_timeout_s=1.0)
        assert time.monotonic() - start < 4.0
    with MeterEmulator(MeterFirmware(), preamble=b"not a meter\n" * 10_000, header=False) as emu:
        with pytest.raises(DeviceError, match="header"):
            record_meter(emu.port, out, header_timeout_s=30.0)
    with pytest.raises(DeviceError, match="cannot open"):
        record_meter(str(tmp_path / "ttyNOTHERE"), out)
    assert sorted(os.listdir(tmp_path)) == []


def test_the_probe_command_reports_and_sets_its_exit_status(tmp_path, capsys):
    with MeterEmulator(MeterFirmware(seed=9)) as emu:
        assert meter_probe(f"meter:{emu.port}", tmp_path / "a.csv", as_json=True) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["complete"] and summary["samples"] == len(emu.measurement.lines())
    with MeterEmulator(MeterFirmware(seed=9), stall_after=40) as emu:
        assert meter_probe(f"meter:{emu.port}", tmp_path / "b.csv", timeout_s=0.5) == 1
    assert "cut short" in capsys.readouterr().err
    with pytest.raises(HapticError):                     # the command line's exit status 2
        meter_probe("meter:", tmp_path / "c.csv")
    with pytest.raises(HapticError, match="center-mm"):  # the meter strokes by itself
        probe_meter("/dev/null", argparse.Namespace(center_mm=1.0, amplitude_mm=None, output="c.csv", json=False))
    with pytest.raises(HapticError, match="folder"):
        meter_probe("meter:/dev/null", tmp_path / "missing" / "c.csv")
    with pytest.raises(HapticError):
        meter_probe(f"meter:{tmp_path / 'ttyNOTHERE'}", tmp_path / "c.csv")
    partial = partial_csv_path(tmp_path / "b.csv")           # an earlier partial is never overwritten
    with pytest.raises(HapticError, match="exists"):
        record_meter(str(tmp_path / "ttyNOTHERE"), tmp_path / "b.npz")
    assert partial.exists()


def test_the_emulator_follows_the_firmware():
    firmware = MeterFirmware(seed=10)
    m = firmware.measure()
    x = m.position_um
    turn = int(np.argmax(x))
    assert x[0] == 0 and x[-1] == 0 and x[turn] == x[turn + 1]         # the deepest position printed twice
    assert np.all(np.diff(x[:turn + 1]) == 5) and np.all(np.diff(x[turn + 1:]) == -5)
    exact = firmware.curve.force_gf(x[:turn + 1], True) + firmware.offset_gf
    np.testing.assert_allclose(m.exact_gf[:turn + 1], exact, rtol=0, atol=1e-12)
    # each release reading is taken one step deeper than the position printed with it
    release = firmware.curve.force_gf(x[turn + 2:] + 5, False) + firmware.offset_gf
    np.testing.assert_allclose(m.exact_gf[turn + 2:], release, rtol=0, atol=1e-12)
    assert m.reading_gf[turn + 1] > firmware.reverse_limit_gf >= m.reading_gf[:turn + 1].max()

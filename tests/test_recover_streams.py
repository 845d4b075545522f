"""``hapticam recover`` completes every streamed file, not only a render's recording: a device probe's capture
(``NAME.csv.partial``) and a recording from the switch meter's port (``STEM.partial.csv``), each written by a
real process killed with SIGKILL mid-write. References: the partial file as it was on disk before the kill (a
flush had handed those lines to the operating system, so every one of them must be in the completion), the
rows the writer computed (a closed form of the sample index), and the meter emulator's own lines. A line cut by
a power cut is dropped; a file none of the writers made is refused with one line and exit code 2; a partial
file still being written is left alone, also when its format has no ``# pid`` line to tell it (the meter's).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hapticam.capture_io import load_capture
from hapticam.cli import main
from hapticam.devices.meter_port import METER_HEADER
from hapticam.streamed_file import PARTIAL_CSV_SUFFIX, StreamedFile

RATE_HZ = 10_000.0
#: the probe rows of sample ``k``: a closed form the test recomputes
_PROBE_WRITER = r"""
import sys, time
import numpy as np
from hapticam.devices.probe_capture import CaptureStream
stream = CaptureStream(sys.argv[1], {"source": "kill test", "sample_rate_hz": 10000})
k = 0
while True:
    i = np.arange(k, k + 40, dtype=float)
    stream.add(np.column_stack([i / 10000, 1e-3 * np.sin(i / 300), 0.5 * np.cos(i / 300), 1e-3 * np.sin(i / 300),
                                np.full(40, 0.25), (i // 700) % 2, np.zeros(40), np.full(40, 12.5)]))
    k += 40
    time.sleep(0.004)
"""
_METER_RECORDER = ("import sys; from hapticam.commands.probe_device import meter_probe; "
                   "sys.exit(meter_probe(sys.argv[1], sys.argv[2]))")
#: what a power cut may leave after the last complete line: part of one
CUT_LINE = b"0.4321,1.2"


def _complete_lines(path: Path) -> bytes:
    """The bytes of ``path`` up to its last newline: what a flush had put on disk."""
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1]


def _wait_for_lines(proc: subprocess.Popen, partial: Path, lines: int) -> None:
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline and (not partial.exists() or _complete_lines(partial).count(b"\n") < lines):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    assert partial.exists() and _complete_lines(partial).count(b"\n") >= lines, "the writer wrote too little"


def _kill_after_snapshot(proc: subprocess.Popen, partial: Path) -> bytes:
    """The partial file's complete lines, read while its writer runs, then SIGKILL the writer."""
    seen = _complete_lines(partial)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=20.0)
    assert proc.returncode == -signal.SIGKILL
    return seen


def _recover_and_check(partial: Path, seen: bytes, cut: bytes, capsys) -> tuple[Path, bytes]:
    """Append ``cut`` to the killed writer's partial, recover its folder; the completion holds every line seen
    before the kill, and the partial is gone. Returns the completion's path and bytes."""
    killed = partial.read_bytes()
    assert killed.endswith(b"\n")                       # whole lines only: a kill cuts none
    with open(partial, "ab") as fh:
        fh.write(cut)
    assert main(["recover", str(partial.parent)]) == 0
    out = capsys.readouterr().out
    done = sorted(p for p in partial.parent.iterdir())
    assert len(done) == 1 and not partial.exists(), done
    data = done[0].read_bytes()
    assert data.startswith(seen) and data.startswith(killed)
    assert all(line.startswith(b"# ") for line in data[len(killed):].splitlines())   # the cut line dropped
    assert str(done[0]) in out
    return done[0], data


@pytest.mark.parametrize("cut", [b"", CUT_LINE], ids=["killed", "line-cut"])
def test_a_probe_capture_killed_mid_write_recovers_into_a_capture_identify_reads(tmp_path, capsys, cut):
    dest = tmp_path / "stroke.csv"
    partial = tmp_path / "stroke.csv.partial"
    proc = subprocess.Popen([sys.executable, "-c", _PROBE_WRITER, str(dest)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _wait_for_lines(proc, partial, 2000)
    seen = _kill_after_snapshot(proc, partial)
    path, _data = _recover_and_check(partial, seen, cut, capsys)
    assert path == dest
    cap = load_capture(dest)                            # the reader of a finished capture
    head = seen.split(b"t_s,x_m,force_N,x_cmd_m", 1)[1]
    assert cap.n >= head.count(b"\n") - 1 >= 1900       # every sample flushed before the kill
    assert int(cap.metadata["samples"]) == cap.n and f"{len(cut)} bytes" in cap.metadata["recovered"]
    k = np.arange(cap.n)
    np.testing.assert_allclose(cap.t_s, k / RATE_HZ, rtol=0, atol=1e-9)
    np.testing.assert_allclose(cap.x_m, 1e-3 * np.sin(k / 300), rtol=1e-9, atol=0)
    np.testing.assert_allclose(cap.f_N, 0.5 * np.cos(k / 300), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("cut", [b"", CUT_LINE], ids=["killed", "line-cut"])
def test_a_meter_recording_killed_mid_write_recovers_into_a_meter_record(tmp_path, capsys, cut):
    pytest.importorskip("serial")
    from hapticam.devices.meter_emulator import MeterEmulator, MeterFirmware

    out = tmp_path / "press.npz"                        # a .npz output streams to the same partial record
    partial = tmp_path / ("press" + PARTIAL_CSV_SUFFIX)
    with MeterEmulator(MeterFirmware(seed=5), line_period_s=0.005) as emu:
        proc = subprocess.Popen([sys.executable, "-c", _METER_RECORDER, f"meter:{emu.port}", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for_lines(proc, partial, 1 + 150)
        seen = _kill_after_snapshot(proc, partial)
    path, data = _recover_and_check(partial, seen, cut, capsys)
    assert path == tmp_path / "press.csv" and data.startswith((METER_HEADER + "\n").encode())
    assert b"#" not in data                             # the meter's own stream: no metadata lines added
    cap = load_capture(path)                            # read as a meter record, as a finished recording is
    m = emu.measurement
    assert seen.count(b"\n") - 1 <= cap.n < len(m.lines())
    f_gf = m.reading_gf[: cap.n]
    np.testing.assert_allclose(cap.x_m, 1e-6 * m.position_um[: cap.n], rtol=0, atol=1e-12)
    np.testing.assert_allclose(cap.f_N, (f_gf - f_gf[0]) * 9.80665e-3, rtol=0, atol=1e-9)


def _recover_child(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hapticam", "recover", *map(str, paths)], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("name, text", [
    ("sheet.partial.csv", "a,b,c\n1,2,3\n"),                                  # someone else's CSV
    ("press.partial.csv", "# pid: 999999999\n" + METER_HEADER + "\n0, 1.00,0\n"),    # a meter record has no metadata
    ("run.csv.partial", "t_s,x_m,force_N,x_cmd_m\n0,0,0,0\n"),                 # a header none of ours has
])
def test_a_partial_file_none_of_the_writers_made_is_refused_untouched(tmp_path, name, text):
    bad, good = tmp_path / name, tmp_path / ("good" + PARTIAL_CSV_SUFFIX)
    bad.write_text(text)
    good.write_text(METER_HEADER + "\n0, 1.00,0\n5, 1.50,0\n")
    done = _recover_child(tmp_path)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(err) == 1 and name in err[0] and "Traceback" not in done.stderr
    assert bad.read_text() == text
    assert (tmp_path / "good.csv").read_text() == METER_HEADER + "\n0, 1.00,0\n5, 1.50,0\n"


def test_a_meter_record_still_being_written_is_left_alone(tmp_path):
    """Its format has no ``# pid`` line: the writer's lock tells recover it is alive."""
    partial = tmp_path / ("live" + PARTIAL_CSV_SUFFIX)
    stream = StreamedFile(tmp_path / "live.csv", METER_HEADER + "\n", partial=partial)
    try:
        stream.write("0, 1.00,0\n")
        stream.flush(sync=False)
        done = _recover_child(tmp_path)
        assert done.returncode == 0 and sorted(os.listdir(tmp_path)) == [partial.name], done.stderr
        refused = _recover_child(partial)
        assert refused.returncode == 2 and "running process" in refused.stderr
    finally:
        stream.close()
    assert _recover_child(tmp_path).returncode == 0           # its writer gone, it completes
    assert (tmp_path / "live.csv").read_text() == METER_HEADER + "\n0, 1.00,0\n"


def test_lines_reach_the_file_at_a_flush_not_before(tmp_path):
    stream = StreamedFile(tmp_path / "a.csv", "h\n", flush_period_s=3600.0, sync_period_s=3600.0)
    stream.write("1\n2\n")
    assert stream.partial.read_bytes() == b"h\n"              # pending: a kill now would lose them
    stream.flush(sync=False)
    assert stream.partial.read_bytes() == b"h\n1\n2\n"
    stream.write("3\n")
    assert stream.finish("# n: 3\n") == tmp_path / "a.csv"
    assert (tmp_path / "a.csv").read_bytes() == b"h\n1\n2\n3\n# n: 3\n" and not stream.partial.exists()


def test_a_free_lock_outweighs_a_pid_line_whose_process_id_was_handed_on(tmp_path):
    """A dead writer's ``# pid`` may name another running process now (here a sleeping child): where the
    system has locks, the lock a writer holds while writing says whether it is alive, and a free one lets
    recover complete the file."""
    from hapticam.capture_io import metadata_lines
    from hapticam.devices.probe_capture import PROBE_COLUMNS

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        partial = tmp_path / "cap.csv.partial"
        rows = "".join(f"{i * 1e-3:.3f},{i * 1e-5:.9e},{0.01 * i:.9e},0,0,1,0,0.0\n" for i in range(30))
        partial.write_text(metadata_lines({"pid": sleeper.pid}) + ",".join(PROBE_COLUMNS) + "\n" + rows)
        done = _recover_child(partial)
        assert done.returncode == 0, done.stderr
        assert load_capture(tmp_path / "cap.csv").n == 30 and not partial.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_closed_stream_is_never_renamed_onto_its_destination_and_partial_names_are_refused(tmp_path):
    stream = StreamedFile(tmp_path / "a.csv", "h\n")
    stream.close()
    with pytest.raises(OSError):
        stream.finish("# n: 0\n")
    assert not (tmp_path / "a.csv").exists() and stream.partial.exists()
    for name in ("b.csv.partial", "c" + PARTIAL_CSV_SUFFIX):
        with pytest.raises(OSError, match="kept for the file being written"):
            StreamedFile(tmp_path / name, "h\n")

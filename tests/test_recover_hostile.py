"""``hapticam recover`` against partial recordings that fight back: a ``.partial`` that is a link to a file
elsewhere (never written through), an unreadable or a garbage partial between two good ones (each good one
recovered, each bad one reported on a line of its own, exit code 2), and a disk that fills while the
completion is written (the partial left byte for byte as it was, no half-written file left).

Each command runs in a child process and must end within :data:`LIMIT_S` (interpreter start included; a
hang fails the test at :data:`WALL_LIMIT_S` instead of stopping the run); a full disk is a real limit on
the child: ``RLIMIT_FSIZE`` makes a write past it fail with ``EFBIG`` as a full disk fails with ``ENOSPC``.
A recovered recording is checked against the ticks written into its partial file.
"""

from __future__ import annotations

import ctypes
import math
import os
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

from hapticam.capture_io import load_capture
from hapticam.render.recording import RECORD_COLUMNS

WALL_LIMIT_S = 60.0
LIMIT_S = 5.0
ROW = "%.9f,%.9e,%.9e,%.9e,%.9e,%d,%.3f\n"
HALF_LINE = b"0.200000000,1.2345"
#: Linux prctl(PR_CAPBSET_DROP) and the two capabilities that let root read any file
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def _partial(path, ticks: int, tail: bytes = HALF_LINE) -> bytes:
    """Write a partial recording of ``ticks`` complete lines at 1 kHz and a half line; return its bytes."""
    k = np.arange(ticks)
    head = f"# rate_hz: 1000\n# pid: 999999999\n{','.join(RECORD_COLUMNS)}\n"
    rows = "".join(ROW % (i * 1e-3, 1e-3 * math.sin(i / 50), 0.5 * math.cos(i / 50), 0.0, 0.5, 0, 12.0) for i in k)
    data = (head + rows).encode() + tail
    path.write_bytes(data)
    return data


def _recovered_as_written(csv, data: bytes, ticks: int, tail: bytes = HALF_LINE) -> None:
    """``csv`` holds the partial's complete lines unchanged, then metadata naming ``ticks``."""
    assert csv.read_bytes().startswith(data[: len(data) - len(tail)])
    cap = load_capture(csv)
    assert cap.n == ticks and int(cap.metadata["ticks"]) == ticks
    assert np.allclose(cap.t_s, np.arange(ticks) * 1e-3)


def _drop_file_permission_override() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _recover(*paths, file_size_limit: int | None = None, as_unprivileged: bool = False) -> dict:
    """Run ``hapticam recover PATHS`` in a child; its exit code, stdout, stderr lines and wall seconds."""
    def before_exec() -> None:
        if file_size_limit is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))
        if as_unprivileged and os.geteuid() == 0:
            _drop_file_permission_override()

    t0 = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "hapticam", "recover", *map(str, paths)], capture_output=True,
                              text=True, timeout=WALL_LIMIT_S, stdin=subprocess.DEVNULL, preexec_fn=before_exec)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hapticam recover: still running after {WALL_LIMIT_S} s")
    assert time.monotonic() - t0 < LIMIT_S, "hapticam recover took longer than its bound"
    return {"code": done.returncode, "stdout": done.stdout, "err": done.stderr.strip().splitlines(),
            "stderr": done.stderr}


def _one_line_each(result: dict, *names: str) -> None:
    """Exit code 2 and exactly one stderr line for each bad file, each naming it; no traceback."""
    assert result["code"] == 2 and "Traceback" not in result["stderr"], result["stderr"][-2000:]
    assert len(result["err"]) == len(names), result["err"]
    for line, name in zip(result["err"], names):
        assert name in line, (name, line)


@pytest.mark.parametrize("given", ["folder", "file"])
def test_a_partial_linked_to_a_file_elsewhere_is_refused_and_that_file_untouched(tmp_path, given):
    elsewhere, folder = tmp_path / "elsewhere", tmp_path / "runs"
    elsewhere.mkdir()
    folder.mkdir()
    victim = elsewhere / "keep.csv"
    data = _partial(victim, 100)                                # a recording-like file: recover would accept it
    link = folder / "run.csv.partial"
    link.symlink_to(victim)
    result = _recover(folder if given == "folder" else link)
    _one_line_each(result, "run.csv.partial")                   # was: truncated and appended to, exit 0
    assert victim.read_bytes() == data and sorted(os.listdir(elsewhere)) == ["keep.csv"]
    assert link.is_symlink() and sorted(os.listdir(folder)) == ["run.csv.partial"]


@pytest.mark.parametrize("given", ["folder", "files"])
def test_a_garbage_partial_between_two_good_ones_does_not_stop_them(tmp_path, given):
    good_a, bad, good_c = tmp_path / "a.csv.partial", tmp_path / "b.csv.partial", tmp_path / "c.csv.partial"
    data_a, data_c = _partial(good_a, 300), _partial(good_c, 150)
    garbage = os.urandom(5000).replace(b"t_s", b"xxx")
    bad.write_bytes(garbage)
    result = _recover(*([tmp_path] if given == "folder" else [good_a, bad, good_c]))
    _one_line_each(result, "b.csv.partial")                     # was: stopped at b, c left unrecovered
    _recovered_as_written(tmp_path / "a.csv", data_a, 300)
    _recovered_as_written(tmp_path / "c.csv", data_c, 150)
    assert bad.read_bytes() == garbage
    assert sorted(os.listdir(tmp_path)) == ["a.csv", "b.csv.partial", "c.csv"]


def test_an_unreadable_partial_between_two_good_ones_does_not_stop_them(tmp_path):
    good_a, bad, good_c = tmp_path / "a.csv.partial", tmp_path / "b.csv.partial", tmp_path / "c.csv.partial"
    data_a, data_c = _partial(good_a, 300), _partial(good_c, 150)
    data_b = _partial(bad, 200)
    bad.chmod(0)
    probe = subprocess.run([sys.executable, "-c", f"open({str(bad)!r}, 'rb')"], capture_output=True,
                           preexec_fn=_drop_file_permission_override if os.geteuid() == 0 else None)
    if probe.returncode == 0:
        pytest.skip("this process reads a file without read permission (root with file capabilities kept)")
    result = _recover(tmp_path, as_unprivileged=True)
    _one_line_each(result, "b.csv.partial")                     # was: PermissionError traceback, none recovered
    _recovered_as_written(tmp_path / "a.csv", data_a, 300)
    _recovered_as_written(tmp_path / "c.csv", data_c, 150)
    bad.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert bad.read_bytes() == data_b
    assert sorted(os.listdir(tmp_path)) == ["a.csv", "b.csv.partial", "c.csv"]


@pytest.mark.parametrize("room", [5, 0])
def test_a_full_disk_leaves_the_partial_as_it_was(tmp_path, room):
    # the child may write files of at most the partial's complete lines and `room` bytes more: the
    # completion (those lines and the metadata) cannot be written whole
    partial = tmp_path / "run.csv.partial"
    data = _partial(partial, 400)
    result = _recover(tmp_path, file_size_limit=len(data) - len(HALF_LINE) + room)
    _one_line_each(result, "run.csv.partial")                   # was: traceback, half a metadata line appended
    assert partial.read_bytes() == data
    assert sorted(os.listdir(tmp_path)) == ["run.csv.partial"]  # no temporary file left either
    again = _recover(tmp_path)                                  # with room, the same partial recovers
    assert again["code"] == 0, again["stderr"]
    _recovered_as_written(tmp_path / "run.csv", data, 400)


def test_good_partials_recover_as_written_and_exit_0(tmp_path):
    # the control: what the refusals above must not touch
    data = {n: _partial(tmp_path / f"{n}.csv.partial", ticks) for n, ticks in (("a", 50), ("b", 500))}
    (tmp_path / "b.csv").write_bytes(b"an earlier recording\n")  # the recovered one must not replace it
    result = _recover(tmp_path)
    assert result["code"] == 0 and result["err"] == [], result["stderr"]
    _recovered_as_written(tmp_path / "a.csv", data["a"], 50)
    _recovered_as_written(tmp_path / "b.recovered.csv", data["b"], 500)
    assert (tmp_path / "b.csv").read_bytes() == b"an earlier recording\n"
    assert sorted(os.listdir(tmp_path)) == ["a.csv", "b.csv", "b.recovered.csv"]

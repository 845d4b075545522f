"""Recording every tick to a capture file that ``identify`` reads (:func:`hapticam.capture_io.load_capture`).

Format: CSV, ``# key: value`` metadata lines, then the header ``t_s,x_m,force_N`` and the extra
columns ``v_mps,force_cmd_N,flags,lateness_us`` (the capture loader keeps ``v_mps`` and notes the others as
ignored). ``force_N`` is the force rendered (after the safety layer), ``force_cmd_N`` the model's.

Crash safety: a :class:`Recorder` streams ticks to ``NAME.partial`` beside the destination as they
arrive (a :class:`~hapticam.streamed_file.StreamedFile`; bounded memory: one flush period's lines, at most
about 1 MiB), hands
them to the operating system every ``flush_period_s`` (``FLUSH_PERIOD_S``, 50 ms) and ``fsync``\\ s the file
every ``sync_period_s`` (``SYNC_PERIOD_S``, 1 s), both on the thread that adds the rows (the session's pump,
never the servo tick), and at ``stop`` appends the run's final metadata (``# ticks: N`` ...) and renames it
onto ``NAME``. So a reader never sees a partial file under the destination's name; after ``kill -9`` the
``.partial`` file holds a valid capture up to the last flush (the ticks of at most one flush period and one
pump batch, about 60 ms, are lost; ``hapticam bench soak --kill-trials N`` measures it), after a power cut up
to the last ``fsync`` (about a second), perhaps with part of a line; :func:`hapticam.render.recover.recover`
(``hapticam recover``) completes it. The partial file's header names the writing process (``# pid: N``), and
the writer holds its lock, so a stale one can be told from one still being written.

A write that fails (a full disk, a file size limit) cuts the recording short: the recorder closes the
partial file, drops every later tick, and its ``stop`` raises :class:`~hapticam.errors.RenderError` with
one line saying why and after how many ticks (``failure``), leaving the partial for ``hapticam recover``.
"""

from __future__ import annotations

import datetime as _dt
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.capture_io import metadata_lines
from hapticam.errors import HapticError, ModelFileError, RenderError
from hapticam.fileio import atomic_write_bytes
from hapticam.render.layout import R_F, R_FCMD, R_FLAGS, R_LATE, R_T, R_V, R_X, RING_COLS
from hapticam.streamed_file import (FLUSH_PERIOD_S, PARTIAL_SUFFIX, SYNC_PERIOD_S, StreamedFile,  # noqa: F401
                                    StreamFormat, partial_path)

RECORD_COLUMNS = ("t_s", "x_m", "force_N", "v_mps", "force_cmd_N", "flags", "lateness_us")
_RING_INDEX = (R_T, R_X, R_F, R_V, R_FCMD, R_FLAGS, R_LATE)
_ROW_FORMAT = "%.9f,%.9e,%.9e,%.9e,%.9e,%d,%.3f\n"
#: what ``hapticam recover`` needs to know of a partial recording
RECORDING_FORMAT = StreamFormat(kind="recording", header=",".join(RECORD_COLUMNS), count_name="ticks")
RECORD_SUFFIXES = (".csv", ".txt")


def format_rows(rows: np.ndarray) -> str:
    """Ring rows ``(n, RING_COLS)`` as recording CSV lines (one string, newline-terminated)."""
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, RING_COLS)
    if rows.shape[0] == 0:
        return ""
    table = rows[:, _RING_INDEX]
    flags = table[:, 5]
    if not np.all(np.isfinite(flags)):
        table = table.copy()
        table[:, 5] = np.nan_to_num(flags)
    return (_ROW_FORMAT * table.shape[0]) % tuple(table.ravel().tolist())


def check_record_path(path: str | os.PathLike[str]) -> Path:
    """A recording destination: a ``.csv`` (or ``.txt``) file in an existing folder."""
    p = Path(path)
    if p.suffix.lower() not in RECORD_SUFFIXES:
        raise RenderError(f"{p}: recordings are CSV files; use a .csv suffix")
    if not (p.parent if str(p.parent) else Path(".")).is_dir():
        raise RenderError(f"{p}: folder does not exist")
    if p.is_dir():
        raise RenderError(f"{p}: is a folder")
    return p


def write_recording(path: str | os.PathLike[str], rows: np.ndarray, metadata: dict[str, Any] | None = None) -> Path:
    """Write ring rows ``(n, RING_COLS)`` to ``path`` (``.csv``) atomically; returns the path."""
    p = check_record_path(path)
    text = metadata_lines(metadata or {}) + ",".join(RECORD_COLUMNS) + "\n" + format_rows(rows)
    try:
        atomic_write_bytes(p, text.encode("utf-8"))
    except (OSError, ModelFileError, HapticError) as exc:
        raise RenderError(f"{p}: cannot write recording: {exc}") from exc
    return p


class Recorder:
    """Streams ticks from the loop's pump (``add``) between ``start`` and ``stop`` to a partial file that
    ``stop`` completes and renames into place (module docstring). Thread-safe: the control thread
    starts and stops it while the pump thread adds rows. Memory is bounded by one flush period's lines.

    ``flush_period_s`` and ``sync_period_s`` (s): module docstring. ``failure``: why the current recording
    was cut short (``None`` while every write succeeded)."""

    def __init__(self, metadata: dict[str, Any] | None = None, flush_period_s: float = FLUSH_PERIOD_S,
                 sync_period_s: float = SYNC_PERIOD_S) -> None:
        self.metadata = dict(metadata or {})
        self.flush_period_s = flush_period_s
        self.sync_period_s = sync_period_s
        self._lock = threading.Lock()
        self._file: StreamedFile | None = None
        self.path: Path | None = None
        self.ticks = 0
        self.failure: str | None = None
        self._closed = False

    @property
    def active(self) -> bool:
        return self.path is not None

    def start(self, path: str | os.PathLike[str], *, exclusive: bool = False) -> Path:
        """Begin streaming to ``path`` (``exclusive``: refuse an existing destination). Returns the path."""
        p = check_record_path(path)
        if exclusive and p.exists():
            raise RenderError(f"{p.name} exists; choose another name")
        part = partial_path(p)
        with self._lock:
            if self._closed:
                raise RenderError("the session has ended: nothing more is recorded")
            if self.path is not None:
                raise RenderError(f"already recording to {self.path}")
            started = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
            head = metadata_lines({**self.metadata, "pid": os.getpid(), "started": started}) + \
                ",".join(RECORD_COLUMNS) + "\n"
            try:
                self._file = StreamedFile(p, head, flush_period_s=self.flush_period_s,
                                          sync_period_s=self.sync_period_s)
            except FileExistsError:
                raise RenderError(f"{part} exists (a recording interrupted earlier?): recover it with "
                                  f"'hapticam recover {part}' or remove it") from None
            except OSError as exc:
                raise RenderError(f"{p}: cannot record ({exc.strerror or exc})") from exc
            self.path, self.ticks, self.failure = p, 0, None
        return p

    def add(self, first_tick: int, rows: np.ndarray) -> None:
        """Append rows (formatted at once); flush (and sync) if a period has passed. A write that fails cuts
        the recording short (module docstring); nothing is raised."""
        with self._lock:
            if self._file is None or self._file.closed or rows.size == 0:
                return
            text = format_rows(rows)
            try:
                self._file.write(text)
                self.ticks += rows.shape[0]
            except OSError as exc:
                self.failure = f"{exc.strerror or exc} at tick {self.ticks}"

    def stop(self, extra_metadata: dict[str, Any] | None = None, *, final: bool = False) -> tuple[Path, int] | None:
        """Complete the recording; returns ``(path, ticks)`` or ``None`` if not recording. ``final``: the
        session ends, and ``start`` refuses from now on."""
        with self._lock:
            self._closed = self._closed or final
            if self.path is None or self._file is None:
                return None
            file, path, n = self._file, self.path, self.ticks
            self._file, self.path, self.ticks = None, None, 0
            if file.closed:
                raise _cut_short(path, file.partial, self.failure)
            try:
                file.finish(metadata_lines({**(extra_metadata or {}), "ticks": n}))
            except OSError as exc:
                self.failure = f"{exc.strerror or exc} at tick {n}"
                raise _cut_short(path, file.partial, self.failure) from exc
        return path, n


def _cut_short(path: Path, partial: Path, failure: str | None) -> RenderError:
    """The error of a recording whose ticks stay in ``partial``, for ``hapticam recover``."""
    return RenderError(f"{path}: recording cut short: {failure}; the ticks written before are in "
                       f"{partial}: complete them with 'hapticam recover {partial}'")

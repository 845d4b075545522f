"""The capture a device probe streams as it runs: crash-safe, bounded memory, read by ``identify`` as is.

Format: CSV as :func:`hapticam.capture_io.load_capture` reads it: ``# key: value`` metadata lines, the
header, then one line per sample: ``t_s`` (s from the start of the excitation), ``x_m`` (the probe's
measured position, m), ``force_N`` (the force on the object along +x, N: a load cell's reading or the
estimate from the actuator's force), and the columns the loader notes and ignores: ``x_cmd_m`` (the
position commanded, m), ``actuator_N`` (the probe actuator's force, N), ``contact`` (the switch's
electrical contact: 1 closed, 0 open, -1 not measured), ``status`` (the transport's status bits) and
``lateness_us`` (how late the sample's command went out after its deadline, us).

Crash safety, as a render's recording (:mod:`hapticam.render.recording`, whose contract this follows):
the rows go to ``NAME.partial`` beside the destination (opened exclusively, with ``# pid: N`` in its
header), are handed to the operating system every ``flush_period_s`` (50 ms: what a ``kill -9`` loses)
and ``fsync``\\ ed every ``sync_period_s`` (1 s: what a power cut loses); :meth:`CaptureStream.close`
appends the run's final metadata (``samples``, ``stopped`` ...) and renames the file onto ``NAME``. A
run that ends on a fault still closes its stream, so the samples before the fault are a complete capture
under the destination's name.
"""

from __future__ import annotations

import datetime as _dt
import io
import os
import time
from pathlib import Path
from typing import IO, Any

import numpy as np

from hapticam.capture_io import metadata_lines
from hapticam.errors import CaptureError, UsageError
from hapticam.fileio import current_umask

PROBE_COLUMNS = ("t_s", "x_m", "force_N", "x_cmd_m", "actuator_N", "contact", "status", "lateness_us")
_ROW_FORMAT = "%.6f,%.9e,%.9e,%.9e,%.9e,%d,%d,%.1f\n"
PARTIAL_SUFFIX = ".partial"
FLUSH_PERIOD_S = 0.05
SYNC_PERIOD_S = 1.0


def check_stream_path(option: str, path: str | os.PathLike[str] | None) -> Path:
    """A streamed capture's destination: a ``.csv`` file in an existing, writable folder, with no partial
    file of an earlier run beside it (:class:`UsageError` otherwise)."""
    if not path:
        raise UsageError(f"probe: {option} CAPTURE.csv is required")
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if p.suffix.lower() != ".csv":
        raise UsageError(f"{option} {p}: a device probe streams a .csv capture (convert it afterwards if need be)")
    if not folder.is_dir():
        raise UsageError(f"{option} {p}: folder {folder} does not exist")
    if p.is_dir():
        raise UsageError(f"{option} {p}: is a folder")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"{option} {p}: folder {folder} is not writable")
    if os.path.lexists(p.with_name(p.name + PARTIAL_SUFFIX)):
        raise UsageError(f"{option} {p}: {p.name}{PARTIAL_SUFFIX} exists (a probe interrupted earlier?); "
                         "move or remove it first")
    return p


class CaptureStream:
    """Rows of :data:`PROBE_COLUMNS` streamed to ``path + ".partial"`` and renamed onto ``path`` at
    :meth:`close` (module docstring). Periods in s."""

    def __init__(self, path: str | os.PathLike[str], metadata: dict[str, Any], *,
                 flush_period_s: float = FLUSH_PERIOD_S, sync_period_s: float = SYNC_PERIOD_S) -> None:
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + PARTIAL_SUFFIX)
        self.flush_period_s, self.sync_period_s = flush_period_s, sync_period_s
        self.samples = 0
        started = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
        try:
            fd = os.open(self.partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                         0o666 & ~current_umask())
        except OSError as exc:
            raise CaptureError(f"{self.partial}: cannot write the capture ({exc.strerror or exc})") from exc
        self._fh: IO[str] | None = io.open(fd, "w", encoding="utf-8", buffering=1 << 20, newline="\n")
        self._fh.write(metadata_lines({**metadata, "pid": os.getpid(), "started": started}))
        self._fh.write(",".join(PROBE_COLUMNS) + "\n")
        self._sync()

    def _sync(self) -> None:
        assert self._fh is not None
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._last_flush = self._last_sync = time.monotonic()

    def add(self, rows: np.ndarray) -> None:
        """Append rows ``(n, len(PROBE_COLUMNS))``; flush (and sync) when a period has passed."""
        rows = np.asarray(rows, dtype=np.float64).reshape(-1, len(PROBE_COLUMNS))
        if self._fh is None or rows.shape[0] == 0:
            return
        self._fh.write((_ROW_FORMAT * rows.shape[0]) % tuple(rows.ravel().tolist()))
        self.samples += rows.shape[0]
        now = time.monotonic()
        if now - self._last_sync >= self.sync_period_s:
            self._sync()
        elif now - self._last_flush >= self.flush_period_s:
            self._fh.flush()
            self._last_flush = now

    def close(self, extra_metadata: dict[str, Any] | None = None) -> Path:
        """Append the final metadata and ``samples``, sync, and rename the capture into place."""
        fh, self._fh = self._fh, None
        if fh is None:
            return self.path
        try:
            fh.write(metadata_lines({**(extra_metadata or {}), "samples": self.samples}))
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
            os.replace(self.partial, self.path)
        except OSError as exc:
            raise CaptureError(f"{self.path}: the capture could not be completed ({exc.strerror or exc}); "
                               f"its samples are in {self.partial}") from exc
        return self.path

"""The capture a device probe streams as it runs: crash-safe, bounded memory, read by ``identify`` as is.

Format: CSV as :func:`hapticam.capture_io.load_capture` reads it: ``# key: value`` metadata lines, the
header, then one line per sample: ``t_s`` (s from the start of the excitation), ``x_m`` (the probe's
measured position, m), ``force_N`` (the force on the object along +x, N: a load cell's reading or the
estimate from the actuator's force), and the columns the loader notes and ignores: ``x_cmd_m`` (the
position commanded, m), ``actuator_N`` (the probe actuator's force, N), ``contact`` (the switch's
electrical contact: 1 closed, 0 open, -1 not measured), ``status`` (the transport's status bits) and
``lateness_us`` (how late the sample's command went out after its deadline, us).

Crash safety, as a render's recording (both are a :class:`~hapticam.streamed_file.StreamedFile`):
the rows go to ``NAME.partial`` beside the destination (opened exclusively, with ``# pid: N`` in its
header), are handed to the operating system every ``flush_period_s`` (50 ms: what a ``kill -9`` loses)
and ``fsync``\\ ed every ``sync_period_s`` (1 s: what a power cut loses); :meth:`CaptureStream.close`
appends the run's final metadata (``samples``, ``stopped`` ...) and renames the file onto ``NAME``. A
run that ends on a fault still closes its stream, so the samples before the fault are a complete capture
under the destination's name. A capture whose process was killed is left in ``NAME.partial``, valid up to
the last flush: ``hapticam recover`` (:mod:`hapticam.render.recover`) completes it into ``NAME`` (its
complete lines, then ``samples`` and ``recovered``), which ``identify`` reads as it reads a finished one.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.capture_io import metadata_lines
from hapticam.errors import CaptureError, UsageError
from hapticam.streamed_file import (FLUSH_PERIOD_S, PARTIAL_SUFFIX, SYNC_PERIOD_S, StreamedFile,  # noqa: F401
                                    StreamFormat, partial_path)

PROBE_COLUMNS = ("t_s", "x_m", "force_N", "x_cmd_m", "actuator_N", "contact", "status", "lateness_us")
_ROW_FORMAT = "%.6f,%.9e,%.9e,%.9e,%.9e,%d,%d,%.1f\n"
#: what ``hapticam recover`` needs to know of a partial probe capture
PROBE_FORMAT = StreamFormat(kind="probe capture", header=",".join(PROBE_COLUMNS), count_name="samples")


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
    if os.path.lexists(partial_path(p)):
        raise UsageError(f"{option} {p}: {p.name}{PARTIAL_SUFFIX} exists (a probe interrupted earlier?); "
                         f"complete it with 'hapticam recover {partial_path(p)}', or move or remove it first")
    return p


class CaptureStream:
    """Rows of :data:`PROBE_COLUMNS` streamed to ``path + ".partial"`` and renamed onto ``path`` at
    :meth:`close` (module docstring). Periods in s."""

    def __init__(self, path: str | os.PathLike[str], metadata: dict[str, Any], *,
                 flush_period_s: float = FLUSH_PERIOD_S, sync_period_s: float = SYNC_PERIOD_S) -> None:
        self.path = Path(path)
        self.partial = partial_path(self.path)
        self.samples = 0
        self.completed = False
        started = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
        head = metadata_lines({**metadata, "pid": os.getpid(), "started": started}) + ",".join(PROBE_COLUMNS) + "\n"
        try:
            self._file = StreamedFile(self.path, head, flush_period_s=flush_period_s, sync_period_s=sync_period_s)
        except OSError as exc:
            raise CaptureError(f"{self.partial}: cannot write the capture ({exc.strerror or exc})") from exc

    def add(self, rows: np.ndarray) -> None:
        """Append rows ``(n, len(PROBE_COLUMNS))``; flush (and sync) when a period has passed. A write that
        fails raises its :class:`OSError`; the samples before it stay in the partial file."""
        rows = np.asarray(rows, dtype=np.float64).reshape(-1, len(PROBE_COLUMNS))
        if self._file.closed or rows.shape[0] == 0:
            return
        self._file.write((_ROW_FORMAT * rows.shape[0]) % tuple(rows.ravel().tolist()))
        self.samples += rows.shape[0]

    def close(self, extra_metadata: dict[str, Any] | None = None) -> Path:
        """Append the final metadata and ``samples``, sync, and rename the capture into place."""
        if self.completed:
            return self.path
        try:
            if self._file.closed:                    # a write failed before
                raise OSError(self._file.failure or "the partial file was closed")
            self._file.finish(metadata_lines({**(extra_metadata or {}), "samples": self.samples}))
        except OSError as exc:
            raise CaptureError(f"{self.path}: the capture could not be completed ({exc.strerror or exc}); "
                               f"its samples are in {self.partial}: complete them with 'hapticam recover "
                               f"{self.partial}'") from exc
        self.completed = True
        return self.path

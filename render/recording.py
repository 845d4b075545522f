"""Recording every tick to a capture file that ``identify`` reads (:func:`hapticam.capture_io.load_capture`).

Format: CSV, ``# key: value`` metadata lines, then the header ``t_s,x_m,force_N`` and the extra
columns ``v_mps,force_cmd_N,flags,lateness_us`` (the capture loader keeps ``v_mps`` and notes the others as
ignored). ``force_N`` is the force rendered (after the safety layer), ``force_cmd_N`` the model's.
Files are written to a temporary file in the same folder and renamed into place, so a reader never sees
a partial recording, even if the process is interrupted while writing.
"""

from __future__ import annotations

import io
import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.errors import ModelFileError, RenderError
from hapticam.fileio import atomic_write_bytes
from hapticam.render.layout import R_F, R_FCMD, R_FLAGS, R_LATE, R_T, R_V, R_X, RING_COLS

RECORD_COLUMNS = ("t_s", "x_m", "force_N", "v_mps", "force_cmd_N", "flags", "lateness_us")
_RING_INDEX = (R_T, R_X, R_F, R_V, R_FCMD, R_FLAGS, R_LATE)


def write_recording(path: str | os.PathLike[str], rows: np.ndarray, metadata: dict[str, Any] | None = None) -> Path:
    """Write ring rows ``(n, RING_COLS)`` to ``path`` (``.csv``) atomically; returns the path."""
    p = Path(path)
    if p.suffix.lower() not in (".csv", ".txt"):
        raise RenderError(f"{p}: recordings are CSV files; use a .csv suffix")
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, RING_COLS)
    lines = [f"# {k}: {json.dumps(v) if isinstance(v, (dict, list)) else v}".replace("\n", " ")
             for k, v in (metadata or {}).items()]
    lines.append(",".join(RECORD_COLUMNS))
    buf = io.StringIO()
    if rows.shape[0]:
        table = rows[:, _RING_INDEX]
        fmt = ["%.9f", "%.9e", "%.9e", "%.9e", "%.9e", "%d", "%.3f"]
        np.savetxt(buf, table, delimiter=",", fmt=fmt)
    text = "\n".join(lines) + "\n" + buf.getvalue()
    try:
        atomic_write_bytes(p, text.encode("utf-8"))
    except (OSError, ModelFileError) as exc:
        raise RenderError(f"{p}: cannot write recording: {exc}") from exc
    return p


class Recorder:
    """Collects ticks from the loop's pump (``add``) between ``start`` and ``stop``; ``stop`` writes the
    file. Thread-safe: the control thread starts and stops it while the pump thread adds rows."""

    def __init__(self, metadata: dict[str, Any] | None = None) -> None:
        self.metadata = dict(metadata or {})
        self._lock = threading.Lock()
        self._parts: list[np.ndarray] = []
        self.path: Path | None = None
        self.ticks = 0

    @property
    def active(self) -> bool:
        return self.path is not None

    def start(self, path: str | os.PathLike[str]) -> None:
        p = Path(path)
        if p.suffix.lower() not in (".csv", ".txt"):
            raise RenderError(f"{p}: recordings are CSV files; use a .csv suffix")
        if not (p.parent if str(p.parent) else Path(".")).is_dir():
            raise RenderError(f"{p}: folder does not exist")
        with self._lock:
            if self.path is not None:
                raise RenderError(f"already recording to {self.path}")
            self.path = p
            self._parts = []
            self.ticks = 0

    def add(self, first_tick: int, rows: np.ndarray) -> None:
        with self._lock:
            if self.path is not None and rows.size:
                self._parts.append(rows)
                self.ticks += rows.shape[0]

    def stop(self, extra_metadata: dict[str, Any] | None = None) -> tuple[Path, int] | None:
        """Write the recording; returns ``(path, ticks)`` or ``None`` if not recording."""
        with self._lock:
            if self.path is None:
                return None
            path, parts, n = self.path, self._parts, self.ticks
            self.path, self._parts, self.ticks = None, [], 0
        rows = np.concatenate(parts) if parts else np.zeros((0, RING_COLS))
        write_recording(path, rows, {**self.metadata, **(extra_metadata or {}), "ticks": n})
        return path, n

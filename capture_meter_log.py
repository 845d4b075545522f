"""Text records of the Open-Switch-Curve-Meter, read into a :class:`MeterRecord`.

Two kinds, told apart by their header line:

* the serial stream of the meter's first-generation firmware: ``Raw X (microns),Raw Force (gf),Actuated?``
  then one line ``position, force,actuated`` per 5 um step (microns, gram-force, 0 or 1), pressing until
  the force passes the reverse limit, then releasing back to 0. It has no times: a nominal
  :data:`~hapticam.capture_meter_strokes.NOMINAL_RATE_HZ` is assumed. The force is tared by its first
  sample, as the meter's spreadsheets do.
* the CSV log of another build of the meter: ``Millis,Steps,Travel (mm),Scale raw,Scale (grams)``
  (milliseconds since start, stepper steps, travel in mm, raw ADC counts, force in gram-force), about 30
  samples a second with jitter in the milliseconds. The record is put in stroke order (the press by rising
  travel, then the release by falling travel); if its times are irregular it is resampled onto a uniform
  time grid (:func:`~hapticam.capture_meter_strokes.resample_uniform`), and the notes say so.

Bounds: a regular file of at most ``MAX_LOG_BYTES``, lines of at most ``MAX_LINE_CHARS``, at most
:data:`~hapticam.capture.MAX_SAMPLES` data lines. Every problem raises
:class:`~hapticam.errors.CaptureError` naming the file and the line.
"""

from __future__ import annotations

import hashlib
import io
import os
from array import array
from typing import IO

import numpy as np

from hapticam.capture import MAX_SAMPLES
from hapticam.capture_meter_strokes import (GF_TO_N, MeterRecord, check_one_press, irregular_times,
                                            resample_uniform, stroke_order)
from hapticam.errors import CaptureError
from hapticam.fileio import open_regular

#: the largest meter record read (bytes); a press of a few thousand lines takes about 100 kB, ten minutes
#: of the build log at 30 samples a second about 1 MB
MAX_LOG_BYTES = 16 * 1024 * 1024
MAX_LINE_CHARS = 4096
#: the header of the first-generation firmware's serial stream, and of the other build's log
SERIAL_HEADER = ("raw x (microns)", "raw force (gf)", "actuated?")
BUILD_LOG_HEADER = ("millis", "steps", "travel (mm)", "scale raw", "scale (grams)")


def header_kind(line: str) -> str | None:
    """``"serial"`` or ``"build_log"`` when ``line`` is one of the meter's header lines, else None."""
    names = tuple(" ".join(part.lower().split()) for part in line.split(","))
    return {SERIAL_HEADER: "serial", BUILD_LOG_HEADER: "build_log"}.get(names)


def read_meter_log(path: str | os.PathLike[str]) -> tuple[MeterRecord, str]:
    """``(record, SHA-256 of the file)`` of a meter serial stream or build log."""
    where = os.fspath(path)
    fh, _size = open_regular(path, MAX_LOG_BYTES, error=CaptureError, what="meter record")
    with fh:
        try:
            data = fh.read()                      # at most MAX_LOG_BYTES
        except OSError as exc:
            raise CaptureError(f"{where}: cannot read ({exc.strerror or exc})") from exc
    kind, table = _read_table(where, io.BytesIO(data))
    record = _serial_record(table) if kind == "serial" else _build_log_record(where, table)
    return record, hashlib.sha256(data).hexdigest()


def _read_table(where: str, fh: IO[bytes]) -> tuple[str, np.ndarray]:
    """The header's kind and the data lines as a float64 table (one row a line; blank lines skipped)."""
    kind = None
    values_read = array("d")
    width = 0
    number = 0
    while raw := fh.readline(MAX_LINE_CHARS + 1):
        number += 1
        if len(raw) > MAX_LINE_CHARS:
            raise CaptureError(f"{where}: line {number} is longer than {MAX_LINE_CHARS} characters")
        line = raw.decode("utf-8", errors="replace").lstrip("\ufeff").strip()
        if not line:
            continue
        if kind is None:
            kind = header_kind(line)
            if kind is None:
                raise CaptureError(f"{where}: line {number}: {line[:80]!r} is not an Open-Switch-Curve-Meter "
                                   "header")
            width = len(SERIAL_HEADER if kind == "serial" else BUILD_LOG_HEADER)
            continue
        if len(values_read) >= MAX_SAMPLES * width:
            raise CaptureError(f"{where}: more than {MAX_SAMPLES:,} data lines, over what a capture may hold")
        parts = line.split(",")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != width or not all(np.isfinite(values)):
            raise CaptureError(f"{where}: line {number}: expected {width} numbers separated by commas, got "
                               f"{line[:80]!r}")
        values_read.extend(values)
    if kind is None:
        raise CaptureError(f"{where}: empty: no Open-Switch-Curve-Meter header")
    if not values_read:
        raise CaptureError(f"{where}: a header and no data lines")
    return kind, np.frombuffer(values_read, dtype=np.float64).reshape(-1, width).copy()


def _serial_record(table: np.ndarray) -> MeterRecord:
    """The firmware's stream: travel (um), force (gf, tared by its first sample), actuated (0/1)."""
    x_m = table[:, 0] * 1e-6
    tare = float(table[0, 1])
    notes = [f"force tared by the first sample's {tare:g} gf, as the meter's spreadsheets do"]
    meta = {"meter_format": "Open-Switch-Curve-Meter serial stream (first-generation firmware)", "tare_gf": tare}
    return MeterRecord(x_m=x_m, f_N=(table[:, 1] - tare) * GF_TO_N, actuated=table[:, 2] > 0.5,
                       metadata=meta, notes=notes)


def _build_log_record(where: str, table: np.ndarray) -> MeterRecord:
    """The other build's log: time (ms), travel (mm), force (gram-force) in stroke order, resampled onto a
    uniform time grid when the times are irregular. Steps and raw ADC counts are not used."""
    t_s = (table[:, 0] - table[:, 0].min()) * 1e-3
    x_m = table[:, 2] * 1e-3
    f_N = table[:, 4] * GF_TO_N
    check_one_press(where, x_m)
    order = stroke_order(x_m)
    notes = ["columns Steps and Scale raw (stepper steps, raw ADC counts) are not used"]
    meta = {"meter_format": "Open-Switch-Curve-Meter build log (Millis, Steps, Travel, Scale)",
            "resampled": False}
    moved = int(np.count_nonzero(order != np.arange(order.size)))
    if moved:
        notes.append(f"{moved} sample(s) put back in stroke order (press by rising travel, release by falling)")
    t_s, x_m, f_N = t_s[order], x_m[order], f_N[order]
    if irregular_times(t_s):
        t_s, x_m, f_N, note = resample_uniform(where, t_s, x_m, f_N)
        notes.append(note)
        meta["resampled"] = True
    return MeterRecord(x_m=x_m, f_N=f_N, t_s=t_s, metadata=meta, notes=notes)

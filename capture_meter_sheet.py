"""The Open-Switch-Curve-Meter's own spreadsheets (``.ods``), read into a :class:`MeterRecord`.

bluepylons publishes each measurement as a LibreOffice sheet in one of two layouts:

* one header row: ``Raw X (microns)``, ``Raw Force (gf)``, ``Actuated?``, ``Force - Tared (gf)``, then
  the author's corrected downstroke and upstroke columns (``Corrected downstroke X (mm)``, ... force
  (gf), ... actuated?) and ``Actuation points`` / ``Release points`` (mm, in the corrected frame);
* two header rows: group titles (``Raw data``, ``Corrected Downstroke``, ``Corrected Upstroke``) over
  column names (``X (microns)``, ``Force (gf)``, ``Actuated?``, ``Tared``, then ``X (mm)``, ``Force (gf)``
  per stroke); the actuation and release points, where given, stand under ``Actuation`` and ``Release``
  labels further down.

Columns are found by their names, not their places. The record holds the raw travel (microns to m) and
the tared force (gf to N): the sheet's own tared column where it is filled in, else the raw force less
its first sample (the sheets' tare formula). The author's corrected strokes start at a travel of their
own; each stroke's frame offset is found by matching the corrected force column against the raw one
(force differences, so a tare does not matter), which places the sheet's own actuation and release
points in the capture's frame (``sheet_actuation_m``, ``sheet_release_m``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from hapticam.capture_meter_strokes import GF_TO_N, MeterRecord, press_end
from hapticam.errors import CaptureError
from hapticam.ods_table import OdsSheet, read_ods_sheets

#: header rows searched for the column names
HEADER_SEARCH_ROWS = 5
#: rows under an ``Actuation`` or ``Release`` label searched for its travel
POINT_SEARCH_ROWS = 2
#: the least fraction of a corrected stroke's force steps that must equal the raw ones at its offset
MIN_FRAME_MATCH = 0.9
#: decimals kept of a travel in metres (1 nm; the sheets give microns)
NM_DIGITS = 9
_RAW_X = ("raw x (microns)", "x (microns)")
_RAW_FORCE = ("raw force (gf)", "force (gf)")


def read_meter_sheet(path: str | os.PathLike[str]) -> tuple[MeterRecord, str]:
    """``(record, SHA-256 of the file)`` of an Open-Switch-Curve-Meter spreadsheet."""
    where = os.fspath(path)
    sheets, sha = read_ods_sheets(path, error=CaptureError)
    for sheet in sheets:
        header = _header_row(sheet)
        if header is not None:
            break
    else:
        raise CaptureError(f"{where}: no sheet has an 'X (microns)' column: not an Open-Switch-Curve-Meter "
                           "spreadsheet")
    cols = _columns(sheet, header)
    for need, label in (("x", "X (microns)"), ("force", "Force (gf)")):
        if need not in cols:
            raise CaptureError(f"{where}: sheet {sheet.name!r} has no raw {label!r} column")
    rows = _data_rows(where, sheet, header, cols)
    x_um = _values(sheet, cols["x"], rows)
    raw_gf = _values(sheet, cols["force"], rows)
    meta: dict[str, Any] = {"meter_format": ("Open-Switch-Curve-Meter spreadsheet, "
                                             + ("two header rows" if header > 0 else "one header row")),
                            "sheet": sheet.name}
    notes: list[str] = []
    tared = _values(sheet, cols["tared"], rows) if "tared" in cols else None
    if tared is not None and not np.isnan(tared).any():
        force_gf = tared
    else:
        force_gf = raw_gf - raw_gf[0]
        meta["tare_gf"] = float(raw_gf[0])
        notes.append(f"the sheet's tared force is {'empty' if 'tared' in cols else 'absent'}: tared here by "
                     f"the first sample's {raw_gf[0]:g} gf, as the sheets' tare formula does")
    actuated = None
    if "actuated" in cols:
        flags = _values(sheet, cols["actuated"], rows)
        if np.isnan(flags).any():
            raise CaptureError(f"{where}: sheet {sheet.name!r} row {rows[np.isnan(flags)][0] + 1}: "
                               "Actuated? is empty")
        actuated = flags > 0.5
    else:
        notes.append("the sheet has no Actuated? column: no actuation or release point")
    record = MeterRecord(x_m=x_um * 1e-6, f_N=force_gf * GF_TO_N, actuated=actuated, metadata=meta, notes=notes)
    _sheet_points(sheet, cols, x_um, force_gf, record)
    return record, sha


def _norm(text: str) -> str:
    """A header text lower-cased with its white space collapsed."""
    return " ".join(text.lower().split())


def _header_row(sheet: OdsSheet) -> int | None:
    """The row holding the raw ``X (microns)`` column name, if one of the first rows does."""
    for (row, _col), text in sorted(sheet.texts.items()):
        if row < HEADER_SEARCH_ROWS and _norm(text) in _RAW_X:
            return row
    return None


def _columns(sheet: OdsSheet, header: int) -> dict[str, int]:
    """Column indices by role (``x, force, actuated, tared`` of the raw data; ``press_x, press_force,
    release_x, release_force`` of the author's corrected strokes), from the header row's names and, in
    the two-row layout, the group titles above them (a title covers its column and those to its right)."""
    titles = sorted((c, _norm(t)) for (r, c), t in sheet.texts.items() if r == header - 1)
    names = sorted((c, _norm(t)) for (r, c), t in sheet.texts.items() if r == header)
    found: dict[str, int] = {}
    for col, name in names:
        group = next((t for c, t in reversed(titles) if c <= col), "")
        full = f"{group} {name}"
        if "corrected" in full:
            stroke = "press" if "downstroke" in full else "release" if "upstroke" in full else None
            role = None if stroke is None else (f"{stroke}_x" if "x (mm)" in name else
                                                f"{stroke}_force" if "force" in name else None)
        else:
            role = ("x" if name in _RAW_X else "force" if name in _RAW_FORCE else
                    "actuated" if name == "actuated?" else "tared" if "tared" in name else None)
        if role is not None:
            found.setdefault(role, col)
    return found


def _data_rows(where: str, sheet: OdsSheet, header: int, cols: dict[str, int]) -> np.ndarray:
    """The rows of the raw measurement: from under the header to the last travel, with no gap and a
    force in each."""
    x = np.asarray(sheet.column(cols["x"]))
    filled = np.flatnonzero(~np.isnan(x[header + 1:])) + header + 1
    if filled.size == 0:
        raise CaptureError(f"{where}: sheet {sheet.name!r} has no travel under its 'X (microns)' header")
    rows = np.arange(header + 1, filled[-1] + 1)
    if filled.size != rows.size:
        gap = int(np.setdiff1d(rows, filled)[0])
        raise CaptureError(f"{where}: sheet {sheet.name!r} row {gap + 1}: X (microns) is empty between "
                           "measurements")
    force = np.asarray(sheet.column(cols["force"]))[rows]
    if np.isnan(force).any():
        raise CaptureError(f"{where}: sheet {sheet.name!r} row {rows[np.isnan(force)][0] + 1}: the force is empty")
    return rows


def _values(sheet: OdsSheet, col: int, rows: np.ndarray) -> np.ndarray:
    return np.asarray(sheet.column(col), dtype=np.float64)[rows]


def _sheet_points(sheet: OdsSheet, cols: dict[str, int], x_um: np.ndarray, force_gf: np.ndarray,
                  record: MeterRecord) -> None:
    """Put the sheet's own actuation and release points in ``record.metadata``: as written
    (``sheet_actuation_corrected_m``, the author's corrected frame) and, where the corrected stroke can be
    aligned with the raw data, in the capture's frame (``sheet_actuation_m``), with the offsets found."""
    turn = press_end(x_um)
    for stroke, point, starts in (("press", "actuation", range(0, turn + 1)),
                                  ("release", "release", range(turn + 1, x_um.size))):
        offset = None
        if f"{stroke}_x" in cols and f"{stroke}_force" in cols:
            offset = _frame_offset(sheet, cols[f"{stroke}_x"], cols[f"{stroke}_force"], x_um, force_gf, starts)
            if offset is not None:
                record.metadata[f"sheet_{stroke}_offset_m"] = offset
        value_mm = _labelled_value(sheet, point)
        if value_mm is None:
            continue
        record.metadata[f"sheet_{point}_corrected_m"] = round(value_mm * 1e-3, NM_DIGITS)
        if offset is None:
            record.notes.append(f"the sheet's {point} point ({value_mm:g} mm) is in the author's corrected frame, "
                                "which could not be aligned with the raw data: not compared")
        else:
            record.metadata[f"sheet_{point}_m"] = round(value_mm * 1e-3 + offset, NM_DIGITS)


def _frame_offset(sheet: OdsSheet, x_col: int, f_col: int, x_um: np.ndarray, force_gf: np.ndarray,
                  starts: range) -> float | None:
    """Raw minus corrected travel (m) of one of the author's corrected strokes: the raw sample where the
    corrected force column begins, found as the start whose force steps equal the corrected ones (at
    least ``MIN_FRAME_MATCH`` of them: the author may have mended dropouts); None if none does."""
    cx_mm = np.asarray(sheet.column(x_col))
    cf_gf = np.asarray(sheet.column(f_col))
    first = np.flatnonzero(~np.isnan(cx_mm) & ~np.isnan(cf_gf))
    if first.size < 10:
        return None
    run = first[0] + np.flatnonzero(np.isnan(cx_mm[first[0]:]) | np.isnan(cf_gf[first[0]:]))
    stop = int(run[0]) if run.size else cx_mm.size
    steps, raw_steps = np.diff(cf_gf[first[0]:stop]), np.diff(force_gf)
    best_hits, best_start = 0, None
    for start in starts:
        m = min(steps.size, raw_steps.size - start)
        if m < 9:
            break
        hits = int(np.count_nonzero(np.abs(raw_steps[start:start + m] - steps[:m]) <= 1e-6))
        if hits > best_hits and hits >= MIN_FRAME_MATCH * m:
            best_hits, best_start = hits, start
    if best_start is None:
        return None
    return round(float(x_um[best_start] * 1e-6 - cx_mm[first[0]] * 1e-3), NM_DIGITS)


def _labelled_value(sheet: OdsSheet, point: str) -> float | None:
    """The travel (mm) under the sheet's ``Actuation`` (or ``Actuation points``) label, or ``Release``;
    arrow columns are not points. None when the label or its value is missing."""
    for (row, col), text in sorted(sheet.texts.items()):
        name = _norm(text)
        if name.startswith(point) and "arrow" not in name:
            column = np.asarray(sheet.column(col))
            below = column[row + 1:row + 1 + POINT_SEARCH_ROWS]
            found = below[~np.isnan(below)]
            if found.size:
                return float(found[0])
    return None

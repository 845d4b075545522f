"""Capture files: CSV and npz readers and writers, unit conversion to SI.

File formats
------------
CSV: ``#`` lines are metadata (``# key: value`` becomes ``metadata[key]``, other ``#`` lines become
notes); the first other line is the header. Column names carry their unit after the last underscore
and are converted to SI::

    t_s, t_ms, t_us                          time
    x_m, x_mm, x_um, x_in                    position (also pos_, position_)
    force_N, force_mN, force_kN, force_gf,   force (also f_)
    force_kgf, force_lbf
    v_mps, v_mmps                            velocity (also vel_, velocity_)
    a_mps2, a_mmps2, a_g                     acceleration (also acc_, accel_, acceleration_)

Columns with other names are ignored (their names are kept in ``notes``). ``.npz``: one 1-D array per
column named as above, plus an optional ``metadata_json`` string. Both writers are atomic
(:func:`hapticam.fileio.atomic_write`).

Every problem raises :class:`~hapticam.errors.CaptureError` with one message naming the file, the line
or column, and what is wrong: missing columns, unknown units, malformed or truncated lines, files too large.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.capture import Capture
from hapticam.errors import CaptureError
from hapticam.fileio import atomic_write, json_safe, read_limited

MAX_CAPTURE_BYTES = 512 * 1024 * 1024
#: a recording's per-tick flags column (render/layout.py: model bits 0-7, safety and ramp bits above)
RECORDING_FLAGS = "flags"
SAFETY_FLAG_SHIFT = 8
MAX_LINE_CHARS = 4096

_GF_N = 9.80665e-3  # 1 gram-force in newtons (standard gravity, CGPM 1901)
_LBF_N = 4.4482216152605  # 1 pound-force in newtons (NIST SP 811)

# quantity -> (accepted base names, {unit suffix: factor to SI})
_QUANTITIES: dict[str, tuple[tuple[str, ...], dict[str, float]]] = {
    "t": (("t", "time"), {"s": 1.0, "ms": 1e-3, "us": 1e-6}),
    "x": (("x", "pos", "position"), {"m": 1.0, "mm": 1e-3, "um": 1e-6, "in": 0.0254}),
    "f": (("f", "force"), {"N": 1.0, "mN": 1e-3, "kN": 1e3, "gf": _GF_N, "kgf": 1e3 * _GF_N,
                           "lbf": _LBF_N}),
    "v": (("v", "vel", "velocity"), {"mps": 1.0, "mmps": 1e-3}),
    "a": (("a", "acc", "accel", "acceleration"), {"mps2": 1.0, "mmps2": 1e-3, "g": 9.80665}),
}
_SI_NAMES = {"t": "t_s", "x": "x_m", "f": "force_N", "v": "v_mps", "a": "a_mps2"}
_REQUIRED = ("t", "x", "f")





# -- column names -----------------------------------------------------------------------------------
def parse_column(name: str) -> tuple[str, float, str] | None:
    """Return ``(quantity, factor to SI, unit)`` for a column name such as ``x_mm``; None if unknown.

    Raises :class:`CaptureError` for a known quantity with a missing or unknown unit.
    """
    raw = name.strip()
    base, sep, unit = raw.rpartition("_")
    if not sep:
        base, unit = raw, ""
    for q, (bases, units) in _QUANTITIES.items():
        if base.lower() in bases or (not sep and raw.lower() in bases):
            if not unit:
                raise CaptureError(f"column {raw!r} has no unit; name it like {_SI_NAMES[q]!r}")
            if unit in units:
                return q, units[unit], unit
            # units are case-sensitive (mN vs MN) except where unambiguous
            folded = {u.lower(): u for u in units}
            if unit.lower() in folded and unit.lower() not in ("mn", "kn"):
                u = folded[unit.lower()]
                return q, units[u], u
            raise CaptureError(f"column {raw!r}: unknown unit {unit!r} (known: {', '.join(units)})")
    return None


def _map_columns(where: str, names: list[str]) -> tuple[dict[str, tuple[int, float, str]], list[str]]:
    found: dict[str, tuple[int, float, str]] = {}
    ignored = []
    for i, col in enumerate(names):
        try:
            parsed = parse_column(col)
        except CaptureError as exc:
            raise CaptureError(f"{where}: {exc}") from None
        if parsed is None:
            ignored.append(col.strip())
            continue
        q, factor, unit = parsed
        if q in found:
            raise CaptureError(f"{where}: two columns give {_SI_NAMES[q].split('_')[0]}: "
                               f"{names[found[q][0]].strip()!r} and {col.strip()!r}")
        found[q] = (i, factor, unit)
    missing = [_SI_NAMES[q] for q in _REQUIRED if q not in found and q != "t"]   # time may be absent
    if missing:
        raise CaptureError(f"{where}: missing column {missing[0]} (found columns: "
                           f"{', '.join(n.strip() for n in names) or 'none'})")
    return found, ignored


# -- reading ----------------------------------------------------------------------------------------
def load_capture(path: str | os.PathLike[str], *, detect: bool = True) -> Capture:
    """Load a capture from ``.csv`` (or ``.txt``) or ``.npz``, convert to SI, validate, find dropouts.

    Raises
    ------
    CaptureError
        With one message naming the file and the problem.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".csv", ".txt", ".npz"):
        raise CaptureError(f"{p}: unknown capture file type {suffix or '(none)'!r}; use .csv or .npz")
    data = read_limited(p, MAX_CAPTURE_BYTES, error=CaptureError, what="capture file")
    sha = hashlib.sha256(data).hexdigest()
    if suffix == ".npz":
        cols, meta, notes = _parse_npz(os.fspath(p), data)
    else:
        cols, meta, notes = _parse_csv(os.fspath(p), data)
    cap = Capture.from_arrays(cols["t"], cols["x"], cols["f"], cols.get("v"), cols.get("a"),
                              metadata=meta, notes=notes, name=os.fspath(p), sha256=sha, detect=detect)
    if "flags" in cols:
        cap.excluded = np.flatnonzero(cols["flags"].astype(np.int64) >> SAFETY_FLAG_SHIFT)
        if cap.excluded.size:
            notes.append(f"{cap.excluded.size} sample(s) marked by the recording's flags (ramp-in or safety "
                         "interventions) are left out of fits and comparisons")
    return cap


def _parse_csv(where: str, data: bytes) -> tuple[dict[str, np.ndarray], dict[str, Any], list[str]]:
    if b"\x00" in data:
        raise CaptureError(f"{where}: contains NUL bytes; not a text CSV file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CaptureError(f"{where}: not UTF-8 text (byte {exc.start}); not a CSV capture") from None
    meta: dict[str, Any] = {}
    notes: list[str] = []
    header: list[str] | None = None
    rows: list[str] = []
    line_no: list[int] = []
    for no, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_LINE_CHARS:
            raise CaptureError(f"{where}: line {no} is longer than {MAX_LINE_CHARS} characters")
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            body = s[1:].strip()
            m = re.match(r"^([A-Za-z][\w .-]{0,63}):\s*(.*)$", body)
            if m:
                meta[m.group(1).strip()] = m.group(2).strip()
            elif body:
                notes.append(body)
            continue
        if header is None:
            delim = _delimiter(s)
            header = [h.strip() for h in s.split(delim)]
            continue
        rows.append(s)
        line_no.append(no)
    if header is None:
        raise CaptureError(f"{where}: no header line (expected e.g. 't_s,x_m,force_N')")
    found, ignored = _map_columns(where, header)
    if ignored:
        notes.append(f"ignored columns: {', '.join(ignored)}")
    if not rows:
        raise CaptureError(f"{where}: header but no data lines")
    ncol = len(header)
    try:
        table = np.loadtxt(io.StringIO("\n".join(rows)), delimiter=delim, dtype=np.float64, ndmin=2)
        if table.shape[1] != ncol:
            raise ValueError("column count")
    except ValueError:
        _locate_bad_row(where, rows, line_no, header, delim)
        raise CaptureError(f"{where}: malformed data lines") from None
    cols: dict[str, np.ndarray] = {}
    if RECORDING_FLAGS in header:
        cols["flags"] = np.nan_to_num(table[:, header.index(RECORDING_FLAGS)])
    for q, (i, factor, _unit) in found.items():
        col = table[:, i]
        bad = np.flatnonzero(~np.isfinite(col))
        if bad.size:
            raise CaptureError(f"{where}: line {line_no[bad[0]]}: column {header[i]} is {col[bad[0]]} "
                               f"(not a finite number; {bad.size} such line(s))")
        cols[q] = col * factor
    meta["units"] = {_SI_NAMES[q]: header[i] for q, (i, _f, _u) in found.items()}
    if delim != ",":
        notes.append(f"columns separated by {_DELIMITER_NAMES[delim]}")
    _time_if_absent(cols, notes)
    return cols, meta, notes


def _locate_bad_row(where: str, rows: list[str], line_no: list[int], header: list[str], delim: str = ",") -> None:
    """Find the first malformed data line and raise a CaptureError naming it."""
    ncol = len(header)
    for k, (row, no) in enumerate(zip(rows, line_no)):
        fields = row.split(delim)
        if len(fields) != ncol:
            hint = " (file truncated?)" if k == len(rows) - 1 and len(fields) < ncol else ""
            raise CaptureError(f"{where}: line {no}: expected {ncol} fields ({', '.join(header)}), "
                               f"got {len(fields)}{hint}")
        for col, fld in zip(header, fields):
            try:
                float(fld)
            except ValueError:
                shown = fld.strip()[:40]
                raise CaptureError(f"{where}: line {no}: column {col}: {shown!r} is not a number") from None


def _parse_npz(where: str, data: bytes) -> tuple[dict[str, np.ndarray], dict[str, Any], list[str]]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise CaptureError(f"{where}: not a valid .npz file (bad or truncated zip archive)") from None
    total = sum(i.file_size for i in infos)
    if total > 8 * MAX_CAPTURE_BYTES:
        raise CaptureError(f"{where}: arrays would expand to {total} bytes, over the limit")
    try:
        npz = np.load(io.BytesIO(data), allow_pickle=False)
        arrays = {k: npz[k] for k in npz.files}
    except ValueError as exc:
        msg = "holds object arrays (pickles are refused)" if "pickle" in str(exc) else f"unreadable ({exc})"
        raise CaptureError(f"{where}: {msg}") from None
    except (OSError, EOFError, zipfile.BadZipFile, KeyError):
        raise CaptureError(f"{where}: not a valid .npz file (corrupt or truncated member)") from None
    meta: dict[str, Any] = {}
    notes: list[str] = []
    if "metadata_json" in arrays:
        raw = arrays.pop("metadata_json")
        try:
            parsed = json.loads(str(raw.item() if raw.shape == () else raw[0]))
        except (ValueError, IndexError, TypeError):
            raise CaptureError(f"{where}: metadata_json is not a JSON object") from None
        if not isinstance(parsed, dict):
            raise CaptureError(f"{where}: metadata_json is not a JSON object")
        notes = [str(s) for s in parsed.pop("notes", [])] if isinstance(parsed.get("notes", []), list) else []
        meta = parsed
    names = list(arrays)
    found, ignored = _map_columns(where, names)
    if ignored:
        notes.append(f"ignored arrays: {', '.join(ignored)}")
    cols: dict[str, np.ndarray] = {}
    for q, (i, factor, _unit) in found.items():
        arr = arrays[names[i]]
        if arr.dtype.kind not in "fiu":
            raise CaptureError(f"{where}: array {names[i]} has dtype {arr.dtype}, expected numbers")
        if arr.ndim != 1:
            raise CaptureError(f"{where}: array {names[i]} must be 1-D, got shape {arr.shape}")
        cols[q] = arr.astype(np.float64) * factor
    sizes = {names[found[q][0]]: cols[q].size for q in cols}
    if len(set(sizes.values())) != 1:
        raise CaptureError(f"{where}: arrays differ in length ({', '.join(f'{k}: {v}' for k, v in sizes.items())})")
    meta["units"] = {_SI_NAMES[q]: names[i] for q, (i, _f, _u) in found.items()}
    _time_if_absent(cols, notes)
    return cols, meta, notes


_DELIMITER_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs"}


def _delimiter(header: str) -> str:
    """The header's column separator: commas, else semicolons or tabs (as spreadsheets write them)."""
    if "," in header:
        return ","
    for d in (";", "\t"):
        if d in header:
            return d
    return ","


def _time_if_absent(cols: dict[str, np.ndarray], notes: list[str]) -> None:
    """A capture of position and force only (a quasi-static force-displacement table): samples taken 1 s
    apart, said in a note; only position- and direction-dependent force can be identified from it."""
    if "t" not in cols:
        cols["t"] = np.arange(cols["x"].size, dtype=np.float64)
        notes.append("no time column: samples taken as 1 s apart (a quasi-static table: only position- and "
                     "direction-dependent force can be identified from it)")


# -- writing ----------------------------------------------------------------------------------------
def save_capture(path: str | os.PathLike[str], capture: Capture) -> None:
    """Write ``capture`` in SI units to ``.csv`` or ``.npz`` (chosen by suffix), atomically.

    Metadata go to ``# key: value`` lines (CSV) or ``metadata_json`` (npz); values round-trip exactly
    (17 significant digits).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    cols = [("t_s", capture.t_s), ("x_m", capture.x_m), ("force_N", capture.f_N)]
    if capture.v_mps is not None:
        cols.append(("v_mps", capture.v_mps))
    if capture.a_mps2 is not None:
        cols.append(("a_mps2", capture.a_mps2))
    meta = {k: v for k, v in capture.metadata.items() if k != "units"}
    if suffix == ".npz":
        payload = {name: arr for name, arr in cols}
        payload["metadata_json"] = np.array(json.dumps({**json_safe(meta), "notes": capture.notes}))
        atomic_write(p, lambda fh: np.savez(fh, **payload), error=CaptureError)
        return
    if suffix not in (".csv", ".txt"):
        raise CaptureError(f"{p}: unknown capture file type {suffix or '(none)'!r}; use .csv or .npz")
    lines = []
    for k, v in meta.items():
        key = re.sub(r"[^\w .-]", "_", str(k))[:64] or "key"
        val = json.dumps(v) if isinstance(v, (dict, list)) else str(v)
        lines.append(f"# {key}: {val}".replace("\n", " "))
    # a note that would read back as "key: value" metadata is written behind "- "
    lines.extend(f"# {'- ' if _looks_like_meta(n) else ''}{n}".replace("\n", " ") for n in capture.notes)
    lines.append(",".join(name for name, _ in cols))
    table = np.column_stack([arr for _, arr in cols])
    buf = io.StringIO()
    np.savetxt(buf, table, delimiter=",", fmt="%.17g")
    text = "\n".join(lines) + "\n" + buf.getvalue()
    atomic_write(p, lambda fh: fh.write(text.encode("utf-8")), error=CaptureError)


def _looks_like_meta(note: str) -> bool:
    return re.match(r"^[A-Za-z][\w .-]{0,63}:\s", note) is not None

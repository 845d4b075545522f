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

A rotary axis (a knob) has its own names, SI in rad and N m: ``theta_rad, theta_mrad, theta_deg`` (also
``angle_``), ``torque_Nm, torque_mNm`` (also ``tau_``), ``omega_radps, omega_degps, omega_rpm``,
``alpha_radps2``. Such a capture's metadata get ``axis: rotary`` (default ``linear``); a rotary capture may
hold the angle alone (a spin-down: torque taken as zero, ``force_absent`` in the metadata). Linear and
rotary columns never mix. Writers name the columns by the capture's axis.

Columns with other names are ignored (their names are kept in ``notes``). ``.npz``: one 1-D array per
column named as above, plus an optional ``metadata_json`` string. Both writers are atomic
(:func:`hapticam.fileio.atomic_write`).

Every problem raises :class:`~hapticam.errors.CaptureError` with one message naming the file, the line
or column, and what is wrong: missing columns, unknown units, malformed or truncated lines, files too large,
a time column in the wrong unit (:func:`hapticam.capture.check_time_unit`).

Bounds: a capture holds at most :data:`hapticam.capture.MAX_SAMPLES` samples (10 million) in a file of
at most ``MAX_CAPTURE_BYTES``. Pipes and devices are refused before they are opened; a CSV file's lines
are counted before it is parsed in chunks (:mod:`hapticam.capture_csv`: 10 million rows of t, x, F in
seconds and 0.25 GB of columns); an ``.npz`` file is read from disk member by member, and a member is
expanded only if the capture uses it and its zip entry and ``.npy`` header say it fits the capture
limits (no zip bomb or oversized array gets past its directory and header). Over-limit files are refused
before their columns are allocated.
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

from hapticam.capture import MAX_SAMPLES, Capture
from hapticam.capture_columns import (RECORDING_FLAGS, ROTARY_SI_NAMES, SAFETY_FLAG_SHIFT, SI_NAMES,  # noqa: F401
                                      axis_of, columns_axis, map_columns, parse_column, time_if_absent,
                                      torque_if_absent)
from hapticam.capture_csv import MAX_CAPTURE_BYTES, read_csv
from hapticam.capture_meter import is_meter_file, load_meter_capture
from hapticam.errors import CaptureError
from hapticam.fileio import atomic_write, json_safe, open_regular

MAX_METADATA_BYTES = 1024 * 1024


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
    if is_meter_file(p):
        return load_meter_capture(p, detect=detect)
    if suffix not in (".csv", ".txt", ".npz"):
        raise CaptureError(f"{p}: unknown capture file type {suffix or '(none)'!r}; use .csv, .npz or .ods")
    if suffix == ".npz":
        fh, _size = open_regular(p, MAX_CAPTURE_BYTES, error=CaptureError, what="capture file")
        with fh:
            sha = _file_sha256(os.fspath(p), fh)
            cols, meta, notes = _parse_npz(os.fspath(p), fh)
    else:
        cols, meta, notes, sha = read_csv(p)
    cap = Capture.from_arrays(cols["t"], cols["x"], cols["f"], cols.get("v"), cols.get("a"),
                              metadata=meta, notes=notes, name=os.fspath(p), sha256=sha, detect=detect, copy=False)
    if "flags" in cols:
        cap.excluded = np.flatnonzero(cols["flags"].astype(np.int64) >> SAFETY_FLAG_SHIFT)
        if cap.excluded.size:
            notes.append(f"{cap.excluded.size} sample(s) marked by the recording's flags (ramp-in or safety "
                         "interventions) are left out of fits and comparisons")
    return cap


def _file_sha256(where: str, fh: Any) -> str:
    """SHA-256 of an open binary file's bytes, read in 16 MiB blocks; the file is rewound."""
    digest = hashlib.sha256()
    try:
        while block := fh.read(16 * 1024 * 1024):
            digest.update(block)
        fh.seek(0)
    except OSError as exc:
        raise CaptureError(f"{where}: cannot read ({exc.strerror or exc})") from exc
    return digest.hexdigest()


def _npz_arrays(where: str, zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> dict[str, np.ndarray]:
    """The members a capture uses (known columns and ``metadata_json``), all checked from their zip entries
    and ``.npy`` headers before any is decompressed: column names that map to one capture, at most
    ``MAX_SAMPLES`` values each, and together at most ``MAX_CAPTURE_BYTES`` expanded (what a CSV capture
    may hold). Other members are never expanded."""
    wanted = []
    for info in infos:
        key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
        try:
            known = key == "metadata_json" or parse_column(key) is not None
        except CaptureError:
            known = True                              # a known quantity with a bad unit: reported later
        if known:
            wanted.append((key, info))
    total = sum(info.file_size for _, info in wanted)
    if total > MAX_CAPTURE_BYTES:
        raise CaptureError(f"{where}: the arrays would expand to {total:,} bytes, over the "
                           f"{MAX_CAPTURE_BYTES // 2**20} MiB a capture may hold")
    map_columns(where, [key for key, _ in wanted if key != "metadata_json"])    # duplicates, missing columns
    arrays: dict[str, np.ndarray] = {}
    try:
        for key, info in wanted:
            _check_npy_header(where, zf, key, info)
        for key, info in wanted:
            with zf.open(info) as fh:
                arrays[key] = np.lib.format.read_array(fh, allow_pickle=False)
    except CaptureError:
        raise
    except ValueError as exc:
        raise CaptureError(f"{where}: unreadable ({exc})") from None     # object arrays are refused above
    except (OSError, EOFError, zipfile.BadZipFile, KeyError):
        raise CaptureError(f"{where}: not a valid .npz file (corrupt or truncated member)") from None
    ignored = [i.filename for i in infos if i not in {info for _, info in wanted}]
    if ignored:
        arrays["__ignored__"] = np.array(ignored)
    return arrays


def _check_npy_header(where: str, zf: zipfile.ZipFile, key: str, info: zipfile.ZipInfo) -> None:
    """Refuse a member whose ``.npy`` header (read without expanding the data) declares object arrays, more
    than ``MAX_SAMPLES`` values (``metadata_json``: its size limit) or fewer bytes than its zip entry."""
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, _fortran, dtype = read_header(fh)
    limit = MAX_METADATA_BYTES // 4 if key == "metadata_json" else MAX_SAMPLES
    count = int(np.prod(shape)) if shape else 1
    if dtype.hasobject:
        raise CaptureError(f"{where}: array {key} holds object arrays (pickles are refused)")
    if count > limit or info.file_size > count * dtype.itemsize + 65536 + 128:
        raise CaptureError(f"{where}: array {key}: {shape} of {dtype} is not a capture column "
                           f"(at most {limit:,} values)")


def _parse_npz(where: str, fh: Any) -> tuple[dict[str, np.ndarray], dict[str, Any], list[str]]:
    """Columns (float64, SI), metadata and notes of an open ``.npz`` file (read member by member)."""
    try:
        zf = zipfile.ZipFile(fh)
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise CaptureError(f"{where}: not a valid .npz file (bad or truncated zip archive)") from None
    arrays = _npz_arrays(where, zf, infos)
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
    skipped = [str(n) for n in arrays.pop("__ignored__", [])]
    names = list(arrays)
    found, ignored = map_columns(where, names)
    ignored += [n[:-4] if n.endswith(".npy") else n for n in skipped]
    if ignored:
        notes.append(f"ignored arrays: {', '.join(ignored)}")
    cols: dict[str, np.ndarray] = {}
    for q, (i, factor, _unit) in found.items():
        arr = arrays[names[i]]
        if arr.dtype.kind not in "fiu":
            raise CaptureError(f"{where}: array {names[i]} has dtype {arr.dtype}, expected numbers")
        if arr.ndim != 1:
            raise CaptureError(f"{where}: array {names[i]} must be 1-D, got shape {arr.shape}")
        cols[q] = arr.astype(np.float64, copy=False)         # the member's fresh array, or one float64 copy
        if factor != 1.0:
            cols[q] *= factor
        del arr, arrays[names[i]]
    sizes = {names[found[q][0]]: cols[q].size for q in cols}
    if len(set(sizes.values())) != 1:
        raise CaptureError(f"{where}: arrays differ in length ({', '.join(f'{k}: {v}' for k, v in sizes.items())})")
    meta["units"] = {SI_NAMES[q]: names[i] for q, (i, _f, _u) in found.items()}
    if columns_axis([names[i] for i, _f, _u in found.values()]) == "rotary":
        meta["axis"] = "rotary"                             # theta_rad, torque_Nm: a knob's capture
    axis_of(meta)
    torque_if_absent(cols, notes, meta)
    time_if_absent(cols, notes)
    return cols, meta, notes


# -- writing ----------------------------------------------------------------------------------------
def metadata_lines(metadata: dict[str, Any]) -> str:
    """``# key: value`` lines (JSON for mappings and lists; one line each)."""
    return "".join(f"# {k}: {json.dumps(v) if isinstance(v, (dict, list)) else v}".replace("\n", " ") + "\n"
                   for k, v in metadata.items())


def save_capture(path: str | os.PathLike[str], capture: Capture) -> None:
    """Write ``capture`` in SI units to ``.csv`` or ``.npz`` (chosen by suffix), atomically.

    Metadata go to ``# key: value`` lines (CSV) or ``metadata_json`` (npz); values round-trip exactly
    (17 significant digits).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    si = ROTARY_SI_NAMES if axis_of(capture.metadata) == "rotary" else SI_NAMES   # theta_rad, torque_Nm
    cols = [("t_s", capture.t_s), (si["x"], capture.x_m)]
    if not capture.metadata.get("force_absent"):
        cols.append((si["f"], capture.f_N))
    if capture.v_mps is not None:
        cols.append((si["v"], capture.v_mps))
    if capture.a_mps2 is not None:
        cols.append((si["a"], capture.a_mps2))
    meta = {k: v for k, v in capture.metadata.items() if k not in ("units", "force_absent")}
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

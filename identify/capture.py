"""Probe captures: time, position, force (and optionally measured velocity and acceleration).

A :class:`Capture` holds SI arrays ``t_s`` (s), ``x_m`` (m), ``f_N`` (N), optional ``v_mps`` (m/s) and
``a_mps2`` (m/s^2), free-form metadata and the indices of detected sensor dropouts. It is what the probe
records of a real object (seed 001 section 3.1) and what a recording of a rendered object looks like.

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
column named as above, plus an optional ``metadata_json`` string. Both writers are atomic (temporary
file in the target folder, then a rename).

Validation
----------
Every problem raises :class:`~hapticam.errors.CaptureError` with one message naming the file, the line
or column, and what is wrong: missing columns, unknown units, malformed or truncated lines, NaN/inf,
non-increasing or duplicated time, too few samples, no motion, a sample rate too irregular to
differentiate, files too large.

Dropouts
--------
Load-cell ADCs such as the HX711 occasionally return one wrong reading (bluepylons' switch tester
reports ~-2 N spikes). :func:`detect_dropouts` flags isolated samples far outside the range of their
neighbours; they are counted in ``Capture.dropouts`` and excluded from fitting and from fit metrics
(``Capture.valid``), never silently kept. Steps such as a tactile click drop are not flagged: the
sample after a step lies inside the range spanned by its neighbours on both sides.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.errors import CaptureError

MAX_CAPTURE_BYTES = 512 * 1024 * 1024
MAX_SAMPLES = 50_000_000
MAX_LINE_CHARS = 4096
MIN_SAMPLES = 20
#: the 99th percentile of |dt / median(dt) - 1| above which differentiation is refused
MAX_DT_JITTER = 0.5

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


@dataclass
class Capture:
    """One probe capture in SI units (validate with :meth:`validate`, build with :meth:`from_arrays`).

    Attributes
    ----------
    t_s, x_m, f_N : numpy.ndarray
        Time (s, strictly increasing), position (m, +x into the object), force the probe applies (N).
    v_mps, a_mps2 : numpy.ndarray or None
        Measured velocity (m/s) and acceleration (m/s^2), if the probe recorded them.
    metadata : dict
        ``key: value`` metadata (source, sample rate, ...), plus ``units`` (the file's column units).
    notes : list of str
        Free-form comment lines and loader remarks (ignored columns).
    name : str
        Display name (file path or ``<arrays>``).
    sha256 : str or None
        SHA-256 of the file's bytes, for provenance.
    dropouts : numpy.ndarray
        Indices of samples detected as sensor dropouts (excluded from fits and metrics).
    """

    t_s: np.ndarray
    x_m: np.ndarray
    f_N: np.ndarray
    v_mps: np.ndarray | None = None
    a_mps2: np.ndarray | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    name: str = "<arrays>"
    sha256: str | None = None
    dropouts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @classmethod
    def from_arrays(cls, t_s: Any, x_m: Any, f_N: Any, v_mps: Any = None, a_mps2: Any = None, *,
                    metadata: dict[str, Any] | None = None, notes: list[str] | None = None,
                    name: str = "<arrays>", sha256: str | None = None,
                    detect: bool = True) -> "Capture":
        """Build, validate and (with ``detect``) scan for force dropouts."""
        cap = cls(_as_1d(name, "t_s", t_s), _as_1d(name, "x_m", x_m), _as_1d(name, "force_N", f_N),
                  None if v_mps is None else _as_1d(name, "v_mps", v_mps),
                  None if a_mps2 is None else _as_1d(name, "a_mps2", a_mps2),
                  dict(metadata or {}), list(notes or []), name, sha256)
        cap.validate()
        if detect:
            cap.dropouts = detect_dropouts(cap.f_N)
        return cap

    # -- derived ------------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of samples."""
        return int(self.t_s.size)

    @property
    def dt_s(self) -> float:
        """Median sample interval (s)."""
        return float(np.median(np.diff(self.t_s)))

    @property
    def sample_rate_hz(self) -> float:
        """Sample rate from the median interval (Hz)."""
        return 1.0 / self.dt_s

    @property
    def valid(self) -> np.ndarray:
        """Boolean mask: True for samples that are not dropouts."""
        mask = np.ones(self.n, dtype=bool)
        mask[self.dropouts] = False
        return mask

    def describe(self) -> str:
        """One line: samples, duration, rate, travel, force range, dropouts."""
        return (f"{self.name}: {self.n} samples over {self.t_s[-1] - self.t_s[0]:.3g} s at "
                f"{self.sample_rate_hz:.4g} Hz, x {1e3 * self.x_m.min():.4g} to {1e3 * self.x_m.max():.4g} mm, "
                f"force {self.f_N[self.valid].min():.4g} to {self.f_N[self.valid].max():.4g} N, "
                f"{self.dropouts.size} dropout(s) excluded")

    # -- validation ---------------------------------------------------------------------------------
    def validate(self) -> None:
        """Check shapes, finiteness, time order, sample count, motion and sample-rate regularity."""
        name = self.name
        arrays = {"t_s": self.t_s, "x_m": self.x_m, "force_N": self.f_N, "v_mps": self.v_mps,
                  "a_mps2": self.a_mps2}
        n = self.t_s.size
        for col, arr in arrays.items():
            if arr is None:
                continue
            if arr.ndim != 1:
                raise CaptureError(f"{name}: column {col} must be 1-D, got shape {arr.shape}")
            if arr.size != n:
                raise CaptureError(f"{name}: column {col} has {arr.size} samples, t_s has {n}")
            bad = np.flatnonzero(~np.isfinite(arr))
            if bad.size:
                raise CaptureError(f"{name}: column {col} sample {int(bad[0])}: value {arr[bad[0]]} is not "
                                   f"finite ({bad.size} such sample(s))")
        if n < MIN_SAMPLES:
            raise CaptureError(f"{name}: only {n} samples; at least {MIN_SAMPLES} are needed")
        if n > MAX_SAMPLES:
            raise CaptureError(f"{name}: {n} samples exceed the limit of {MAX_SAMPLES}")
        dt = np.diff(self.t_s)
        bad = np.flatnonzero(dt <= 0)
        if bad.size:
            i = int(bad[0]) + 1
            what = "duplicated" if dt[bad[0]] == 0 else "decreasing"
            raise CaptureError(f"{name}: time is {what} at sample {i} (t_s {self.t_s[i - 1]!r} then "
                               f"{self.t_s[i]!r}); time must increase strictly")
        med = float(np.median(dt))
        jitter = float(np.percentile(np.abs(dt / med - 1.0), 99))
        if jitter > MAX_DT_JITTER:
            raise CaptureError(f"{name}: sample times too irregular to differentiate (1 % of intervals "
                               f"deviate from the median {med:.4g} s by more than {100 * jitter:.0f} %); "
                               f"resample the capture to a uniform rate first")
        span = float(self.x_m.max() - self.x_m.min())
        if not span > 1e-9:
            raise CaptureError(f"{name}: no motion (position spans {span:.3g} m); nothing to identify")

    def subset(self, mask: np.ndarray) -> dict[str, np.ndarray]:
        """Arrays restricted to ``mask`` (keys ``t_s, x_m, f_N`` and, if present, ``v_mps, a_mps2``)."""
        out = {"t_s": self.t_s[mask], "x_m": self.x_m[mask], "f_N": self.f_N[mask]}
        if self.v_mps is not None:
            out["v_mps"] = self.v_mps[mask]
        if self.a_mps2 is not None:
            out["a_mps2"] = self.a_mps2[mask]
        return out


def _as_1d(name: str, col: str, value: Any) -> np.ndarray:
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise CaptureError(f"{name}: column {col}: expected numbers") from None
    if arr.ndim != 1:
        raise CaptureError(f"{name}: column {col} must be 1-D, got shape {arr.shape}")
    return arr


# -- dropouts ---------------------------------------------------------------------------------------
def noise_scale(f: np.ndarray) -> float:
    """Robust white-noise standard deviation of ``f`` from its second differences.

    For white noise of deviation s, ``f[i+1] - 2 f[i] + f[i-1]`` has deviation ``s sqrt(6)``; the
    median absolute value of a normal variable is 0.6745 of its deviation (MAD estimator).
    """
    if f.size < 3:
        return 0.0
    d2 = np.diff(f, 2)
    return float(np.median(np.abs(d2)) / 0.6745 / np.sqrt(6.0))


def detect_dropouts(f_N: np.ndarray, *, half_window: int = 5, noise_multiple: float = 20.0,
                    range_fraction: float = 0.05) -> np.ndarray:
    """Indices of isolated samples far outside the range of their neighbours (sensor dropouts).

    For each sample, the neighbours within ``half_window`` samples on either side (itself excluded)
    give a trimmed range ``[lo, hi]`` (second smallest to second largest, so a second dropout nearby
    does not widen it). The sample is a dropout if it lies below ``lo`` or above ``hi`` by more than
    ``max(hi - lo, noise_multiple * noise, range_fraction * (p99 - p1))``, where ``noise`` is
    :func:`noise_scale` and ``p1, p99`` the force's percentiles. A step (click drop) is not flagged: a
    sample next to it lies inside the range spanned by its neighbours. A monotone ramp is not flagged.
    """
    f = np.asarray(f_N, dtype=np.float64)
    n = f.size
    if n < 2 * half_window + 1:
        return np.zeros(0, dtype=np.int64)
    w = half_window
    # neighbours of i: f[i-w .. i-1] and f[i+1 .. i+w], padded by edge reflection of the window
    padded = np.concatenate([f[w:0:-1], f, f[-2:-w - 2:-1]])
    offsets = [o for o in range(-w, w + 1) if o != 0]
    neigh = np.stack([padded[w + o: w + o + n] for o in offsets], axis=1)
    neigh.sort(axis=1)
    lo = neigh[:, 1]
    hi = neigh[:, -2]
    p1, p99 = np.percentile(f, [1, 99])
    floor = max(noise_multiple * noise_scale(f), range_fraction * float(p99 - p1))
    margin = np.maximum(hi - lo, floor)
    flagged = (f < lo - margin) | (f > hi + margin)
    return np.flatnonzero(flagged).astype(np.int64)


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
    missing = [_SI_NAMES[q] for q in _REQUIRED if q not in found]
    if missing:
        raise CaptureError(f"{where}: missing column {missing[0]} (found columns: "
                           f"{', '.join(n.strip() for n in names) or 'none'})")
    return found, ignored


# -- reading ----------------------------------------------------------------------------------------
def _read_limited(path: Path) -> bytes:
    text = os.fspath(path)
    try:
        if path.is_dir():
            raise CaptureError(f"{text}: is a directory, not a capture file")
        size = path.stat().st_size
        if size > MAX_CAPTURE_BYTES:
            raise CaptureError(f"{text}: file is {size} bytes, over the {MAX_CAPTURE_BYTES // 2**20} MiB limit")
        with open(path, "rb") as fh:
            data = fh.read(MAX_CAPTURE_BYTES + 1)
    except FileNotFoundError:
        raise CaptureError(f"{text}: no such file") from None
    except CaptureError:
        raise
    except OSError as exc:
        raise CaptureError(f"{text}: cannot read ({exc.strerror or exc})") from exc
    if len(data) > MAX_CAPTURE_BYTES:
        raise CaptureError(f"{text}: file is over the {MAX_CAPTURE_BYTES // 2**20} MiB limit")
    if not data:
        raise CaptureError(f"{text}: file is empty")
    return data


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
    data = _read_limited(p)
    sha = hashlib.sha256(data).hexdigest()
    if suffix == ".npz":
        cols, meta, notes = _parse_npz(os.fspath(p), data)
    else:
        cols, meta, notes = _parse_csv(os.fspath(p), data)
    return Capture.from_arrays(cols["t"], cols["x"], cols["f"], cols.get("v"), cols.get("a"),
                               metadata=meta, notes=notes, name=os.fspath(p), sha256=sha, detect=detect)


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
            header = [h.strip() for h in s.split(",")]
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
        table = np.loadtxt(io.StringIO("\n".join(rows)), delimiter=",", dtype=np.float64, ndmin=2)
        if table.shape[1] != ncol:
            raise ValueError("column count")
    except ValueError:
        _locate_bad_row(where, rows, line_no, header)
        raise CaptureError(f"{where}: malformed data lines") from None
    cols: dict[str, np.ndarray] = {}
    for q, (i, factor, _unit) in found.items():
        col = table[:, i]
        bad = np.flatnonzero(~np.isfinite(col))
        if bad.size:
            raise CaptureError(f"{where}: line {line_no[bad[0]]}: column {header[i]} is {col[bad[0]]} "
                               f"(not a finite number; {bad.size} such line(s))")
        cols[q] = col * factor
    meta["units"] = {_SI_NAMES[q]: header[i] for q, (i, _f, _u) in found.items()}
    return cols, meta, notes


def _locate_bad_row(where: str, rows: list[str], line_no: list[int], header: list[str]) -> None:
    """Find the first malformed data line and raise a CaptureError naming it."""
    ncol = len(header)
    for k, (row, no) in enumerate(zip(rows, line_no)):
        fields = row.split(",")
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
    return cols, meta, notes


# -- writing ----------------------------------------------------------------------------------------
def _atomic_write(path: Path, write) -> None:
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise CaptureError(f"{path}: folder {folder} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise CaptureError(f"{path}: cannot write ({exc.strerror or exc})") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise CaptureError(f"{path}: cannot write ({exc.strerror or exc})") from exc
        raise


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
        payload["metadata_json"] = np.array(json.dumps({**_jsonable(meta), "notes": capture.notes}))
        _atomic_write(p, lambda fh: np.savez(fh, **payload))
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
    _atomic_write(p, lambda fh: fh.write(text.encode("utf-8")))


def _looks_like_meta(note: str) -> bool:
    return re.match(r"^[A-Za-z][\w .-]{0,63}:\s", note) is not None


def _jsonable(meta: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in meta.items():
        try:
            json.dumps(v)
            out[str(k)] = v
        except (TypeError, ValueError):
            out[str(k)] = str(v)
    return out

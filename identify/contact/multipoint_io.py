"""Files of multi-point contact data: ``.npz`` and ``.csv`` (the format of
:mod:`~hapticam.identify.contact.multipoint`).

``.npz`` holds the arrays under their names: ``t_s``, ``force_N``, ``delta_m``, ``delta_dot_mps``, ``normal``,
``tangent`` and optionally ``moment_Nm`` and ``r_m`` (no pickled objects: loaded with ``allow_pickle=False``).

``.csv`` is long format, one row per contact per instant, header required::

    t_s,Fx_N,Fy_N,Fz_N[,Mx_Nm,My_Nm,Mz_Nm],delta_m,delta_dot_mps,nx,ny,nz,tx,ty,tz[,rx_m,ry_m,rz_m]

The rows of one instant are consecutive and repeat the same resultant; an instant without contact is one
row with the contact columns empty. Moment columns and position columns are optional (both needed for
moment rows).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.identify.contact.multipoint import MultiPointData

MAX_BYTES = 256 * 1024 * 1024
BASE = ["t_s", "Fx_N", "Fy_N", "Fz_N"]
MOMENT = ["Mx_Nm", "My_Nm", "Mz_Nm"]
CONTACT = ["delta_m", "delta_dot_mps", "nx", "ny", "nz", "tx", "ty", "tz"]
POSITION = ["rx_m", "ry_m", "rz_m"]
NPZ_KEYS = ("t_s", "force_N", "delta_m", "delta_dot_mps", "normal", "tangent")


def _size_checked(path: Path) -> None:
    if not path.is_file():
        raise IdentificationError(f"{path}: no such file")
    size = path.stat().st_size
    if size == 0 or size > MAX_BYTES:
        raise IdentificationError(f"{path}: {'empty' if size == 0 else 'larger than 256 MB'}")


def load_multipoint(path: str | os.PathLike[str]) -> MultiPointData:
    """Read multi-point contact data from ``.npz`` or ``.csv``; one clear error for a bad file."""
    p = Path(path)
    _size_checked(p)
    if p.suffix.lower() == ".npz":
        try:
            with np.load(p, allow_pickle=False) as z:
                missing = [k for k in NPZ_KEYS if k not in z.files]
                if missing:
                    raise IdentificationError(f"{p}: missing arrays {', '.join(missing)}")
                arrays = {k: z[k] for k in z.files if k in NPZ_KEYS + ("moment_Nm", "r_m")}
        except (ValueError, OSError, EOFError) as exc:
            raise IdentificationError(f"{p}: not a readable npz file ({exc})") from exc
        return MultiPointData(**arrays)
    if p.suffix.lower() == ".csv":
        return _read_csv(p.read_text(encoding="utf-8", errors="strict"), str(p))
    raise IdentificationError(f"{p}: expected a .npz or .csv file")


def _float(cell: str, where: str) -> float:
    try:
        return float(cell) if cell.strip() else float("nan")
    except ValueError as exc:
        raise IdentificationError(f"{where}: not a number: {cell!r}") from exc


def _read_csv(text: str, name: str) -> MultiPointData:
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 2:
        raise IdentificationError(f"{name}: a header and at least one row are needed")
    head = [h.strip() for h in rows[0]]
    has_m, has_r = MOMENT[0] in head, POSITION[0] in head
    want = BASE + (MOMENT if has_m else []) + CONTACT + (POSITION if has_r else [])
    if head != want:
        raise IdentificationError(f"{name}: expected columns {','.join(want)}, got {','.join(head)}")
    vals = np.array([[_float(c, f"{name} line {i + 2}") for c in r] if len(r) == len(want) else
                     _bad_row(name, i + 2, len(r), len(want)) for i, r in enumerate(rows[1:])])
    col = {h: vals[:, j] for j, h in enumerate(head)}
    t_all = col["t_s"]
    if not np.all(np.isfinite(t_all)):
        raise IdentificationError(f"{name}: t_s must be filled on every row")
    starts = np.concatenate([[0], np.nonzero(np.diff(t_all))[0] + 1])
    counts = np.diff(np.concatenate([starts, [t_all.size]]))
    T, C = starts.size, int(counts.max())
    slot = np.arange(t_all.size) - np.repeat(starts, counts)
    inst = np.repeat(np.arange(T), counts)
    out = {k: np.full((T, C), np.nan) for k in ("delta_m", "delta_dot_mps")}
    vec = {k: np.full((T, C, 3), np.nan) for k in ("normal", "tangent") + (("r_m",) if has_r else ())}
    out["delta_m"][inst, slot] = col["delta_m"]
    out["delta_dot_mps"][inst, slot] = col["delta_dot_mps"]
    vec["normal"][inst, slot] = np.column_stack([col["nx"], col["ny"], col["nz"]])
    vec["tangent"][inst, slot] = np.column_stack([col["tx"], col["ty"], col["tz"]])
    if has_r:
        vec["r_m"][inst, slot] = np.column_stack([col[c] for c in POSITION])
    res = {"force_N": ["Fx_N", "Fy_N", "Fz_N"]} | ({"moment_Nm": MOMENT} if has_m else {})
    arrays = {}
    for key, cols in res.items():
        block = np.column_stack([col[c] for c in cols])
        if not np.allclose(block, block[starts][inst], equal_nan=False):
            raise IdentificationError(f"{name}: the rows of one instant disagree on {key}")
        arrays[key] = block[starts]
    return MultiPointData(t_all[starts], delta_m=out["delta_m"], delta_dot_mps=out["delta_dot_mps"],
                          normal=vec["normal"], tangent=vec["tangent"], r_m=vec.get("r_m"), **arrays)


def _bad_row(name: str, line: int, got: int, want: int) -> list[float]:
    raise IdentificationError(f"{name} line {line}: {got} fields, expected {want}")


def save_multipoint(path: str | os.PathLike[str], data: MultiPointData) -> None:
    """Write ``data`` as ``.npz`` or ``.csv`` (by the suffix)."""
    p = Path(path)
    if p.suffix.lower() == ".npz":
        arrays = {k: getattr(data, k) for k in NPZ_KEYS + ("moment_Nm", "r_m") if getattr(data, k) is not None}
        with open(p, "wb") as fh:
            np.savez(fh, **arrays)
        return
    if p.suffix.lower() != ".csv":
        raise IdentificationError(f"{p}: expected a .npz or .csv file")
    has_m, has_r = data.moment_Nm is not None, data.r_m is not None
    head = BASE + (MOMENT if has_m else []) + CONTACT + (POSITION if has_r else [])
    lines = [",".join(head)]
    for i in range(data.t_s.size):
        res = [data.t_s[i], *data.force_N[i]] + (list(data.moment_Nm[i]) if has_m else [])
        slots = np.nonzero(data.active[i])[0]
        if slots.size == 0:
            lines.append(",".join([repr(float(v)) for v in res] + [""] * (len(head) - len(res))))
        for c in slots:
            row = res + [data.delta_m[i, c], data.delta_dot_mps[i, c], *data.normal[i, c], *data.tangent[i, c]]
            row += list(data.r_m[i, c]) if has_r else []
            lines.append(",".join(repr(float(v)) for v in row))
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")

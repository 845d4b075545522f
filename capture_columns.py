"""Capture column names and their units: ``t_s``, ``x_mm``, ``force_gf`` ... to SI (see
:mod:`hapticam.capture_io` for the file formats)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hapticam.errors import CaptureError, UsageError

#: a recording's per-tick flags column (render/layout.py: model bits 0-7, safety and ramp bits above)
RECORDING_FLAGS = "flags"
SAFETY_FLAG_SHIFT = 8

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
SI_NAMES = {"t": "t_s", "x": "x_m", "f": "force_N", "v": "v_mps", "a": "a_mps2"}

#: the axis kinds: a linear axis (m, N) and a rotary one (rad, N m) such as a knob's
AXES = ("linear", "rotary")
#: rotary columns: quantity -> (accepted base names, {unit suffix: factor to SI}); SI in rad, N m
_ROTARY: dict[str, tuple[tuple[str, ...], dict[str, float]]] = {
    "x": (("theta", "angle"), {"rad": 1.0, "mrad": 1e-3, "deg": np.pi / 180.0}),
    "f": (("torque", "tau"), {"Nm": 1.0, "mNm": 1e-3}),
    "v": (("omega",), {"radps": 1.0, "degps": np.pi / 180.0, "rpm": 2.0 * np.pi / 60.0}),
    "a": (("alpha",), {"radps2": 1.0}),
}
ROTARY_SI_NAMES = {"t": "t_s", "x": "theta_rad", "f": "torque_Nm", "v": "omega_radps", "a": "alpha_radps2"}
#: units of each quantity on each axis kind (reports, ``model show``, ``verify``)
AXIS_UNITS = {
    "linear": {"position": "m", "velocity": "m/s", "force": "N", "stiffness": "N/m", "damping": "N s/m",
               "mass": "kg"},
    "rotary": {"position": "rad", "velocity": "rad/s", "force": "N m", "stiffness": "N m/rad",
               "damping": "N m s/rad", "mass": "kg m^2"},
}
#: a parameter name's unit suffix -> the quantity it measures (``Fc_N`` is a force, ``b_v_Nspm`` a damping)
_SUFFIX_QUANTITY = {"N": "force", "Nspm": "damping", "Npm": "stiffness", "mps": "velocity", "m": "position",
                    "kg": "mass"}


def axis_of(metadata: dict) -> str:
    """The axis kind a capture's or model's metadata declare (``axis``), ``linear`` when absent."""
    axis = metadata.get("axis", "linear") if isinstance(metadata, dict) else "linear"
    if axis not in AXES:
        raise CaptureError(f"axis: expected one of {', '.join(AXES)}, got {axis!r}")
    return str(axis)


def require_linear(capture: Any, name: str, purpose: str) -> None:
    """Refuse a rotary capture (angles, torques) where keys pressed along a line are expected: ``purpose``
    says what expects them (e.g. "the library holds keys pressed along a line")."""
    if axis_of(capture.metadata) == "rotary":
        raise UsageError(f"{name}: a rotary capture (angles, torques); {purpose}")


def parameter_unit(name: str, axis: str) -> str:
    """The unit of a parameter named with a linear SI suffix (``Fc_N``, ``k_Npm``) on ``axis``, or ''."""
    quantity = _SUFFIX_QUANTITY.get(name.rpartition("_")[2])
    return AXIS_UNITS.get(axis, AXIS_UNITS["linear"])[quantity] if quantity else ""


def _parse_rotary(raw: str) -> tuple[str, float, str] | None:
    """A rotary column (``theta_rad``, ``torque_Nm``, ...): ``(quantity, factor, unit)`` or None."""
    base, sep, unit = raw.rpartition("_")
    for q, (bases, units) in _ROTARY.items():
        if sep and base.lower() in bases:
            if unit in units:
                return q, units[unit], unit
            raise CaptureError(f"column {raw!r}: unknown unit {unit!r} (known: {', '.join(units)})")
        if not sep and raw.lower() in bases:
            raise CaptureError(f"column {raw!r} has no unit; name it like {ROTARY_SI_NAMES[q]!r}")
    return None


def columns_axis(names: list[str]) -> str:
    """``rotary`` when the position column is an angle (``theta_rad``...), else ``linear``."""
    for col in names:
        try:
            parsed = _parse_rotary(col.strip())
        except CaptureError:
            continue
        if parsed is not None and parsed[0] == "x":
            return "rotary"
    return "linear"


# -- column names -----------------------------------------------------------------------------------
def parse_column(name: str) -> tuple[str, float, str] | None:
    """Return ``(quantity, factor to SI, unit)`` for a column name such as ``x_mm``; None if unknown.

    Raises :class:`CaptureError` for a known quantity with a missing or unknown unit.
    """
    raw = name.strip()
    rotary = _parse_rotary(raw)
    if rotary is not None:
        return rotary
    base, sep, unit = raw.rpartition("_")
    if not sep:
        base, unit = raw, ""
    for q, (bases, units) in _QUANTITIES.items():
        if base.lower() in bases or (not sep and raw.lower() in bases):
            if not unit:
                raise CaptureError(f"column {raw!r} has no unit; name it like {SI_NAMES[q]!r}")
            if unit in units:
                return q, units[unit], unit
            # units are case-sensitive (mN vs MN) except where unambiguous
            folded = {u.lower(): u for u in units}
            if unit.lower() in folded and unit.lower() not in ("mn", "kn"):
                u = folded[unit.lower()]
                return q, units[u], u
            raise CaptureError(f"column {raw!r}: unknown unit {unit!r} (known: {', '.join(units)})")
    return None


def map_columns(where: str, names: list[str]) -> tuple[dict[str, tuple[int, float, str]], list[str]]:
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
            raise CaptureError(f"{where}: two columns give {SI_NAMES[q].split('_')[0]}: "
                               f"{names[found[q][0]].strip()!r} and {col.strip()!r}")
        found[q] = (i, factor, unit)
    used = [names[i].strip() for q, (i, _f, _u) in found.items() if q != "t"]
    axes = {"rotary" if _parse_rotary(n) else "linear" for n in used}
    if len(axes) > 1:
        raise CaptureError(f"{where}: linear and rotary columns mixed ({', '.join(used)}); a capture is on one axis")
    si = ROTARY_SI_NAMES if axes == {"rotary"} else SI_NAMES
    needed = ("x",) if axes == {"rotary"} else ("x", "f")        # a spin-down: the angle alone (torque_if_absent)
    missing = [si[q] for q in needed if q not in found]           # time may be absent
    if missing:
        raise CaptureError(f"{where}: missing column {missing[0]} (found columns: "
                           f"{', '.join(n.strip() for n in names) or 'none'})")
    return found, ignored


DELIMITER_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs"}


def delimiter_of(header: str) -> str:
    """The header's column separator: commas, else semicolons or tabs (as spreadsheets write them)."""
    if "," in header:
        return ","
    for d in (";", "\t"):
        if d in header:
            return d
    return ","


def torque_if_absent(cols: dict[str, np.ndarray], notes: list[str], meta: dict) -> None:
    """A rotary capture of angle only (a spin-down recorded by the knob's encoder): torque taken as zero,
    marked ``force_absent`` in the metadata and said in a note (fits that need torque refuse it)."""
    if "f" not in cols and "x" in cols:
        cols["f"] = np.zeros(cols["x"].size)
        meta["force_absent"] = True
        notes.append("no torque column: an angle-only capture (a spin-down); torque taken as zero")


def time_if_absent(cols: dict[str, np.ndarray], notes: list[str]) -> None:
    """A capture of position and force only (a quasi-static force-displacement table): samples taken 1 s
    apart, said in a note; only position- and direction-dependent force can be identified from it."""
    if "t" not in cols:
        cols["t"] = np.arange(cols["x"].size, dtype=np.float64)
        notes.append("no time column: samples taken as 1 s apart (a quasi-static table: only position- and "
                     "direction-dependent force can be identified from it)")

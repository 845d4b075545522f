"""Position- and direction-dependent impedance: the segmented model of seed 001 eq. 8.

For each direction of travel (+1 pressing, -1 releasing) a table of breakpoints
``x_0 < x_1 < ... < x_n`` carries the parameters ``m, b, k, F0`` of a local linear model::

    F = m(x) a + b(x) v + k(x) x + F0(x)         (seed 001 eq. 7, eq. 8)

with the parameters taken from the pressing table while the direction is +1 and from the releasing
table while it is -1 (seed 001 eq. 8 switches on the sign of v). The direction is held inside a
velocity dead band so the force does not chatter at turning points (docs/architecture.md, Conventions).

Interpolation
-------------
``"constant"``: each parameter array has ``n`` entries, one per segment ``[x_i, x_{i+1})``.
``"linear"``: each parameter array has ``n + 1`` entries, the values at the breakpoints, interpolated
linearly between them.

Outside the breakpoint range
----------------------------
``"constant"`` uses the nearest segment's parameters (segment 0 below ``x_0``, segment ``n - 1`` at
and above ``x_n``); ``"linear"`` uses the end breakpoint's parameters. Either way the force outside
the range continues along the end segment's line ``k x + F0`` (it is not clamped).

A pure position table ``F0(x, dir)`` (MacLean's and Weir's playback of measured force-displacement
curves) is the special case ``m = b = k = 0`` with linear interpolation: :func:`position_table`.

Passivity
---------
The quasi-static force of a direction is ``F_s(x, dir) = k(x) x + F0(x)`` (seed 001 eq. 8 with v = a = 0,
summed over the tables of a composite). Over a slow press/release cycle the probe puts in
``W = integral (F_s(x, +1) - F_s(x, -1)) dx`` (seed 001 eq. 1 sign convention: F is the force the probe
applies), so wherever the releasing force exceeds the pressing force at the same x the object returns more
energy than it took: those x ranges are reported as active, inside the tables and beyond them, where the
end segments' lines continue. A position-only table (no release table) is conservative and never active.
Negative mass or damping at any x (either direction) is reported too, since ``m a`` with ``m < 0`` and
``b v`` with ``b < 0`` feed energy in (:meth:`SegmentedImpedance.passivity`).

References
----------
seed 001: Colton & Hollerbach, "Identification of Nonlinear Passive Devices for Haptic Simulations".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from hapticam.errors import ModelValidationError
from hapticam.models.ranges import OFFSET_FORCE_N, STIFFNESS_NPM, Range, damping, length, mass, stiffness, velocity
from hapticam.models.base import KIND_IMPEDANCE, Model
from hapticam.models.passivity import PassivityReport, mm_text, ranges_where
from hapticam.models.validation import MAX_BREAKPOINTS, as_array, as_choice, as_float, check_keys, excerpt

INTERPOLATIONS = ("constant", "linear")
#: points of the passivity check's grid over the tables (four per breakpoint where they hold more), and its most
GRID_POINTS = 20001
MAX_GRID_POINTS = 2_000_001
_PARAM_FIELDS = ("m_kg", "b_Nspm", "k_Npm", "f0_N")

# Parameter block layout (offsets are relative to the block start):
#   p[0] interpolation code (0 constant, 1 linear)   p[1] dead band (m/s)
#   p[2] press table offset    p[3] release table offset (equal to p[2] if no release table)
# A table at offset o: p[o] = number of breakpoints nb, p[o+1] = number of values per parameter nv,
#   p[o+2 : o+2+nb] breakpoints, then m, b, k, F0 with nv entries each.
_HEADER = 4


class ImpedanceTable:
    """One direction's table of breakpoints and parameters (SI units).

    Parameters
    ----------
    breakpoints_m : array_like
        Strictly increasing positions ``x_0 < ... < x_n`` (m), 2 to 1,000,000 of them.
    m_kg, b_Nspm, k_Npm, f0_N : array_like
        Mass (kg), damping (N s/m), stiffness (N/m) and offset force (N): either ``n`` entries (one per
        segment, for constant interpolation) or ``n + 1`` (one per breakpoint, for linear), all the same
        length. Negative values are accepted here (identified linearisations may have them: a tactile
        drop has ``k < 0``); :meth:`SegmentedImpedance.passivity` reports negative ``m`` or
        ``b``, and a model file holds them only when marked active (:attr:`SegmentedImpedance.RANGES`).
    where : str
        Prefix used in error messages (``"press"``/``"release"`` inside :class:`SegmentedImpedance`).
    """

    def __init__(self, breakpoints_m: Any, m_kg: Any, b_Nspm: Any, k_Npm: Any, f0_N: Any, *,
                 where: str = "table") -> None:
        bp = as_array(f"{where}.breakpoints_m", breakpoints_m, min_length=2, increasing=True,
                      max_length=MAX_BREAKPOINTS)
        n_seg = bp.size - 1
        values = []
        for name, raw in zip(_PARAM_FIELDS, (m_kg, b_Nspm, k_Npm, f0_N)):
            arr = as_array(f"{where}.{name}", raw, max_length=MAX_BREAKPOINTS)
            if arr.size not in (n_seg, n_seg + 1):
                raise ModelValidationError(
                    f"{where}.{name}: expected {n_seg} entries (one per segment) or {n_seg + 1} "
                    f"(one per breakpoint) for {bp.size} breakpoints, got {arr.size}")
            values.append(arr)
        sizes = {a.size for a in values}
        if len(sizes) != 1:
            raise ModelValidationError(
                f"{where}: m_kg, b_Nspm, k_Npm, f0_N must have the same length, got "
                f"{', '.join(str(a.size) for a in values)}")
        for arr in (bp, *values):
            arr.setflags(write=False)
        self._bp = bp
        self._m, self._b, self._k, self._f0 = values
        self._where = where

    # read-only views
    @property
    def breakpoints_m(self) -> np.ndarray:
        return self._bp

    @property
    def m_kg(self) -> np.ndarray:
        return self._m

    @property
    def b_Nspm(self) -> np.ndarray:
        return self._b

    @property
    def k_Npm(self) -> np.ndarray:
        return self._k

    @property
    def f0_N(self) -> np.ndarray:
        return self._f0

    @property
    def n_values(self) -> int:
        """Entries per parameter array (``n`` for constant, ``n + 1`` for linear)."""
        return int(self._m.size)

    def to_dict(self) -> dict[str, list[float]]:
        """Plain lists, keyed as in the model file."""
        return {"breakpoints_m": self._bp.tolist(), "m_kg": self._m.tolist(), "b_Nspm": self._b.tolist(),
                "k_Npm": self._k.tolist(), "f0_N": self._f0.tolist()}

    @classmethod
    def from_dict(cls, data: Any, where: str = "table") -> "ImpedanceTable":
        """Build from ``to_dict()`` output; unknown or missing fields raise naming ``where``."""
        check_keys(where, data, {"breakpoints_m", *_PARAM_FIELDS})
        return cls(data["breakpoints_m"], data["m_kg"], data["b_Nspm"], data["k_Npm"], data["f0_N"],
                   where=where)

    def block(self) -> np.ndarray:
        """Flat encoding ``[nb, nv, breakpoints, m, b, k, F0]`` for the kernel."""
        return np.concatenate([[float(self._bp.size), float(self._m.size)], self._bp, self._m, self._b,
                               self._k, self._f0])

    def parameters_at(self, x_m: Any, interpolation: str) -> tuple[np.ndarray, ...]:
        """``(m, b, k, F0)`` at positions ``x_m`` (NumPy, vectorised), with the out-of-range rule above."""
        x = np.asarray(x_m, dtype=np.float64)
        bp = self._bp
        if interpolation == "constant":
            # segment i holds for bp[i] <= x < bp[i+1]; clamp to the end segments outside the range
            i = np.clip(np.searchsorted(bp, x, side="right") - 1, 0, bp.size - 2)
            return tuple(arr[i] for arr in (self._m, self._b, self._k, self._f0))
        # linear between breakpoints, end values outside (np.interp clamps to the end values)
        return tuple(np.interp(x, bp, arr) for arr in (self._m, self._b, self._k, self._f0))


class SegmentedImpedance(Model):
    """Segmented, direction-dependent impedance ``F = m a + b v + k x + F0`` (seed 001 eq. 8).

    Parameters
    ----------
    press : ImpedanceTable
        Parameters while pressing (direction +1).
    release : ImpedanceTable or None
        Parameters while releasing (direction -1); ``None`` uses ``press`` in both directions.
    interpolation : {"constant", "linear"}
        Per-segment constant parameters (``n`` values) or linear between breakpoints (``n + 1`` values).
    dead_band_mps : float
        Velocity dead band (m/s, >= 0): the direction becomes +1 when ``v > dead_band``, -1 when
        ``v < -dead_band``, and is held otherwise (initially +1).
    active : bool
        Marked active: fitted without the passivity constraints (``identify impedance --allow-active``),
        so its tables may hold negative ``m`` and ``b``; written as ``active: true``. Render refuses an
        active or non-passive model unless told ``--allow-active``.
    """

    kind = "segmented-impedance"
    kind_code = KIND_IMPEDANCE
    #: physical ranges (:mod:`hapticam.models.ranges`): the stiffness may be negative (a tactile drop is a
    #: falling force), mass and damping only on a model marked active
    RANGES = {"breakpoints_m": length(), "dead_band_mps": velocity(),
              "m_kg": mass(active_may_be_negative=True), "b_Nspm": damping(active_may_be_negative=True),
              "k_Npm": stiffness(low=-STIFFNESS_NPM, why="a tactile drop falls; steel contact is 1e7-1e8 N/m"),
              "f0_N": Range(-OFFSET_FORCE_N, OFFSET_FORCE_N, "N",
                            "F0 = F - k x: the force ceiling plus the stiffest line at 1 m")}

    def __init__(self, press: ImpedanceTable, release: ImpedanceTable | None = None,
                 interpolation: str = "constant", dead_band_mps: float = 1e-3, active: bool = False) -> None:
        if not isinstance(active, bool):
            raise ModelValidationError(f"active: expected true or false, got {excerpt(active)}")
        self.active = active
        self._interpolation = as_choice("interpolation", interpolation, INTERPOLATIONS)
        self._dead_band = as_float("dead_band_mps", dead_band_mps, min_value=0.0)
        if not isinstance(press, ImpedanceTable):
            raise ModelValidationError(f"press: expected an ImpedanceTable, got {type(press).__name__}")
        if release is not None and not isinstance(release, ImpedanceTable):
            raise ModelValidationError(f"release: expected an ImpedanceTable or None, got {type(release).__name__}")
        for name, table in (("press", press), ("release", release)):
            if table is None:
                continue
            n_seg = table.breakpoints_m.size - 1
            want = n_seg if self._interpolation == "constant" else n_seg + 1
            if table.n_values != want:
                raise ModelValidationError(
                    f"{name}.m_kg: {self._interpolation} interpolation needs {want} entries per parameter "
                    f"for {n_seg + 1} breakpoints, got {table.n_values}")
        self._press = press
        self._release = release

    @property
    def press(self) -> ImpedanceTable:
        return self._press

    @property
    def release(self) -> ImpedanceTable | None:
        return self._release

    @property
    def interpolation(self) -> str:
        return self._interpolation

    @property
    def dead_band_mps(self) -> float:
        return self._dead_band

    def table(self, direction: int) -> ImpedanceTable:
        """The table used in ``direction`` (+1 press, -1 release)."""
        if direction not in (1, -1):
            raise ModelValidationError(f"direction: expected +1 or -1, got {excerpt(direction)}")
        if direction == -1 and self._release is not None:
            return self._release
        return self._press

    def parameters_at(self, x_m: Any, direction: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(m, b, k, F0)`` at positions ``x_m`` (m) for ``direction`` (+1/-1), vectorised."""
        return self.table(direction).parameters_at(x_m, self._interpolation)  # type: ignore[return-value]

    def static_force(self, x_m: Any, direction: int) -> np.ndarray:
        """Quasi-static force ``k(x) x + F0(x)`` (N) at ``x_m`` for ``direction`` (seed 001 eq. 8, v = a = 0)."""
        _, _, k, f0 = self.parameters_at(x_m, direction)
        return k * np.asarray(x_m, dtype=np.float64) + f0

    def x_range(self) -> tuple[float, float]:
        """Smallest and largest breakpoint over both tables (m)."""
        tables = [self._press] + ([self._release] if self._release is not None else [])
        return (min(float(t.breakpoints_m[0]) for t in tables), max(float(t.breakpoints_m[-1]) for t in tables))

    # -- Model interface ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"interpolation": self._interpolation, "dead_band_mps": self._dead_band,
                               "press": self._press.to_dict()}
        if self._release is not None:
            out["release"] = self._release.to_dict()
        if self.active:
            out["active"] = True
        return out

    def parameter_values(self) -> list[tuple[str, Any]]:
        """The tables' arrays as they are (a million breakpoints are not turned into lists to be checked)."""
        found: list[tuple[str, Any]] = [("dead_band_mps", self._dead_band)]
        for name, table in (("press", self._press), ("release", self._release)):
            if table is not None:
                found += [(f"{name}.breakpoints_m", table.breakpoints_m), (f"{name}.m_kg", table.m_kg),
                          (f"{name}.b_Nspm", table.b_Nspm), (f"{name}.k_Npm", table.k_Npm),
                          (f"{name}.f0_N", table.f0_N)]
        return found

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SegmentedImpedance":
        check_keys("segmented-impedance", data, {"interpolation", "press"}, {"dead_band_mps", "release", "active"})
        press = ImpedanceTable.from_dict(data["press"], "press")
        rel = data.get("release")
        release = None if rel is None else ImpedanceTable.from_dict(rel, "release")
        return cls(press, release, interpolation=data["interpolation"],
                   dead_band_mps=data.get("dead_band_mps", 1e-3), active=data.get("active", False))

    def params_block(self) -> np.ndarray:
        press = self._press.block()
        release = self._release.block() if self._release is not None else np.zeros(0)
        press_off = _HEADER
        release_off = press_off + press.size if self._release is not None else press_off
        head = [0.0 if self._interpolation == "constant" else 1.0, self._dead_band, float(press_off),
                float(release_off)]
        return np.concatenate([head, press, release])

    def initial_state(self) -> np.ndarray:
        """``[direction]``, initially +1 (pressing)."""
        return np.array([1.0])

    # -- passivity ------------------------------------------------------------------------------------
    def passivity(self) -> PassivityReport:
        """Where this table could generate energy (module docstring, "Passivity")."""
        return self.passivity_of_sum([self])

    @classmethod
    def passivity_of_sum(cls, parts: list[SegmentedImpedance]) -> PassivityReport:  # type: ignore[override]
        """Where the tables ``parts``, summed, could generate energy: their static forces, masses and
        dampings add, so one table's hysteresis may make up for another's (module docstring, "Passivity")."""
        report = PassivityReport(passive=True)
        _check_static_cycle(parts, report)
        report.passive = not report.issues
        return report


def position_table(x_m: Any, f_press_N: Any, f_release_N: Any = None, *,
                   dead_band_mps: float = 1e-3) -> SegmentedImpedance:
    """A pure force-position playback table (MacLean / Weir): ``m = b = k = 0``, ``F0(x, dir)`` linear.

    Parameters
    ----------
    x_m : array_like
        Strictly increasing positions (m).
    f_press_N, f_release_N : array_like
        Force (N) at ``x_m`` while pressing and while releasing (``None``: same as pressing).
    """
    x = as_array("x_m", x_m, min_length=2, increasing=True, max_length=MAX_BREAKPOINTS)
    zeros = np.zeros(x.size)

    def make(f: Any, where: str, name: str) -> ImpedanceTable:
        arr = as_array(name, f, length=x.size, max_length=MAX_BREAKPOINTS)
        return ImpedanceTable(x, zeros, zeros, zeros, arr, where=where)

    press = make(f_press_N, "press", "f_press_N")
    release = None if f_release_N is None else make(f_release_N, "release", "f_release_N")
    return SegmentedImpedance(press, release, interpolation="linear", dead_band_mps=dead_band_mps)


# -- passivity --------------------------------------------------------------------------------------
def _check_static_cycle(parts: list[SegmentedImpedance], report: PassivityReport) -> None:
    """The summed tables of ``parts``: negative mass or damping, and where the releasing static force exceeds the
    pressing one, on a grid over the tables holding every breakpoint; the findings go into ``report``."""
    lo = min(p.x_range()[0] for p in parts)
    hi = max(p.x_range()[1] for p in parts)
    n_bp = sum(p.press.breakpoints_m.size + (p.release.breakpoints_m.size if p.release else 0) for p in parts)
    n = int(min(max(GRID_POINTS, 4 * n_bp), MAX_GRID_POINTS))
    extra = [p.press.breakpoints_m for p in parts] + [p.release.breakpoints_m for p in parts if p.release]
    nodes = np.unique(np.concatenate([np.linspace(lo, hi, n), *extra]))
    # evaluate at the nodes (every breakpoint is one) and at the midpoints between them, so no cell
    # straddles a breakpoint and the midpoint rule integrates piecewise-linear static forces exactly
    x = np.empty(2 * nodes.size - 1)
    x[0::2] = nodes
    x[1::2] = 0.5 * (nodes[1:] + nodes[:-1])
    static = {}
    for d in (1, -1):
        m_sum = np.zeros_like(x)
        b_sum = np.zeros_like(x)
        f_sum = np.zeros_like(x)
        for p in parts:
            m, b, k, f0 = p.parameters_at(x, d)
            m_sum += m
            b_sum += b
            f_sum += k * x + f0  # quasi-static force k x + F0  (seed 001 eq. 8 with v = a = 0)
        static[d] = f_sum
        name = "pressing" if d == 1 else "releasing"
        for label, arr, out in (("mass m", m_sum, report.negative_mass_ranges_m),
                                ("damping b", b_sum, report.negative_damping_ranges_m)):
            for r in ranges_where(x, arr < 0.0):
                out.append((d, *r))
                report.issues.append(f"negative {label} while {name} over {mm_text(r)} "
                                     f"(min {arr[(x >= r[0]) & (x <= r[1])].min():.4g})")
    diff = static[-1] - static[1]  # releasing minus pressing static force (N)
    tol = 1e-9 * max(1.0, float(np.max(np.abs(static[1]))), float(np.max(np.abs(static[-1]))))
    for r in ranges_where(x, diff > tol):
        report.active_ranges_m.append(r)
        sel = (x >= r[0]) & (x <= r[1])
        report.issues.append(f"releasing static force exceeds pressing static force over {mm_text(r)} "
                             f"(by up to {diff[sel].max():.4g} N): a press/release cycle there generates energy")
    report.cycle_energy_J = float(np.sum(-diff[1::2] * np.diff(nodes)))  # W = integral (F+ - F-) dx
    report.x_range_m = (lo, hi)
    _check_beyond(parts, lo, hi, tol, report)
    report.notes.append(f"impedance checked at {x.size} points over {mm_text((lo, hi))} and, beyond it, where the "
                        "end segments' lines continue")
    if all(p.release is None for p in parts):
        report.notes.append("no release table: the static force depends on x only (conservative)")


def _check_beyond(parts: list[SegmentedImpedance], lo: float, hi: float, tol: float,
                  report: PassivityReport) -> None:
    """Beyond the tables the kernel continues the end segments (``k x + F0``, seed 001 eq. 8): the releasing
    minus pressing static force is a line there, and one that rises away from the table (N/m) generates
    energy from where it crosses zero on, however far out (any workspace may reach it)."""
    def diff(xs: float) -> float:
        total = 0.0
        for p in parts:
            for d, sign in ((-1, 1.0), (1, -1.0)):
                _, _, k, f0 = p.parameters_at(np.array([xs]), d)
                total += sign * float(k[0] * xs + f0[0])
        return total

    for edge, outward in ((hi, 1.0), (lo, -1.0)):
        near, far = diff(edge + outward * 1e-3), diff(edge + outward * 1.001)
        rise = far - near                                  # N over 1 m outward
        if rise <= tol:
            continue
        at_edge = diff(edge)
        start = edge if at_edge >= -tol else edge - outward * at_edge / rise    # where the line crosses zero
        span = (start, math.inf) if outward > 0 else (-math.inf, start)
        ranges = report.active_ranges_m
        joined = [i for i, (a, b) in enumerate(ranges) if (b if outward > 0 else a) == edge and start == edge]
        if joined:                                         # an active range inside runs on past the edge
            a, b = ranges[joined[0]]
            ranges[joined[0]] = (a, math.inf) if outward > 0 else (-math.inf, b)
        else:
            ranges.append(span)
        side = "beyond" if outward > 0 else "below"
        report.issues.append(f"{side} the table the end segments' lines continue and the releasing static force "
                             f"exceeds the pressing one from {start * 1e3:.3f} mm on (by {rise:.4g} N more per "
                             "metre): a press/release cycle there generates energy")


# -- kernel ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _segment(p, o, nb, x):
    """Index i of the segment holding x (bp[i] <= x < bp[i+1]), clamped to [0, nb - 2]; binary search."""
    lo = 0
    hi = nb - 1
    base = o + 2
    if x < p[base]:
        return 0
    if x >= p[base + nb - 1]:
        return nb - 2
    while hi - lo > 1:  # invariant: bp[lo] <= x < bp[hi]
        mid = (lo + hi) // 2
        if p[base + mid] <= x:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def impedance_force(p, s, x, v, a, dt):
    """Force (N) of a :class:`SegmentedImpedance` block ``p`` at ``x`` (m), ``v`` (m/s), ``a`` (m/s^2).

    ``s[0]`` is the held direction (+1/-1), updated in place; ``dt`` is unused.
    """
    db = p[1]
    direction = s[0]
    if v > db:  # direction held inside the dead band (docs/architecture.md, Conventions)
        direction = 1.0
    elif v < -db:
        direction = -1.0
    s[0] = direction
    o = int(p[2]) if direction > 0.0 else int(p[3])
    nb = int(p[o])
    nv = int(p[o + 1])
    i = _segment(p, o, nb, x)
    vals = o + 2 + nb  # start of m; then b, k, F0 follow at strides of nv
    if p[0] == 0.0:
        m = p[vals + i]
        b = p[vals + nv + i]
        k = p[vals + 2 * nv + i]
        f0 = p[vals + 3 * nv + i]
    else:
        x0 = p[o + 2 + i]
        x1 = p[o + 3 + i]
        w = (x - x0) / (x1 - x0)  # linear interpolation weight; clamp to the end values outside
        if w < 0.0:
            w = 0.0
        elif w > 1.0:
            w = 1.0
        m = p[vals + i] + w * (p[vals + i + 1] - p[vals + i])
        b = p[vals + nv + i] + w * (p[vals + nv + i + 1] - p[vals + nv + i])
        k = p[vals + 2 * nv + i] + w * (p[vals + 2 * nv + i + 1] - p[vals + 2 * nv + i])
        f0 = p[vals + 3 * nv + i] + w * (p[vals + 3 * nv + i + 1] - p[vals + 3 * nv + i])
    return m * a + b * v + k * x + f0  # F = m a + b v + k x + F0  (seed 001 eq. 8)

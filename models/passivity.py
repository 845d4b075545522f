"""Where could a model generate energy? :func:`check_passivity` reports it.

For the segmented impedance components (seed 001 eq. 8) the quasi-static force of a direction is
``F_s(x, dir) = k(x) x + F0(x)`` (summed over all impedance components). Over a slow press/release cycle
the probe puts in ``W = integral (F_s(x, +1) - F_s(x, -1)) dx`` (seed 001 eq. 1 sign convention: F is the
force the probe applies), so wherever the releasing force exceeds the pressing force at the same x the
object returns more energy than it took: those x ranges are reported as active. A position-only table
(no release table) is conservative and never active. Negative mass or damping at any x (either
direction) is reported too, since ``m a`` with ``m < 0`` and ``b v`` with ``b < 0`` feed energy in.

A kind this module does not know is reported as an issue: not known to be passive is not passive.

The other components are passive by construction given their validated parameters, except where noted:
the smooth Stribeck law (seed 003 eq. 5) is checked numerically for ``F(v) v >= 0``; the Karnopp stick
anchor may store ``Fc^2 / (2 k_stick)`` J on each entry into the stick band; LuGre is checked against the
sufficient condition ``sigma2 >= sigma1 (Fs - Fc) / Fc`` (storage ``sigma0 z^2 / 2``: the bristle term
dissipates ``sigma0 |v| z^2 / g(v) >= 0``, the sigma1 term can return at most ``sigma1 v^2 (Fs / Fc - 1)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from hapticam.models.base import Model
from hapticam.models.composite import EndStops
from hapticam.models.contact import Contact
from hapticam.models.friction import Friction
from hapticam.models.hybrid_key import HybridKey
from hapticam.models.impedance import SegmentedImpedance

GRID_POINTS = 20001
MAX_GRID_POINTS = 2_000_001


@dataclass
class PassivityReport:
    """Result of :func:`check_passivity`.

    Attributes
    ----------
    passive : bool
        False if any issue was found.
    issues : list of str
        Each way the model can generate energy, with the x range (mm in the text).
    notes : list of str
        What is passive by construction, and caveats.
    active_ranges_m : list of (x_lo, x_hi)
        Ranges (m) where the releasing static force exceeds the pressing static force.
    negative_mass_ranges_m, negative_damping_ranges_m : list of (direction, x_lo, x_hi)
        Ranges (m) where the summed m(x) or b(x) of the impedance components is negative.
    cycle_energy_J : float or None
        Net energy absorbed by the object over one quasi-static press/release cycle across the table
        range (J; negative means the cycle generates energy); None without impedance components.
    x_range_m : (float, float) or None
        The range the impedance check covered (m).
    """

    passive: bool
    issues: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    active_ranges_m: list[tuple[float, float]] = field(default_factory=list)
    negative_mass_ranges_m: list[tuple[int, float, float]] = field(default_factory=list)
    negative_damping_ranges_m: list[tuple[int, float, float]] = field(default_factory=list)
    cycle_energy_J: float | None = None
    x_range_m: tuple[float, float] | None = None

    def __str__(self) -> str:
        lines = [f"passive: {'yes' if self.passive else 'no'}"]
        if self.cycle_energy_J is not None and self.x_range_m is not None:
            lo, hi = self.x_range_m
            lines.append(f"quasi-static cycle over {lo * 1e3:.3f}..{hi * 1e3:.3f} mm absorbs "
                         f"{self.cycle_energy_J * 1e3:.4g} mJ")
        lines += [f"issue: {s}" for s in self.issues]
        lines += [f"note: {s}" for s in self.notes]
        return "\n".join(lines)


def _ranges(x: np.ndarray, mask: np.ndarray) -> list[tuple[float, float]]:
    """Contiguous runs of True in ``mask`` as (x_first, x_last)."""
    if not mask.any():
        return []
    edges = np.diff(mask.astype(np.int8))
    starts = list(np.flatnonzero(edges == 1) + 1)
    stops = list(np.flatnonzero(edges == -1))
    if mask[0]:
        starts.insert(0, 0)
    if mask[-1]:
        stops.append(mask.size - 1)
    return [(float(x[a]), float(x[b])) for a, b in zip(starts, stops)]


def _mm(r: tuple[float, float]) -> str:
    return f"{r[0] * 1e3:.3f}..{r[1] * 1e3:.3f} mm"


def _check_impedance(parts: list[SegmentedImpedance], report: PassivityReport) -> None:
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
            for r in _ranges(x, arr < 0.0):
                out.append((d, *r))
                report.issues.append(f"negative {label} while {name} over {_mm(r)} "
                                     f"(min {arr[(x >= r[0]) & (x <= r[1])].min():.4g})")
    diff = static[-1] - static[1]  # releasing minus pressing static force (N)
    tol = 1e-9 * max(1.0, float(np.max(np.abs(static[1]))), float(np.max(np.abs(static[-1]))))
    for r in _ranges(x, diff > tol):
        report.active_ranges_m.append(r)
        sel = (x >= r[0]) & (x <= r[1])
        report.issues.append(f"releasing static force exceeds pressing static force over {_mm(r)} "
                             f"(by up to {diff[sel].max():.4g} N): a press/release cycle there generates energy")
    report.cycle_energy_J = float(np.sum(-diff[1::2] * np.diff(nodes)))  # W = integral (F+ - F-) dx
    report.x_range_m = (lo, hi)
    _check_beyond(parts, lo, hi, tol, report)
    report.notes.append(f"impedance checked at {x.size} points over {_mm((lo, hi))} and, beyond it, where the "
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


def _friction_notes(f: Friction, report: PassivityReport) -> None:
    p = f.parameters
    if f.law == "coulomb-viscous":
        report.notes.append("coulomb-viscous friction: F v >= 0 for all v (passive by construction)")
    elif f.law == "stribeck":
        v = np.linspace(-50.0, 50.0, 20001) * p["v_t_mps"]
        bad = f.steady_state_force(v) * v < -1e-12
        if bad.any():
            vb = np.abs(v[bad])
            report.issues.append(f"stribeck friction opposes dissipation (F v < 0) for |v| in "
                                 f"{vb.min():.4g}..{vb.max():.4g} m/s (mu_s much below mu_d)")
        else:
            report.notes.append("stribeck friction: F(v) v >= 0 checked over |v| <= 50 v_t (passive)")
    elif f.law == "karnopp":
        e = p["Fc_N"] ** 2 / (2.0 * p["k_stick_Npm"])  # energy of the anchor spring at Fc
        report.notes.append(f"karnopp friction: sliding and the saturating stick spring dissipate; each entry "
                            f"into the stick band stores at most Fc^2/(2 k_stick) = {e:.3g} J that the spring "
                            "may return")
    else:
        s1, s2, fc, fs = p["sigma1_Nspm"], p["sigma2_Nspm"], p["Fc_N"], p["Fs_N"]
        if s1 == 0.0 or fs == fc:
            report.notes.append("lugre friction: passive (sigma1 = 0 or Fs = Fc)")
        elif fc > 0.0 and s2 >= s1 * (fs - fc) / fc:
            report.notes.append("lugre friction: passive (sigma2 >= sigma1 (Fs - Fc) / Fc)")
        else:
            need = s1 * (fs - fc) / fc if fc > 0.0 else float("inf")
            report.notes.append(f"lugre friction: passivity not guaranteed: sigma2 = {s2:g} N s/m is below "
                                f"sigma1 (Fs - Fc) / Fc = {need:g} N s/m (sufficient condition)")


def _hybrid_key_notes(key: HybridKey, report: PassivityReport) -> None:
    """A hybrid key is a mechanical system: masses and springs store, contacts and restitutions <= 1 only
    dissipate, gravity is conservative, the escapement's drop only breaks contact; check the values."""
    d = key.to_dict()
    contact = d["contact"]
    checks = [("key mass", d["key_mass_kg"] >= 0), ("return spring", d["return_spring_Npm"] >= 0),
              ("hammer mass", d["hammer_mass_kg"] > 0),
              ("key-hammer contact", contact.get("b_Nspm", 0.0) >= 0 and contact.get("restitution", 0.0) <= 1.0),
              ("string restitution", d.get("string_restitution", 0.0) <= 1.0),
              ("keybed", d.get("keybed_k_Npm", 0.0) >= 0 and d.get("keybed_b_Nspm", 0.0) >= 0)]
    bad = [name for name, ok in checks if not ok]
    if bad:
        report.issues.append(f"hybrid key: {', '.join(bad)} could feed energy in")
    else:
        report.notes.append("hybrid-key: passive as a mechanical system (masses and springs >= 0, contact damping "
                            ">= 0 or restitution <= 1, string restitution <= 1, keybed k, b >= 0, gravity "
                            "conservative); its sampled rendering is not covered by this check (the servo loop's passivity "
                            "observer, render --passivity, watches it)")


def check_passivity(model: Model) -> PassivityReport:
    """Report where ``model`` (any model or composite) could generate energy; see the module docstring."""
    report = PassivityReport(passive=True)
    leaves = model.components()
    impedances = [c for c in leaves if isinstance(c, SegmentedImpedance)]
    if impedances:
        _check_impedance(impedances, report)
    for c in leaves:
        if isinstance(c, Contact):
            report.notes.append(f"{c.law} contact at {c.x_c_m * 1e3:.3f} mm: passive by construction "
                                "(k, b >= 0, never tensile)")
        elif isinstance(c, EndStops):
            report.notes.append("end stops: passive by construction (k, b >= 0, never tensile)")
        elif isinstance(c, Friction):
            _friction_notes(c, report)
        elif isinstance(c, HybridKey):
            _hybrid_key_notes(c, report)
        elif not isinstance(c, SegmentedImpedance):
            report.issues.append(f"{c.kind or type(c).__name__}: a kind this check does not analyse, so it is "
                                 "not known to be passive")
    report.passive = not report.issues
    return report

"""Where could a model generate energy? Each kind says so itself: :meth:`hapticam.models.base.Model.passivity`
returns a :class:`PassivityReport`, and :func:`check_passivity` asks the model for it.

A kind that declares no analysis is reported not passive: not known to be passive is not passive.

The analyses live with their kinds:

- segmented impedance (:mod:`hapticam.models.impedance`): over a slow press/release cycle the probe puts in
  ``W = integral (F_s(x, +1) - F_s(x, -1)) dx`` of the quasi-static force ``F_s = k(x) x + F0(x)``
  (seed 001 eq. 8), so where the releasing force exceeds the pressing force the object returns more energy
  than it took; negative mass or damping feeds energy in too;
- contact and end stops: passive by construction for ``k, b >= 0``, never tensile;
- friction: the smooth Stribeck law checked numerically for ``F(v) v >= 0``, the Karnopp stick anchor's
  stored energy, LuGre against a sufficient condition;
- hybrid key: a mechanical system whose masses, springs, contacts and restitutions are checked;
- composite: its components' reports together, the components of one kind judged summed
  (:meth:`~hapticam.models.base.Model.passivity_of_sum`: impedance tables' static forces add).

This module holds the report and the tools the analyses share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


@dataclass
class PassivityReport:
    """Result of :meth:`hapticam.models.base.Model.passivity` (and :func:`check_passivity`).

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



def ranges_where(x: np.ndarray, mask: np.ndarray) -> list[tuple[float, float]]:
    """Contiguous runs of True in ``mask`` as (x_first, x_last), in the units of ``x``."""
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


def mm_text(r: tuple[float, float]) -> str:
    """A range in m as text in mm."""
    return f"{r[0] * 1e3:.3f}..{r[1] * 1e3:.3f} mm"


def combined(reports: list[PassivityReport]) -> PassivityReport:
    """One report for parts rendered together: every part's issues, notes and ranges; the cycle energies (J)
    summed over the x range (m) spanning theirs; passive when every part is and none reports an issue."""
    out = PassivityReport(passive=True)
    for part in reports:
        out.issues += part.issues
        out.notes += part.notes
        out.active_ranges_m += part.active_ranges_m
        out.negative_mass_ranges_m += part.negative_mass_ranges_m
        out.negative_damping_ranges_m += part.negative_damping_ranges_m
        if part.cycle_energy_J is not None:
            out.cycle_energy_J = (out.cycle_energy_J or 0.0) + part.cycle_energy_J
        if part.x_range_m is not None:
            lo, hi = part.x_range_m if out.x_range_m is None else out.x_range_m
            out.x_range_m = (min(lo, part.x_range_m[0]), max(hi, part.x_range_m[1]))
    out.passive = all(part.passive for part in reports) and not out.issues
    return out


class Analysed(Protocol):
    """What states its passivity: every :class:`~hapticam.models.base.Model` (which imports this module)."""

    def passivity(self) -> PassivityReport: ...


def check_passivity(model: Analysed) -> PassivityReport:
    """Report where ``model`` (any model or composite) could generate energy: its kind's own analysis,
    :meth:`~hapticam.models.base.Model.passivity` (see the module docstring)."""
    return model.passivity()

"""Friction from a key or slider pressed at several speeds (force and position), or a knob turned at several.

At constant speed a sprung key's force is its spring, a function of position, plus its friction, a
function of speed::

    F = g(x) + f(v) + m a + c                                 (N; rotary: N m, rad)

Pressing and releasing at several speeds separates the two: ``g`` is the same both ways and at every
speed, ``f`` changes sign with ``v`` and grows or falls with ``|v|``. ``g`` is written as a piecewise-linear
function of position (hat functions on ``SPRING_KNOTS`` knots over the captured travel, which is exactly
:func:`hapticam.models.impedance.position_table`'s interpolation, so the fitted spring renders as fitted);
a knob's position-dependent torque repeats every revolution and is fitted as detents
(:func:`hapticam.identify.friction.product.detent_columns`) with a constant ``c``. ``m a`` takes the
transients; samples within ``TURN_MARGIN_S`` of a reversal and at less than ``SLOW_FRACTION`` of the
capture's median speed are left out (the speed is not steady there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from hapticam.capture import Capture
from hapticam.errors import IdentificationError
from hapticam.identify.friction.experiment import spin_down_motion
from hapticam.identify.friction.product import LawFit, fit_law, fit_law_rotary
from hapticam.identify.friction.spin_down import WINDOW_S, derivatives

SPRING_KNOTS = 16
#: angle-table points per detent period of a knob's detents in its model file
DETENT_TABLE_POINTS = 32
TURN_MARGIN_S = 8e-3
SLOW_FRACTION = 0.05


@dataclass
class Sliding:
    """Samples of steady sliding pooled from several captures (SI units of the axis)."""

    x: np.ndarray
    v: np.ndarray
    a: np.ndarray
    f: np.ndarray
    speeds: list[float]
    names: list[str]


def sliding_samples(captures: Sequence[Capture], window_s: float = WINDOW_S) -> Sliding:
    """The steadily sliding samples of each capture (module docstring), pooled."""
    parts: list[tuple[np.ndarray, ...]] = []
    speeds = []
    for cap in captures:
        if cap.metadata.get("force_absent"):
            raise IdentificationError(f"{cap.name}: has no force (torque) column; pressing at several speeds "
                                      "needs force and position (a spin-down needs only the angle: --spin-down)")
        v, a = derivatives(cap.t_s, cap.x_m, window_s)
        if cap.v_mps is not None:
            v = cap.v_mps
        moving = np.abs(v) > SLOW_FRACTION * float(np.median(np.abs(v)))
        flips = np.flatnonzero(np.diff(np.sign(v)) != 0)
        keep = moving & cap.valid
        margin = int(round(TURN_MARGIN_S / cap.dt_s))
        for i in flips:
            keep[max(i - margin, 0): i + margin + 1] = False
        if np.count_nonzero(keep) < 50:
            raise IdentificationError(f"{cap.name}: fewer than 50 samples of steady sliding")
        parts.append((cap.x_m[keep], v[keep], a[keep], cap.f_N[keep]))
        speeds.append(float(np.median(np.abs(v[keep]))))
    x, v, a, f = (np.concatenate([p[i] for p in parts]) for i in range(4))
    return Sliding(x, v, a, f, speeds, [c.name for c in captures])


def hat_basis(x: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """Piecewise-linear interpolation weights of ``x`` on ``knots`` (columns sum to 1; clamped outside)."""
    xc = np.clip(x, knots[0], knots[-1])
    k = np.clip(np.searchsorted(knots, xc, side="right") - 1, 0, knots.size - 2)
    u = (xc - knots[k]) / (knots[k + 1] - knots[k])
    out = np.zeros((x.size, knots.size))
    rows = np.arange(x.size)
    out[rows, k] = 1.0 - u                            # linear interpolation between knots k and k + 1
    out[rows, k + 1] = u
    return out


@dataclass
class PressFit:
    """The friction law fitted to multi-speed captures, with the spring (linear) or detents (rotary)."""

    law_fit: LawFit
    knots: np.ndarray | None
    spring: np.ndarray | None
    spring_se: np.ndarray | None
    detents_per_rev: int
    sliding: Sliding

    def to_model(self) -> Any:
        """The fitted law as a ``friction`` model; on a linear axis, the composite of the fitted spring (a
        position table, m to N) and the friction; on a rotary axis with detents, the composite of the detents
        (an angle table over the turned range, rad to N m: :meth:`detent_table`) and the friction."""
        friction = self.law_fit.to_model()
        if self.knots is None and not self.detents_per_rev:
            return friction
        from hapticam.models.composite import Composite
        from hapticam.models.impedance import position_table

        table = (self.knots, self.spring) if self.knots is not None else self.detent_table()
        return Composite([position_table(*table), friction])

    def detent_table(self) -> tuple[np.ndarray, np.ndarray]:
        """The fitted detents ``s1 sin(N theta) + c1 cos(N theta) + s2 sin(2 N theta) + c2 cos(2 N theta)``
        (N m) on angles (rad) over the turned range, ``DETENT_TABLE_POINTS`` per detent: their linear
        interpolation follows the fundamental within 0.5 % of its amplitude ((2 pi / 32)^2 / 8) and the
        second harmonic within 2 %. Beyond the range the table holds its end values, as every position
        table does."""
        n = self.detents_per_rev
        lo, hi = float(self.sliding.x.min()), float(self.sliding.x.max())
        points = max(2, int(np.ceil((hi - lo) * n / (2.0 * np.pi) * DETENT_TABLE_POINTS)) + 1)
        theta = np.linspace(lo, hi, points)
        c = self.law_fit.extra
        torque = (c["detent_sin"] * np.sin(n * theta) + c["detent_cos"] * np.cos(n * theta)
                  + c["detent_sin2"] * np.sin(2 * n * theta) + c["detent_cos2"] * np.cos(2 * n * theta))
        return theta, torque


def fit_press_speeds(captures: Sequence[Capture], law: str, *, axis: str = "linear",
                     window_s: float = WINDOW_S) -> PressFit:
    """Fit ``law`` with the spring (``axis="linear"``) or detents (``"rotary"``) to multi-speed captures.

    A spin-down is refused (:func:`~hapticam.identify.friction.experiment.spin_down_motion`): its coast is not
    steady sliding, and the creep of a knob come to rest would pass for sliding both ways."""
    for cap in (c for c in captures if not c.metadata.get("force_absent")):    # angle only: refused below
        verdict = spin_down_motion(cap)
        if verdict.spin_down:
            raise IdentificationError(f"{cap.name} is a spin-down ({verdict.reason}), not sliding at several "
                                      "speeds: fit it as one (--experiment spin-down)")
    sl = sliding_samples(captures, window_s)
    if np.all(sl.v > 0) or np.all(sl.v < 0):
        raise IdentificationError("the captures slide one way only: press and release (or turn both ways) so "
                                  "friction and spring can be told apart (a spin-down? --experiment spin-down "
                                  "with --inertia)")
    if axis == "rotary":
        extra = np.column_stack([sl.a, np.ones_like(sl.a)])
        fit, n_det = fit_law_rotary(law, sl.v, sl.f, sl.x, extra, ("inertia_kgm2", "offset_Nm"))
        knots = spring = spring_se = None
    else:
        lo, hi = float(sl.x.min()), float(sl.x.max())
        if not hi > lo:
            raise IdentificationError("the captures do not move")
        knots = np.linspace(lo, hi, SPRING_KNOTS)
        names = tuple(f"spring_{i}" for i in range(knots.size))
        fit = fit_law(law, sl.v, sl.f, np.column_stack([sl.a, hat_basis(sl.x, knots)]), ("mass_kg", *names))
        spring = np.array([fit.extra[n] for n in names])
        spring_se = np.array([fit.extra_se[n] for n in names])
        for n in names:
            fit.extra.pop(n)
            fit.extra_se.pop(n)
        n_det = 0
    speeds = ", ".join(f"{s:.3g}" for s in sorted(sl.speeds))
    fit.notes.insert(0, f"{len(captures)} capture(s) at median speeds {speeds}; {sl.v.size} samples of steady sliding")
    return PressFit(fit, knots, spring, spring_se, n_det, sl)


def press_summary(fit: PressFit) -> dict[str, Any]:
    """Spring table (linear) and the speeds used, for the report."""
    out: dict[str, Any] = {"speeds": sorted(fit.sliding.speeds), "samples": int(fit.sliding.v.size)}
    if fit.knots is not None:
        out["spring_x_m"] = fit.knots.tolist()
        out["spring_f_N"] = fit.spring.tolist()
        out["spring_se_N"] = fit.spring_se.tolist()
    if fit.detents_per_rev:
        out["detents_per_rev"] = fit.detents_per_rev
    return out

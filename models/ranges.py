"""Physical ranges of model parameters.

Each model kind declares the range of every numeric parameter in its own class (``Model.RANGES``, keyed by
the parameter's name in ``to_dict()``); :meth:`hapticam.models.base.Model.check_ranges` checks a model
against them. The bounds below are the ceilings of what a key, a switch or a hand-held object can be,
set one to three orders of magnitude past the largest real value so that no measured model is refused,
while a value that only a typo, an overflow or a hostile file gives (stiffness 1e300, a 1e-30 kg hammer)
is refused before it reaches the servo loop:

- lengths (positions, breakpoints) at most 1 m: keys travel millimetres, device workspaces are under 1 m;
  on a rotary axis (a knob's model, rad) at most ``ANGLE_RAD``, a hundred turns either way, as a rotary
  device's workspace (:func:`on_axis` says which axis the model being checked is on);
- forces at most 1e4 N (a tonne-force): a hand pushes under 1 kN, haptic devices render under 100 N;
- stiffnesses at most 1e8 N/m: steel-on-steel contact of a millimetre sphere is 1e7-1e8 N/m, and no
  device renders past 1e5 N/m (a stiffer wall is only a wall of the device's own);
- dampings at most 1e5 N s/m: at 0.1 m/s, a slow press, that is already the 1e4 N force ceiling;
- masses at most 1e3 kg, and a simulated body (a hammer, a key) that is not massless at least 1e-6 kg
  (a milligram: a grain of sand): a lighter body's contact dynamics ``sqrt(m / k)`` fall below
  nanoseconds, far beneath any servo tick. An apparent mass (a fitted coefficient of ``m a``) may be as
  small as the fit finds it;
- velocities at most 10 m/s: a pianist's fortissimo strikes the key at about 5 m/s.

Mass and damping are never negative on a passive model (``m a`` and ``b v`` with negative coefficients
feed energy into the hand). A model marked active (``active: true``, what ``hapticam identify impedance
--allow-active`` writes) may hold them negative, bounded by the same magnitudes; render then refuses it
unless told ``--allow-active`` (:mod:`hapticam.models.acceptance`).
"""

from __future__ import annotations

import contextlib
import math
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Iterator

import numpy as np

from hapticam.errors import ModelValidationError

LENGTH_M = 1.0
#: a knob's angles (rad): a hundred turns either way
ANGLE_RAD = 200.0 * math.pi
#: the axis kind of the model being checked (:func:`on_axis`): its lengths are angles on a rotary axis
_AXIS: ContextVar[str] = ContextVar("hapticam_model_axis", default="linear")


@contextlib.contextmanager
def on_axis(axis: str) -> Iterator[None]:
    """Within: the models checked are on ``axis`` (``linear``: lengths in m; ``rotary``: angles in rad, within
    ``ANGLE_RAD``)."""
    token = _AXIS.set(axis)
    try:
        yield
    finally:
        _AXIS.reset(token)
FORCE_N = 1e4
STIFFNESS_NPM = 1e8
DAMPING_NSPM = 1e5
MASS_KG = 1e3
MIN_MASS_KG = 1e-6
VELOCITY_MPS = 10.0
#: ``F0`` of ``F = k x + F0`` is ``F - k x``: at most the force ceiling plus the stiffest line at the
#: farthest position (N)
OFFSET_FORCE_N = FORCE_N + STIFFNESS_NPM * LENGTH_M


@dataclass(frozen=True)
class Range:
    """The physical range ``low <= value <= high`` of one parameter (SI ``unit``), and why.

    ``zero_or_from``: when set, the value is 0 or at least this (a mass: absent, or a real body).
    ``active_low``: the lower bound on a model marked active (negative mass or damping), else ``low``.
    """

    low: float
    high: float
    unit: str
    why: str
    zero_or_from: float | None = None
    active_low: float | None = None

    def check(self, path: str, values: Any, active: bool = False) -> None:
        """Raise :class:`ModelValidationError` naming ``path`` (and the entry of a list) for the first value
        outside the range; the message quotes the value to 4 digits, never more."""
        if self.unit == "m" and _AXIS.get() == "rotary":
            return replace(self, low=-ANGLE_RAD, high=ANGLE_RAD, unit="rad",
                           why="a knob turns at most a hundred turns either way").check(path, values, active)
        arr = np.atleast_1d(np.asarray(values, dtype=np.float64))
        is_list = np.ndim(values) > 0
        low = self.active_low if active and self.active_low is not None else self.low
        bad = ~np.isfinite(arr) | (arr < low) | (arr > self.high)
        if self.zero_or_from is not None:
            bad |= (arr != 0.0) & (arr < self.zero_or_from)
        if not bad.any():
            return
        i = int(np.flatnonzero(bad)[0])
        where = f"{path}[{i}]" if is_list else path
        raise ModelValidationError(f"{where}: {self._reason(float(arr[i]), active)}")

    def _reason(self, value: float, active: bool) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if not np.isfinite(value):
            return f"must be finite, got {value}"
        if value < self.low and self.active_low is not None and value >= self.active_low and not active:
            return (f"{value:.4g}{unit} is negative, which feeds energy into the hand; refused unless the model "
                    "is marked active (active: true, as 'identify --allow-active' writes)")
        if self.zero_or_from is not None and value != 0.0 and value < self.zero_or_from and value >= self.low:
            return f"{value:.4g}{unit} is neither 0 nor at least {self.zero_or_from:g}{unit} ({self.why})"
        low = self.active_low if active and self.active_low is not None else self.low
        return f"{value:.4g}{unit} is outside {low:g} .. {self.high:g}{unit} ({self.why})"


def length(why: str = "keys travel millimetres; device workspaces are under 1 m") -> Range:
    """A position (m), ``|x| <= 1 m``."""
    return Range(-LENGTH_M, LENGTH_M, "m", why)


def force(why: str = "a hand pushes under 1 kN; 1e4 N is a tonne-force") -> Range:
    """A force (N), ``|F| <= 1e4 N``."""
    return Range(-FORCE_N, FORCE_N, "N", why)


def stiffness(low: float = 0.0, why: str = "steel-on-steel contact is 1e7-1e8 N/m; devices render under "
                                          "1e5 N/m") -> Range:
    """A stiffness (N/m) from ``low`` to 1e8 N/m."""
    return Range(low, STIFFNESS_NPM, "N/m", why)


def damping(active_may_be_negative: bool = False) -> Range:
    """A damping (N s/m), 0 to 1e5 N s/m (to -1e5 on a model marked active)."""
    return Range(0.0, DAMPING_NSPM, "N s/m", "at 0.1 m/s, 1e5 N s/m is already the 1e4 N force ceiling",
                 active_low=-DAMPING_NSPM if active_may_be_negative else None)


def mass(active_may_be_negative: bool = False) -> Range:
    """An apparent mass (kg), a coefficient of ``m a``: 0 to 1e3 kg (to -1e3 kg on a model marked active)."""
    return Range(0.0, MASS_KG, "kg", "no key or hand-held object weighs a tonne",
                 active_low=-MASS_KG if active_may_be_negative else None)


def body_mass(zero_allowed: bool = True) -> Range:
    """The mass of a simulated body (kg): 1e-6 .. 1e3 kg, or 0 (no body) if ``zero_allowed``."""
    return Range(0.0 if zero_allowed else MIN_MASS_KG, MASS_KG, "kg",
                 "a body lighter than 1 mg has contact dynamics under a nanosecond; none handled is a tonne",
                 zero_or_from=MIN_MASS_KG if zero_allowed else None)


def velocity(low: float = 0.0) -> Range:
    """A velocity scale (m/s), ``low`` to 10 m/s (a fortissimo key strike is about 5 m/s)."""
    return Range(low, VELOCITY_MPS, "m/s", "a fortissimo key strike is about 5 m/s")


def ratio(low: float, high: float, why: str) -> Range:
    """A dimensionless parameter in ``low .. high``."""
    return Range(low, high, "", why)

"""One-sided contact with a wall: linear spring-damper or Hunt-Crossley.

The wall sits at ``x_c``. With ``side = +1`` it resists motion beyond it (penetration
``d = x - x_c``); with ``side = -1`` it resists motion below it (``d = x_c - x``). While ``d > 0``
the wall pushes back with

    linear:        f = k d + b d_dot                  (seed 004 eq. 2.1; seed 000 eq. 25)
    hunt-crossley: f = k d^n + b d^n d_dot            (seed 000 eq. 26, with rho = d > 0)

and the force is clamped at zero so the wall never pulls (no tensile, "sticky" force; seed 000
section "Simulation Results" explains why the unclamped linear law is physically inconsistent).
The force the probe applies along +x is ``side * f`` (docs/architecture.md, section Conventions: sign).

Both laws are passive for ``k, b >= 0``: with storage ``V = k d^(n+1) / (n+1)`` the dissipated power
``f d_dot - dV/dt`` is ``b d^n d_dot^2 >= 0`` when unclamped, and ``-k d^n d_dot >= 0`` when clamped
(clamping happens only while ``d_dot < 0``).

References
----------
seed 000: Patoglu & Gillespie, "The Haptic Probe", eqs. 25-26 (after Hunt & Crossley, 1975).
seed 004: Agar, "Contact parameter estimation using a space manipulator verification facility", eq. 2.1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from hapticam.errors import ModelValidationError
from hapticam.models.base import KIND_CONTACT, Model
from hapticam.models.passivity import PassivityReport
from hapticam.models.ranges import FORCE_N, STIFFNESS_NPM, Range, damping, length, ratio, stiffness
from hapticam.models.validation import as_choice, as_float, check_keys, excerpt

LAWS = ("linear", "hunt-crossley")
_LAW_CODE = {"linear": 0.0, "hunt-crossley": 1.0}


def hunt_crossley_local_stiffness(k: float, n: float, at_force_N: float | None) -> float | None:
    """The local stiffness (N/m) of ``F = k d^n`` (k in N/m^n) where it reaches ``at_force_N`` (N):
    ``dF/dd = n k d^(n-1) = n F / d_F`` with ``d_F = (F / k)^(1 / n)``, its largest over the forces up to F.
    None where k is already N/m or gives no such stiffness (no force given, ``n <= 1``, ``k <= 0``)."""
    if not at_force_N or not n > 1.0 or not k > 0.0:
        return None
    depth = (at_force_N / k) ** (1.0 / n)
    return n * at_force_N / depth


class Contact(Model):
    """A one-sided wall at ``x_c_m``.

    Parameters
    ----------
    law : {"linear", "hunt-crossley"}
        Contact law (see the module docstring).
    x_c_m : float
        Wall position (m).
    k_Npm : float
        Stiffness (>= 0): N/m for the linear law, N/m^n for Hunt-Crossley.
    b_Nspm : float
        Damping (>= 0): N s/m for the linear law, N s/m^(n+1) for Hunt-Crossley.
    n : float
        Hunt-Crossley shape exponent (0 < n <= 10; 1 for a linear spring, 1.5 for Hertzian contact). The
        linear law requires 1.
    side : {+1, -1}
        +1: the wall resists ``x > x_c``; -1: it resists ``x < x_c``.
    """

    kind = "contact"
    kind_code = KIND_CONTACT
    #: physical ranges (:mod:`hapticam.models.ranges`); a Hunt-Crossley law's k and b are in N/m^n and
    #: N s/m^(n+1), so their ranges follow from n (:meth:`range_of`)
    RANGES = {"x_c_m": length(), "k_Npm": stiffness(), "b_Nspm": damping(),
              "n": ratio(0.0, 10.0, "Hertzian contact is 1.5"), "side": ratio(-1.0, 1.0, "+1 or -1")}

    def range_of(self, path: str) -> Range | None:
        """For the Hunt-Crossley law ``F = k d^n + b d^n d_dot``: k is bounded so that its local stiffness
        ``n F / d_F`` where it reaches the force ceiling ``F`` stays within the stiffness ceiling
        (``k <= F (S / (n F))^n``), and b so that ``b d^n`` at 1 mm stays within the damping ceiling."""
        if self.law != "hunt-crossley" or path not in ("k_Npm", "b_Nspm"):
            return super().range_of(path)
        n = self.n
        if path == "k_Npm":
            high = FORCE_N * (STIFFNESS_NPM / (n * FORCE_N)) ** n
            return Range(0.0, high, "N/m^n", f"its stiffness reaches {STIFFNESS_NPM:g} N/m at {FORCE_N:g} N")
        plain = self.RANGES["b_Nspm"]
        return Range(0.0, plain.high / 1e-3 ** n, "N s/m^(n+1)", f"at 1 mm deep: {plain.high:g} N s/m, {plain.why}")

    def __init__(self, law: str = "linear", x_c_m: float = 0.0, k_Npm: float = 0.0, b_Nspm: float = 0.0,
                 n: float = 1.0, side: int = 1) -> None:
        self.law = as_choice("law", law, LAWS)
        self.x_c_m = as_float("x_c_m", x_c_m)
        self.k_Npm = as_float("k_Npm", k_Npm, min_value=0.0)
        self.b_Nspm = as_float("b_Nspm", b_Nspm, min_value=0.0)
        self.n = as_float("n", n, min_value=0.0, strict_min=True, max_value=10.0)
        if self.law == "linear" and self.n != 1.0:
            raise ModelValidationError(f"n: the linear law has n = 1, got {self.n:g} (use law hunt-crossley)")
        if isinstance(side, bool) or side not in (1, -1):
            raise ModelValidationError(f"side: expected +1 or -1, got {excerpt(side)}")
        self.side = int(side)

    def to_dict(self) -> dict[str, Any]:
        return {"law": self.law, "x_c_m": self.x_c_m, "k_Npm": self.k_Npm, "b_Nspm": self.b_Nspm,
                "n": self.n, "side": self.side}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Contact":
        check_keys("contact", data, {"law", "x_c_m", "k_Npm", "b_Nspm"}, {"n", "side"})
        return cls(**data)

    def passivity(self) -> PassivityReport:
        """Passive by construction: ``k, b >= 0`` (validated) and never tensile (module docstring)."""
        return PassivityReport(passive=True, notes=[f"{self.law} contact at {self.x_c_m * 1e3:.3f} mm: passive by "
                                                    "construction (k, b >= 0, never tensile)"])

    def handle_stiffnesses(self, at_force_N: float | None = None) -> list[tuple[str, float]]:
        """The wall's stiffness (N/m); a Hunt-Crossley k (N/m^n, n > 1) as its local stiffness where the wall
        reaches ``at_force_N`` (N, :func:`hunt_crossley_local_stiffness`), as written without a force."""
        local = hunt_crossley_local_stiffness(self.k_Npm, self.n, at_force_N) if self.law == "hunt-crossley" else None
        if local is None:
            return super().handle_stiffnesses(at_force_N)
        return [(f"k_Npm (local, at {at_force_N:g} N)", local)]

    def params_block(self) -> np.ndarray:
        return np.array([_LAW_CODE[self.law], self.x_c_m, self.k_Npm, self.b_Nspm, self.n, float(self.side)])

    def initial_state(self) -> np.ndarray:
        return np.zeros(0)


@njit(cache=True, nogil=True)
def contact_force(p, s, x, v, a, dt):
    """Force (N) the probe applies along +x against a :class:`Contact` block ``p`` at ``x`` (m), ``v`` (m/s).

    Stateless; ``s``, ``a`` and ``dt`` are unused.
    """
    side = p[5]
    d = side * (x - p[1])  # penetration depth (m)
    if d <= 0.0:
        return 0.0
    d_dot = side * v
    if p[0] == 0.0:
        f = p[2] * d + p[3] * d_dot  # F = k x + b x_dot  (seed 004 eq. 2.1)
    else:
        dn = d ** p[4]
        f = p[2] * dn + p[3] * dn * d_dot  # F = k d^n + b d^n d_dot  (seed 000 eq. 26)
    if f < 0.0:  # never tensile (seed 000, discussion of eqs. 25-26)
        f = 0.0
    return side * f

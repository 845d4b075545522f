"""Shared physics of the simulated targets and the :class:`Target` base class.

The targets in this package are the "real objects" the simulated probe presses: they are built from
masses, springs, felts, cams and friction, integrated at a fine fixed step, and never from
:mod:`hapticam.models` classes, so identification is not tested on its own assumptions.

Integration (one fixed step ``dt`` for every body)
--------------------------------------------------
Each body is advanced by semi-implicit (symplectic) Euler with implicit damping and exact Coulomb
friction::

    m (v1 - v) / dt = F(x, v) - C (v1 - v) - K' dt v1 - Ff s,   s in sign(v1)   (set-valued Coulomb)
    x1 = x + dt v1

where ``C = -dF/dv`` is the local damping of the body's dashpots and contacts and ``K = -dF/dx`` its
local stiffness. All forces are evaluated from the state at the start of the step (the probe's
included), then every body advances. Springs and felts are explicit (``K' = 0``) while
``omega dt = dt sqrt(K/m) <= 1`` (symplectic Euler is stable up to 2): symplectic Euler adds no
numerical damping, so a felt's restitution is the Hunt-Crossley one and not the integrator's, and the
force at the start of a step is the force that acts over it. Beyond that (a contact pressed very
hard) the stiffness is taken implicitly (``K' = K``): stable at any stiffness, at the price of
numerical damping and a force lag of ``K dt v``. The friction
law is solved exactly (Moreau's time-stepping): the body sticks when the other forces cannot overcome
``Ff`` during the step, so static friction holds a body still instead of chattering. The probe runs
this at 40 kHz or more.

Contacts follow Hunt and Crossley (seed 000 eq. 26)::

    F = k |rho|^(n-1) rho + b |rho|^n rho_dot           (penetration rho > 0; zero when apart)

clamped at zero so a felt never pulls (no adhesion, Marhefka and Orin, seed 000 ref. [10]). The
damping is written ``b = alpha k`` with ``alpha`` in s/m: the coefficient of restitution at impact
speed ``v`` is about ``1 - 2 alpha v / 3`` (Hunt and Crossley).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np
from numba import njit

#: Number of observable channels every target kernel writes per step (see ``Target.observables``).
N_OBS = 4


@njit(cache=True, nogil=True)
def hunt_crossley(rho, rho_dot, k, alpha, n):
    """Hunt-Crossley contact force for penetration ``rho`` (m) and its rate (m/s).

    ``F = k rho^n + alpha k rho^n rho_dot`` for ``rho > 0`` (seed 000 eq. 26, ``b = alpha k``),
    clamped at zero. Returns ``(F, K, C)``: force (N), local stiffness ``dF/drho`` (N/m) and damping
    ``dF/drho_dot`` (N s/m), both zero when apart.
    """
    if rho <= 0.0:
        return 0.0, 0.0, 0.0
    rn = rho ** n
    f = k * rn * (1.0 + alpha * rho_dot)                  # F = k rho^n + b rho^n rho_dot  (seed 000 eq. 26)
    if f <= 0.0:
        return 0.0, 0.0, 0.0
    stiff = n * k * rn / rho * (1.0 + alpha * rho_dot)   # dF/drho = n k rho^(n-1) (1 + alpha rho_dot)
    if stiff < 0.0:
        stiff = 0.0
    return f, stiff, alpha * k * rn                       # dF/drho_dot = b rho^n


#: ``(omega dt)^2`` above which a body's stiffness is integrated implicitly (omega dt > 1).
IMPLICIT_STIFFNESS = 1.0


@njit(cache=True, nogil=True)
def implicit_stiffness(k, m, dt):
    """The part of a body's local stiffness ``k`` (N/m) integrated implicitly: all of it when
    ``k dt^2 / m > 1`` (omega dt > 1), none otherwise (module docstring)."""
    return k if k * dt * dt > IMPLICIT_STIFFNESS * m else 0.0


@njit(cache=True, nogil=True)
def implicit_velocity(v, m, dt, f, k_imp, c_imp, f_fric):
    """Velocity after one step of the scheme in the module docstring (damping implicit, exact friction).

    ``f`` is the sum of forces at the start of the step (N), ``k_imp`` the stiffness taken implicitly
    (N/m, from :func:`implicit_stiffness`), ``c_imp`` the local damping (N s/m), ``f_fric >= 0`` the
    Coulomb friction level (N). Returns the new velocity (m/s), exactly 0 while sticking; the caller
    advances the position by ``dt v1``.
    """
    denom = 1.0 + dt * (c_imp + dt * k_imp) / m           # m (v1 - v) = dt (f - C (v1 - v) - K dt v1)
    v_free = (v + dt * (f + c_imp * v) / m) / denom
    slip = dt * f_fric / (m * denom)
    if v_free > slip:
        return v_free - slip
    if v_free < -slip:
        return v_free + slip
    return 0.0                                            # stick: |F_other| <= Ff over the step


@njit(cache=True, nogil=True)
def transmitted(f, k, c, k_imp, dt, v, v1, unilateral):
    """Force a coupling of stiffness ``k`` and damping ``c`` (on the body's own motion) transmitted over
    the step: its start value ``f`` with the implicit parts evaluated at the new velocity ``v1``,
    ``f - c (v1 - v) - k dt v1`` (the last only when the body's stiffness is implicit, ``k_imp > 0``),
    never negative for a ``unilateral`` contact. The probe receives exactly this force (action and
    reaction) and its sensor reads it."""
    out = f - c * (v1 - v)
    if k_imp > 0.0:
        out -= k * dt * v1
    if unilateral and out < 0.0:
        return 0.0
    return out


def profile_slopes(knots_s: np.ndarray, knots_d: np.ndarray) -> np.ndarray:
    """Knot slopes of a monotone piecewise cubic through ``(knots_s, knots_d)`` (Fritsch and Carlson).

    Interior slopes are the weighted harmonic mean of the neighbouring secants (zero at a local
    extremum), as in SciPy's PCHIP: ``(w1 + w2) / (w1 / m_{k-1} + w2 / m_k)`` with
    ``w1 = 2 h_k + h_{k-1}``, ``w2 = h_k + 2 h_{k-1}``; the end slopes are zero so the profile joins the
    constant continuation outside the knots smoothly. The curve never overshoots its knots.
    """
    ks = np.asarray(knots_s, dtype=np.float64)
    kd = np.asarray(knots_d, dtype=np.float64)
    slopes = np.zeros_like(ks)
    if ks.size < 3:
        return slopes
    h = np.diff(ks)
    m = np.diff(kd) / h
    for k in range(1, ks.size - 1):
        if m[k - 1] * m[k] <= 0.0:
            continue
        w1 = 2.0 * h[k] + h[k - 1]
        w2 = h[k] + 2.0 * h[k - 1]
        slopes[k] = (w1 + w2) / (w1 / m[k - 1] + w2 / m[k])
    return slopes


@njit(cache=True, nogil=True)
def hermite_profile(s, knots_s, knots_d, knots_m, n):
    """Piecewise cubic Hermite curve through ``n`` knots with slopes ``knots_m`` (:func:`profile_slopes`).

    Between knots ``d = h00 d_i + h10 w m_i + h01 d_{i+1} + h11 w m_{i+1}`` with the Hermite basis of
    ``u = (s - s_i) / w``; constant outside the knots. Returns ``(d, d', d'')`` with derivatives in ``s``.
    """
    if n == 0:
        return 0.0, 0.0, 0.0
    if s <= knots_s[0]:
        return knots_d[0], 0.0, 0.0
    for i in range(n - 1):
        s1 = knots_s[i + 1]
        if s < s1:
            w = s1 - knots_s[i]
            u = (s - knots_s[i]) / w
            d0 = knots_d[i]
            d1 = knots_d[i + 1]
            m0 = knots_m[i] * w
            m1 = knots_m[i + 1] * w
            u2 = u * u
            u3 = u2 * u
            val = (2 * u3 - 3 * u2 + 1) * d0 + (u3 - 2 * u2 + u) * m0 + (-2 * u3 + 3 * u2) * d1 + (u3 - u2) * m1
            dv = ((6 * u2 - 6 * u) * d0 + (3 * u2 - 4 * u + 1) * m0 + (-6 * u2 + 6 * u) * d1
                  + (3 * u2 - 2 * u) * m1) / w
            ddv = ((12 * u - 6) * d0 + (6 * u - 4) * m0 + (-12 * u + 6) * d1 + (6 * u - 2) * m1) / (w * w)
            return val, dv, ddv
    return knots_d[n - 1], 0.0, 0.0


def hermite_profile_np(s: np.ndarray, knots_s: np.ndarray, knots_d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NumPy/SciPy reference of :func:`hermite_profile`: value and slope (constant outside the knots)."""
    from scipy.interpolate import CubicHermiteSpline

    s = np.asarray(s, dtype=np.float64)
    ks = np.asarray(knots_s, dtype=np.float64)
    kd = np.asarray(knots_d, dtype=np.float64)
    if ks.size == 0:
        return np.zeros_like(s), np.zeros_like(s)
    if ks.size == 1:
        return np.full_like(s, kd[0]), np.zeros_like(s)
    spline = CubicHermiteSpline(ks, kd, profile_slopes(ks, kd))
    sc = np.clip(s, ks[0], ks[-1])
    inside = (s > ks[0]) & (s < ks[-1])
    return spline(sc), np.where(inside, spline(sc, 1), 0.0)


@dataclass(frozen=True)
class Target:
    """Base of the simulated physical targets.

    Subclasses are frozen dataclasses whose fields are the physical parameters (SI units, names with
    units). They provide the numba step kernel through ``kind_code`` (dispatched by
    :func:`hapticam.world.targets.target_step`), the packed parameter array, the initial state and
    the probe's default travel. The probe position ``x`` is the probe carriage's travel from its start
    (m, +x pressing); each target documents where its moving part sits along it.
    """

    #: Registry name, set on each instance by the factory (e.g. ``"tactile-switch"``).
    name: str = "target"

    kind_code: ClassVar[int] = 0
    #: Names of the four observable channels the kernel writes every step (units in the names).
    observables: ClassVar[tuple[str, str, str, str]] = ("", "", "", "")
    #: One-line description shown by ``hapticam probe --list``.
    summary: ClassVar[str] = ""

    def params_array(self) -> np.ndarray:
        """Parameters packed for the kernel (float64)."""
        raise NotImplementedError

    def initial_state(self) -> np.ndarray:
        """Kernel state at rest before the probe touches (float64)."""
        raise NotImplementedError

    def probe_tip(self) -> dict | None:
        """The probe's tip on this target when it is a one-sided pad the key can leave (recorded in the
        capture's ``probe`` metadata, :mod:`hapticam.render.verify.probe_tip`); None: bolted, or none."""
        return None

    def probe_range_m(self) -> tuple[float, float]:
        """Default probe range ``(low, high)`` (m) an excitation should cover."""
        raise NotImplementedError

    def describe(self) -> str:
        """One line: name and summary."""
        return f"{self.name}: {self.summary}"

    def to_dict(self) -> dict[str, Any]:
        """All parameters as a JSON-able dict (recorded in captures)."""
        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if isinstance(value, tuple):
                value = [list(v) if isinstance(v, tuple) else v for v in value]
            out[key] = value
        return {"target": self.name, "class": type(self).__name__, "parameters": out}

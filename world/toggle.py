"""A toggle switch with an over-centre detent, the device MacLean probed and played back (seed 000
refs. [8], [9]: force-displacement data from a toggle switch, a piecewise-linear fit, rendering)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from hapticam.world.physics import Target, hunt_crossley, implicit_stiffness, implicit_velocity, transmitted
from hapticam.errors import UsageError

KIND_TOGGLE = 4

_M, _KP, _Z0, _H, _W, _THROW, _MU, _FP, _KS, _AS, _KL, _CL = range(12)
_NPARAM = 12


@njit(cache=True, nogil=True)
def cam_force(p, x):
    """Axial detent force (N, resisting +x when positive), plunger normal force (N) and stiffness (N/m) at ``x``.

    Cam lift ``c(x) = h cos^2(pi u / 2)`` for ``|u| <= 1``, ``u = (x - w) / w`` (zero outside), plunger
    compression ``z = z0 + c``; energy ``k_p z^2 / 2`` gives the axial force ``k_p z c'(x)``.
    """
    k_p, z0, h, w = p[_KP], p[_Z0], p[_H], p[_W]
    u = (x - w) / w
    if u <= -1.0 or u >= 1.0:
        return 0.0, k_p * z0, 0.0
    a = 0.5 * np.pi * u
    c = h * np.cos(a) ** 2                                   # c = h cos^2(pi u / 2)
    dc = -h * np.pi / (2.0 * w) * np.sin(2.0 * a)           # c' = -(h pi / 2w) sin(pi u)
    ddc = -h * np.pi * np.pi / (2.0 * w * w) * np.cos(2.0 * a)
    z = z0 + c
    return k_p * z * dc, k_p * z, k_p * (dc * dc + z * ddc)  # F = d/dx (k_p z^2 / 2)


@njit(cache=True, nogil=True)
def toggle_step(p, s, xp, vp, dt, obs):
    """Advance the lever by ``dt`` from the probe's state ``xp`` (m), ``vp`` (m/s) at the step's start.

    Returns the link force (N) transmitted over the step; ``obs`` gets the state at its start. State
    ``s = [x, v]`` of the lever tip (m, m/s).
    """
    x, v = s[0], s[1]
    f_link = p[_KL] * (xp - x) + p[_CL] * (vp - v)          # the probe grips the lever (bilateral)
    f_cam, normal, k_cam = cam_force(p, x)
    f_lo, k_lo, c_lo = hunt_crossley(-x, -v, p[_KS], p[_AS], 1.5)                 # stop at 0
    f_hi, k_hi, c_hi = hunt_crossley(x - p[_THROW], v, p[_KS], p[_AS], 1.5)       # stop at the throw
    obs[0] = x
    obs[1] = v
    obs[2] = f_cam
    obs[3] = f_lo - f_hi
    f = f_link - f_cam + f_lo - f_hi
    k_imp = implicit_stiffness(p[_KL] + (k_cam if k_cam > 0.0 else 0.0) + k_lo + k_hi, p[_M], dt)
    c_imp = p[_CL] + c_lo + c_hi
    v1 = implicit_velocity(v, p[_M], dt, f, k_imp, c_imp, p[_FP] + p[_MU] * normal)
    s[0] = x + dt * v1
    s[1] = v1
    return transmitted(f_link, p[_KL], p[_CL], k_imp, dt, v, v1, False)


@dataclass(frozen=True)
class ToggleSwitch(Target):
    """A toggle switch with an over-centre detent, its lever tip gripped by the probe.

    Physics
    -------
    The lever tip (equivalent mass ``m``, travel ``x`` from the first rest position) carries a
    spring-loaded plunger riding a cam in the base. The cam lifts the plunger by
    ``c(x) = h cos^2(pi u / 2)``, ``u = (x - w) / w``, over ``0 <= x <= 2w``, so the plunger spring
    (rate ``k_p``, compression ``z = z0 + c``) stores ``k_p z^2 / 2`` and pushes on the lever with::

        F_detent(x) = k_p z(x) c'(x)

    positive (resisting) before the centre ``x = w``, negative (pulling over) after it: the detent.
    The lever obeys ``m x'' = F_link - F_detent - F_stops - (F_pivot + mu k_p z) sign(x')`` with
    Hunt-Crossley end stops (n = 1.5) at ``0`` and ``throw_m``, pivot friction and plunger friction
    proportional to the plunger's normal force.

    Parameters
    ----------
    lever_mass_kg : float
        Equivalent mass at the gripped point (kg).
    plunger_Npm, plunger_preload_m : float
        Plunger spring rate (N/m) and its compression in the rest positions (m).
    cam_height_m, cam_half_width_m : float
        Cam lift ``h`` (m) and half width ``w`` (m); the centre is at ``w``.
    throw_m : float
        Position of the second end stop (m); the first is at 0.
    cam_mu, pivot_friction_N : float
        Plunger friction coefficient and pivot Coulomb friction (N).
    stop_k, stop_alpha : float
        End stops, Hunt-Crossley n = 1.5 (N/m^1.5, s/m).
    link_Npm, link_Nspm : float
        The probe's grip on the lever.
    """

    lever_mass_kg: float = 2.0e-3
    plunger_Npm: float = 4000.0
    plunger_preload_m: float = 0.8e-3
    cam_height_m: float = 0.5e-3
    cam_half_width_m: float = 3.0e-3
    throw_m: float = 6.0e-3
    cam_mu: float = 0.05
    pivot_friction_N: float = 0.02
    stop_k: float = 1.0e7
    stop_alpha: float = 2.0
    link_Npm: float = 1.0e6
    link_Nspm: float = 20.0

    kind_code: ClassVar[int] = KIND_TOGGLE
    observables: ClassVar[tuple[str, str, str, str]] = ("lever_m", "lever_mps", "detent_force_N", "stop_force_N")
    summary: ClassVar[str] = ("toggle switch (MacLean): lever with an over-centre plunger detent, "
                              "end stops, friction")

    def __post_init__(self) -> None:
        for name in ("lever_mass_kg", "cam_half_width_m", "throw_m", "stop_k", "link_Npm"):
            if not getattr(self, name) > 0.0:
                raise UsageError(f"{name}: must be > 0")
        for name in ("plunger_Npm", "plunger_preload_m", "cam_height_m", "cam_mu", "pivot_friction_N",
                     "stop_alpha", "link_Nspm"):
            if not getattr(self, name) >= 0.0:
                raise UsageError(f"{name}: must be >= 0")

    def params_array(self) -> np.ndarray:
        return np.array([self.lever_mass_kg, self.plunger_Npm, self.plunger_preload_m, self.cam_height_m,
                         self.cam_half_width_m, self.throw_m, self.cam_mu, self.pivot_friction_N, self.stop_k,
                         self.stop_alpha, self.link_Npm, self.link_Nspm], dtype=np.float64)

    def initial_state(self) -> np.ndarray:
        return np.zeros(2, dtype=np.float64)

    def probe_range_m(self) -> tuple[float, float]:
        """From the first rest position to the second (m)."""
        return (0.0, self.throw_m)

    def detent_force(self, x_m: np.ndarray) -> np.ndarray:
        """NumPy reference of ``F_detent(x) = k_p z c'`` (N)."""
        x = np.asarray(x_m, dtype=np.float64)
        w, h = self.cam_half_width_m, self.cam_height_m
        u = (x - w) / w
        inside = np.abs(u) < 1.0
        c = np.where(inside, h * np.cos(0.5 * np.pi * u) ** 2, 0.0)
        dc = np.where(inside, -h * np.pi / (2.0 * w) * np.sin(np.pi * u), 0.0)
        return self.plunger_Npm * (self.plunger_preload_m + c) * dc

    def plunger_normal_force(self, x_m: np.ndarray) -> np.ndarray:
        """NumPy reference of the plunger spring force ``k_p z`` (N)."""
        x = np.asarray(x_m, dtype=np.float64)
        w, h = self.cam_half_width_m, self.cam_height_m
        u = (x - w) / w
        c = np.where(np.abs(u) < 1.0, h * np.cos(0.5 * np.pi * u) ** 2, 0.0)
        return self.plunger_Npm * (self.plunger_preload_m + c)

"""The nonlinear 1-DOF test device of seed 001 section 4, as a simulated target.

Seed 001 section 4: "nonlinear (hardening) springs, a mass, and a dashpot. The springs were designed to
exhibit constant stiffness over certain ranges of x, and rapidly changing stiffness over other
ranges", plus the Coulomb-like friction that seed 001 eq. 6 folds into the offset force.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from hapticam.world.physics import Target, implicit_stiffness, implicit_velocity, transmitted
from hapticam.errors import UsageError

KIND_TEST_DEVICE = 1


@njit(cache=True, nogil=True)
def _ramp_integral(u):
    """Integral of the smoothstep S(u) = 3u^2 - 2u^3 (0 below 0, 1 above 1) from 0 to u."""
    if u <= 0.0:
        return 0.0
    if u >= 1.0:
        return 0.5 + (u - 1.0)                    # int_0^1 S = 1/2, then slope 1
    return u * u * u * (1.0 - 0.5 * u)           # int_0^u (3s^2 - 2s^3) ds = u^3 - u^4/2


@njit(cache=True, nogil=True)
def _ramp(u):
    if u <= 0.0:
        return 0.0
    if u >= 1.0:
        return 1.0
    return u * u * (3.0 - 2.0 * u)


@njit(cache=True, nogil=True)
def spring_force(p, x):
    """Spring-law force (N) and stiffness (N/m) at device position ``x`` (m); see :class:`NonlinearTestDevice`."""
    f = p[4] + p[5] * x                          # preload + base spring
    k = p[5]
    for i in range(2):
        k_i = p[6 + 3 * i]
        x_i = p[7 + 3 * i]
        w_i = p[8 + 3 * i]
        u = (x - x_i) / w_i
        f += k_i * w_i * _ramp_integral(u)      # int k_i S((x - x_i)/w_i) dx
        k += k_i * _ramp(u)                     # k(x) = k0 + sum k_i S((x - x_i)/w_i)
    return f, k


@njit(cache=True, nogil=True)
def test_device_step(p, s, xp, vp, dt, obs):
    """Advance the device by ``dt`` from the probe's state ``xp`` (m), ``vp`` (m/s) at the step's start.

    Returns the link force (N) transmitted over the step; ``obs`` gets the state at its start. State
    ``s = [x, v]`` of the device mass. The probe is bolted to the mass through a stiff link
    ``F_link = k_l (xp - x) + c_l (vp - v)`` (bilateral), and the mass obeys
    ``m x'' = F_link - F_spring(x) - b x' - Fc sign(x')``.
    """
    m, b, fc, k_l = p[0], p[1], p[2], p[3]
    c_l = p[12]
    x, v = s[0], s[1]
    f_s, k_s = spring_force(p, x)
    f_link = k_l * (xp - x) + c_l * (vp - v)
    obs[0] = x
    obs[1] = v
    obs[2] = f_s
    f = f_link - f_s - b * v                            # m x'' = F_link - F_spring - b v - Fc sgn v
    k_imp = implicit_stiffness(k_l + k_s, m, dt)
    v1 = implicit_velocity(v, m, dt, f, k_imp, c_l + b, fc)
    s[0] = x + dt * v1
    s[1] = v1
    f_link = transmitted(f_link, k_l, c_l, k_imp, dt, v, v1, False)
    obs[3] = f_link
    return f_link


@dataclass(frozen=True)
class NonlinearTestDevice(Target):
    """Seed 001 section 4's nonlinear test device: a mass on hardening springs with a dashpot and friction.

    Physics
    -------
    A carriage of mass ``m`` on a rail, bolted to the probe, restrained by a spring stack whose
    stiffness is constant over some ranges and changes rapidly over others::

        k(x) = k0 + sum_i k_i S((x - x_i) / w_i),   S(u) = 3u^2 - 2u^3 on [0, 1]
        F_spring(x) = F_pre + int_0^x k = F_pre + k0 x + sum_i k_i w_i I((x - x_i) / w_i)

    (``I`` the integral of ``S``): each extra spring engages over a short width ``w_i`` (rapid change)
    and is then constant. Position ``x`` is measured along the probe axis; the bolt is relaxed when the
    carriage and the probe are at the same ``x``. The equation of motion::

        m x'' = F_link - F_spring(x) - b x' - Fc sign(x')

    so the force the probe reads is, up to the link's compliance, ``m a + b v + F_spring(x) +
    Fc sign(v)``: seed 001 eq. 8 with ``k(x)`` the local slope and ``F0`` the spring offset plus
    friction (seed 001 eq. 6).

    Parameters
    ----------
    mass_kg : float
        Moving mass ``m`` (kg).
    damping_Nspm : float
        Dashpot ``b`` (N s/m); 0 reproduces seed 001 section 5's first experiment (no dashpot).
    coulomb_N : float
        Coulomb friction level ``Fc`` (N), static equal to kinetic.
    preload_N : float
        Spring force at ``x = 0`` (N).
    k0_Npm : float
        Base spring, active everywhere (N/m).
    k1_Npm, x1_m, w1_m, k2_Npm, x2_m, w2_m : float
        The two hardening springs: added stiffness (N/m), engagement start (m), engagement width (m).
    link_Npm, link_Nspm : float
        Stiffness and damping of the bolt between probe and carriage.
    travel_low_m, travel_high_m : float
        Default probe range (seed 001: 50 mm).
    """

    mass_kg: float = 0.25
    damping_Nspm: float = 4.0
    coulomb_N: float = 0.15
    preload_N: float = 2.0
    k0_Npm: float = 200.0
    k1_Npm: float = 400.0
    x1_m: float = 0.015
    w1_m: float = 0.004
    k2_Npm: float = 800.0
    x2_m: float = 0.035
    w2_m: float = 0.003
    link_Npm: float = 1.0e6
    link_Nspm: float = 200.0
    travel_low_m: float = 0.0
    travel_high_m: float = 0.050

    kind_code: ClassVar[int] = KIND_TEST_DEVICE
    observables: ClassVar[tuple[str, str, str, str]] = ("device_x_m", "device_v_mps", "spring_force_N",
                                                        "link_force_N")
    summary: ClassVar[str] = ("seed 001 section 4 test device: 0.25 kg mass, hardening springs "
                              "(constant and rapidly changing stiffness), dashpot, Coulomb friction")

    def __post_init__(self) -> None:
        for name in ("mass_kg", "w1_m", "w2_m", "link_Npm"):
            if not getattr(self, name) > 0.0:
                raise UsageError(f"{name}: must be > 0")
        for name in ("damping_Nspm", "coulomb_N", "k0_Npm", "k1_Npm", "k2_Npm", "link_Nspm"):
            if not getattr(self, name) >= 0.0:
                raise UsageError(f"{name}: must be >= 0")

    def params_array(self) -> np.ndarray:
        return np.array([self.mass_kg, self.damping_Nspm, self.coulomb_N, self.link_Npm,
                         self.preload_N, self.k0_Npm,
                         self.k1_Npm, self.x1_m, self.w1_m, self.k2_Npm, self.x2_m, self.w2_m,
                         self.link_Nspm], dtype=np.float64)

    def initial_state(self) -> np.ndarray:
        return np.zeros(2, dtype=np.float64)

    def probe_range_m(self) -> tuple[float, float]:
        return (self.travel_low_m, self.travel_high_m)

    def spring_force(self, x_m: np.ndarray) -> np.ndarray:
        """NumPy reference of the spring law ``F_spring(x)`` (N)."""
        x = np.asarray(x_m, dtype=np.float64)
        f = self.preload_N + self.k0_Npm * x
        for k_i, x_i, w_i in ((self.k1_Npm, self.x1_m, self.w1_m), (self.k2_Npm, self.x2_m, self.w2_m)):
            u = (x - x_i) / w_i
            integral = np.where(u <= 0.0, 0.0, np.where(u >= 1.0, 0.5 + (u - 1.0), u ** 3 * (1.0 - 0.5 * u)))
            f = f + k_i * w_i * integral
        return f

    def stiffness(self, x_m: np.ndarray) -> np.ndarray:
        """NumPy reference of ``k(x) = dF_spring/dx`` (N/m)."""
        x = np.asarray(x_m, dtype=np.float64)
        k = np.full_like(x, self.k0_Npm)
        for k_i, x_i, w_i in ((self.k1_Npm, self.x1_m, self.w1_m), (self.k2_Npm, self.x2_m, self.w2_m)):
            u = np.clip((x - x_i) / w_i, 0.0, 1.0)
            k = k + k_i * u * u * (3.0 - 2.0 * u)
        return k

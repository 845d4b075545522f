"""A detent knob (rotary) and a sprung key (linear) with known friction, for the friction experiments.

Both are one body on one axis with the friction of Brown & McPhee (2016) (the law seed 003 eq. 5 quotes,
with its square) written in its identifiable levels::

    T_f(w) = Tc tanh(4 w / w_t) + Ts (w / w_t) / ((w / w_t)^2 / 4 + 3 / 4)^2 + b w

``Tc`` the Coulomb level, ``Ts`` the Stribeck term's peak (reached at ``w = w_t``), ``b`` the viscous
coefficient. The body also feels a detent ``A sin(N theta)`` (the gradient of ``(A / N)(1 - cos N theta)``,
``N`` detents per revolution) and a return spring ``F_pre + k x``, and the probe drives it through a
link of stiffness ``k_l`` and damping ``c_l``::

    J theta'' = T_link - A sin(N theta) - (F_pre + k theta) - T_f(theta')

The link is a clutch that lets go, for good, the first time the probe brakes the body harder than
``release`` (link torque against the body's motion beyond it; 0: never). A spin-down is then the probe
spinning the knob up and stopping sharply: the knob coasts on under friction alone, and the encoder on its
shaft records the angle (``encoder_observable``), as on a spin-down rig. Constant-speed turns with gentle
speed changes (``excitations.turns``) keep the clutch closed.

The body is integrated by semi-implicit Euler with the friction's and link's slopes taken implicitly
(:func:`hapticam.world.physics.implicit_velocity`), at the probe's internal step. Units: the knob is
rotary (rad, N m, kg m^2; its fields still end in the linear names the probe uses where they are
arrays), the key linear (m, N, kg).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numba import njit

from hapticam.world.physics import Target, implicit_stiffness, implicit_velocity, transmitted
from hapticam.errors import UsageError

KIND_FRICTION_BODY = 21

_J, _TC, _TS, _WT, _B, _A, _N, _KL, _CL, _REL, _KS, _FPRE = range(12)
_NPARAM = 12


@njit(cache=True, nogil=True)
def body_friction(p, w):
    """Friction torque (or force) at speed ``w`` and its slope ``dT/dw`` (Brown & McPhee 2016)."""
    u = w / p[_WT]
    th = math.tanh(4.0 * u)
    d = 0.25 * u * u + 0.75
    f = p[_TC] * th + p[_TS] * u / (d * d) + p[_B] * w     # seed 003 eq. 5 with the square
    slope = (p[_TC] * 4.0 * (1.0 - th * th) + p[_TS] * (0.75 - 0.75 * u * u) / (d * d * d)) / p[_WT] + p[_B]
    return f, slope


@njit(cache=True, nogil=True)
def friction_body_step(p, s, xp, vp, dt, obs):
    """Advance the body by ``dt`` from the probe's state ``xp``, ``vp`` at the step's start.

    State ``s = [theta, omega, released]``; returns the link torque (force) transmitted over the step
    (0 once released). ``obs`` gets angle, speed, friction and detent at the step's start.
    """
    th, w = s[0], s[1]
    engaged = s[2] == 0.0
    f_link = p[_KL] * (xp - th) + p[_CL] * (vp - w) if engaged else 0.0
    if engaged and p[_REL] > 0.0 and f_link * w < 0.0 and abs(f_link) > p[_REL]:
        s[2] = 1.0                                          # the clutch lets go for good
        engaged = False
        f_link = 0.0
    f_fric, c_fric = body_friction(p, w)
    n = p[_N]
    f_det = p[_A] * math.sin(n * th)                        # detent: d/dtheta of (A/N)(1 - cos N theta)
    k_det = p[_A] * n * math.cos(n * th)
    obs[0] = th
    obs[1] = w
    obs[2] = f_fric
    obs[3] = f_det
    f = f_link - f_det - (p[_FPRE] + p[_KS] * th) - f_fric
    k_body = p[_KS] + (k_det if k_det > 0.0 else 0.0) + (p[_KL] if engaged else 0.0)
    k_imp = implicit_stiffness(k_body, p[_J], dt)
    c_imp = (c_fric if c_fric > 0.0 else 0.0) + (p[_CL] if engaged else 0.0)
    w1 = implicit_velocity(w, p[_J], dt, f, k_imp, c_imp, 0.0)
    s[0] = th + dt * w1
    s[1] = w1
    if not engaged:
        return 0.0
    return transmitted(f_link, p[_KL], p[_CL], k_imp, dt, w, w1, False)


@dataclass(frozen=True)
class DetentKnob(Target):
    """A weighted detent knob (or small flywheel) with known friction; rotary: rad, N m, kg m^2.

    Physics
    -------
    One rotating body (module docstring): ``J theta'' = T_link - A sin(N theta) - T_f(theta')`` with the
    friction of Brown & McPhee (2016) in its levels ``Tc``, ``Ts``, ``w_t``, ``b``; the probe's drive lets
    go for good when it brakes the knob harder than ``release_Nm`` (a spin-down), and the encoder sits on
    the knob's shaft, so a capture records the knob's angle also after the drive let go.

    Parameters
    ----------
    inertia_kgm2 : float
        Moment of inertia of knob and shaft (kg m^2).
    coulomb_Nm, stribeck_Nm, stribeck_radps, viscous_Nmsprad : float
        Friction levels ``Tc``, ``Ts`` (N m), Stribeck speed ``w_t`` (rad/s) and viscous ``b`` (N m s/rad).
    detent_Nm, detents_per_rev : float
        Detent amplitude ``A`` (N m) and detents per revolution ``N``.
    link_Nmprad, link_Nmsprad : float
        The probe's drive: stiffness and damping of the coupling.
    release_Nm : float
        Braking torque at which the clutch lets go (0: never).
    """

    inertia_kgm2: float = 1.0e-3
    coulomb_Nm: float = 0.02
    stribeck_Nm: float = 0.01
    stribeck_radps: float = 0.5
    viscous_Nmsprad: float = 1.0e-3
    detent_Nm: float = 1.0e-3
    detents_per_rev: float = 24.0
    link_Nmprad: float = 20.0
    link_Nmsprad: float = 0.05
    release_Nm: float = 0.1

    kind_code: ClassVar[int] = KIND_FRICTION_BODY
    observables: ClassVar[tuple[str, str, str, str]] = ("theta_rad", "omega_radps", "friction_Nm", "detent_Nm")
    summary: ClassVar[str] = ("rotary detent knob (a weighted knob or flywheel) with Coulomb, viscous and Stribeck "
                              "friction; a clutch that lets go for spin-downs")
    #: the axis kind of captures of this target (rad, N m)
    axis: ClassVar[str] = "rotary"
    #: the observable the capture's position comes from: the encoder sits on the knob's shaft
    encoder_observable: ClassVar[str | None] = "theta_rad"

    def __post_init__(self) -> None:
        for name in ("inertia_kgm2", "stribeck_radps", "link_Nmprad"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise UsageError(f"{name}: must be a finite number > 0, got {value!r}")
        for name in ("coulomb_Nm", "stribeck_Nm", "viscous_Nmsprad", "detent_Nm", "detents_per_rev",
                     "link_Nmsprad", "release_Nm"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise UsageError(f"{name}: must be a finite number >= 0, got {value!r}")

    def _spring(self) -> tuple[float, float]:
        return 0.0, 0.0

    def params_array(self) -> np.ndarray:
        p = np.zeros(_NPARAM)
        p[[_J, _TC, _TS, _WT, _B, _A, _N]] = (self.inertia_kgm2, self.coulomb_Nm, self.stribeck_Nm,
                                             self.stribeck_radps, self.viscous_Nmsprad, self.detent_Nm,
                                             self.detents_per_rev)
        p[[_KL, _CL, _REL]] = (self.link_Nmprad, self.link_Nmsprad, self.release_Nm)
        p[_KS], p[_FPRE] = self._spring()
        return p

    def initial_state(self) -> np.ndarray:
        return np.zeros(3, dtype=np.float64)

    def probe_range_m(self) -> tuple[float, float]:
        """One revolution (rad)."""
        return (0.0, 2.0 * math.pi)

    def friction(self, w: Any) -> np.ndarray:
        """NumPy reference of the friction law ``T_f(w)`` (N m)."""
        u = np.asarray(w, dtype=np.float64) / self.stribeck_radps
        d = 0.25 * u * u + 0.75
        return (self.coulomb_Nm * np.tanh(4.0 * u) + self.stribeck_Nm * u / (d * d)
                + self.viscous_Nmsprad * np.asarray(w, dtype=np.float64))

    def truth(self) -> dict[str, float]:
        """The identifiable friction levels: coulomb, stribeck_peak, stribeck speed, viscous."""
        return {"coulomb": self.coulomb_Nm, "stribeck_peak": self.stribeck_Nm, "shape_speed": self.stribeck_radps,
                "viscous": self.viscous_Nmsprad}


@dataclass(frozen=True)
class FrictionKey(DetentKnob):
    """A sprung key (or slider) gripped by the probe, with known friction; linear: m, N, kg.

    Physics
    -------
    ``m x'' = F_link - (F_pre + k x) - F_f(x')`` with the friction law of the knob (module docstring) in
    linear units; the probe grips the key through a stiff link and never lets go.

    The fields are the knob's, read in linear units (``inertia_kgm2`` is the key's mass in kg,
    ``coulomb_Nm`` its Coulomb force in N, ``stribeck_radps`` its Stribeck speed in m/s, ...), plus a return
    spring ``preload_N + spring_Npm x``. No detent and no release by default.
    """

    inertia_kgm2: float = 5.0e-3
    coulomb_Nm: float = 0.05
    stribeck_Nm: float = 0.03
    stribeck_radps: float = 5.0e-3
    viscous_Nmsprad: float = 2.0
    detent_Nm: float = 0.0
    detents_per_rev: float = 0.0
    link_Nmprad: float = 1.0e5
    link_Nmsprad: float = 20.0
    release_Nm: float = 0.0
    spring_Npm: float = 60.0
    preload_N: float = 0.3

    observables: ClassVar[tuple[str, str, str, str]] = ("x_m", "v_mps", "friction_N", "detent_N")
    summary: ClassVar[str] = ("sprung key gripped by the probe: preload and spring, Coulomb, viscous and Stribeck "
                              "friction (press it at several speeds)")
    axis: ClassVar[str] = "linear"
    encoder_observable: ClassVar[str | None] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("spring_Npm", "preload_N"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise UsageError(f"{name}: must be a finite number >= 0, got {value!r}")

    def _spring(self) -> tuple[float, float]:
        return self.spring_Npm, self.preload_N

    def probe_range_m(self) -> tuple[float, float]:
        """Four millimetres of travel (m)."""
        return (0.0, 4.0e-3)


# -- excitations: spin-down and constant-speed turns --------------------------------------------------
@dataclass(frozen=True)
class SpeedProfile:
    """A commanded speed made of raised-cosine transitions and constant stretches (rotary: rad, rad/s).

    Segment ``i`` lasts ``durations_s[i]`` and takes the speed from ``speeds[i]`` to ``speeds[i + 1]`` by
    ``w = w0 + (w1 - w0) (1 - cos(pi u)) / 2`` (``u`` the segment's elapsed fraction), so speed and
    acceleration are continuous and the angle is the integral in closed form:
    ``theta = theta0 + w0 T u + (w1 - w0) T (u - sin(pi u) / pi) / 2``. ``kind`` names it in metadata.
    """

    start_m: float
    speeds: tuple[float, ...]
    durations_s: tuple[float, ...]
    kind: str = "turns"

    def __post_init__(self) -> None:
        if len(self.speeds) != len(self.durations_s) + 1 or not self.durations_s:
            raise UsageError("speed profile: one more speed than segment durations, at least one segment")
        if not all(math.isfinite(d) and d > 0.0 for d in self.durations_s):
            raise UsageError("speed profile: segment durations must be finite and > 0")
        if not all(math.isfinite(w) for w in self.speeds) or not math.isfinite(self.start_m):
            raise UsageError("speed profile: speeds and start must be finite")

    @property
    def duration_s(self) -> float:
        """Total length (s)."""
        return float(sum(self.durations_s))

    def _segments(self, t_s: Any) -> tuple[np.ndarray, ...]:
        t = np.clip(np.asarray(t_s, dtype=np.float64), 0.0, self.duration_s)
        edges = np.concatenate([[0.0], np.cumsum(self.durations_s)])
        k = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, len(self.durations_s) - 1)
        w = np.asarray(self.speeds)
        dur = np.asarray(self.durations_s)
        w0, w1 = w[:-1], w[1:]
        # angle at each segment start: the integral of the earlier segments, (w0 + w1) T / 2 each
        theta0 = self.start_m + np.concatenate([[0.0], np.cumsum(0.5 * (w0 + w1) * dur)])
        u = (t - edges[k]) / dur[k]
        return u, w0[k], w1[k], dur[k], theta0[k]

    def position(self, t_s: Any) -> np.ndarray:
        """Commanded angle (rad)."""
        u, w0, w1, T, th0 = self._segments(t_s)
        return th0 + w0 * T * u + 0.5 * (w1 - w0) * T * (u - np.sin(np.pi * u) / np.pi)

    def velocity(self, t_s: Any) -> np.ndarray:
        """Commanded speed (rad/s)."""
        u, w0, w1, _T, _ = self._segments(t_s)
        return w0 + 0.5 * (w1 - w0) * (1.0 - np.cos(np.pi * u))

    def acceleration(self, t_s: Any) -> np.ndarray:
        """Commanded acceleration (rad/s^2)."""
        u, w0, w1, T, _ = self._segments(t_s)
        return 0.5 * np.pi * (w1 - w0) * np.sin(np.pi * u) / T

    def metadata(self) -> dict[str, Any]:
        """Parameters recorded in the capture."""
        return {"kind": self.kind, "start": self.start_m, "speeds": list(self.speeds),
                "durations_s": list(self.durations_s), "duration_s": self.duration_s}


def spin_down(start: float, speed: float, coast_s: float = 3.0, ramp_s: float = 0.5, hold_s: float = 0.2,
              brake_s: float = 0.01) -> SpeedProfile:
    """Spin up to ``speed`` (rad/s), hold, stop within ``brake_s`` (the knob's clutch lets go) and wait
    ``coast_s`` while the knob coasts down."""
    return SpeedProfile(start, (0.0, speed, speed, 0.0, 0.0), (ramp_s, hold_s, brake_s, coast_s), kind="spin-down")


def turns(start: float, speeds: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0), hold_s: float = 1.0,
          accel: float = 40.0) -> SpeedProfile:
    """Constant-speed turns: at each speed ``hold_s`` one way and ``hold_s`` back, speed changes by raised
    cosines of peak acceleration ``accel`` (rad/s^2), gentle enough that the clutch stays closed."""
    levels, durs = [0.0], []
    for w in speeds:
        for target in (w, -w, 0.0):
            ramp = max(0.05, 0.5 * math.pi * abs(target - levels[-1]) / accel)   # peak of a raised cosine
            levels.append(target)
            durs.append(ramp)
            if target != 0.0:
                levels.append(target)
                durs.append(hold_s)
    return SpeedProfile(start, tuple(levels), tuple(durs), kind="turns")


def make_speed_profile(kind: str, lo: float, hi: float, duration_s: float | None) -> SpeedProfile:
    """``spin-down``: up to ``2 (hi - lo)`` rad/s (4 pi for the knob's one revolution), coasting ``duration_s``
    (default 3 s). ``turns``: seven speeds 0.25-16 rad/s, ``duration_s`` shared among the holds (default 1 s each)."""
    if kind == "spin-down":
        return spin_down(lo, 2.0 * (hi - lo), 3.0 if duration_s is None else duration_s)
    return turns(lo, hold_s=1.0 if duration_s is None else duration_s / 14.0)


SPEED_PROFILES = ("spin-down", "turns")

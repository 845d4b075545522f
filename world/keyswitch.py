"""Mechanical keyboard switches (linear, tactile, clicky) as simulated targets.

The parameters of the three presets were chosen so that a slow press and release resembles the real
captures in ``shared/data/switch_curves/`` (Cherry MX Red, Gateron Brown, Cherry MX Blue; measured by
bluepylons with the Open-Switch-Curve-Meter, CC-BY 4.0).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from numba import njit

from hapticam.world.physics import (Target, hermite_profile, hermite_profile_np, hunt_crossley, implicit_stiffness,
                                      implicit_velocity, profile_slopes, transmitted)
from hapticam.errors import UsageError

KIND_KEYSWITCH = 2
MAX_KNOTS = 8

# Parameter layout (indices into the packed array)
_PRE, _MS, _KSP, _FPRE, _TRAVEL, _FH = 0, 1, 2, 3, 4, 5
_KL, _MU = 6, 7
_KBOT, _ABOT, _KTOP, _ATOP, _KC, _AC = 8, 9, 10, 11, 12, 13
_MJ, _PLAY, _FJ, _KJ, _AJ = 14, 15, 16, 17, 18
_NSTEM, _NJACK, _CLICK_V = 19, 20, 21
_STEM_S = 22
_STEM_D = _STEM_S + MAX_KNOTS
_JACK_Y = _STEM_D + MAX_KNOTS
_JACK_D = _JACK_Y + MAX_KNOTS
_STEM_M = _JACK_D + MAX_KNOTS
_JACK_M = _STEM_M + MAX_KNOTS
_NPARAM = _JACK_M + MAX_KNOTS
_N_HC = 1.5          # Hunt-Crossley exponent of the felts and plastic stops (seed 000 eq. 26)


@njit(cache=True, nogil=True)
def keyswitch_step(p, s, xp, vp, dt, obs):
    """Advance the switch by ``dt`` from the probe's state ``xp`` (m), ``vp`` (m/s) at the step's start.

    Returns the probe-stem contact force (N) transmitted over the step; ``obs`` gets the state at its start.
    State ``s = [stem, stem_v, jacket, jacket_v, clicks, click_speed, armed]`` (m, m/s, m, m/s, count,
    m/s, flag): a click is the jacket, last carried by the shoulder, striking the lip faster than
    ``click_speed_mps`` (its rebounds do not count); its speed is kept.
    Signs: stem travel and all forces on the stem positive downward (pressing).
    """
    pre, m_s, k_sp, f_pre, travel = p[_PRE], p[_MS], p[_KSP], p[_FPRE], p[_TRAVEL]
    k_l, mu = p[_KL], p[_MU]
    st, vs, y, vy = s[0], s[1], s[2], s[3]
    m_j = p[_MJ]
    play = p[_PLAY]
    obs[0] = st
    obs[1] = y
    obs[2] = s[4]
    obs[3] = s[5]
    # every force from the state at the start of the step
    f_c, k_c, c_c = hunt_crossley(xp - pre - st, vp - vs, p[_KC], p[_AC], 1.0)     # probe tip (n = 1)
    f = f_c - (f_pre + k_sp * st)                         # return spring: F = F_pre + k s
    k_imp = k_c + k_sp
    c_imp = c_c
    f_t, k_t, c_t = hunt_crossley(-st, -vs, p[_KTOP], p[_ATOP], _N_HC)   # top stop holds the preload
    f += f_t
    k_imp += k_t
    c_imp += c_t
    f_b, k_b, c_b = hunt_crossley(st - travel, vs, p[_KBOT], p[_ABOT], _N_HC)   # bottom-out
    f -= f_b
    k_imp += k_b
    c_imp += c_b
    d, d1, d2 = hermite_profile(st, p[_STEM_S:_STEM_S + MAX_KNOTS], p[_STEM_D:_STEM_D + MAX_KNOTS],
                                p[_STEM_M:_STEM_M + MAX_KNOTS], int(p[_NSTEM]))
    f -= k_l * d * d1                                     # leaf on the stem cam: dU/ds, U = k_l d^2 / 2
    k_cam = k_l * (d1 * d1 + d * d2)
    if k_cam > 0.0:
        k_imp += k_cam
    f_fric = p[_FH] + mu * k_l * abs(d)                   # housing + leaf friction (normal force k_l d)
    if m_j > 0.0:
        f_sh, k_sh, c_sh = hunt_crossley(st - y, vs - vy, p[_KJ], p[_AJ], _N_HC)          # shoulder pushes jacket
        f_lp, k_lp, c_lp = hunt_crossley(y - st - play, vy - vs, p[_KJ], p[_AJ], _N_HC)   # lip pulls jacket
        f += f_lp - f_sh
        dj, dj1, dj2 = hermite_profile(y, p[_JACK_Y:_JACK_Y + MAX_KNOTS], p[_JACK_D:_JACK_D + MAX_KNOTS],
                                         p[_JACK_M:_JACK_M + MAX_KNOTS], int(p[_NJACK]))
        fj = f_sh - f_lp - k_l * dj * dj1                 # leaf on the jacket cam: dU/dy
        kj = k_sh + k_lp
        k_cam = k_l * (dj1 * dj1 + dj * dj2)
        if k_cam > 0.0:
            kj += k_cam
        vy1 = implicit_velocity(vy, m_j, dt, fj, implicit_stiffness(kj, m_j, dt), c_sh + c_lp,
                                p[_FJ] + mu * k_l * abs(dj))
        k_imp = implicit_stiffness(k_imp + k_sh + k_lp, m_s, dt)
        v1 = implicit_velocity(vs, m_s, dt, f, k_imp, c_imp + c_sh + c_lp, f_fric)
        y1 = y + dt * vy1
        st1 = st + dt * v1
        if f_sh > 0.0:
            s[6] = 1.0                                    # the shoulder carries the jacket: a click may follow
        if s[6] > 0.0 and y - st - play <= 0.0 and y1 - st1 - play > 0.0 and vy - vs > p[_CLICK_V]:
            s[4] += 1.0                                   # jacket thrown onto the stem's lip: the click
            s[5] = vy - vs
            s[6] = 0.0                                    # its rebounds are not clicks
        s[2] = y1
        s[3] = vy1
    else:
        k_imp = implicit_stiffness(k_imp, m_s, dt)
        v1 = implicit_velocity(vs, m_s, dt, f, k_imp, c_imp, f_fric)
        st1 = st + dt * v1
    s[0] = st1
    s[1] = v1
    return transmitted(f_c, k_c, c_c, k_imp, dt, vs, v1, True)


def _knots(name: str, s: tuple, d: tuple) -> tuple[np.ndarray, np.ndarray]:
    ks = np.asarray(s, dtype=np.float64)
    kd = np.asarray(d, dtype=np.float64)
    if ks.shape != kd.shape or ks.ndim != 1 or ks.size > MAX_KNOTS:
        raise UsageError(f"{name}: positions and deflections must be equal-length lists of at most {MAX_KNOTS}")
    if not (np.all(np.isfinite(ks)) and np.all(np.isfinite(kd))):
        raise UsageError(f"{name}: knots must be finite")
    if ks.size > 1 and np.any(np.diff(ks) <= 0.0):
        raise UsageError(f"{name}: knot positions must increase")
    if np.any(kd < 0.0):
        raise UsageError(f"{name}: leaf deflections must be >= 0")
    return ks, kd


@dataclass(frozen=True)
class Keyswitch(Target):
    """A mechanical keyswitch pressed on its stem (linear, tactile or clicky, by its parameters).

    Physics
    -------
    The probe starts ``pretravel_m`` above the stem top and meets it through a stiff unilateral
    contact. The stem (mass ``m``, travel ``s`` from rest, positive down) obeys::

        m s'' = F_probe - (F_pre + k s) - k_l d d'(s) - F_bottom + F_top - Ff sign(s')   [+ jacket]

    * return spring with preload: ``F_pre + k s``; at rest the preload is held by the housing's top
      stop (a stiff Hunt-Crossley contact, seed 000 eq. 26, n = 1.5);
    * leaf spring on the stem's cam: the stem's leg imposes the leaf deflection ``d(s)`` (a monotone
      piecewise cubic through knots); the leaf's energy ``k_l d^2 / 2`` gives the axial force
      ``k_l d d'``: a rising cam resists (the tactile bump), a falling one pushes (the drop);
    * friction: housing ``F_h`` plus leaf friction ``mu k_l d`` (normal force times coefficient),
      Coulomb with stiction;
    * bottom-out: the stem meets the housing floor at ``s = travel`` (Hunt-Crossley, n = 1.5);
    * click jacket (clicky switches, ``jacket_mass_kg > 0``): a light sleeve at ``y`` carried by the
      stem with free play: the stem's shoulder pushes it down when ``s > y``, the stem's lip pulls it up
      when ``y > s + play``. The leaf rides the jacket's cam: on the press the stem pushes the jacket
      over the cam's crest (the bump), then the leaf throws the jacket ahead across the play into the
      lip (the click, counted with its impact speed) and the force drops; on the release the jacket
      stays down until the lip catches it and must be dragged back up the cam, so the release curve
      lies below the press curve (hysteresis).

    Parameters
    ----------
    pretravel_m : float
        Free probe travel before touching the stem (m).
    stem_mass_kg : float
        Stem mass (kg).
    spring_Npm, preload_N : float
        Return spring rate (N/m) and preload at rest (N).
    travel_m : float
        Stem travel to bottom-out (m).
    housing_friction_N : float
        Coulomb friction of the stem in the housing (N).
    leaf_Npm, leaf_mu : float
        Leaf spring stiffness (N/m) and its friction coefficient.
    stem_cam_s_m, stem_cam_d_m : tuple of float
        Knots of the leaf deflection imposed by the stem, ``d(s)`` (m); empty for no leaf on the stem.
    jacket_mass_kg, jacket_play_m, jacket_friction_N : float
        Click jacket mass (0: no jacket), free play between shoulder and lip (m), housing friction (N).
    jacket_cam_y_m, jacket_cam_d_m : tuple of float
        Knots of the leaf deflection imposed by the jacket, ``d(y)`` (m).
    bottom_k, bottom_alpha, top_k, top_alpha : float
        Hunt-Crossley stiffness (N/m^1.5) and damping factor ``alpha = b/k`` (s/m) of the floor and top stop.
    contact_Npm, contact_alpha : float
        Probe-tip contact: linear Hunt-Crossley stiffness (N/m) and ``alpha`` (s/m).
    jacket_k, jacket_alpha : float
        Shoulder and lip contacts (N/m^1.5, s/m).
    click_speed_mps : float
        Lowest jacket-on-lip impact speed counted as a click (m/s); slower touches and rebounds are not.
    overdrive_m : float
        How far past the first bottom-out contact the default excitation presses (m).
    """

    pretravel_m: float = 0.2e-3
    stem_mass_kg: float = 0.5e-3
    spring_Npm: float = 70.0
    preload_N: float = 0.3
    travel_m: float = 3.9e-3
    housing_friction_N: float = 0.005
    leaf_Npm: float = 1000.0
    leaf_mu: float = 0.2
    stem_cam_s_m: tuple = ()
    stem_cam_d_m: tuple = ()
    jacket_mass_kg: float = 0.0
    jacket_play_m: float = 1.0e-3
    jacket_friction_N: float = 0.003
    jacket_cam_y_m: tuple = ()
    jacket_cam_d_m: tuple = ()
    bottom_k: float = 2.0e6
    bottom_alpha: float = 2.0
    top_k: float = 1.0e7
    top_alpha: float = 2.0
    contact_Npm: float = 2.0e5
    contact_alpha: float = 5.0
    jacket_k: float = 1.0e7
    jacket_alpha: float = 2.0
    click_speed_mps: float = 0.5
    overdrive_m: float = 0.05e-3

    kind_code: ClassVar[int] = KIND_KEYSWITCH
    observables: ClassVar[tuple[str, str, str, str]] = ("stem_m", "jacket_m", "clicks", "click_speed_mps")
    _SUMMARIES: ClassVar[dict[str, str]] = {
        "linear-switch": "linear keyswitch like Cherry MX Red: preloaded spring, leaf friction, bottom-out",
        "tactile-switch": "tactile keyswitch like Gateron Brown: leaf cam bump and drop, friction, bottom-out",
        "clicky-switch": "clicky keyswitch like Cherry MX Blue: click jacket with hysteresis, bottom-out",
    }

    @property
    def summary(self) -> str:  # type: ignore[override]
        """One-line description (by preset name)."""
        return self._SUMMARIES.get(self.name, "mechanical keyswitch: stem, preloaded spring, leaf cam, "
                                              "friction, bottom-out")

    def __post_init__(self) -> None:
        for name in ("stem_mass_kg", "travel_m", "bottom_k", "top_k", "contact_Npm", "jacket_k"):
            if not getattr(self, name) > 0.0:
                raise UsageError(f"{name}: must be > 0")
        for name in ("pretravel_m", "spring_Npm", "preload_N", "housing_friction_N", "leaf_Npm", "leaf_mu",
                     "jacket_mass_kg", "jacket_play_m", "jacket_friction_N", "bottom_alpha", "top_alpha",
                     "contact_alpha", "jacket_alpha", "click_speed_mps", "overdrive_m"):
            if not getattr(self, name) >= 0.0:
                raise UsageError(f"{name}: must be >= 0")
        _knots("stem cam", self.stem_cam_s_m, self.stem_cam_d_m)
        _knots("jacket cam", self.jacket_cam_y_m, self.jacket_cam_d_m)

    def params_array(self) -> np.ndarray:
        p = np.zeros(_NPARAM, dtype=np.float64)
        p[_PRE], p[_MS], p[_KSP], p[_FPRE] = self.pretravel_m, self.stem_mass_kg, self.spring_Npm, self.preload_N
        p[_TRAVEL], p[_FH], p[_KL], p[_MU] = self.travel_m, self.housing_friction_N, self.leaf_Npm, self.leaf_mu
        p[_KBOT], p[_ABOT], p[_KTOP], p[_ATOP] = self.bottom_k, self.bottom_alpha, self.top_k, self.top_alpha
        p[_KC], p[_AC] = self.contact_Npm, self.contact_alpha
        p[_MJ], p[_PLAY], p[_FJ] = self.jacket_mass_kg, self.jacket_play_m, self.jacket_friction_N
        p[_KJ], p[_AJ], p[_CLICK_V] = self.jacket_k, self.jacket_alpha, self.click_speed_mps
        ks, kd = _knots("stem cam", self.stem_cam_s_m, self.stem_cam_d_m)
        p[_NSTEM] = ks.size
        p[_STEM_S:_STEM_S + ks.size] = ks
        p[_STEM_D:_STEM_D + ks.size] = kd
        p[_STEM_M:_STEM_M + ks.size] = profile_slopes(ks, kd)
        ky, kyd = _knots("jacket cam", self.jacket_cam_y_m, self.jacket_cam_d_m)
        p[_NJACK] = ky.size
        p[_JACK_Y:_JACK_Y + ky.size] = ky
        p[_JACK_D:_JACK_D + ky.size] = kyd
        p[_JACK_M:_JACK_M + ky.size] = profile_slopes(ky, kyd)
        return p

    def rest_stem_m(self) -> float:
        """Stem position at rest (m): slightly above 0, where the top stop holds the preload."""
        return -(self.preload_N / self.top_k) ** (1.0 / _N_HC)      # k_top (-s)^1.5 = F_pre

    def initial_state(self) -> np.ndarray:
        s0 = self.rest_stem_m()
        return np.array([s0, 0.0, s0, 0.0, 0.0, 0.0, 0.0], dtype=np.float64)

    def probe_range_m(self) -> tuple[float, float]:
        """A full press: from the start to ``overdrive_m`` past the bottom-out contact (m)."""
        return (0.0, self.pretravel_m + self.travel_m + self.overdrive_m)

    def quasi_static_force(self, stem_m: np.ndarray, direction: int) -> np.ndarray:
        """NumPy reference of the force (N) on a stem held at ``stem_m`` moving slowly in ``direction``.

        ``F = F_pre + k s + k_l d d' + direction (F_h + mu k_l d)`` for ``0 <= s < travel`` (no jacket).
        """
        s = np.asarray(stem_m, dtype=np.float64)
        ks, kd = _knots("stem cam", self.stem_cam_s_m, self.stem_cam_d_m)
        d, dd = hermite_profile_np(s, ks, kd)
        return (self.preload_N + self.spring_Npm * s + self.leaf_Npm * d * dd
                + direction * (self.housing_friction_N + self.leaf_mu * self.leaf_Npm * d))

    # presets -------------------------------------------------------------------------------------

    @classmethod
    def linear(cls, **changes: Any) -> "Keyswitch":
        """Linear switch resembling Cherry MX Red: 0.3 N preload, leaf friction until actuation."""
        # fitted to Cherry-MX-Red.csv (quasi-static press and release, RMS 0.006 N): the leaf bears on a
        # tapered stem leg, pressing the stem with falling force (k_l d d' < 0) and friction until 2 mm
        base = cls(name="linear-switch", pretravel_m=0.118e-3, preload_N=0.318, spring_Npm=74.1,
                   travel_m=3.94e-3, housing_friction_N=0.0022, leaf_Npm=1000.0, leaf_mu=0.146,
                   stem_cam_s_m=(0.0, 0.292e-3, 1.353e-3, 2.044e-3),
                   stem_cam_d_m=(0.377e-3, 0.345e-3, 0.177e-3, 0.0))
        return replace(base, **changes) if changes else base

    @classmethod
    def tactile(cls, **changes: Any) -> "Keyswitch":
        """Tactile switch resembling Gateron Brown: leaf bump near 1.2 mm of stem travel, then a drop."""
        # fitted to Gateron-Brown.csv (quasi-static press and release, RMS 0.007 N): the stem's leg lifts
        # the leaf by 0.085 mm between 1.1 and 1.7 mm (the bump), then lets it fall off by 2.8 mm (the drop)
        base = cls(name="tactile-switch", pretravel_m=0.539e-3, preload_N=0.2507, spring_Npm=67.0,
                   travel_m=3.875e-3, housing_friction_N=0.0043, leaf_Npm=1000.0, leaf_mu=0.0706,
                   stem_cam_s_m=(0.0, 1.125e-3, 1.422e-3, 1.697e-3, 1.965e-3, 2.795e-3),
                   stem_cam_d_m=(0.315e-3, 0.247e-3, 0.309e-3, 0.332e-3, 0.308e-3, 0.0))
        return replace(base, **changes) if changes else base

    @classmethod
    def clicky(cls, **changes: Any) -> "Keyswitch":
        """Clicky switch resembling Cherry MX Blue: click jacket with hysteresis."""
        # fitted to Cherry-MX-Blue-RGB.csv (simulated slow press and release, RMS 0.011 N)
        base = cls(name="clicky-switch", pretravel_m=0.158e-3, preload_N=0.3598, spring_Npm=71.3,
                   travel_m=3.81e-3, housing_friction_N=0.002, leaf_Npm=1760.0, leaf_mu=0.0022,
                   jacket_mass_kg=0.1e-3, jacket_play_m=1.332e-3, jacket_friction_N=0.002,
                   jacket_cam_y_m=(1.474e-3, 1.903e-3, 2.167e-3, 2.441e-3, 3.203e-3),
                   jacket_cam_d_m=(0.543e-3, 0.589e-3, 0.573e-3, 0.530e-3, 0.371e-3))
        return replace(base, **changes) if changes else base

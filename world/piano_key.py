"""A piano key with its action (key, jack, hammer, let-off, string, keybed) as a simulated target.

After Gillespie's virtual piano action (seed 000 ref. [3]) reduced, as seed 000 section 1 puts it, to
"the hammer resting or bouncing on a lever-like paddle": a key-press accelerates the hammer toward the
string, the let-off releases it into free flight before it meets the string, and after the strike it
lands back on the key. Contacts are Hunt-Crossley felts (seed 000 eq. 26) with n = 1.5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from hapticam.world.excitation_parts import FromParts
from hapticam.world.physics import Target, hunt_crossley, implicit_stiffness, implicit_velocity, transmitted
from hapticam.errors import UsageError
from hapticam.models.hybrid_key.model import HybridKey, hybrid_key_force
from hapticam.models.hybrid_key.layout import S_FLAGS, S_W, S_XK, S_Y

KIND_PIANO_KEY = 3

#: Bits of the ``flags`` observable.
FLAG_ENGAGED = 1       # jack under the hammer (not escaped)
FLAG_JACK = 2          # jack-hammer knuckle contact carries force
FLAG_STRING = 4        # hammer felt on the string
FLAG_BACKCHECK = 8     # hammer caught by the backcheck
FLAG_RAIL = 16         # hammer on its rest rail
FLAG_KEYBED = 32       # key front on the keybed felt
FLAG_CONTACTS = FLAG_JACK | FLAG_STRING | FLAG_BACKCHECK | FLAG_RAIL

(_PRE, _MK, _BAL, _R, _MH, _GAP, _DIP, _LETOFF, _BUTTON, _KJS, _RESET, _STRING, _BC, _FK, _G,
 _KF, _AF, _KKN, _AKN, _KBC, _ABC, _KRAIL, _ARAIL, _KKB, _AKB, _KBR, _ABR, _KPAD, _APAD) = range(29)
_NPARAM = 29
_N_FELT = 1.5        # Hunt-Crossley exponent of every felt (seed 000 eq. 26)


@njit(cache=True, nogil=True)
def piano_key_step(p, s, xp, vp, dt, obs):
    """Advance key and hammer by ``dt`` from the probe's state ``xp`` (m), ``vp`` (m/s) at the step's start.

    Returns the pad force (N) transmitted over the step; ``obs`` gets the state at its start (key, hammer,
    hammer speed, contact flags). State ``s = [q, q', h, h', engaged, strikes, strike_speed]``:
    key-front travel (m, down positive), hammer travel toward the string (m, up positive), jack
    engaged (1/0), string strikes counted and the last impact speed (m/s).
    """
    r = p[_R]
    m_h = p[_MH]
    g = p[_G]
    q, vq, h, vh = s[0], s[1], s[2], s[3]
    engaged = s[4] > 0.5
    flags = FLAG_ENGAGED if engaged else 0
    # every force from the state at the start of the step; forces on the key front positive down
    f_pad, k_pad, c_pad = hunt_crossley(xp - p[_PRE] - q, vp - vq, p[_KPAD], p[_APAD], 1.0)
    f_j, k_j, c_j = 0.0, 0.0, 0.0
    if engaged:                                                    # jack top at r q - gap lifts the hammer
        f_j, k_j, c_j = hunt_crossley(r * q - p[_GAP] - h, r * vq - vh, p[_KKN], p[_AKN], _N_FELT)
    f_bc, k_bc, c_bc = hunt_crossley(r * q - p[_BC] - h, r * vq - vh, p[_KBC], p[_ABC], _N_FELT)
    f_kb, k_kb, c_kb = hunt_crossley(q - p[_DIP], vq, p[_KKB], p[_AKB], _N_FELT)       # keybed felt
    f_br, k_br, c_br = hunt_crossley(-q, -vq, p[_KBR], p[_ABR], _N_FELT)                # back-rail felt (rest)
    f_rl, k_rl, c_rl = hunt_crossley(-h, -vh, p[_KRAIL], p[_ARAIL], _N_FELT)           # hammer rest rail
    f_st, k_st, c_st = hunt_crossley(h - p[_STRING], vh, p[_KF], p[_AF], _N_FELT)      # felt on the string
    f_js, k_js = 0.0, 0.0
    if q > p[_BUTTON]:                                             # jack toe on the let-off button
        f_js = p[_KJS] * (q - p[_BUTTON])
        k_js = p[_KJS]
    # lever: the key front feels r times the knuckle and backcheck forces
    f = f_pad - p[_BAL] - r * (f_j + f_bc) - f_js - f_kb + f_br
    k_imp = implicit_stiffness(k_pad + r * r * (k_j + k_bc) + k_js + k_kb + k_br, p[_MK], dt)
    c_imp = c_pad + r * r * (c_j + c_bc) + c_kb + c_br
    vq1 = implicit_velocity(vq, p[_MK], dt, f, k_imp, c_imp, p[_FK])
    fh = f_j + f_bc + f_rl - f_st - m_h * g                        # m_h h'' = knuckle + backcheck + rail - string - m_h g
    vh1 = implicit_velocity(vh, m_h, dt, fh, implicit_stiffness(k_j + k_bc + k_rl + k_st, m_h, dt),
                            c_j + c_bc + c_rl + c_st, 0.0)
    q1 = q + dt * vq1
    h1 = h + dt * vh1 + 0.5 * g * dt * dt          # exact for gravity alone: h + v dt - g dt^2 / 2
    if f_j > 0.0:
        flags |= FLAG_JACK
    if f_st > 0.0:
        flags |= FLAG_STRING
    if f_bc > 0.0:
        flags |= FLAG_BACKCHECK
    if f_rl > 0.0:
        flags |= FLAG_RAIL
    if f_kb > 0.0:
        flags |= FLAG_KEYBED
    obs[0] = q
    obs[1] = h
    obs[2] = vh
    obs[3] = flags
    if h <= p[_STRING] and h1 > p[_STRING]:
        s[5] += 1.0
        s[6] = vh
    # discrete events: escapement at let-off, jack reset near rest (guards checked once per step)
    if engaged and q1 >= p[_LETOFF]:
        engaged = False
    elif (not engaged) and q1 <= p[_RESET] and r * q1 - p[_GAP] <= h1:
        engaged = True
    s[0] = q1
    s[1] = vq1
    s[2] = h1
    s[3] = vh1
    s[4] = 1.0 if engaged else 0.0
    return transmitted(f_pad, k_pad, c_pad, k_imp, dt, vq, vq1, True)


@dataclass(frozen=True)
class PianoKey(Target):
    """A piano key and a simplified action pressed at the key front.

    Physics
    -------
    Two bodies. The key, a lever on the balance rail, is described by its front travel ``q`` (down
    positive) and the mass ``m_k`` equivalent at the front; the hammer by its travel ``h`` toward the
    string (up positive) and equivalent mass ``m_h``. The jack on the key lifts the hammer at
    ``r q - gap`` (lever ratio ``r``)::

        m_k q'' = F_probe - F_bal - r (F_knuckle + F_backcheck) - F_button - F_keybed + F_backrail - Ff sign(q')
        m_h h'' = F_knuckle + F_backcheck + F_rail - F_string - m_h g

    * every felt (knuckle on the jack, backcheck, hammer rail, hammer on the string, keybed, back rail)
      is a Hunt-Crossley contact ``F = k rho^1.5 + alpha k rho^1.5 rho'`` (seed 000 eq. 26);
    * let-off: when the key reaches ``letoff_m`` the jack escapes (the knuckle contact is removed),
      the hammer flies free under gravity, strikes the string (if thrown fast enough: a slow press
      lets the hammer fall back below the string) and lands back on the backcheck at
      ``r q - backcheck_m``. Before let-off the jack's toe compresses against the let-off button
      (``button_m`` onward, spring ``jack_spring_Npm`` at the key front): the let-off bump;
    * the jack resets under the hammer once the key has returned above ``reset_m`` and the jack top is
      below the hammer;
    * the string is a rigid stop at ``h = string_m`` behind the hammer felt; key friction (balance and
      front rail pins) is Coulomb at the front; the hammer flange is frictionless.

    The hammer is integrated with an update that is exact for gravity alone, so its free flight is
    the closed-form parabola ``h0 + v0 t - g t^2 / 2``; events (escapement, reset) are detected at the
    internal step.

    Parameters
    ----------
    pretravel_m : float
        Probe travel before touching the key front (m).
    key_mass_kg, hammer_mass_kg : float
        Equivalent masses at the key front and at the hammer (kg).
    balance_N : float
        Net upward force of the key and wippen weights at the key front at rest (N).
    ratio : float
        Hammer travel per key-front travel at the jack.
    jack_gap_m : float
        Lost motion between jack and hammer at rest (hammer travel, m).
    dip_m, letoff_m, button_m, reset_m : float
        Key-front travel to the keybed, to let-off, to the let-off button and for the jack reset (m).
    jack_spring_Npm : float
        Jack spring against the let-off button, at the key front (N/m).
    string_m, backcheck_m : float
        Hammer travel to the string (m); the backcheck catches the hammer at ``ratio q - backcheck_m``.
    key_friction_N : float
        Coulomb friction at the key front (N).
    gravity_mps2 : float
        Gravity (m/s^2).
    felt_k, felt_alpha : float
        Hammer felt on the string, Hunt-Crossley n = 1.5 (N/m^1.5, s/m).
    knuckle_k, knuckle_alpha, backcheck_k, backcheck_alpha, rail_k, rail_alpha, keybed_k, keybed_alpha,
    backrail_k, backrail_alpha : float
        The other felts (N/m^1.5, s/m).
    pad_Npm, pad_alpha : float
        Probe pad on the key front: linear Hunt-Crossley (N/m, s/m).
    overdrive_m : float
        How far into the keybed felt the default excitation presses (m).
    """

    pretravel_m: float = 0.2e-3
    key_mass_kg: float = 0.06
    hammer_mass_kg: float = 0.007
    balance_N: float = 0.18
    ratio: float = 5.0
    jack_gap_m: float = 0.5e-3
    dip_m: float = 10.0e-3
    letoff_m: float = 8.8e-3
    button_m: float = 8.2e-3
    jack_spring_Npm: float = 300.0
    reset_m: float = 1.0e-3
    string_m: float = 45.5e-3
    backcheck_m: float = 12.0e-3
    key_friction_N: float = 0.10
    gravity_mps2: float = 9.81
    felt_k: float = 4.0e6
    felt_alpha: float = 0.2
    knuckle_k: float = 2.0e6
    knuckle_alpha: float = 0.5
    backcheck_k: float = 1.0e6
    backcheck_alpha: float = 3.0
    rail_k: float = 1.0e6
    rail_alpha: float = 3.0
    keybed_k: float = 2.0e6
    keybed_alpha: float = 2.0
    backrail_k: float = 2.0e6
    backrail_alpha: float = 2.0
    pad_Npm: float = 1.0e5
    pad_alpha: float = 5.0
    overdrive_m: float = 0.1e-3

    kind_code: ClassVar[int] = KIND_PIANO_KEY
    observables: ClassVar[tuple[str, str, str, str]] = ("key_m", "hammer_m", "hammer_mps", "flags")
    summary: ClassVar[str] = ("piano key and action: key lever, jack, hammer with Hunt-Crossley n = 1.5 felt, "
                              "let-off, string, backcheck, keybed")

    def __post_init__(self) -> None:
        for name in ("key_mass_kg", "hammer_mass_kg", "ratio", "dip_m", "letoff_m", "string_m", "felt_k",
                     "knuckle_k", "backcheck_k", "rail_k", "keybed_k", "backrail_k", "pad_Npm"):
            if not getattr(self, name) > 0.0:
                raise UsageError(f"{name}: must be > 0")
        for name in ("pretravel_m", "jack_gap_m", "button_m", "reset_m", "jack_spring_Npm", "backcheck_m",
                     "key_friction_N", "gravity_mps2", "felt_alpha", "knuckle_alpha", "backcheck_alpha",
                     "rail_alpha", "keybed_alpha", "backrail_alpha", "pad_alpha", "overdrive_m"):
            if not getattr(self, name) >= 0.0:
                raise UsageError(f"{name}: must be >= 0")
        if not np.isfinite(self.balance_N):
            raise UsageError("balance_N: must be finite")
        if not self.reset_m < self.letoff_m < self.dip_m:
            raise UsageError("need reset_m < letoff_m < dip_m")
        if not self.ratio * self.letoff_m - self.jack_gap_m < self.string_m:
            raise UsageError("let-off must release the hammer below the string: ratio * letoff_m - jack_gap_m "
                             "< string_m")

    def params_array(self) -> np.ndarray:
        return np.array([self.pretravel_m, self.key_mass_kg, self.balance_N, self.ratio, self.hammer_mass_kg,
                         self.jack_gap_m, self.dip_m, self.letoff_m, self.button_m, self.jack_spring_Npm,
                         self.reset_m, self.string_m, self.backcheck_m, self.key_friction_N, self.gravity_mps2,
                         self.felt_k, self.felt_alpha, self.knuckle_k, self.knuckle_alpha, self.backcheck_k,
                         self.backcheck_alpha, self.rail_k, self.rail_alpha, self.keybed_k, self.keybed_alpha,
                         self.backrail_k, self.backrail_alpha, self.pad_Npm, self.pad_alpha], dtype=np.float64)

    def initial_state(self) -> np.ndarray:
        q0 = -(max(self.balance_N, 0.0) / self.backrail_k) ** (1.0 / 1.5)                 # back rail holds F_bal
        h0 = -(self.hammer_mass_kg * self.gravity_mps2 / self.rail_k) ** (1.0 / 1.5)      # hammer on its rail
        return np.array([q0, 0.0, h0, 0.0, 1.0, 0.0, 0.0], dtype=np.float64)

    def probe_tip(self) -> dict:
        """The probe's pad on the key front: one-sided linear Hunt-Crossley ``k x (1 + alpha x')``."""
        return {"law": "hunt-crossley", "k_Npm": self.pad_Npm, "alpha_spm": self.pad_alpha, "one_sided": True}

    def probe_range_m(self) -> tuple[float, float]:
        """From the start to ``overdrive_m`` into the keybed felt (m)."""
        return (0.0, self.pretravel_m + self.dip_m + self.overdrive_m)

    def letoff_hammer_m(self) -> float:
        """Hammer height when the jack escapes on a slow press (m): ``ratio letoff - gap``."""
        return self.ratio * self.letoff_m - self.jack_gap_m


# -- a hybrid-key target: the hybrid-key model's physics with known parameters ---------------------------
KIND_HYBRID_KEY_TARGET = 11
_HK_OBS_KEY, _HK_OBS_FLAGS = 0, 3


@njit(cache=True, nogil=True)
def hybrid_key_target_step(p, s, xp, vp, dt, obs):
    """Advance the hybrid key target by ``dt`` (s) with the probe tip at ``xp`` (m), ``vp`` (m/s).

    ``p`` is the hybrid key's parameter block with the tip as its coupling (the key a body of its own,
    :mod:`hapticam.models.hybrid_key.coupling`); returns the tip force (N) over the step; ``obs`` gets the
    key position, hammer height and velocity and the hammer's flags."""
    f = hybrid_key_force(p, s, xp, vp, 0.0, dt)
    obs[_HK_OBS_KEY] = s[S_XK]
    obs[1] = s[S_Y]
    obs[2] = s[S_W]
    obs[_HK_OBS_FLAGS] = s[S_FLAGS]
    return f


@dataclass(frozen=True)
class HybridKeyTarget(Target):
    """A piano-like key whose physics is the ``hybrid-key`` model's with known parameters (seed 000
    section 1: the hammer on a lever-like paddle), for testing ``hapticam identify hybrid-key``.

    Physics: the probe tip is bolted to the key front through a stiff pad (``pad_Npm``, ``pad_Nspm``), or, with
    ``pad_alpha_spm``, the key rests on it, a one-sided pad it can leave: the key is a body of mass
    ``key_mass_kg`` pulled (or pushed) by the tip, and the hammer, let-off, backcheck, string and keybed
    follow the hybrid key's equations (:mod:`hapticam.models.hybrid_key.model`), integrated at the probe's
    internal step with the key's own sub-steps. The parameters are the model's (SI units; the contact is
    Hunt-Crossley ``k rho^n + b rho^n rho'``, seed 000 eq. 26); :meth:`model` gives the model itself
    (key driven directly), the ground truth of an identification.
    """

    key_mass_kg: float = 0.03
    return_spring_Npm: float = 10.0
    preload_N: float = 0.05
    hammer_mass_kg: float = 0.010
    lever_ratio: float = 5.0
    contact_k_Npm: float = 5.0e6
    contact_b_Nspm: float = 1.5e7
    contact_n: float = 1.5
    gravity_mps2: float = 9.81
    let_off_m: float = 0.0085
    check_drop_m: float = 0.020
    repetition_m: float = 0.004
    string_height_m: float = 0.045
    string_restitution: float = 0.4
    keybed_m: float = 0.010
    keybed_k_Npm: float = 1.0e5
    keybed_b_Nspm: float = 100.0
    pad_Npm: float = 1.0e7
    pad_Nspm: float = 1000.0
    overdrive_m: float = 0.3e-3
    #: None: the tip is bolted to the key (``pad_Npm``, ``pad_Nspm``). A number: the key rests on the tip, a
    #: one-sided linear Hunt-Crossley pad ``pad_Npm x (1 + alpha x')`` with this alpha (s/m) that the key can
    #: leave, as on the piano key (``pad_Nspm`` is then not used)
    pad_alpha_spm: float | None = None

    kind_code: ClassVar[int] = KIND_HYBRID_KEY_TARGET
    observables: ClassVar[tuple[str, str, str, str]] = ("key_m", "hammer_m", "hammer_mps", "flags")
    summary: ClassVar[str] = ("hybrid-key model with known parameters (key, jack, let-off, backcheck, string, "
                              "keybed; Hunt-Crossley felt), tip bolted to the key")

    def __post_init__(self) -> None:
        if not self.pad_Npm > 0.0 or not self.pad_Nspm >= 0.0 or not self.overdrive_m >= 0.0:
            raise UsageError("pad_Npm must be > 0, pad_Nspm and overdrive_m >= 0")
        if self.pad_alpha_spm is not None and not (math.isfinite(self.pad_alpha_spm) and self.pad_alpha_spm >= 0.0):
            raise UsageError("pad_alpha_spm must be None or a finite number >= 0")
        try:
            self.model(coupled=True)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    def model(self, coupled: bool = False) -> HybridKey:
        """The hybrid key with these parameters; ``coupled``: the probe tip's pad as its coupling."""
        return HybridKey(key_mass_kg=self.key_mass_kg, return_spring_Npm=self.return_spring_Npm,
                         preload_N=self.preload_N, hammer_mass_kg=self.hammer_mass_kg, lever_ratio=self.lever_ratio,
                         contact={"law": "hunt-crossley", "k_Npm": self.contact_k_Npm, "b_Nspm": self.contact_b_Nspm,
                                  "n": self.contact_n}, gravity_mps2=self.gravity_mps2, let_off_m=self.let_off_m,
                         check_drop_m=self.check_drop_m, repetition_m=self.repetition_m,
                         string_height_m=self.string_height_m, string_restitution=self.string_restitution,
                         keybed_m=self.keybed_m, keybed_k_Npm=self.keybed_k_Npm, keybed_b_Nspm=self.keybed_b_Nspm,
                         coupling_k_Npm=self.pad_Npm if coupled else None,
                         coupling_b_Nspm=self.pad_Nspm if coupled and self.pad_alpha_spm is None else 0.0,
                         coupling_pad_alpha_spm=self.pad_alpha_spm if coupled else None)

    def probe_tip(self) -> dict | None:
        """The one-sided pad the key rests on (``pad_alpha_spm`` set), or None: the tip is bolted."""
        if self.pad_alpha_spm is None:
            return None
        return {"law": "hunt-crossley", "k_Npm": self.pad_Npm, "alpha_spm": self.pad_alpha_spm, "one_sided": True}

    def params_array(self) -> np.ndarray:
        return self.model(coupled=True).params_block()

    def initial_state(self) -> np.ndarray:
        return self.model(coupled=True).initial_state()

    def probe_range_m(self) -> tuple[float, float]:
        """From the key at rest to ``overdrive_m`` into the keybed (m)."""
        return (0.0, self.keybed_m + self.overdrive_m)


@dataclass(frozen=True)
class KeyStrokes(FromParts):
    """Strokes at graded speeds: from ``lo_m`` down to ``hi_m`` by a raised cosine lasting each of
    ``press_s`` in turn, held ``hold_s``, back up by a raised cosine lasting ``release_s``, then at rest
    for ``rest_s``. A press lasting ``T`` over a depth ``D`` peaks at ``pi D / (2 T)`` (m/s), so the
    hammer leaves the jack at let-off at graded speeds (its flight, the string, the landings)."""

    lo_m: float = 0.0
    hi_m: float = 0.0103
    press_s: tuple = (0.2, 0.1, 0.05)
    hold_s: float = 0.3
    release_s: float = 0.15
    rest_s: float = 0.2

    def __post_init__(self) -> None:
        values = (self.lo_m, self.hi_m, self.hold_s, self.release_s, self.rest_s, *self.press_s)
        if not self.press_s or not all(np.isfinite(values)) or min(self.hold_s, self.release_s, self.rest_s,
                                                                      *self.press_s) <= 0.0:
            raise UsageError("strokes: finite positions, and press, hold, release and rest times > 0")
        object.__setattr__(self, "press_s", tuple(float(p) for p in self.press_s))

    @property
    def duration_s(self) -> float:
        """Total length (s)."""
        return sum(self.press_s) + len(self.press_s) * (self.hold_s + self.release_s + self.rest_s) + self.rest_s

    def _parts(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d = self.hi_m - self.lo_m
        x, v, a = np.full_like(t, self.lo_m), np.zeros_like(t), np.zeros_like(t)
        t0 = self.rest_s
        for press in self.press_s:
            for start, length, sign in ((t0, press, 1.0), (t0 + press + self.hold_s, self.release_s, -1.0)):
                u = np.clip((t - start) / length, 0.0, 1.0)
                inside = (t > start) & (t < start + length)
                x += sign * d * 0.5 * (1.0 - np.cos(np.pi * u))       # raised cosine (1 - cos(pi u)) / 2
                v += np.where(inside, sign * d * 0.5 * np.pi * np.sin(np.pi * u) / length, 0.0)
                a += np.where(inside, sign * d * 0.5 * np.pi ** 2 * np.cos(np.pi * u) / length ** 2, 0.0)
            t0 += press + self.hold_s + self.release_s + self.rest_s
        return x, v, a

    def metadata(self) -> dict:
        """Parameters recorded in the capture."""
        return {"kind": "strokes", "lo_m": self.lo_m, "hi_m": self.hi_m, "press_s": list(self.press_s),
                "hold_s": self.hold_s, "release_s": self.release_s, "rest_s": self.rest_s,
                "duration_s": self.duration_s}

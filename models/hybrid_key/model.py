"""The hybrid key/hammer model: a piano-like key whose hammer is driven, escapes, flies and lands.

A simplified piano action after seed 000 section 1 ("the bouncing ball is actually inspired by the piano
action"): the hammer rides on a lever-like paddle (the key) and is a hybrid dynamical system with modes,
guards and resets (seed 000 eqs. 1-5).

Physics
-------
The user moves the key: ``x`` (m, +x pressing down). The key has mass ``m_k``, a return spring ``k_r``
with preload ``F_p``, and a one-sided keybed stop at ``x_kb``. Through the lever ratio ``r`` the key's
drive point rises as the key goes down; the hammer (mass ``m_h``, height ``y`` (m, up), gravity ``g``)
sits on that drive point (the jack), at height ``s = r x``.

Escapement (let-off, backcheck, repetition), a simple model of a grand action: when the key crosses the
let-off point ``x_l`` going down, the jack escapes and the hammer loses it: the drive point drops by the
check drop ``d_c`` to the backcheck. The hammer leaves the key with the velocity it had, flies (to the
string, if fast enough), falls back and lands on the backcheck, which moves with the key (the landing is
felt through the lever). While escaped, the drive point is::

    s(x) = r x - d_c clip((x - x_r) / (x_l - x_r), 0, 1)

so as the key comes back up from ``x_l`` to the repetition point ``x_r`` the drop closes (the repetition
spring lifts the hammer back onto the jack); once ``x <= x_r`` the jack is back (the escaped latch, flag
bit 2, clears) and ``s = r x`` again, continuously. Pressing again from between ``x_r`` and ``x_l``
drives the hammer through the backcheck without a new escapement. Validation keeps ``d_c`` no larger
than ``r (x_l - x_r)`` (the drive point never moves against the key) and the string above the let-off
height ``r x_l`` and above the backcheck at the keybed ``r x_kb - d_c``, so the key cannot pinch the
hammer against the string.

Hammer rail (``hammer_rail``, :mod:`hapticam.models.hybrid_key.geometry`): as in a grand action, the
hammer rests on a fixed rail at its rest height whenever the jack or the backcheck is below it. The
jack lifts it after the key's lost motion ``x_j`` (``jack_pickup_m``), ``s = max(r (x - x_j), 0)``; once
escaped the backcheck keeps the whole drop, ``s = max(r (x - x_j) - d_c, 0)``, so a slow release
carries the hammer's weight down to ``x_j + d_c / r`` and none below it, and the jack slips back under
the hammer at ``x_r <= x_j``. The rail takes the hammer's landings there (``ds/dx = 0``: the key feels
none of them). With a rail the key's surface may lie at ``touch_m`` on the handle's axis: above it
(``x < touch_m``) nothing touches the key and the force is 0.

Modes and resets (seed 000 eqs. 1-5):

- flight: ``y'' = -g``, integrated in closed form (a parabola). Guards: landing on the drive point
  ``y - s(t) = 0`` and reaching the string ``y = y_s``, both solved exactly (the drive point is a
  quadratic in time within an interval, so each guard is a quadratic in time).
- contact, Hunt-Crossley law (seed 000 eq. 26 with penetration ``rho = s - y > 0``)::

      F_c = k rho^n + b rho^n rho_dot,   clamped to F_c >= 0 (never tensile)
      m_h y'' = F_c - m_h g

  integrated with RK4 on fixed sub-steps (``substep_s``, at most 50 us, smaller for stiff contacts) on a
  grid aligned with the tick; lift-off (``rho`` crossing 0) is located inside the sub-step on the cubic
  Hermite interpolant of ``y`` and the sub-step is redone up to the crossing.
- contact, rigid law: the hammer moves with the drive point; the contact force is
  ``m_h (g + s_ddot)`` and the guard is its sign: the hammer lifts off where the drive point
  accelerates downward faster than g. Where the drive point's velocity jumps (at a let-off or
  repetition crossing, and by a third difference of the key samples at tick boundaries) the hammer
  follows unless the mean contact force over the following interval would be tensile. Landing from
  flight resets the relative velocity ``y_dot - s_dot`` to ``-e`` times itself (seed 000 section 5,
  coefficient of restitution); a landing whose rebound speed would be below ``CAPTURE_SPEED_MPS`` is
  plastic (no Zeno bouncing).
- string hit: ``y_dot+ = -e_s y_dot-`` at ``y = y_s``.

Key motion inside a tick: the quadratic through the last three key samples (the previous tick's
mean velocity and length are kept in the state), so the drive point's velocity is continuous at tick
boundaries up to a third difference of the samples. A tick in which that quadratic turns (a reversal,
or an abrupt stop, where it leaves the range between the tick's two samples by at most
|d1 - d2| dt / 8 for mean velocities d1, d2 of two equal ticks) is split at the turning point into two
monotone pieces. Every event
(landing, lift-off, string hit, let-off and repetition crossings) is located at its time inside the
tick, not at the tick boundary; flight events are exact roots of quadratics, Hunt-Crossley lift-off
is located on the sub-step's cubic Hermite interpolant (tests compare against scipy references with
event location, error < 1e-6 s).

The force returned is the force the user applies to the key (docs/architecture.md, section Conventions: sign)::

    F = m_k a + k_r x + F_p + F_kb(x, v) + (ds/dx) * Fbar_c

where ``F_kb = max(0, k_kb (x - x_kb) + b_kb v)`` for ``x > x_kb`` (seed 004 eq. 2.1, one-sided) and
``Fbar_c`` is the key-hammer contact impulse over the tick divided by ``dt`` (impact impulses of the rigid
law included), weighted by the lever ratio ``ds/dx`` of the drive point (``r``, or
``r - d_c / (x_l - x_r)`` while escaped between the repetition and let-off points; on a key simulated
behind a virtual coupling that check follows the handle, :mod:`hapticam.models.hybrid_key.geometry`). With
``r = 1``, no let-off, no string and no keybed the hammer is the ball on the paddle of seed 000.

Tick-rate dependence: the hammer is integrated with sub-steps no longer than ``substep_s`` whatever the
tick, so the tick rate enters through the key interpolation only: for smooth key motion the drive
point's position error is O(dt^3) and its velocity error O(dt^2) (times the key's third derivative).
Measured (tests/test_hybrid_key.py): on the piano example (Hunt-Crossley) pressed and released
smoothly, from fortissimo (20 ms) to piano (80 ms), the events with speeds above 0.05 m/s come in the
same order at dt = 1 ms and 0.1 ms, within ``TICK_RATE_TOLERANCE_S`` (0.2 ms; largest seen 0.1 ms,
after a slow lift-off followed by an 80 ms flight; most events agree within 2 us); with the paddle
moving exactly sinusoidally, compliant events at 1 kHz are within 1e-6 s of a continuous-time
reference. The rigid law is more sensitive: within a tick the key's acceleration is constant, so its
contact-force guard (lift-off from the key) switches at tick boundaries, and its rebounds amplify
drive-velocity errors; its event sequence can differ between tick rates after a few bounces.

The parameter and state blocks' layouts are in :mod:`hapticam.models.hybrid_key.layout`.

Coupled key (``coupling_k_Npm`` set; :mod:`hapticam.models.hybrid_key.coupling`): for rendering, the
hammer acts on a simulated key of mass ``m_k`` that the device's handle pulls through a virtual
spring-damper ``(k_c, b_c)`` preloaded by the hammer's weight through the lever; the return spring,
preload and keybed act at the handle (the keybed stops the simulated key too). The hammer's landing impulses reach the handle filtered by the
key's mass and the coupling instead of spread over one tick (which, on a light handle at 1 kHz, made
the hammer chatter on its jack). Between the hammer's impacts the key takes longer steps than through them
(``HybridKey.key_step_s``). Captures of a real key are fitted with the key driven directly.

Flag bits (:func:`hybrid_key_flags`)::

    bit 0 hammer in contact with the key      bit 1 hammer in flight
    bit 2 escaped (past let-off, latch)       bit 3 hammer hit the string this tick
    bit 4 an impact (landing or string hit) happened this tick    bit 5 key on the keybed
    bit 6 the hammer lifted off the key this tick    bit 7 the key crossed let-off (pressing) this tick

References
----------
Seed 000: Patoglu & Gillespie, "The Haptic Probe" (eqs. 1-5, 26; sections 1 and 5).
Seed 004: Agar, contact model F = k x + b x_dot (eq. 2.1).
"""


from __future__ import annotations

import math
from typing import Any

import numpy as np

from hapticam.errors import ModelValidationError
from hapticam.models.base import KIND_HYBRID_KEY, Model
from hapticam.models.contact import hunt_crossley_local_stiffness
from hapticam.models.passivity import PassivityReport
from hapticam.models.ranges import Range, body_mass, damping, force, length, ratio, stiffness
# the compiled kernel and the block layout are re-exported: they are part of this module's API
from hapticam.models.hybrid_key.coupling import coupling_for_device  # noqa: F401
from hapticam.models.hybrid_key.stepping import KeyStepping
from hapticam.models.hybrid_key.geometry import check_escapement, drive_point  # noqa: F401
from hapticam.models.hybrid_key.kernel import hybrid_key_diag, hybrid_key_flags, hybrid_key_force  # noqa: F401
from hapticam.models.hybrid_key.trace import HybridKeyTrace, hybrid_key_run, simulate_key  # noqa: F401
from hapticam.models.hybrid_key.layout import (ABSENT_M, A_LIMIT_MPS2, CAPTURE_SPEED_MPS, DT_MAX_S, DT_MIN_S,
                                               EVENT_NAMES, EV_LANDING, EV_LETOFF, EV_LIFTOFF, EV_STRING,
                                               FLAG_CONTACT, FLAG_ESCAPED, FLAG_FLIGHT, FLAG_IMPACT, FLAG_KEYBED,
                                               FLAG_LETOFF, FLAG_LIFTOFF, FLAG_STRING, F_LIMIT_N, KEY_DAMPING_RATIO,
                                               LAW_HUNT_CROSSLEY, LAW_RIGID, MAX_KEY_STEP_S, MAX_KEY_SUBSTEP_S, MAX_LOGGED_EVENTS, MAX_SUBSTEPS,
                                               MAX_SUBSTEP_S, MODE_CONTACT, MODE_FLIGHT, PARAM_SIZE, P_B, P_BC, P_BK, P_BKB,
                                               P_DC, P_DELTA0, P_E, P_ES, P_FP, P_G, P_H, P_HK, P_HKC, P_K, P_KC, P_KKB, P_KR, P_LAW,
                                               P_MH, P_MK, P_N, P_PAD, P_PAD_ALPHA, P_PAD_BUMP_K, P_PAD_BUMP_X,
                                               P_PAD_FC, P_PAD_VEPS, P_R, P_RAIL, P_TOUCH, P_VCAP, P_XJ, P_XKB, P_XL, P_XR, P_YS, STATE_SIZE,
                                               SUBSTEP_OMEGA_H, SUBSTEP_REF_SPEED_MPS, S_ESCAPED, S_EV0,
                                               S_EV_COUNT, S_FLAGS, S_INIT, S_LAND_SPEED, S_MODE, S_REACTION,
                                               S_RECOVERIES, S_STRING_SPEED, S_TPREV, S_T_LAND, S_T_LETOFF,
                                               S_T_LIFT, S_T_STRING, S_UPREV, S_W, S_XPREV, S_Y,
                                               TICK_RATE_TOLERANCE_S, V_LIMIT_MPS, W_LIMIT_MPS, X_LIMIT_M,
                                               Y_LIMIT_M, key_steps, tick_substeps)  # noqa: F401
from hapticam.models.validation import as_choice, as_float, check_keys, excerpt

# ================================================================== Python model ===================
_CONTACT_LAWS = ("hunt-crossley", "rigid")
_HC_FIELDS = {"law", "k_Npm", "b_Nspm", "n"}
_RIGID_FIELDS = {"law", "restitution"}
_REQUIRED = {"key_mass_kg", "return_spring_Npm", "preload_N", "hammer_mass_kg", "lever_ratio", "contact"}
_OPTIONAL = {"gravity_mps2", "let_off_m", "check_drop_m", "repetition_m", "string_height_m",
             "string_restitution", "keybed_m", "keybed_k_Npm", "keybed_b_Nspm", "coupling_k_Npm",
             "coupling_b_Nspm", "hammer_rail", "jack_pickup_m", "touch_m", "coupling_pad_alpha_spm"}


def _optional_position(field: str, value: Any) -> float | None:
    """``None`` (absent) or a finite position in (0, X_LIMIT_M] (m)."""
    if value is None:
        return None
    return as_float(field, value, min_value=0.0, strict_min=True, max_value=X_LIMIT_M)


def _check_contact(contact: Any) -> dict[str, Any]:
    """Validate the key-hammer contact mapping; errors name ``contact.<field>``."""
    if not isinstance(contact, dict):
        raise ModelValidationError(f"contact: expected a mapping, got {type(contact).__name__}")
    law = as_choice("contact.law", contact.get("law"), _CONTACT_LAWS)
    if law == "hunt-crossley":
        check_keys("contact", contact, _HC_FIELDS)
        return {"law": law,
                "k_Npm": as_float("contact.k_Npm", contact["k_Npm"], min_value=0.0, strict_min=True,
                                   max_value=1e15),
                "b_Nspm": as_float("contact.b_Nspm", contact["b_Nspm"], min_value=0.0, max_value=1e15),
                "n": as_float("contact.n", contact["n"], min_value=0.0, strict_min=True, max_value=10.0)}
    check_keys("contact", contact, _RIGID_FIELDS)
    return {"law": law,
            "restitution": as_float("contact.restitution", contact["restitution"], min_value=0.0, max_value=1.0)}


class HybridKey(KeyStepping, Model):
    """A piano-like key driving a hammer through a lever, with let-off, string and keybed.

    Parameters
    ----------
    key_mass_kg : key mass m_k (kg, >= 0), felt as m_k a.
    return_spring_Npm : key return spring k_r (N/m, >= 0).
    preload_N : return spring preload F_p (N), felt at every x.
    hammer_mass_kg : hammer mass m_h (kg, > 0).
    lever_ratio : r (> 0): the drive point rises r x as the key goes down x; the hammer's reaction is
        felt multiplied by r.
    contact : key-hammer contact, ``{"law": "hunt-crossley", "k_Npm": k (N/m^n, > 0), "b_Nspm": b
        (N s/m^(n+1), >= 0), "n": n (> 0)}`` (seed 000 eq. 26) or ``{"law": "rigid", "restitution": e}``
        (e in [0, 1]).
    gravity_mps2 : g (m/s^2, >= 0), default 9.81.
    let_off_m : let-off key position x_l (m, > 0), or None for no escapement.
    check_drop_m : check drop d_c (m, > 0 with a let-off): how far the drive point drops onto the
        backcheck when the jack escapes; at most ``lever_ratio * (let_off_m - repetition_m)``.
    repetition_m : repetition point x_r (m, 0 <= x_r < x_l), default 0: the jack is back under the
        hammer once the key has risen to it (0: only when the key is back at rest, a single escapement).
    string_height_m : string (hammer stop) height y_s (m), or None. Needs a let-off and y_s > r x_l, so
        the key can never pinch the hammer against the string.
    string_restitution : e_s in [0, 1] for the hammer-string impact, default 0.5.
    keybed_m : keybed key position x_kb (m, > let_off_m), or None.
    keybed_k_Npm, keybed_b_Nspm : keybed stiffness (N/m) and damping (N s/m), >= 0.
    hammer_rail : bool, default False: the hammer rests on a fixed rail at its rest height whenever the
        jack or the backcheck is below it; the escaped check then keeps its whole drop (no closing) and
        ``repetition_m`` must be <= ``jack_pickup_m`` (:mod:`hapticam.models.hybrid_key.geometry`).
    jack_pickup_m : key travel x_j (m, >= 0, < let_off_m) before the jack lifts the hammer off its rail
        (lost motion); needs ``hammer_rail``.
    touch_m : None (the key is touched everywhere), or the position x_t (m, 0 <= x_t <= jack_pickup_m) of
        the key's surface: for x < x_t nothing touches the key and the force is 0 (the key rests on its
        back rail and the hammer on its rail). Positions stay on the handle's axis; needs ``hammer_rail``.
    coupling_k_Npm, coupling_b_Nspm : None (the key is the handle), or the virtual coupling (N/m > 0,
        N s/m >= 0) through which the handle pulls a simulated key of mass ``key_mass_kg`` (> 0); for a
        device with damping b at period T keep ``b > k_c T / 2 + b_c`` (``coupling_for_device``).
    coupling_pad_alpha_spm : None (the coupling is the virtual spring-damper above), or the alpha (s/m, >= 0) of
        a one-sided pad holding the key: the coupling is then a linear Hunt-Crossley contact
        ``k_c delta (1 + alpha delta')`` (``coupling_b_Nspm`` 0) that never pulls, and the key carries its own
        forces (return spring, preload, keybed, its back rail at ``touch_m``): the probe's tip holding a real
        key, as ``verify`` replays a capture that names its tip (:mod:`hapticam.models.hybrid_key.coupling`).

    References
    ----------
    Seed 000 (Patoglu & Gillespie), eqs. 1-5 and 26, the bouncing ball on a paddle.
    """

    kind = "hybrid-key"
    kind_code = KIND_HYBRID_KEY
    #: a key held by a pad (``coupling_pad_alpha_spm``): the forces beside it that act on the key itself, its
    #: Coulomb friction (N) over v_eps (m/s) and a one-sided spring (N/m) from a position (m); set by
    #: :meth:`on_pad`, not written to model files
    held_key_forces: tuple = (0.0, 1.0, 0.0, ABSENT_M)
    #: the hammer's landings and string strikes (located events) and the key on its keybed (flag bit 5)
    impact_events = ("landing", "string", "keybed")
    #: a coupled key's springs that act on the handle itself, beside the coupling (module docstring, "Coupled key")
    AT_THE_HANDLE = ("keybed_k_Npm", "return_spring_Npm")
    #: physical ranges (:mod:`hapticam.models.ranges`); the key-hammer contact's k and b (N/m^n,
    #: N s/m^(n+1)) act on the simulated hammer, not on the handle, and keep the constructor's bounds
    RANGES = {"key_mass_kg": body_mass(), "hammer_mass_kg": body_mass(zero_allowed=False),
              "return_spring_Npm": stiffness(), "keybed_k_Npm": stiffness(), "coupling_k_Npm": stiffness(),
              "keybed_b_Nspm": damping(), "coupling_b_Nspm": damping(), "preload_N": force(),
              "lever_ratio": ratio(0.0, 1e3, "a grand piano's hammer lever is about 5"),
              "gravity_mps2": Range(0.0, 1e3, "m/s^2", "a hundred times Earth's"),
              "contact.k_Npm": Range(0.0, 1e15, "N/m^n", "felt is 5e6 N/m^1.5; the units grow with n"),
              "contact.b_Nspm": Range(0.0, 1e15, "N s/m^(n+1)", "felt is 1.5e7 N s/m^2.5; the units grow with n"),
              "contact.n": ratio(0.0, 10.0, "Hertzian contact is 1.5"),
              "contact.restitution": ratio(0.0, 1.0, "an impact cannot return more than it took"),
              "string_restitution": ratio(0.0, 1.0, "an impact cannot return more than it took"),
              **{name: length() for name in ("let_off_m", "check_drop_m", "repetition_m", "string_height_m",
                                              "keybed_m", "jack_pickup_m", "touch_m")}}

    def __init__(self, key_mass_kg: float, return_spring_Npm: float, preload_N: float, hammer_mass_kg: float,
                 lever_ratio: float, contact: dict[str, Any], gravity_mps2: float = 9.81,
                 let_off_m: float | None = None, check_drop_m: float = 0.0, repetition_m: float = 0.0,
                 string_height_m: float | None = None,
                 string_restitution: float = 0.5, keybed_m: float | None = None,
                 keybed_k_Npm: float = 0.0, keybed_b_Nspm: float = 0.0, coupling_k_Npm: float | None = None,
                 coupling_b_Nspm: float = 0.0, hammer_rail: bool = False, jack_pickup_m: float = 0.0,
                 touch_m: float | None = None, coupling_pad_alpha_spm: float | None = None) -> None:
        self.key_mass_kg = as_float("key_mass_kg", key_mass_kg, min_value=0.0, max_value=1e3)
        self.return_spring_Npm = as_float("return_spring_Npm", return_spring_Npm, min_value=0.0, max_value=1e9)
        self.preload_N = as_float("preload_N", preload_N, min_value=-1e6, max_value=1e6)
        self.hammer_mass_kg = as_float("hammer_mass_kg", hammer_mass_kg, min_value=0.0, strict_min=True,
                                       max_value=1e3)
        self.lever_ratio = as_float("lever_ratio", lever_ratio, min_value=0.0, strict_min=True, max_value=1e3)
        self.gravity_mps2 = as_float("gravity_mps2", gravity_mps2, min_value=0.0, max_value=1e3)
        self.contact = _check_contact(contact)
        self.let_off_m = _optional_position("let_off_m", let_off_m)
        self.check_drop_m = as_float("check_drop_m", check_drop_m, min_value=0.0, max_value=X_LIMIT_M)
        self.repetition_m = as_float("repetition_m", repetition_m, min_value=0.0, max_value=X_LIMIT_M)
        self.string_height_m = (None if string_height_m is None else
                                as_float("string_height_m", string_height_m, max_value=1e3))
        self.string_restitution = as_float("string_restitution", string_restitution, min_value=0.0, max_value=1.0)
        self.keybed_m = _optional_position("keybed_m", keybed_m)
        self.keybed_k_Npm = as_float("keybed_k_Npm", keybed_k_Npm, min_value=0.0, max_value=1e12)
        self.keybed_b_Nspm = as_float("keybed_b_Nspm", keybed_b_Nspm, min_value=0.0, max_value=1e9)
        self.coupling_k_Npm = (None if coupling_k_Npm is None else
                               as_float("coupling_k_Npm", coupling_k_Npm, min_value=0.0, strict_min=True,
                                        max_value=1e9))
        self.coupling_b_Nspm = as_float("coupling_b_Nspm", coupling_b_Nspm, min_value=0.0, max_value=1e6)
        if not isinstance(hammer_rail, bool):
            raise ModelValidationError(f"hammer_rail: expected true or false, got {excerpt(hammer_rail)}")
        self.hammer_rail = hammer_rail
        self.jack_pickup_m = as_float("jack_pickup_m", jack_pickup_m, min_value=0.0, max_value=X_LIMIT_M)
        self.touch_m = None if touch_m is None else as_float("touch_m", touch_m, min_value=0.0, max_value=X_LIMIT_M)
        self.coupling_pad_alpha_spm = (None if coupling_pad_alpha_spm is None else
                                       as_float("coupling_pad_alpha_spm", coupling_pad_alpha_spm, min_value=0.0,
                                                max_value=1e3))
        if self.coupling_pad_alpha_spm is not None and (self.coupling_k_Npm is None or self.coupling_b_Nspm != 0.0):
            raise ModelValidationError("coupling_pad_alpha_spm: a pad needs coupling_k_Npm and no coupling_b_Nspm")
        if self.coupling_k_Npm is not None and not self.key_mass_kg > 0.0:
            raise ModelValidationError("key_mass_kg: a coupled key (coupling_k_Npm) needs a key mass > 0")
        if self.coupling_k_Npm is not None and self.rigid:
            # a rigid hammer's reaction is an inertial force r^2 m_h a_k: felt one sub-step late by a lighter
            # key it grows each step (added-mass instability); the compliant contact is a spring and damper
            raise ModelValidationError("coupling_k_Npm: a coupled key needs the hunt-crossley contact law")
        check_escapement(self)

    # -- derived quantities -----------------------------------------------------------------------------
    @property
    def rigid(self) -> bool:
        """True for the rigid (restitution) contact law."""
        return self.contact["law"] == "rigid"

    @property
    def rest_penetration_m(self) -> float:
        """Static key-hammer penetration (m): m_h g = k delta^n (seed 000 eq. 26); 0 for the rigid law."""
        if self.rigid:
            return 0.0
        return float((self.hammer_mass_kg * self.gravity_mps2 / self.contact["k_Npm"]) ** (1.0 / self.contact["n"]))

    @property
    def key_damping_Nspm(self) -> float:
        """Damper ``b_d`` (N s/m) on the coupled key's motion relative to the handle, acting on the simulated
        key alone: with the coupling's ``b_c`` it gives the key and the hammer resting on it
        (``m_k + r^2 m_h``) the damping ratio ``KEY_DAMPING_RATIO`` on the coupling,
        ``b_c + b_d = 2 zeta sqrt(k_c (m_k + r^2 m_h))`` (0 without a coupling; passivity in
        :mod:`hapticam.models.hybrid_key.coupling`)."""
        if (self.coupling_k_Npm is None or self.coupling_pad_alpha_spm is not None
                or self.coupling_b_Nspm >= math.sqrt(self.coupling_k_Npm * self.key_mass_kg)):
            return 0.0   # a physical pad (the probe's tip) damping the key alone at zeta >= 1/2 is left as it is
        mass = self.key_mass_kg + self.lever_ratio ** 2 * self.hammer_mass_kg
        critical = 2.0 * math.sqrt(self.coupling_k_Npm * mass)
        return float(max(0.0, KEY_DAMPING_RATIO * critical - self.coupling_b_Nspm))

    # -- encoding -------------------------------------------------------------------------------------
    def params_block(self) -> np.ndarray:
        p = np.zeros(PARAM_SIZE)
        p[P_MK], p[P_KR], p[P_FP] = self.key_mass_kg, self.return_spring_Npm, self.preload_N
        p[P_MH], p[P_R], p[P_G] = self.hammer_mass_kg, self.lever_ratio, self.gravity_mps2
        if self.rigid:
            p[P_LAW], p[P_E], p[P_N] = LAW_RIGID, self.contact["restitution"], 1.0
        else:
            p[P_LAW] = LAW_HUNT_CROSSLEY
            p[P_K], p[P_B], p[P_N] = self.contact["k_Npm"], self.contact["b_Nspm"], self.contact["n"]
        p[P_XL] = ABSENT_M if self.let_off_m is None else self.let_off_m
        p[P_XR] = -ABSENT_M if self.let_off_m is None else self.repetition_m
        p[P_DC] = self.check_drop_m if self.let_off_m is not None else 0.0
        p[P_YS] = ABSENT_M if self.string_height_m is None else self.string_height_m
        p[P_ES] = self.string_restitution
        p[P_XKB] = ABSENT_M if self.keybed_m is None else self.keybed_m
        p[P_KKB], p[P_BKB] = self.keybed_k_Npm, self.keybed_b_Nspm
        p[P_H] = self.substep_s
        p[P_DELTA0] = self.rest_penetration_m
        p[P_VCAP] = CAPTURE_SPEED_MPS
        if self.coupling_k_Npm is not None:
            p[P_KC], p[P_BC], p[P_HK] = self.coupling_k_Npm, self.coupling_b_Nspm, self.key_substep_s
            p[P_HKC] = self.key_step_s
            p[P_BK] = self.key_damping_Nspm
        p[P_RAIL], p[P_XJ] = float(self.hammer_rail), self.jack_pickup_m
        p[P_TOUCH] = -ABSENT_M if self.touch_m is None else self.touch_m
        p[P_PAD_VEPS], p[P_PAD_BUMP_X] = 1.0, ABSENT_M
        if self.coupling_pad_alpha_spm is not None:
            p[P_PAD], p[P_PAD_ALPHA] = 1.0, self.coupling_pad_alpha_spm
            friction, v_eps, bump_k, bump_x = self.held_key_forces
            p[P_PAD_FC], p[P_PAD_VEPS], p[P_PAD_BUMP_K], p[P_PAD_BUMP_X] = friction, v_eps, bump_k, bump_x
        return p

    def initial_state(self) -> np.ndarray:
        """Hammer at rest on the key at x = 0; the first tick re-places it at the key's actual position."""
        s = np.zeros(STATE_SIZE)
        s[S_Y] = -self.rest_penetration_m
        s[S_MODE] = MODE_CONTACT
        s[S_FLAGS] = FLAG_CONTACT
        s[S_T_LAND:S_T_LETOFF + 1] = -1.0
        return s

    # -- parameters -----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"key_mass_kg": self.key_mass_kg, "return_spring_Npm": self.return_spring_Npm,
                "preload_N": self.preload_N, "hammer_mass_kg": self.hammer_mass_kg,
                "lever_ratio": self.lever_ratio, "gravity_mps2": self.gravity_mps2,
                "contact": dict(self.contact), "let_off_m": self.let_off_m,
                "check_drop_m": self.check_drop_m, "repetition_m": self.repetition_m,
                "string_height_m": self.string_height_m, "string_restitution": self.string_restitution,
                "keybed_m": self.keybed_m, "keybed_k_Npm": self.keybed_k_Npm, "keybed_b_Nspm": self.keybed_b_Nspm,
                **({"hammer_rail": True, "jack_pickup_m": self.jack_pickup_m} if self.hammer_rail else {}),
                **({} if self.touch_m is None else {"touch_m": self.touch_m}),
                **({} if self.coupling_k_Npm is None else
                   {"coupling_k_Npm": self.coupling_k_Npm, "coupling_b_Nspm": self.coupling_b_Nspm}),
                **({} if self.coupling_pad_alpha_spm is None else
                   {"coupling_pad_alpha_spm": self.coupling_pad_alpha_spm})}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "HybridKey":
        """Build from ``to_dict()`` output. Optional fields (defaults as in ``__init__``): gravity_mps2,
        let_off_m, check_drop_m, repetition_m, string_height_m, string_restitution, keybed_m, keybed_k_Npm,
        keybed_b_Nspm, coupling_k_Npm, coupling_b_Nspm, hammer_rail, jack_pickup_m, touch_m."""
        check_keys("hybrid-key", data, _REQUIRED, _OPTIONAL)
        return cls(**data)

    def on_pad(self, pad_k_Npm: float, pad_alpha_spm: float,
               held_key_forces: tuple = (0.0, 1.0, 0.0, ABSENT_M)) -> "HybridKey":
        """This key held by a one-sided pad ``pad_k_Npm delta (1 + pad_alpha_spm delta')`` (N/m, s/m) instead
        of its coupling: the probe's tip a key rests on (``coupling_pad_alpha_spm``), with the forces beside
        the key that act on it (:attr:`held_key_forces`: friction N, its width m/s, a spring N/m from m)."""
        data = self.to_dict()
        data.update(coupling_k_Npm=pad_k_Npm, coupling_b_Nspm=0.0, coupling_pad_alpha_spm=pad_alpha_spm)
        held = HybridKey.from_dict(data)
        held.held_key_forces = tuple(float(v) for v in held_key_forces)
        return held

    def passivity(self) -> PassivityReport:
        """Passive as a mechanical system: ``__init__`` holds masses, springs and dampings >= 0 and restitutions
        <= 1, gravity is conservative and the escapement's drop only breaks contact."""
        return PassivityReport(passive=True, notes=[
            "hybrid-key: passive as a mechanical system (masses and springs >= 0, contact damping >= 0 or restitution "
            "<= 1, string restitution <= 1, keybed k, b >= 0, gravity conservative); its sampled rendering is not "
            "covered by this check (the servo loop's passivity observer, render --passivity, watches it)"])

    def handle_stiffnesses(self, at_force_N: float | None = None) -> list[tuple[str, float]]:
        """Coupled: the coupling and the springs the kernel applies at the handle (``AT_THE_HANDLE``), N/m; the
        hammer's contact acts on the simulated key. Driven directly: every ``_Npm`` parameter, a Hunt-Crossley
        contact's k (N/m^n) as its local stiffness at ``at_force_N`` (N; ``hunt_crossley_local_stiffness``)."""
        if self.coupling_k_Npm is not None:
            return [(name, float(getattr(self, name))) for name in ("coupling_k_Npm",) + self.AT_THE_HANDLE]
        k, n = self.contact.get("k_Npm", 0.0), self.contact.get("n", 1.0)
        local = hunt_crossley_local_stiffness(k, n, at_force_N)
        return [(f"{path} (local, at {at_force_N:g} N)", local) if local and path == "contact.k_Npm" else (path, value)
                for path, value in super().handle_stiffnesses(at_force_N)]

    # -- simulation -----------------------------------------------------------------------------------
    def simulate(self, x_m: Any, dt_s: float, v_mps: Any = None, a_mps2: Any = None) -> HybridKeyTrace:
        """Run the compiled kernel over key positions ``x_m[i]`` sampled at ``t = i dt_s`` (from rest):
        :func:`~hapticam.models.hybrid_key.trace.simulate_key`."""
        return simulate_key(self.params_block(), self.initial_state(), x_m, dt_s, v_mps, a_mps2)

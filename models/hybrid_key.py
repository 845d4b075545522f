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

The force returned is the force the user applies to the key (DESIGN.md sign convention)::

    F = m_k a + k_r x + F_p + F_kb(x, v) + (ds/dx) * Fbar_c

where ``F_kb = max(0, k_kb (x - x_kb) + b_kb v)`` for ``x > x_kb`` (seed 004 eq. 2.1, one-sided) and
``Fbar_c`` is the key-hammer contact impulse over the tick divided by ``dt`` (impact impulses of the rigid
law included), weighted by the lever ratio ``ds/dx`` of the drive point (``r``, or
``r - d_c / (x_l - x_r)`` while escaped between the repetition and let-off points). With
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

Parameter block (``params_block()``, float64)::

    0 key mass m_k (kg)            1 return spring k_r (N/m)       2 preload F_p (N)
    3 hammer mass m_h (kg)         4 lever ratio r                 5 gravity g (m/s^2)
    6 law (0 Hunt-Crossley, 1 rigid)  7 k (N/m^n)  8 b (N s/m^(n+1))  9 n   10 restitution e
    11 let-off x_l (m; 1e30 if none)  12 string height y_s (m; 1e30 if none)  13 string restitution e_s
    14 keybed x_kb (m; 1e30 if none)  15 keybed k_kb (N/m)  16 keybed b_kb (N s/m)
    17 sub-step (s)   18 rest penetration (m; Hunt-Crossley)   19 capture speed (m/s)
    20 check drop d_c (m)   21 repetition point x_r (m; -1e30 if no let-off)

State block (``initial_state()``, float64)::

    0 hammer height y (m)        1 hammer velocity y_dot (m/s)
    2 key position at the previous tick (m)     3 mean key velocity over the previous tick (m/s)
    4 mode (0 flight, 1 contact)    5 flags of the last tick (bit field below)
    6 escaped latch (0/1)           7 initialised (0 until the first tick places the hammer at rest)
    8-11 time since the last landing, lift-off, string hit, let-off (s; -1 never)
    12 relative speed of the last landing (m/s)   13 hammer speed at the last string hit (m/s)
    14 hammer reaction felt at the key over the last tick, (ds/dx) Fbar_c (N)
    15 number of numerical recoveries (state reset to rest after a non-finite or runaway value)
    16 length of the previous tick (s; 0 before the first)
    17 number of events in the last tick; 18-29 the first four: (code, time in tick (s), speed (m/s))

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
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from hapticam.errors import ModelValidationError
from hapticam.models.base import KIND_HYBRID_KEY, Model
from hapticam.models.validation import as_choice, as_float, check_keys

# -- parameter block layout ---------------------------------------------------------------------------
P_MK, P_KR, P_FP, P_MH, P_R, P_G = 0, 1, 2, 3, 4, 5
P_LAW, P_K, P_B, P_N, P_E = 6, 7, 8, 9, 10
P_XL, P_YS, P_ES, P_XKB, P_KKB, P_BKB = 11, 12, 13, 14, 15, 16
P_H, P_DELTA0, P_VCAP, P_DC, P_XR = 17, 18, 19, 20, 21
PARAM_SIZE = 22

# -- state block layout -------------------------------------------------------------------------------
S_Y, S_W, S_XPREV, S_UPREV, S_MODE, S_FLAGS, S_ESCAPED, S_INIT = 0, 1, 2, 3, 4, 5, 6, 7
S_T_LAND, S_T_LIFT, S_T_STRING, S_T_LETOFF = 8, 9, 10, 11
S_LAND_SPEED, S_STRING_SPEED, S_REACTION, S_RECOVERIES = 12, 13, 14, 15
S_TPREV, S_EV_COUNT, S_EV0 = 16, 17, 18
MAX_LOGGED_EVENTS = 4
STATE_SIZE = S_EV0 + 3 * MAX_LOGGED_EVENTS

LAW_HUNT_CROSSLEY, LAW_RIGID = 0, 1
MODE_FLIGHT, MODE_CONTACT = 0, 1

# Event codes (state slots 18-29 and :meth:`HybridKey.simulate`).
EV_LANDING, EV_LIFTOFF, EV_STRING, EV_LETOFF = 1, 2, 3, 4
EVENT_NAMES = {EV_LANDING: "landing", EV_LIFTOFF: "lift-off", EV_STRING: "string", EV_LETOFF: "let-off"}

FLAG_CONTACT, FLAG_FLIGHT, FLAG_ESCAPED, FLAG_STRING = 1, 2, 4, 8
FLAG_IMPACT, FLAG_KEYBED, FLAG_LIFTOFF, FLAG_LETOFF = 16, 32, 64, 128

#: Stand-in for an absent let-off, string or keybed position in the parameter block.
ABSENT_M = 1e30
#: Longest hammer sub-step (s); stiff Hunt-Crossley contacts get shorter ones (see ``substep_s``).
MAX_SUBSTEP_S = 5e-5
#: Most hammer sub-steps per tick (bounds the cost; a longer tick gets longer sub-steps).
MAX_SUBSTEPS = 96
#: Sub-step rule for Hunt-Crossley: omega h <= 0.5 at the penetration of a 10 m/s impact.
SUBSTEP_OMEGA_H = 0.5
SUBSTEP_REF_SPEED_MPS = 10.0
#: A rigid landing whose rebound speed would be below this is plastic (m/s).
CAPTURE_SPEED_MPS = 1e-3
#: Input clamps (finite inputs beyond any device are clamped, so the kernel never overflows).
X_LIMIT_M, V_LIMIT_MPS, A_LIMIT_MPS2 = 10.0, 1e4, 1e7
#: Tick length bounds (s): a positive dt outside them is integrated as the nearest bound.
DT_MIN_S, DT_MAX_S = 1e-7, 1.0
#: Hammer state bounds; beyond them (or on a non-finite value) the hammer is reset to rest.
Y_LIMIT_M, W_LIMIT_MPS, F_LIMIT_N = 1e4, 1e4, 1e9
_MAX_EXTRA_ITERATIONS = 64
#: Documented tick-rate tolerance (s) of event times between dt = 1 ms and 0.1 ms (see the module docstring).
TICK_RATE_TOLERANCE_S = 2e-4


# ================================================================== numba kernel ===================
@njit(cache=True, nogil=True, error_model="numpy")
def _clamp(val, lo, hi):
    return lo if val < lo else (hi if val > hi else val)


@njit(cache=True, nogil=True, error_model="numpy")
def _hc_force(p, rho, rho_dot):
    """Hunt-Crossley contact force (N): F = k rho^n + b rho^n rho_dot, >= 0 (seed 000 eq. 26)."""
    if rho <= 0.0:
        return 0.0
    n = p[P_N]
    rn = rho * math.sqrt(rho) if n == 1.5 else (rho if n == 1.0 else rho ** n)  # rho^n, fast paths
    f = rn * (p[P_K] + p[P_B] * rho_dot)  # k |rho|^(n-1) rho + b |rho|^n rho_dot, rho > 0  (seed 000 eq. 26)
    if not f > 0.0:  # no tensile force; also catches NaN from 0 * inf
        return 0.0
    return F_LIMIT_N if f > F_LIMIT_N else f


@njit(cache=True, nogil=True, error_model="numpy")
def _rk4_contact(p, s0, sp, sa, y, w, h):
    """One RK4 step of m_h y'' = F_c(s - y, s_dot - y_dot) - m_h g with the drive point
    s(t) = s0 + sp t + sa t^2 / 2. Returns (y, w, contact impulse over the step (N s))."""
    m = p[P_MH]
    g = p[P_G]
    hh = 0.5 * h
    s_mid = s0 + hh * sp + 0.5 * sa * hh * hh
    sp_mid = sp + sa * hh
    f1 = _hc_force(p, s0 - y, sp - w)
    y2 = y + hh * w
    w2 = w + hh * (f1 / m - g)
    f2 = _hc_force(p, s_mid - y2, sp_mid - w2)
    y3 = y + hh * w2
    w3 = w + hh * (f2 / m - g)
    f3 = _hc_force(p, s_mid - y3, sp_mid - w3)
    y4 = y + h * w3
    w4 = w + h * (f3 / m - g)
    f4 = _hc_force(p, s0 + h * sp + 0.5 * sa * h * h - y4, sp + sa * h - w4)
    y_new = y + h / 6.0 * (w + 2.0 * w2 + 2.0 * w3 + w4)
    w_new = w + h / 6.0 * ((f1 + 2.0 * f2 + 2.0 * f3 + f4) / m - 6.0 * g)
    return y_new, w_new, h / 6.0 * (f1 + 2.0 * f2 + 2.0 * f3 + f4)


@njit(cache=True, nogil=True, error_model="numpy")
def _liftoff_time(s0, sp, sa, y0, w0, y1, w1, h):
    """Time in [0, h] where rho = s0 + sp t + sa t^2 / 2 - y(t) crosses 0, y(t) the cubic Hermite
    interpolant of (y0, w0) at 0 and (y1, w1) at h; rho(0) > 0 >= rho(h). Illinois regula falsi."""
    lo, hi = 0.0, h
    f_lo = s0 - y0
    f_hi = s0 + sp * h + 0.5 * sa * h * h - y1
    if not f_lo > 0.0:
        return 0.0
    side = 0
    t = h
    f = f_hi
    for _ in range(60):
        t = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if not (lo < t < hi):
            t = 0.5 * (lo + hi)
        q = t / h
        q2 = q * q
        q3 = q2 * q
        # cubic Hermite basis: y(t) = h00 y0 + h10 h w0 + h01 y1 + h11 h w1
        yt = ((2.0 * q3 - 3.0 * q2 + 1.0) * y0 + (q3 - 2.0 * q2 + q) * h * w0
              + (-2.0 * q3 + 3.0 * q2) * y1 + (q3 - q2) * h * w1)
        f = s0 + sp * t + 0.5 * sa * t * t - yt
        if f > 0.0:
            lo, f_lo = t, f
            if side == -1:
                f_hi *= 0.5
            side = -1
        else:
            hi, f_hi = t, f
            if side == 1:
                f_lo *= 0.5
            side = 1
        if hi - lo < 1e-14 or f == 0.0:
            break
    return hi if f > 0.0 else t


@njit(cache=True, nogil=True, error_model="numpy")
def _landing_time(g0, c1, q):
    """Smallest tau >= 0 where gap(tau) = g0 + c1 tau - q tau^2 / 2 reaches 0 (the hammer meets the
    drive point), or -1. g0 = y - s >= 0, c1 = y_dot - s_dot, q = g + s_ddot (any sign).
    Cancellation-free quadratic roots."""
    if g0 <= 0.0:
        if c1 < 0.0 or (c1 == 0.0 and q > 0.0):
            return 0.0
        g0 = 0.0
    if q > 0.0:
        d = math.sqrt(c1 * c1 + 2.0 * q * g0)
        if c1 >= 0.0:
            return (c1 + d) / q
        return 2.0 * g0 / (d - c1)
    if c1 >= 0.0:
        return -1.0  # q <= 0: the gap only grows
    if q == 0.0:
        return g0 / -c1
    disc = c1 * c1 + 2.0 * q * g0  # q < 0: convex gap, reaches 0 only if its minimum is <= 0
    if disc < 0.0:
        return -1.0
    return 2.0 * g0 / (math.sqrt(disc) - c1)


@njit(cache=True, nogil=True, error_model="numpy")
def _string_time(d0, w, g):
    """Smallest tau >= 0 with y(tau) = y_s rising (d0 = y_s - y, y(tau) = y + w tau - g tau^2 / 2), or -1."""
    if w <= 0.0:
        return -1.0
    if d0 <= 0.0:
        return 0.0
    if g > 0.0:
        disc = w * w - 2.0 * g * d0
        if disc < 0.0:
            return -1.0
        return 2.0 * d0 / (w + math.sqrt(disc))
    return d0 / w


@njit(cache=True, nogil=True, error_model="numpy")
def _crossing_time(x0, v0, a, c, ta, tb, xa, xb):
    """Time in [ta, tb] where the key x(t) = x0 + v0 t + a t^2 / 2, monotone on [ta, tb], passes c going
    from xa = x(ta) to xb = x(tb), or -1. Pressing passes c when it goes beyond it (xa <= c < xb),
    releasing when it reaches it (xb <= c < xa): let-off is x > x_l, repetition x <= x_r."""
    if not ((xa <= c < xb) or (xb <= c < xa)):
        return -1.0
    d = x0 - c
    if a == 0.0:
        return _clamp(-d / v0, ta, tb)
    # roots of a t^2 / 2 + v0 t + d = 0, cancellation-free; take the one on [ta, tb]
    sq = math.sqrt(max(v0 * v0 - 2.0 * a * d, 0.0))
    qq = -0.5 * (v0 + (sq if v0 >= 0.0 else -sq))
    r1 = qq / (0.5 * a)
    r2 = d / qq if qq != 0.0 else r1
    e1 = max(ta - r1, r1 - tb, 0.0)
    e2 = max(ta - r2, r2 - tb, 0.0)
    return _clamp(r1 if e1 <= e2 else r2, ta, tb)


@njit(cache=True, nogil=True, error_model="numpy")
def _drive(p, x, escaped):
    """Drive point height (m) at key position x: r x on the jack; once escaped, the backcheck
    r x - d_c clip((x - x_r) / (x_l - x_r), 0, 1) (the escapement model of the module docstring)."""
    r = p[P_R]
    if escaped == 0.0:
        return r * x
    f = _clamp((x - p[P_XR]) / (p[P_XL] - p[P_XR]), 0.0, 1.0)
    return r * x - p[P_DC] * f


@njit(cache=True, nogil=True, error_model="numpy")
def _dsdx(p, x, escaped):
    """Lever ratio ds/dx of the drive point at key position x (the factor on the hammer reaction)."""
    r = p[P_R]
    if escaped != 0.0 and p[P_XR] < x < p[P_XL]:
        return r - p[P_DC] / (p[P_XL] - p[P_XR])
    return r


@njit(cache=True, nogil=True, error_model="numpy")
def _log_event(s, code, t, speed, T):
    """Record an event at time t (s) inside a tick of length T: log slot, time-since slot, flag bit."""
    n = int(s[S_EV_COUNT])
    if n < MAX_LOGGED_EVENTS:
        j = S_EV0 + 3 * n
        s[j] = code
        s[j + 1] = t
        s[j + 2] = speed
    s[S_EV_COUNT] = n + 1
    flags = int(s[S_FLAGS])
    if code == EV_LANDING:
        s[S_T_LAND] = T - t
        flags |= FLAG_IMPACT
    elif code == EV_LIFTOFF:
        s[S_T_LIFT] = T - t
        flags |= FLAG_LIFTOFF
    elif code == EV_STRING:
        s[S_T_STRING] = T - t
        flags |= FLAG_STRING | FLAG_IMPACT
    else:
        s[S_T_LETOFF] = T - t
        flags |= FLAG_LETOFF
    s[S_FLAGS] = flags


@njit(cache=True, nogil=True, error_model="numpy")
def _place_at_rest(p, s, x):
    """Put the hammer at rest on the drive point at key position x (contact mode)."""
    s[S_Y] = _drive(p, x, s[S_ESCAPED]) - p[P_DELTA0]  # static penetration m_h g = k delta0^n (seed 000 eq. 26)
    s[S_W] = 0.0
    s[S_MODE] = MODE_CONTACT


@njit(cache=True, nogil=True, error_model="numpy")
def _advance(p, s, x0, v0, a, t, seg_end, T, hs, y, w, mode, max_iter, iters):
    """Advance the hammer from t to seg_end (s) over one interval on which the drive point is a
    quadratic in time (the key x(t) = x0 + v0 t + a t^2 / 2, the drive linear in x). Returns
    (y, w, mode, (ds/dx)-weighted contact impulse (N s), iterations used)."""
    g = p[P_G]
    m = p[P_MH]
    ys = p[P_YS]
    rigid = p[P_LAW] == LAW_RIGID
    esc = s[S_ESCAPED]
    t_mid = 0.5 * (t + seg_end)
    lever = _dsdx(p, x0 + v0 * t_mid + 0.5 * a * t_mid * t_mid, esc)
    sa = lever * a  # drive point acceleration on this interval
    q = g + sa  # hammer-to-drive relative "gravity": the contact force per mass in rigid contact
    impulse = 0.0
    if rigid and mode == MODE_CONTACT:
        # the drive point's velocity may jump at the interval start (the interpolant is C0 at ticks, and
        # ds/dx changes at let-off/repetition): the hammer follows unless the mean contact force over
        # the interval would be tensile, m_h (dw + max(q, 0) L) < 0; then it flies off
        sp = lever * (v0 + a * t)
        dw = sp - w
        if dw >= -max(q, 0.0) * (seg_end - t):
            impulse += lever * m * dw
            w = sp
            if q < 0.0:
                mode = MODE_FLIGHT  # the drive point drops away faster than g: lift-off, zero speed
                _log_event(s, EV_LIFTOFF, t, 0.0, T)
        else:
            mode = MODE_FLIGHT
            _log_event(s, EV_LIFTOFF, t, -dw, T)
    while t < seg_end:
        iters += 1
        s_t = _drive(p, x0 + v0 * t + 0.5 * a * t * t, esc)
        sp = lever * (v0 + a * t)
        if iters > max_iter:
            # pathological event chattering: finish the interval with the hammer resting on the key
            s[S_RECOVERIES] += 1.0
            impulse += lever * m * max(q, 0.0) * (seg_end - t)
            t = seg_end
            y = _drive(p, x0 + v0 * t + 0.5 * a * t * t, esc) - (0.0 if rigid else p[P_DELTA0])
            w = lever * (v0 + a * t)
            mode = MODE_CONTACT
            break
        if mode == MODE_FLIGHT:
            span = seg_end - t
            tau_l = _landing_time(y - s_t, w - sp, q)
            tau_s = _string_time(ys - y, w, g)
            hit_land = 0.0 <= tau_l <= span
            hit_string = 0.0 <= tau_s <= span and (not hit_land or tau_s < tau_l)
            tau = tau_s if hit_string else (tau_l if hit_land else span)
            # flight: y = y0 + w tau - g tau^2 / 2, y_dot = w - g tau (closed form)
            y = y + w * tau - 0.5 * g * tau * tau
            w = w - g * tau
            t = seg_end if tau == span else t + tau
            if hit_string:
                # string reset: y_dot+ = -e_s y_dot-  (seed 000 section 5, restitution)
                y = ys
                s[S_STRING_SPEED] = w
                _log_event(s, EV_STRING, t, w, T)
                w = -p[P_ES] * w
            elif hit_land:
                y = _drive(p, x0 + v0 * t + 0.5 * a * t * t, esc)
                sp = lever * (v0 + a * t)
                rel = w - sp  # <= 0: closing speed
                s[S_LAND_SPEED] = -rel
                _log_event(s, EV_LANDING, t, -rel, T)
                mode = MODE_CONTACT
                if rigid:
                    # rigid reset: (y_dot - s_dot)+ = -e (y_dot - s_dot)-  (seed 000 section 5)
                    w_new = sp - p[P_E] * rel
                    if -p[P_E] * rel >= p[P_VCAP]:
                        mode = MODE_FLIGHT
                    else:
                        w_new = sp  # plastic capture below the capture speed
                        if q < 0.0:
                            mode = MODE_FLIGHT  # captured by a drive point that drops away: leaves again
                    impulse += lever * m * (w_new - w)
                    w = w_new
        elif rigid:
            # hammer moves with the drive point; contact force m_h (g + s_ddot) over the interval
            impulse += lever * m * q * (seg_end - t)
            t = seg_end
            y = _drive(p, x0 + v0 * t + 0.5 * a * t * t, esc)
            w = lever * (v0 + a * t)
        else:
            # Hunt-Crossley contact: RK4 on the sub-step grid k * hs of the tick
            t_next = min((int(t / hs + 1e-7) + 1) * hs, seg_end)
            h = t_next - t
            y1, w1, j1 = _rk4_contact(p, s_t, sp, sa, y, w, h)
            if s_t + sp * h + 0.5 * sa * h * h - y1 > 0.0:
                y, w = y1, w1
                impulse += lever * j1
                t = t_next
            else:
                # lift-off inside the sub-step: locate rho = 0, redo the step up to it, then fly
                tau = _liftoff_time(s_t, sp, sa, y, w, y1, w1, h)
                y1, w1, j1 = _rk4_contact(p, s_t, sp, sa, y, w, tau)
                impulse += lever * j1
                t = t + tau
                y = _drive(p, x0 + v0 * t + 0.5 * a * t * t, esc)
                w = w1
                mode = MODE_FLIGHT
                _log_event(s, EV_LIFTOFF, t, w - lever * (v0 + a * t), T)
    return y, w, mode, impulse, iters


@njit(cache=True, nogil=True, error_model="numpy")
def hybrid_key_force(p, s, x, v, a, dt):
    """Force (N) the user applies to the key at position ``x`` (m, +x pressing), velocity ``v`` (m/s)
    and acceleration ``a`` (m/s^2); advances the hammer by ``dt`` (s) with the key moving from the
    previous tick's position along the interpolant of the module docstring. Writes the next state into
    ``s`` (layout in the module docstring).

    ``dt <= 0`` evaluates the force without advancing; a positive ``dt`` is integrated within
    [``DT_MIN_S``, ``DT_MAX_S``]. Non-finite inputs return NaN and leave ``s`` unchanged; finite inputs
    never give NaN (they are clamped to ``X_LIMIT_M``, ``V_LIMIT_MPS``, ``A_LIMIT_MPS2``)."""
    if not (math.isfinite(x) and math.isfinite(v) and math.isfinite(a) and math.isfinite(dt)):
        return np.nan
    x = _clamp(x, -X_LIMIT_M, X_LIMIT_M)
    v = _clamp(v, -V_LIMIT_MPS, V_LIMIT_MPS)
    a = _clamp(a, -A_LIMIT_MPS2, A_LIMIT_MPS2)
    xl = p[P_XL]
    xr = p[P_XR]

    # key: F = m_k a + k_r x + F_p; keybed F_kb = max(0, k_kb (x - x_kb) + b_kb v)  (seed 004 eq. 2.1)
    f_key = p[P_MK] * a + p[P_KR] * x + p[P_FP]
    on_keybed = x > p[P_XKB]
    if on_keybed:
        f_kb = p[P_KKB] * (x - p[P_XKB]) + p[P_BKB] * v
        if f_kb > 0.0:
            f_key += f_kb

    if s[S_INIT] == 0.0:
        s[S_ESCAPED] = 1.0 if x > xl else 0.0
        _place_at_rest(p, s, x)
        s[S_XPREV] = x
        s[S_UPREV] = 0.0
        s[S_TPREV] = 0.0
        s[S_INIT] = 1.0
        for j in range(S_T_LAND, S_T_LETOFF + 1):
            s[j] = -1.0
        s[S_REACTION] = _dsdx(p, x, s[S_ESCAPED]) * p[P_MH] * p[P_G]
        s[S_FLAGS] = FLAG_CONTACT | (FLAG_ESCAPED if s[S_ESCAPED] != 0.0 else 0)
    if not dt > 0.0:
        return f_key + s[S_REACTION]

    T = _clamp(dt, DT_MIN_S, DT_MAX_S)
    x0 = s[S_XPREV]
    # key motion on the tick: the quadratic through the last three samples (mean velocities d1 over
    # the previous tick of length T_p and d2 over this one): x(t) = x0 + v0 t + acc t^2 / 2
    d1 = s[S_UPREV]
    t_p = s[S_TPREV] if s[S_TPREV] > 0.0 else T
    d2 = (x - x0) / T
    acc = 2.0 * (d2 - d1) / (T + t_p)
    v0 = d2 - 0.5 * acc * T
    y = s[S_Y]
    w = s[S_W]
    mode = s[S_MODE]
    s[S_EV_COUNT] = 0.0
    s[S_FLAGS] = 0.0
    for j in range(S_T_LAND, S_T_LETOFF + 1):
        if s[j] >= 0.0:
            s[j] += T  # time since the event at the end of this tick (overwritten by a new event)

    n_sub = max(1, min(int(math.ceil(T / p[P_H] - 1e-9)), MAX_SUBSTEPS))
    hs = T / n_sub
    max_iter = n_sub + _MAX_EXTRA_ITERATIONS
    iters = 0
    impulse = 0.0  # (ds/dx)-weighted key-hammer contact impulse over the tick (N s)
    # the key turns inside the tick at t_e = -v0 / acc: two monotone pieces [0, t_e], [t_e, T]
    t_e = T
    if acc != 0.0 and 0.0 < -v0 / acc < T:
        t_e = -v0 / acc
    t = 0.0
    xa = x0
    for piece in range(2):
        tb = t_e if piece == 0 else T
        if not tb > t:
            continue
        xb = x if tb == T else x0 + v0 * tb + 0.5 * acc * tb * tb
        pressing = xb > xa
        # crossings of the repetition and let-off points split the piece into intervals on which the
        # drive point is a quadratic in time
        t_rep = _crossing_time(x0, v0, acc, xr, t, tb, xa, xb)
        t_let = _crossing_time(x0, v0, acc, xl, t, tb, xa, xb)
        n_cross = (1 if t_rep >= 0.0 else 0) + (1 if t_let >= 0.0 else 0)
        let_first = t_let >= 0.0 and (t_rep < 0.0 or t_let <= t_rep)
        b1 = tb
        b2 = tb
        if n_cross == 2:
            b1 = min(t_rep, t_let)
            b2 = max(t_rep, t_let)
        elif n_cross == 1:
            b1 = max(t_rep, t_let)
        for k in range(3):
            seg_end = b1 if k == 0 else (b2 if k == 1 else tb)
            if (k == 1 and n_cross >= 1) or (k == 2 and n_cross == 2):
                # breakpoint at t: which point is crossed (k = 1: the earlier one)
                at_let = let_first if k == 1 else not let_first
                if at_let and pressing and s[S_ESCAPED] == 0.0:
                    # let-off: the jack escapes; the drive point drops by d_c onto the backcheck
                    s[S_ESCAPED] = 1.0
                    _log_event(s, EV_LETOFF, t, v0 + acc * t, T)
                    if mode == MODE_CONTACT and (p[P_LAW] == LAW_RIGID or _drive(p, xl, 1.0) - y <= 0.0):
                        mode = MODE_FLIGHT
                        _log_event(s, EV_LIFTOFF, t, w - p[P_R] * (v0 + acc * t), T)
                elif not at_let and not pressing and s[S_ESCAPED] != 0.0:
                    s[S_ESCAPED] = 0.0  # repetition: the jack is back under the hammer (continuous)
            if seg_end > t:
                y, w, mode, dj, iters = _advance(p, s, x0, v0, acc, t, seg_end, T, hs, y, w, mode,
                                                 max_iter, iters)
                impulse += dj
                t = seg_end
        xa = xb

    # runaway or non-finite hammer state: reset to rest on the key (counted)
    if not (abs(y) <= Y_LIMIT_M and abs(w) <= W_LIMIT_MPS and abs(impulse) <= F_LIMIT_N * T):
        s[S_RECOVERIES] += 1.0
        _place_at_rest(p, s, x)
        y = s[S_Y]
        w = s[S_W]
        mode = MODE_CONTACT
        impulse = _dsdx(p, x, s[S_ESCAPED]) * p[P_MH] * p[P_G] * T

    s[S_Y] = y
    s[S_W] = w
    s[S_XPREV] = x
    s[S_UPREV] = d2
    s[S_TPREV] = T
    s[S_MODE] = mode
    flags = int(s[S_FLAGS])
    flags |= FLAG_CONTACT if mode == MODE_CONTACT else FLAG_FLIGHT
    if s[S_ESCAPED] != 0.0:
        flags |= FLAG_ESCAPED
    if on_keybed:
        flags |= FLAG_KEYBED
    s[S_FLAGS] = flags
    reaction = impulse / T  # tick-mean (ds/dx) F_c: the hammer's reaction through the lever
    s[S_REACTION] = reaction
    return f_key + reaction


@njit(cache=True, nogil=True, error_model="numpy")
def hybrid_key_flags(p, s):
    """Mode/event flags of the last tick (int bit field; bits listed in the module docstring)."""
    return int(s[S_FLAGS])


@njit(cache=True, nogil=True, error_model="numpy")
def hybrid_key_run(p, s, x, v, a, dt, out_force, out_y, out_w, out_flags,
                   ev_tick, ev_code, ev_time, ev_speed):
    """Run the kernel over sampled key motion ``x[i]`` (m) at ``t = i dt`` (s), writing the force (N),
    hammer height (m), hammer velocity (m/s) and flags after each tick, and the events (tick index,
    code, time (s) from the first sample, speed (m/s)) into the ``ev_*`` arrays. Returns the number of
    events (may exceed the arrays' size; only the first ones are kept; at most four per tick)."""
    n_ev = 0
    for i in range(x.size):
        out_force[i] = hybrid_key_force(p, s, x[i], v[i], a[i], dt)
        out_y[i] = s[S_Y]
        out_w[i] = s[S_W]
        out_flags[i] = int(s[S_FLAGS])
        ne = min(int(s[S_EV_COUNT]), MAX_LOGGED_EVENTS)
        for j in range(ne):
            if n_ev < ev_tick.size:
                k = S_EV0 + 3 * j
                ev_tick[n_ev] = i
                ev_code[n_ev] = int(s[k])
                ev_time[n_ev] = (i - 1) * dt + s[k + 1]  # tick i runs from sample i-1 to sample i
                ev_speed[n_ev] = s[k + 2]
            n_ev += 1
    return n_ev


# ================================================================== Python model ===================
_CONTACT_LAWS = ("hunt-crossley", "rigid")
_HC_FIELDS = {"law", "k_Npm", "b_Nspm", "n"}
_RIGID_FIELDS = {"law", "restitution"}
_REQUIRED = {"key_mass_kg", "return_spring_Npm", "preload_N", "hammer_mass_kg", "lever_ratio", "contact"}
_OPTIONAL = {"gravity_mps2", "let_off_m", "check_drop_m", "repetition_m", "string_height_m",
             "string_restitution", "keybed_m", "keybed_k_Npm", "keybed_b_Nspm"}


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


class HybridKey(Model):
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

    References
    ----------
    Seed 000 (Patoglu & Gillespie), eqs. 1-5 and 26, the bouncing ball on a paddle.
    """

    kind = "hybrid-key"
    kind_code = KIND_HYBRID_KEY

    def __init__(self, key_mass_kg: float, return_spring_Npm: float, preload_N: float, hammer_mass_kg: float,
                 lever_ratio: float, contact: dict[str, Any], gravity_mps2: float = 9.81,
                 let_off_m: float | None = None, check_drop_m: float = 0.0, repetition_m: float = 0.0,
                 string_height_m: float | None = None,
                 string_restitution: float = 0.5, keybed_m: float | None = None,
                 keybed_k_Npm: float = 0.0, keybed_b_Nspm: float = 0.0) -> None:
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
        if self.let_off_m is not None:
            if self.keybed_m is not None and not self.let_off_m < self.keybed_m:
                raise ModelValidationError(f"let_off_m: must be < keybed_m ({self.keybed_m:g} m), "
                                           f"got {self.let_off_m:g}")
            if not self.repetition_m < self.let_off_m:
                raise ModelValidationError(f"repetition_m: must be < let_off_m ({self.let_off_m:g} m), "
                                           f"got {self.repetition_m:g}")
            if not self.check_drop_m > 0.0:
                raise ModelValidationError("check_drop_m: must be > 0 with a let-off point (the jack escapes "
                                           "by dropping the hammer onto the backcheck)")
            most = self.lever_ratio * (self.let_off_m - self.repetition_m)
            if self.check_drop_m > most:
                raise ModelValidationError(f"check_drop_m: must be <= lever_ratio * (let_off_m - repetition_m) "
                                           f"= {most:g} m, got {self.check_drop_m:g}")
        if self.string_height_m is not None:
            if self.let_off_m is None:
                raise ModelValidationError("string_height_m: a string needs a let-off point (let_off_m), "
                                           "or the key would pinch the hammer against it")
            top = self.lever_ratio * self.let_off_m
            if not self.string_height_m > top:
                raise ModelValidationError(f"string_height_m: must be above the let-off drive height "
                                           f"lever_ratio * let_off_m = {top:g} m, got {self.string_height_m:g}")
            if self.keybed_m is not None:
                check_top = self.lever_ratio * self.keybed_m - self.check_drop_m
                if not self.string_height_m > check_top:
                    raise ModelValidationError(f"string_height_m: must be above the backcheck at the keybed, "
                                               f"lever_ratio * keybed_m - check_drop_m = {check_top:g} m, "
                                               f"got {self.string_height_m:g}")

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
    def substep_s(self) -> float:
        """Longest hammer sub-step (s) of the Hunt-Crossley contact integration.

        ``MAX_SUBSTEP_S``, shortened so that omega h <= 0.5 and c h / m_h <= 0.5 at the largest
        penetration of a 10 m/s impact (stiffness n k rho^(n-1), damping c = b rho^n): RK4 then stays
        accurate for every realistic hammer speed. The largest penetration of an impact at speed V
        follows from m v dv/drho = -rho^n (k + b v) (seed 000 eq. 26)::

            rho_max^(n+1) = (n + 1) m_h (k / b^2) (z - ln(1 + z)),   z = b V / k

        (-> (n + 1) m_h V^2 / (2 k) as b -> 0). A tick longer than ``MAX_SUBSTEPS`` sub-steps uses
        ``MAX_SUBSTEPS`` longer ones (this bounds the cost per tick)."""
        if self.rigid:
            return MAX_SUBSTEP_S
        k, b, n = self.contact["k_Npm"], self.contact["b_Nspm"], self.contact["n"]
        m = self.hammer_mass_kg
        z = b * SUBSTEP_REF_SPEED_MPS / k
        if z < 1e-4:  # z - ln(1 + z) by its series, then times k / b^2, -> V^2 / (2 k) as b -> 0
            work = SUBSTEP_REF_SPEED_MPS ** 2 / (2.0 * k) * (1.0 - 2.0 * z / 3.0 + z * z / 2.0)
        else:
            work = k / (b * b) * (z - math.log1p(z))
        rho = ((n + 1.0) * m * work) ** (1.0 / (n + 1.0))  # largest penetration, from the energy balance
        stiffness = n * k * rho ** (n - 1.0)
        h = MAX_SUBSTEP_S
        if stiffness > 0.0:
            h = min(h, SUBSTEP_OMEGA_H / math.sqrt(stiffness / m))
        damping = b * rho ** n
        if damping > 0.0:
            h = min(h, SUBSTEP_OMEGA_H * m / damping)
        return float(max(h, 1e-9))

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
                "keybed_m": self.keybed_m, "keybed_k_Npm": self.keybed_k_Npm, "keybed_b_Nspm": self.keybed_b_Nspm}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "HybridKey":
        """Build from ``to_dict()`` output. Optional fields (defaults as in ``__init__``): gravity_mps2,
        let_off_m, check_drop_m, repetition_m, string_height_m, string_restitution, keybed_m, keybed_k_Npm,
        keybed_b_Nspm."""
        check_keys("hybrid-key", data, _REQUIRED, _OPTIONAL)
        return cls(**data)

    # -- simulation -----------------------------------------------------------------------------------
    def simulate(self, x_m: Any, dt_s: float, v_mps: Any = None, a_mps2: Any = None) -> "HybridKeyTrace":
        """Run the compiled kernel over key positions ``x_m[i]`` sampled at ``t = i dt_s`` (from rest).

        ``v_mps`` and ``a_mps2`` default to finite differences of ``x_m``. Returns a
        :class:`HybridKeyTrace` with the force, hammer trajectory, flags and located events."""
        x = np.ascontiguousarray(x_m, dtype=np.float64)
        if x.ndim != 1 or x.size == 0:
            raise ModelValidationError("x_m: expected a non-empty 1-D array of key positions")
        dt = as_float("dt_s", dt_s, min_value=0.0, strict_min=True)
        v = np.gradient(x, dt) if v_mps is None and x.size > 1 else np.zeros_like(x) if v_mps is None else v_mps
        v = np.ascontiguousarray(v, dtype=np.float64)
        a = np.gradient(v, dt) if a_mps2 is None and x.size > 1 else np.zeros_like(x) if a_mps2 is None else a_mps2
        a = np.ascontiguousarray(a, dtype=np.float64)
        if v.shape != x.shape or a.shape != x.shape:
            raise ModelValidationError("v_mps: velocity and acceleration must have the shape of x_m")
        p = self.params_block()
        s = self.initial_state()
        n = x.size
        force, y, w = np.empty(n), np.empty(n), np.empty(n)
        flags = np.empty(n, dtype=np.int64)
        cap = 4 * n
        ev_tick, ev_code = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
        ev_time, ev_speed = np.empty(cap), np.empty(cap)
        n_ev = hybrid_key_run(p, s, x, v, a, dt, force, y, w, flags, ev_tick, ev_code, ev_time, ev_speed)
        return HybridKeyTrace(time_s=np.arange(n) * dt, force_N=force, hammer_y_m=y, hammer_v_mps=w,
                              flags=flags, event_tick=ev_tick[:n_ev], event_code=ev_code[:n_ev],
                              event_time_s=ev_time[:n_ev], event_speed_mps=ev_speed[:n_ev], state=s)


@dataclass
class HybridKeyTrace:
    """Result of :meth:`HybridKey.simulate`: per-sample arrays and the located events.

    ``event_code`` uses ``EVENT_NAMES``; ``event_time_s`` is the event's time located inside its tick;
    ``event_speed_mps`` is the landing closing speed, the lift-off separation speed, the hammer speed at
    the string, or the key speed at let-off. ``state`` is the final kernel state."""

    time_s: np.ndarray
    force_N: np.ndarray
    hammer_y_m: np.ndarray
    hammer_v_mps: np.ndarray
    flags: np.ndarray
    event_tick: np.ndarray
    event_code: np.ndarray
    event_time_s: np.ndarray
    event_speed_mps: np.ndarray
    state: np.ndarray

    def events(self, code: int | None = None) -> np.ndarray:
        """Times (s) of the events with ``code`` (all events if None)."""
        if code is None:
            return self.event_time_s.copy()
        return self.event_time_s[self.event_code == code]

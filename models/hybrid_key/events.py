"""Event times and contact steps of the hybrid key: closed-form landing, string and crossing times,
lift-off location, the Hunt-Crossley contact's RK4 step (seed 000 eq. 26), and the log of a tick's events
in the state block. Pure arithmetic, compiled."""

from __future__ import annotations

import math

from numba import njit

from hapticam.models.hybrid_key.layout import (EV_LANDING, EV_LIFTOFF, EV_STRING, FLAG_IMPACT, FLAG_LETOFF,
                                               FLAG_LIFTOFF, FLAG_STRING, F_LIMIT_N, KERNEL_JIT, KEY_STEP_FORCE_SHARE,
                                               KEY_STEP_OMEGA_H, MAX_LOGGED_EVENTS, P_B, P_G, P_K, P_MH, P_N, S_EV0,
                                               S_EV_COUNT, S_FLAGS, S_T_LAND, S_T_LETOFF, S_T_LIFT, S_T_STRING,
                                               SUBSTEP_OMEGA_H)


@njit(**KERNEL_JIT)
def clamp(val, lo, hi):
    return lo if val < lo else (hi if val > hi else val)


@njit(**KERNEL_JIT)
def hc_force(p, rho, rho_dot):
    """Hunt-Crossley contact force (N): F = k rho^n + b rho^n rho_dot, >= 0 (seed 000 eq. 26)."""
    if rho <= 0.0:
        return 0.0
    n = p[P_N]
    rn = rho * math.sqrt(rho) if n == 1.5 else (rho if n == 1.0 else rho ** n)  # rho^n, fast paths
    f = rn * (p[P_K] + p[P_B] * rho_dot)  # k |rho|^(n-1) rho + b |rho|^n rho_dot, rho > 0  (seed 000 eq. 26)
    if not f > 0.0:  # no tensile force; also catches NaN from 0 * inf
        return 0.0
    return F_LIMIT_N if f > F_LIMIT_N else f


@njit(**KERNEL_JIT)
def rk4_contact(p, s0, sp, sa, y, w, h):
    """One RK4 step of m_h y'' = F_c(s - y, s_dot - y_dot) - m_h g with the drive point
    s(t) = s0 + sp t + sa t^2 / 2. Returns (y, w, contact impulse over the step (N s))."""
    m = p[P_MH]
    g = p[P_G]
    hh = 0.5 * h
    s_mid = s0 + hh * sp + 0.5 * sa * hh * hh
    sp_mid = sp + sa * hh
    f1 = hc_force(p, s0 - y, sp - w)
    y2 = y + hh * w
    w2 = w + hh * (f1 / m - g)
    f2 = hc_force(p, s_mid - y2, sp_mid - w2)
    y3 = y + hh * w2
    w3 = w + hh * (f2 / m - g)
    f3 = hc_force(p, s_mid - y3, sp_mid - w3)
    y4 = y + h * w3
    w4 = w + h * (f3 / m - g)
    f4 = hc_force(p, s0 + h * sp + 0.5 * sa * h * h - y4, sp + sa * h - w4)
    y_new = y + h / 6.0 * (w + 2.0 * w2 + 2.0 * w3 + w4)
    w_new = w + h / 6.0 * ((f1 + 2.0 * f2 + 2.0 * f3 + f4) / m - 6.0 * g)
    return y_new, w_new, h / 6.0 * (f1 + 2.0 * f2 + 2.0 * f3 + f4)


@njit(**KERNEL_JIT)
def liftoff_time(s0, sp, sa, y0, w0, y1, w1, h):
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


@njit(**KERNEL_JIT)
def landing_time(g0, c1, q):
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


@njit(**KERNEL_JIT)
def string_time(d0, w, g):
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


@njit(**KERNEL_JIT)
def crossing_time(x0, v0, a, c, ta, tb, xa, xb):
    """Time in [ta, tb] where the key x(t) = x0 + v0 t + a t^2 / 2, monotone on [ta, tb], passes c going
    from xa = x(ta) to xb = x(tb), or -1. Pressing passes c when it goes beyond it (xa <= c < xb),
    releasing when it reaches it (xb <= c < xa): let-off is x > x_l, repetition x <= x_r."""
    if not ((xa <= c < xb) or (xb <= c < xa)):
        return -1.0
    d = x0 - c
    if a == 0.0:
        return clamp(-d / v0, ta, tb)
    # roots of a t^2 / 2 + v0 t + d = 0, cancellation-free; take the one on [ta, tb]
    sq = math.sqrt(max(v0 * v0 - 2.0 * a * d, 0.0))
    qq = -0.5 * (v0 + (sq if v0 >= 0.0 else -sq))
    r1 = qq / (0.5 * a)
    r2 = d / qq if qq != 0.0 else r1
    e1 = max(ta - r1, r1 - tb, 0.0)
    e2 = max(ta - r2, r2 - tb, 0.0)
    return clamp(r1 if e1 <= e2 else r2, ta, tb)



@njit(**KERNEL_JIT)
def contact_admits_step(k, b, n, m_h, m_inv, rho, closing, approach, resting_force, h):
    """Whether a step of ``h`` (s) keeps the Hunt-Crossley contact ``F = rho^n (k + b rho_dot)`` within the
    coupled key's rule for its longer steps (``HybridKey.key_step_s``), from the penetration ``rho`` (m, < 0: a
    gap) closing at ``closing`` (m/s), an approach acceleration bounded by ``approach`` (m/s^2, >= 0) without the
    contact force, the contact's inverse mass ``m_inv`` (1/kg) and the force ``resting_force`` (N) that would
    carry the hammer on the key as it moves (the contact's quasi-static force). Admitted: no penetration within
    the step; or a contact that is not in an impact (its elastic force ``k rho^n`` within ``KEY_STEP_FORCE_SHARE``
    of itself from ``resting_force``, over its oscillation: closing speed included) and whose local frequency
    and damping at the deepest penetration the step can reach keep ``KEY_STEP_OMEGA_H`` (the key) and
    ``SUBSTEP_OMEGA_H`` (the hammer's one RK4 step over it). A law with n < 1 (stiffest at a touch) admits no
    step that touches."""
    approach_speed = max(closing, 0.0)
    rho_h = rho + (approach_speed + 0.5 * approach * h) * h  # the contact force only ever slows an approach
    if rho_h <= 0.0:
        return True
    if n < 1.0 or rho <= 0.0:
        return False
    root = math.sqrt(rho_h) if n == 1.5 else (1.0 if n == 1.0 else rho_h ** (n - 1.0))   # rho_h^(n-1)
    stiffness = n * root * (k + b * (approach_speed + approach * h))
    damping = b * root * rho_h
    if not (h * h * stiffness * m_inv <= KEY_STEP_OMEGA_H * KEY_STEP_OMEGA_H
            and h * damping * m_inv <= KEY_STEP_OMEGA_H
            and h * h * stiffness <= SUBSTEP_OMEGA_H * SUBSTEP_OMEGA_H * m_h
            and h * damping <= SUBSTEP_OMEGA_H * m_h):
        return False
    # not in an impact: the contact's oscillation about its quasi-static force, (F - F_r)^2 + K rho_dot^2 / m_inv
    # (its force amplitude, K = n k rho^(n-1) the local stiffness), within the share of the elastic force F
    root = math.sqrt(rho) if n == 1.5 else (1.0 if n == 1.0 else rho ** (n - 1.0))
    force = k * root * rho
    away = force - resting_force
    share = KEY_STEP_FORCE_SHARE * force
    return away * away + n * k * root * closing * closing / m_inv <= share * share


@njit(**KERNEL_JIT)
def log_event(s, code, t, speed, T):
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

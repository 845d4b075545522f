"""The hybrid key's compiled kernel: the key's force and the hammer advanced over one tick (seed 000
sections 1 and 5; the model and its equations are described in :mod:`hapticam.models.hybrid_key.model`)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from hapticam.models.hybrid_key.coupling import (begin_tick, coupling_preload, end_tick, gather_substep,
                                                key_step_admitted, key_substep, pad_force, pad_rest)
from hapticam.models.hybrid_key.events import (clamp, crossing_time, landing_time, liftoff_time, log_event,
                                               rk4_contact, string_time)
from hapticam.models.hybrid_key.geometry import check_held, drive_at, drive_kink, lever_at
from hapticam.models.hybrid_key.layout import (ABSENT_M, A_LIMIT_MPS2, DT_MAX_S, DT_MIN_S, EV_LANDING, EV_LETOFF,
                                               EV_LIFTOFF, EV_STRING, FLAG_CONTACT, FLAG_ESCAPED, FLAG_FLIGHT,
                                               FLAG_IMPACT, FLAG_KEYBED, F_LIMIT_N, LAW_RIGID, MAX_EXTRA_ITERATIONS,
                                               MAX_SUBSTEPS, MODE_CONTACT, MODE_FLIGHT, P_BC, P_BK,
                                               P_BKB, P_DELTA0, P_E, P_ES, P_FP, P_G, P_H, P_HK, P_HKC, P_KC, P_KKB,
                                               P_KR, P_LAW, P_MH, P_MK, P_PAD, P_RAIL, P_TOUCH, P_VCAP, P_XKB, P_XL,
                                               P_XR, P_YS, S_AK, S_ESCAPED, S_EV_COUNT, S_FLAGS, S_INIT, S_LAND_SPEED,
                                               S_MODE, S_REACTION, S_RECOVERIES, S_STRING_SPEED, S_TH, S_TPREV, S_UH,
                                               S_VK, S_XH, S_XK, S_RK, S_T_LAND, S_T_LETOFF, S_UPREV, S_W, S_XC,
                                               S_XPREV, S_Y, V_LIMIT_MPS, W_LIMIT_MPS, X_LIMIT_M, Y_LIMIT_M)
from hapticam.models.hybrid_key.layout import KERNEL_JIT, key_steps


@njit(**KERNEL_JIT)
def _place_at_rest(p, s, x):
    """Put the hammer at rest on the drive point at key position x (contact mode)."""
    s[S_Y] = drive_at(p, s, x, s[S_ESCAPED]) - p[P_DELTA0]  # static penetration m_h g = k delta0^n (seed 000 eq. 26)
    s[S_W] = 0.0
    s[S_MODE] = MODE_CONTACT


@njit(**KERNEL_JIT)
def _advance(p, s, x0, v0, a, t, seg_end, T, hs, y, w, mode, max_iter, iters):
    """Advance the hammer from t to seg_end (s) over a monotone piece of the key's motion between
    escapement crossings, split where the key crosses the hammer rail's kink (``drive_kink``) so that
    the drive point is linear in x on each part. Returns as :func:`_advance_linear`."""
    if p[P_RAIL] != 0.0:
        xa = x0 + v0 * t + 0.5 * a * t * t
        xb = x0 + v0 * seg_end + 0.5 * a * seg_end * seg_end
        tk = crossing_time(x0, v0, a, drive_kink(p, s[S_ESCAPED]), t, seg_end, xa, xb)
        if t < tk < seg_end:
            y, w, mode, j1, iters = _advance_linear(p, s, x0, v0, a, t, tk, T, hs, y, w, mode, max_iter, iters)
            y, w, mode, j2, iters = _advance_linear(p, s, x0, v0, a, tk, seg_end, T, hs, y, w, mode, max_iter,
                                                    iters)
            return y, w, mode, j1 + j2, iters
    return _advance_linear(p, s, x0, v0, a, t, seg_end, T, hs, y, w, mode, max_iter, iters)


@njit(**KERNEL_JIT)
def _advance_linear(p, s, x0, v0, a, t, seg_end, T, hs, y, w, mode, max_iter, iters):
    """Advance the hammer from t to seg_end (s) over one interval on which the drive point is a
    quadratic in time (the key x(t) = x0 + v0 t + a t^2 / 2, the drive linear in x). Returns
    (y, w, mode, (ds/dx)-weighted contact impulse (N s), iterations used)."""
    g = p[P_G]
    m = p[P_MH]
    rigid = p[P_LAW] == LAW_RIGID
    esc = s[S_ESCAPED]
    t_mid = 0.5 * (t + seg_end)
    lever = lever_at(p, s, x0 + v0 * t_mid + 0.5 * a * t_mid * t_mid, esc)
    sa = lever * a  # drive point acceleration on this interval
    q = g + sa  # hammer-to-drive relative "gravity": the contact force per mass in rigid contact
    impulse = 0.0
    if rigid and mode == MODE_CONTACT:
        w, mode, dj = _rigid_entry(s, lever, m, q, v0, a, t, seg_end, T, w, mode)
        impulse += dj
    while t < seg_end:
        iters += 1
        s_t = drive_at(p, s, x0 + v0 * t + 0.5 * a * t * t, esc)
        sp = lever * (v0 + a * t)
        if iters > max_iter:
            # pathological event chattering: finish the interval with the hammer resting on the key
            s[S_RECOVERIES] += 1.0
            impulse += lever * m * max(q, 0.0) * (seg_end - t)
            t = seg_end
            y = drive_at(p, s, x0 + v0 * t + 0.5 * a * t * t, esc) - (0.0 if rigid else p[P_DELTA0])
            w = lever * (v0 + a * t)
            mode = MODE_CONTACT
            break
        if mode == MODE_FLIGHT:
            y, w, t, mode, dj = _flight(p, s, x0, v0, a, t, seg_end, T, lever, q, s_t, sp, y, w, mode, esc, rigid)
            impulse += dj
            if mode == MODE_CONTACT and hs > p[P_H]:
                hs = p[P_H]  # a landing inside a key's longer step: the impact on the hammer's own sub-steps
        elif rigid:
            # hammer moves with the drive point; contact force m_h (g + s_ddot) over the interval
            impulse += lever * m * q * (seg_end - t)
            t = seg_end
            y = drive_at(p, s, x0 + v0 * t + 0.5 * a * t * t, esc)
            w = lever * (v0 + a * t)
        else:
            y, w, t, mode, dj = _hc_contact(p, s, x0, v0, a, t, seg_end, T, hs, lever, sa, s_t, sp, y, w, mode, esc)
            impulse += dj
    return y, w, mode, impulse, iters


@njit(**KERNEL_JIT)
def _rigid_entry(s, lever, m, q, v0, a, t, seg_end, T, w, mode):
    """Rigid contact at an interval start: the drive point's velocity may jump there (the interpolant is
    C0 at ticks, and ds/dx changes at let-off/repetition); the hammer follows unless the mean contact force
    over the interval would be tensile, m_h (dw + max(q, 0) L) < 0; then it flies off.
    Returns (w, mode, (ds/dx)-weighted impulse)."""
    impulse = 0.0
    sp = lever * (v0 + a * t)
    dw = sp - w
    if dw >= -max(q, 0.0) * (seg_end - t):
        impulse += lever * m * dw
        w = sp
        if q < 0.0:
            mode = MODE_FLIGHT  # the drive point drops away faster than g: lift-off, zero speed
            log_event(s, EV_LIFTOFF, t, 0.0, T)
    else:
        mode = MODE_FLIGHT
        log_event(s, EV_LIFTOFF, t, -dw, T)
    return w, mode, impulse


@njit(**KERNEL_JIT)
def _flight(p, s, x0, v0, a, t, seg_end, T, lever, q, s_t, sp, y, w, mode, esc, rigid):
    """Free flight from t to the first of: landing on the drive point, the string, the interval's end.
    Returns (y, w, t, mode, (ds/dx)-weighted impulse of a rigid landing)."""
    g = p[P_G]
    m = p[P_MH]
    ys = p[P_YS]
    impulse = 0.0
    span = seg_end - t
    tau_l = landing_time(y - s_t, w - sp, q)
    tau_s = string_time(ys - y, w, g)
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
        log_event(s, EV_STRING, t, w, T)
        w = -p[P_ES] * w
    elif hit_land:
        y = drive_at(p, s, x0 + v0 * t + 0.5 * a * t * t, esc)
        sp = lever * (v0 + a * t)
        rel = w - sp  # <= 0: closing speed
        s[S_LAND_SPEED] = -rel
        earlier = int(s[S_FLAGS]) & FLAG_IMPACT
        log_event(s, EV_LANDING, t, -rel, T)
        if lever_at(p, s, x0 + v0 * t + 0.5 * a * t * t, esc) == 0.0:
            # on its rail (lever 0 at the key): the key feels none of it, no impact of the key's (as
            # hybrid_key_impact); the event stays in the log
            s[S_FLAGS] = float((int(s[S_FLAGS]) & ~FLAG_IMPACT) | earlier)
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
    return y, w, t, mode, impulse


@njit(inline="always", **KERNEL_JIT)
def _hc_contact(p, s, x0, v0, a, t, seg_end, T, hs, lever, sa, s_t, sp, y, w, mode, esc):
    """One RK4 sub-step of Hunt-Crossley contact (to the next point of the tick's sub-step grid), or up
    to a lift-off inside it. Returns (y, w, t, mode, (ds/dx)-weighted impulse)."""
    impulse = 0.0
    # Hunt-Crossley contact: RK4 on the sub-step grid k * hs of the tick
    t_next = min((int(t / hs + 1e-7) + 1) * hs, seg_end)
    h = t_next - t
    y1, w1, j1 = rk4_contact(p, s_t, sp, sa, y, w, h)
    if s_t + sp * h + 0.5 * sa * h * h - y1 > 0.0:
        y, w = y1, w1
        impulse += lever * j1
        t = t_next
    else:
        # lift-off inside the sub-step: locate rho = 0, redo the step up to it, then fly
        tau = liftoff_time(s_t, sp, sa, y, w, y1, w1, h)
        y1, w1, j1 = rk4_contact(p, s_t, sp, sa, y, w, tau)
        impulse += lever * j1
        t = t + tau
        y = drive_at(p, s, x0 + v0 * t + 0.5 * a * t * t, esc)
        w = w1
        mode = MODE_FLIGHT
        log_event(s, EV_LIFTOFF, t, w - lever * (v0 + a * t), T)
    return y, w, t, mode, impulse


@njit(**KERNEL_JIT)
def _key_force(p, x, v, a):
    """The key's own force (N) and whether it is on the keybed:
    F = m_k a + k_r x + F_p; keybed F_kb = max(0, k_kb (x - x_kb) + b_kb v)  (seed 004 eq. 2.1)."""
    f_key = p[P_MK] * a + p[P_KR] * x + p[P_FP]
    on_keybed = x > p[P_XKB]
    if on_keybed:
        f_kb = p[P_KKB] * (x - p[P_XKB]) + p[P_BKB] * v
        if f_kb > 0.0:
            f_key += f_kb
    return f_key, on_keybed


@njit(**KERNEL_JIT)
def _initialise(p, s, x):
    """First tick: the hammer at rest on the key at x, no events yet."""
    s[S_ESCAPED] = 1.0 if x > p[P_XL] else 0.0
    _place_at_rest(p, s, x)
    s[S_XPREV] = x
    s[S_UPREV] = 0.0
    s[S_TPREV] = 0.0
    s[S_INIT] = 1.0
    for j in range(S_T_LAND, S_T_LETOFF + 1):
        s[j] = -1.0
    s[S_REACTION] = lever_at(p, s, x, s[S_ESCAPED]) * p[P_MH] * p[P_G]
    s[S_FLAGS] = FLAG_CONTACT | (FLAG_ESCAPED if s[S_ESCAPED] != 0.0 else 0)


@njit(**KERNEL_JIT)
def _tick_start(s, x, T):
    """The key's motion on the tick, the quadratic through the last three samples (mean velocities d1
    over the previous tick of length T_p and d2 over this one): x(t) = x0 + v0 t + acc t^2 / 2.
    Clears the tick's events and flags and ages the times since events. Returns (x0, d2, acc, v0)."""
    x0 = s[S_XPREV]
    d1 = s[S_UPREV]
    t_p = s[S_TPREV] if s[S_TPREV] > 0.0 else T
    d2 = (x - x0) / T
    acc = 2.0 * (d2 - d1) / (T + t_p)
    v0 = d2 - 0.5 * acc * T
    s[S_EV_COUNT] = 0.0
    s[S_FLAGS] = 0.0
    for j in range(S_T_LAND, S_T_LETOFF + 1):
        if s[j] >= 0.0:
            s[j] += T  # time since the event at the end of this tick (overwritten by a new event)
    return x0, d2, acc, v0


@njit(**KERNEL_JIT)
def _escapement(p, s, t, v0, acc, T, at_let, pressing, mode, y, w):
    """At a let-off or repetition crossing: let-off (pressing, not yet escaped) makes the jack escape and
    the drive point drop by d_c onto the backcheck (the hammer may fly); repetition (releasing, escaped)
    puts the jack back under the hammer (continuous). Returns the hammer's mode."""
    if at_let and pressing and s[S_ESCAPED] == 0.0:
        s[S_ESCAPED] = 1.0
        log_event(s, EV_LETOFF, t, v0 + acc * t, T)
        if mode == MODE_CONTACT and (p[P_LAW] == LAW_RIGID or drive_at(p, s, p[P_XL], 1.0) - y <= 0.0):
            mode = MODE_FLIGHT
            log_event(s, EV_LIFTOFF, t, w - lever_at(p, s, p[P_XL], 1.0) * (v0 + acc * t), T)
    elif not at_let and not pressing and s[S_ESCAPED] != 0.0:
        s[S_ESCAPED] = 0.0
    return mode


@njit(inline="always", **KERNEL_JIT)
def _tick_end(p, s, x, y, w, mode, impulse, on_keybed, d2, T):
    """Store the hammer and key state and the flags; return the hammer's reaction at the key (N), the
    tick-mean (ds/dx) F_c through the lever. A runaway or non-finite hammer state is reset to rest on
    the key (counted)."""
    if not (abs(y) <= Y_LIMIT_M and abs(w) <= W_LIMIT_MPS and abs(impulse) <= F_LIMIT_N * T):
        s[S_RECOVERIES] += 1.0
        _place_at_rest(p, s, x)
        y = s[S_Y]
        w = s[S_W]
        mode = MODE_CONTACT
        impulse = lever_at(p, s, x, s[S_ESCAPED]) * p[P_MH] * p[P_G] * T
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
    reaction = impulse / T
    s[S_REACTION] = reaction
    return reaction


@njit(**KERNEL_JIT)
def hybrid_key_force(p, s, x, v, a, dt):
    """Force (N) the user applies to the key at position ``x`` (m, +x pressing), velocity ``v`` (m/s)
    and acceleration ``a`` (m/s^2); advances the hammer by ``dt`` (s) with the key moving from the
    previous tick's position along the interpolant of the module docstring. Writes the next state into
    ``s`` (layout in the module docstring). With a handle-key coupling (``p[P_KC] > 0``) ``x`` is the
    handle, which pulls the simulated key through the coupling (:mod:`hybrid_key_coupling`); ``a`` is
    then unused (the key's inertia is simulated). Above the key's surface (``x`` below ``touch_m``) the
    force is 0.

    ``dt <= 0`` evaluates the force without advancing; a positive ``dt`` is integrated within
    [``DT_MIN_S``, ``DT_MAX_S``]. Non-finite inputs return NaN and leave ``s`` unchanged; finite inputs
    never give NaN (they are clamped to ``X_LIMIT_M``, ``V_LIMIT_MPS``, ``A_LIMIT_MPS2``)."""
    f = _coupled_force(p, s, x, v, dt) if p[P_KC] > 0.0 else _direct_force(p, s, x, v, a, dt)
    if p[P_TOUCH] >= 0.0 and x < p[P_TOUCH] and p[P_PAD] == 0.0:
        return 0.0                      # above the key's surface nothing touches it (the hammer runs on)
    return f                            # (a pad holding the key: its own force says where it touches)


@njit(**KERNEL_JIT)
def _coupled_force(p, s, x, v, dt):
    """The handle at ``x`` (m) pulls the simulated key through the coupling over ``n`` key sub-steps of
    one tick (the handle linear in time between samples), taken ``q`` at a time as one step while the
    hammer's contact admits it (``HybridKey.key_step_s``, :func:`_coupled_steps`); the hammer is advanced by
    the kinematic kernel along the key's steps. Returns the key's springs at the handle plus the tick-mean
    coupling force (N)."""
    if not (math.isfinite(x) and math.isfinite(v) and math.isfinite(dt)):
        return np.nan
    x = clamp(x, -X_LIMIT_M, X_LIMIT_M)
    v = clamp(v, -V_LIMIT_MPS, V_LIMIT_MPS)
    f_key, on_keybed = _key_force(p, x, v, 0.0)  # the key's springs and keybed at the handle
    pad = p[P_PAD] > 0.0
    if pad:
        f_key = 0.0                              # a pad holding the key: they act on the key (hybrid_key_coupling)
    if s[S_INIT] == 0.0:
        _coupled_initialise(p, s, x, pad)
    if not dt > 0.0:
        if pad:
            return pad_force(p, x, v, s[S_XK], s[S_VK])[0]
        return f_key + p[P_KC] * (x - s[S_XK]) + p[P_BC] * (v - s[S_VK]) + coupling_preload(p, s)
    T = clamp(dt, DT_MIN_S, DT_MAX_S)
    begin_tick(s)
    mean_force = _coupled_steps(p, s, x, T)
    end_tick(s, on_keybed)
    if not (math.isfinite(mean_force) and abs(s[S_XK]) <= X_LIMIT_M and abs(s[S_VK]) <= W_LIMIT_MPS):
        s[S_RECOVERIES] += 1.0  # a runaway key: back to rest under the handle (counted)
        s[S_XK] = x if not pad else max(x, pad_rest(p))
        s[S_VK] = 0.0
        return f_key + coupling_preload(p, s)
    return f_key + mean_force


@njit(**KERNEL_JIT)
def _coupled_initialise(p, s, x, pad):
    """First tick of a coupled key: at rest under the handle at ``x`` (m), the hammer on the jack (F_c = F_0 = R);
    a key held by a pad (``pad``) on its back rail, or on the pad pressed by its static load."""
    s[S_XK] = x
    s[S_VK] = 0.0
    s[S_XH] = x
    s[S_UH] = 0.0
    s[S_TH] = 0.0
    s[S_XC] = x
    _direct_force(p, s, x, 0.0, 0.0, 0.0)
    s[S_RK] = s[S_REACTION]
    if pad:
        load, _ = _key_force(p, x, 0.0, 0.0)
        s[S_XK] = max(x - (load + s[S_REACTION]) / p[P_KC], pad_rest(p))


@njit(inline="always", **KERNEL_JIT)
def _coupled_steps(p, s, x, T):
    """Advance the coupled key and its hammer over a tick of ``T`` (s) with the handle arriving at ``x`` (m);
    returns the tick-mean coupling force (N). ``n`` sub-steps of the key (``P_HK``); between the hammer's impacts
    up to ``q`` of them as one step (``P_HKC``, ``HybridKey.key_step_s``), the hammer one RK4 step over it; an
    impact's sub-steps are taken one by one, ``q`` at a time before the rule is asked again."""
    n, q = key_steps(T, p[P_HK], p[P_HKC])
    h = T / n
    # the handle on the quadratic through its last three samples (mean velocities d1 over the previous
    # tick of length T_p, d2 over this one), as the kinematic key's drive: x_h(t) = x0 + v0 t + acc t^2 / 2
    x0 = s[S_XH]
    d2 = (x - x0) / T
    t_p = s[S_TH] if s[S_TH] > 0.0 else T
    acc = 2.0 * (d2 - s[S_UH]) / (T + t_p) if p[P_BK] > 0.0 else 0.0   # a physical pad: linear
    v0 = d2 - 0.5 * acc * T
    total = 0.0
    j = 0                                        # sub-steps taken
    fine_until = 0                               # below this, sub-steps one by one (an impact)
    while j < n:
        m = 1
        if q > 1 and j >= fine_until and n - j > 1:
            if key_step_admitted(p, s, min(q, n - j) * h):
                m = min(q, n - j)
            else:
                fine_until = j + q
        t_j = (j + m) * h
        h_j = m * h
        # the handle's mean velocity over the step: v0 + acc (t_j - h_j / 2)
        x_j = x0 + v0 * t_j + 0.5 * acc * t_j * t_j if acc != 0.0 else x0 + (x - x0) * ((j + m) / n)
        vk = s[S_VK]
        total += m * key_substep(p, s, x_j, v0 + acc * (t_j - 0.5 * h_j), h_j)
        s[S_AK] = (s[S_VK] - vk) / h_j
        s[S_XC] = x_j
        _hammer_tick(p, s, s[S_XK], s[S_VK], 0.0, h_j, p[P_H] if m == 1 else h_j)
        if s[S_ESCAPED] != 0.0 and check_held(p) and max(x_j, s[S_XK]) <= p[P_XR]:
            s[S_ESCAPED] = 0.0  # key and handle above x_r: the jack back under the hammer (hybrid_key_geometry)
        s[S_RK] = s[S_REACTION]
        gather_substep(s, j * h)
        j += m
    s[S_XH] = x
    s[S_UH] = d2
    s[S_TH] = T
    return total / n


@njit(**KERNEL_JIT)
def _direct_force(p, s, x, v, a, dt):
    """:func:`hybrid_key_force` with the key driven directly by ``x`` (no coupling)."""
    return _hammer_tick(p, s, x, v, a, dt, p[P_H])


@njit(**KERNEL_JIT)
def _hammer_tick(p, s, x, v, a, dt, hammer_step):
    """:func:`_direct_force` with the hammer's Hunt-Crossley contact on RK4 steps of at most ``hammer_step`` (s)."""
    if not (math.isfinite(x) and math.isfinite(v) and math.isfinite(a) and math.isfinite(dt)):
        return np.nan
    x = clamp(x, -X_LIMIT_M, X_LIMIT_M)
    v = clamp(v, -V_LIMIT_MPS, V_LIMIT_MPS)
    a = clamp(a, -A_LIMIT_MPS2, A_LIMIT_MPS2)
    xl = p[P_XL]
    xr = -ABSENT_M if check_held(p) else p[P_XR]  # a held check's jack returns in _coupled_force

    f_key, on_keybed = _key_force(p, x, v, a)
    if s[S_INIT] == 0.0:
        _initialise(p, s, x)
    if not dt > 0.0:
        return f_key + s[S_REACTION]

    T = clamp(dt, DT_MIN_S, DT_MAX_S)
    x0, d2, acc, v0 = _tick_start(s, x, T)
    y = s[S_Y]
    w = s[S_W]
    mode = s[S_MODE]

    n_sub = max(1, min(int(math.ceil(T / hammer_step - 1e-9)), MAX_SUBSTEPS))
    hs = T / n_sub
    # a landing inside a longer step takes the hammer's own sub-steps (_advance_linear)
    max_iter = max(n_sub, min(int(math.ceil(T / p[P_H] - 1e-9)), MAX_SUBSTEPS)) + MAX_EXTRA_ITERATIONS
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
        t_rep = crossing_time(x0, v0, acc, xr, t, tb, xa, xb)
        t_let = crossing_time(x0, v0, acc, xl, t, tb, xa, xb)
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
                mode = _escapement(p, s, t, v0, acc, T, at_let, pressing, mode, y, w)
            if seg_end > t:
                y, w, mode, dj, iters = _advance(p, s, x0, v0, acc, t, seg_end, T, hs, y, w, mode,
                                                 max_iter, iters)
                impulse += dj
                t = seg_end
        xa = xb

    return f_key + _tick_end(p, s, x, y, w, mode, impulse, on_keybed, d2, T)


@njit(**KERNEL_JIT)
def hybrid_key_flags(p, s):
    """Mode/event flags of the last tick (int bit field; bits listed in the module docstring)."""
    return int(s[S_FLAGS])


@njit(**KERNEL_JIT)
def hybrid_key_diag(p, s, which):
    """Diagnostics after the last tick: 0 the hammer height y (m), 1 the drive point's height (m): the
    jack, or the backcheck once escaped (:func:`drive_point` at the key's last position)."""
    if which == 0:
        return s[S_Y]
    return drive_at(p, s, s[S_XPREV], s[S_ESCAPED])

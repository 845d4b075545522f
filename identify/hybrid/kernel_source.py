"""The compiled simulation kernel of :mod:`hapticam.identify.hybrid.engine`, as a template.

The engine binds this module's text to one model (its flow, guards and resets and its sizes, in the block
between the ``binding`` markers) and imports the result from a file of its own, so numba caches the
compiled kernel across processes (a closure over the model's functions could not be cached). This module
itself is never run; its placeholders are replaced in every bound copy. Integration: classical RK4 on
(x, S) together; events located on the RK4 partial step by safeguarded regula falsi; the sensitivity
jumps at events by seed 000 eqs. 12 and 14 (see the engine's docstring).
"""

import numpy as np
from numba import njit

OK, TOO_MANY_EVENTS, NOT_FINITE, NOT_TRANSVERSAL, STUCK = 0, 1, 2, 3, 4
#: a guard within this of zero when its mode is entered starts on the guard (a reset landed on it)
ON_GUARD = 1e-9

# >>> binding (replaced by the engine: the model's compiled functions and its sizes)
flow = flow_jac = n_guards = guard = reset = None
n, npar, G = 1, 1, 1
# <<< binding


@njit(cache=True)
def deriv(mode, t, x, S, Pd, p, dx, dS, Fx, Fp):
    flow(mode, t, x, p, dx)
    flow_jac(mode, t, x, p, Fx, Fp)
    m = S.shape[1]
    for i in range(n):
        for c in range(m):
            acc = 0.0
            for k in range(n):
                acc += Fx[i, k] * S[k, c]
            for k in range(npar):
                acc += Fp[i, k] * Pd[k, c]
            dS[i, c] = acc  # S' = F_x S + F_p Pd  (seed 000 eq. 8)

@njit(cache=True)
def rk4(mode, t, x, S, Pd, p, h, with_s, xo, So, kx, kS, xt, St, Fx, Fp):
    # classical RK4 on (x, S); kx[r], kS[r] hold the four stages (explicit loops: fast to compile)
    m = S.shape[1]
    for r in range(4):
        c = 0.0 if r == 0 else (0.5 * h if r < 3 else h)
        for i in range(n):
            xt[i] = x[i] + (c * kx[r - 1, i] if r > 0 else 0.0)
            if with_s:
                for q in range(m):
                    St[i, q] = S[i, q] + (c * kS[r - 1, i, q] if r > 0 else 0.0)
        if with_s:
            deriv(mode, t + c, xt, St, Pd, p, kx[r], kS[r], Fx, Fp)
        else:
            flow(mode, t + c, xt, p, kx[r])
    w = h / 6.0
    for i in range(n):
        xo[i] = x[i] + w * (kx[0, i] + 2.0 * kx[1, i] + 2.0 * kx[2, i] + kx[3, i])
        if with_s:
            for q in range(m):
                So[i, q] = S[i, q] + w * (kS[0, i, q] + 2.0 * kS[1, i, q] + 2.0 * kS[2, i, q] + kS[3, i, q])

@njit(cache=True)
def copy_state(x, S, xd, Sd):
    for i in range(x.shape[0]):
        xd[i] = x[i]
        for q in range(S.shape[1]):
            Sd[i, q] = S[i, q]

@njit(cache=True)
def locate(mode, j, t, x, S, Pd, p, s1, g0, g1, xo, kx, kS, xt, St, Fx, Fp, gx, gp):
    # safeguarded regula falsi (Illinois) for g(t + s, RK4(x, s)) = 0 on [0, s1], g0 < 0 <= g1
    a, b, ga, gb = 0.0, s1, g0, g1
    side = 0
    tol = 4.0 * 2.2e-16 * max(1.0, abs(t) + abs(s1))
    for _ in range(200):
        if b - a <= tol:
            break
        s = (a * gb - b * ga) / (gb - ga)
        if not (a < s < b):
            s = 0.5 * (a + b)
        rk4(mode, t, x, S, Pd, p, s, False, xo, St, kx, kS, xt, St, Fx, Fp)
        gs, _ = guard(mode, j, t + s, xo, p, gx, gp)
        if gs >= 0.0:
            b, gb = s, gs
            if side == 1:
                ga *= 0.5
            side = 1
        else:
            a, ga = s, gs
            if side == -1:
                gb *= 0.5
            side = -1
    return b

@njit(cache=True)
def run(mode0, t0, x0, S0, Pd, p, t_out, h_modes, events_on, stop_after, X, SS, MODE,
        EV_T, EV_I, EV_XM, EV_XP, EV_LT, EV_SM, EV_SP):
    m = S0.shape[1]
    x = np.empty(n)
    S = np.empty((n, m))
    copy_state(x0, S0, x, S)
    x1 = np.empty(n)
    xloc = np.empty(n)
    S1 = np.empty((n, m))
    kx = np.empty((4, n))
    kS = np.empty((4, n, m))
    xt = np.empty(n)
    St = np.empty((n, m))
    Fx = np.empty((n, n))
    Fp = np.empty((n, npar))
    Fm = np.empty(n)
    Fplus = np.empty(n)
    gx = np.empty(n)
    gp = np.empty(npar)
    Rx = np.empty((n, n))
    Rp = np.empty((n, npar))
    Rt = np.empty(n)
    armed = np.zeros(G, np.bool_)
    on_guard = np.zeros(G, np.bool_)
    gprev = np.zeros(G)
    mode, t, n_ev, k = mode0, t0, 0, 0
    n_out = t_out.size
    dirn = 1.0 if t_out[n_out - 1] >= t0 else -1.0
    ng = n_guards(mode)
    for j in range(ng):
        gprev[j], _ = guard(mode, j, t, x, p, gx, gp)
        armed[j] = gprev[j] < 0.0
        on_guard[j] = abs(gprev[j]) <= ON_GUARD
    while k < n_out:
        if dirn * (t_out[k] - t) <= 0.0:
            copy_state(x, S, X[k], SS[k])
            MODE[k] = mode
            k += 1
            continue
        h = h_modes[min(mode, h_modes.size - 1)]
        land = dirn * (t_out[k] - t) <= h
        s = t_out[k] - t if land else dirn * h
        rk4(mode, t, x, S, Pd, p, s, True, x1, S1, kx, kS, xt, St, Fx, Fp)
        for i in range(n):
            if not np.isfinite(x1[i]):
                return NOT_FINITE, n_ev
        jbest, sbest = -1, 0.0
        if events_on:
            for j in range(ng):
                g1, _ = guard(mode, j, t + s, x1, p, gx, gp)
                if not armed[j] and on_guard[j] and g1 > ON_GUARD:
                    return STUCK, n_ev
                if armed[j] and g1 >= 0.0:
                    sj = locate(mode, j, t, x, S, Pd, p, s, gprev[j], g1, xloc, kx, kS, xt, St, Fx, Fp, gx, gp)
                    if jbest < 0 or abs(sj) < abs(sbest):
                        jbest, sbest = j, sj
        if jbest < 0:
            copy_state(x1, S1, x, S)
            t = t_out[k] if land else t + s
            for j in range(ng):
                gprev[j], _ = guard(mode, j, t, x, p, gx, gp)
                if gprev[j] < 0.0:
                    armed[j] = True
            continue
        if n_ev >= EV_T.size:
            return TOO_MANY_EVENTS, n_ev
        rk4(mode, t, x, S, Pd, p, sbest, True, x1, S1, kx, kS, xt, St, Fx, Fp)
        t = t + sbest
        flow(mode, t, x1, p, Fm)
        _, gt = guard(mode, jbest, t, x1, p, gx, gp)
        den = gt
        for i in range(n):
            den += gx[i] * Fm[i]
        if abs(den) < 1e-300:
            return NOT_TRANSVERSAL, n_ev
        for c in range(m):
            num = 0.0
            for i in range(n):
                num += gx[i] * S1[i, c]
            for i in range(npar):
                num += gp[i] * Pd[i, c]
            EV_LT[n_ev, c] = -num / den  # lambda_t = -(g_x S- + g_p Pd)/(g_x F- + g_t)  (seed 000 eq. 14)
        new_mode = reset(mode, jbest, t, x1, p, x, Rx, Rp, Rt)
        flow(new_mode, t, x, p, Fplus)
        for i in range(n):
            jump = Rt[i] - Fplus[i]
            for r in range(n):
                jump += Rx[i, r] * Fm[r]
            for c in range(m):
                acc = jump * EV_LT[n_ev, c]
                for r in range(n):
                    acc += Rx[i, r] * S1[r, c]
                for r in range(npar):
                    acc += Rp[i, r] * Pd[r, c]
                S[i, c] = acc  # S+ = R_x S- + R_p Pd + (R_x F- + R_t - F+) lambda_t  (seed 000 eq. 12)
        EV_T[n_ev] = t
        EV_I[n_ev, 0], EV_I[n_ev, 1], EV_I[n_ev, 2] = mode, new_mode, jbest
        copy_state(x1, S1, EV_XM[n_ev], EV_SM[n_ev])
        copy_state(x, S, EV_XP[n_ev], EV_SP[n_ev])
        n_ev += 1
        if n_ev == stop_after:
            for r in range(k, n_out):
                MODE[r] = -1  # outputs after the stop are not computed
            return OK, n_ev
        mode = new_mode
        ng = n_guards(mode)
        for j in range(ng):
            gprev[j], _ = guard(mode, j, t, x, p, gx, gp)
            armed[j] = gprev[j] < 0.0
            on_guard[j] = abs(gprev[j]) <= ON_GUARD
    return OK, n_ev

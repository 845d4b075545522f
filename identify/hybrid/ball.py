"""A ball bouncing on a sinusoidally moving paddle (seed 000 section 5), rigid and Hunt-Crossley contact.

The paddle surface is at ``y_p(t) = A sin(omega t)`` (m); the ball's state is ``x = [y m, v m/s]`` (height
of its lowest point and its velocity, up positive). Seed 000 gives no numbers for this example; the values
below are hapticam's choice: a paddle at 3 Hz with 30 mm amplitude (peak acceleration 10.7 m/s^2) and a
ball dropped from rest 0.3 m above it, which settles on one bounce per paddle cycle without sticking, with
restitution 0.7 (rigid) or a soft 10 g ball whose contact lasts about 20 ms (Hunt-Crossley, n = 1.5 as
Hertz), so a 10 kHz capture resolves contact onset and lift-off.

Rigid contact (:data:`RIGID`, parameters ``[e, A, omega, g]``): one mode, flight ``y' = v, v' = -g``; the
guard ``y_p(t) - y`` rises through zero at impact (time-dependent); the reset keeps ``y`` and sets the
relative velocity to ``-e`` times its value before impact, ``v+ = (1 + e) v_p(t) - e v-``.

Hunt-Crossley contact (:data:`HUNT_CROSSLEY`, parameters ``[k, b, n, m, A, omega, g]``): mode 0 is flight,
mode 1 contact with penetration ``rho = y_p - y`` and ``m v' = -m g + k |rho|^(n-1) rho + b |rho|^n rho'``
(seed 000 eq. 26, units N/m^n and N s/m^(n+1)); onset is ``rho`` rising through 0, lift-off ``rho``
falling through 0; resets are the identity (the force is zero at rho = 0, so the state is continuous).
The law as printed can pull (negative force) when ``rho' < -k/b``; at the chosen values the ball leaves
at well under k/b = 3.7 m/s, so it is used unclipped (clipping would make the flow non-smooth).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hapticam.identify.hybrid.engine import HybridModel

#: rigid contact: (e, paddle amplitude A m, paddle angular frequency omega rad/s, gravity g m/s^2), chosen
RIGID_NOMINAL = np.array([0.7, 0.03, 2.0 * np.pi * 3.0, 9.81])
#: the initial state (y m, v m/s) of the experiments: dropped from rest 0.3 m above the paddle
START = np.array([0.3, 0.0])
#: Hunt-Crossley contact: (k N/m^1.5, b N s/m^2.5, n, mass kg, A m, omega rad/s, g m/s^2), chosen
HC_NOMINAL = np.array([2700.0, 730.0, 1.5, 0.01, 0.03, 2.0 * np.pi * 3.0, 9.81])
#: Hunt-Crossley contact: per-mode RK4 steps (s), flight and contact (the contact flow is not smooth at rho = 0)
HC_STEPS = np.array([1e-3, 1e-5])


@njit(cache=True)
def paddle(t, amplitude, omega):
    """Paddle height (m), velocity (m/s) and acceleration (m/s^2) at t (s): y_p = A sin(omega t)."""
    s, c = np.sin(omega * t), np.cos(omega * t)
    return amplitude * s, amplitude * omega * c, -amplitude * omega * omega * s


# ---- rigid contact: p = [e, A, omega, g] -------------------------------------------------------------

@njit(cache=True)
def _rigid_flow(mode, t, x, p, dx):
    dx[0] = x[1]  # y' = v
    dx[1] = -p[3]  # v' = -g


@njit(cache=True)
def _rigid_flow_jac(mode, t, x, p, Fx, Fp):
    Fx[:, :] = 0.0
    Fx[0, 1] = 1.0
    Fp[:, :] = 0.0
    Fp[1, 3] = -1.0


@njit(cache=True)
def _one_guard(mode):
    return 1


@njit(cache=True)
def _rigid_guard(mode, j, t, x, p, gx, gp):
    amplitude, omega = p[1], p[2]
    yp, vp, _ = paddle(t, amplitude, omega)
    gx[0], gx[1] = -1.0, 0.0
    gp[:] = 0.0
    gp[1] = np.sin(omega * t)
    gp[2] = amplitude * t * np.cos(omega * t)
    return yp - x[0], vp  # f = y_p(t) - y, rising through 0 at impact (seed 000 eq. 3, time-dependent)


@njit(cache=True)
def _rigid_reset(mode, j, t, x, p, xr, Rx, Rp, Rt):
    e, amplitude, omega = p[0], p[1], p[2]
    _, vp, ap = paddle(t, amplitude, omega)
    xr[0] = x[0]
    xr[1] = (1.0 + e) * vp - e * x[1]  # v+ - v_p = -e (v- - v_p)  (restitution, seed 000 section 5)
    Rx[:, :] = 0.0
    Rx[0, 0] = 1.0
    Rx[1, 1] = -e
    Rp[:, :] = 0.0
    Rp[1, 0] = vp - x[1]
    Rp[1, 1] = (1.0 + e) * omega * np.cos(omega * t)
    Rp[1, 2] = (1.0 + e) * amplitude * (np.cos(omega * t) - omega * t * np.sin(omega * t))
    Rt[0] = 0.0
    Rt[1] = (1.0 + e) * ap
    return 0


RIGID = HybridModel("seed000-ball-rigid", 2, 4, 1, _rigid_flow, _rigid_flow_jac, _one_guard, _rigid_guard,
                    _rigid_reset)


# ---- Hunt-Crossley contact: p = [k, b, n, m, A, omega, g] ------------------------------------------

@njit(cache=True)
def _penetration(t, x, p):
    yp, vp, _ = paddle(t, p[4], p[5])
    return yp - x[0], vp - x[1]


@njit(cache=True)
def _hc_flow(mode, t, x, p, dx):
    dx[0] = x[1]
    dx[1] = -p[6]
    if mode == 1:
        k, b, n, m = p[0], p[1], p[2], p[3]
        rho, rhod = _penetration(t, x, p)
        a = abs(rho)
        dx[1] += (k * a ** (n - 1.0) * rho + b * a**n * rhod) / m  # seed 000 eq. 26


@njit(cache=True)
def _hc_flow_jac(mode, t, x, p, Fx, Fp):
    Fx[:, :] = 0.0
    Fx[0, 1] = 1.0
    Fp[:, :] = 0.0
    Fp[1, 6] = -1.0
    if mode != 1:
        return
    k, b, n, m, amplitude, omega = p[0], p[1], p[2], p[3], p[4], p[5]
    rho, rhod = _penetration(t, x, p)
    a = abs(rho)
    sg = 1.0 if rho > 0.0 else (-1.0 if rho < 0.0 else 0.0)
    spring = a ** (n - 1.0) * rho  # |rho|^(n-1) rho
    damp = a**n  # |rho|^n
    force = k * spring + b * damp * rhod
    d_force_d_rho = k * n * a ** (n - 1.0) + b * n * a ** (n - 1.0) * sg * rhod
    d_force_d_rhod = b * damp
    Fx[1, 0] = -d_force_d_rho / m  # d rho / dy = -1
    Fx[1, 1] = -d_force_d_rhod / m  # d rho' / dv = -1
    log_a = np.log(a) if a > 0.0 else 0.0
    Fp[1, 0] = spring / m
    Fp[1, 1] = damp * rhod / m
    Fp[1, 2] = force * log_a / m  # d/dn of |rho|^(n-1) rho and |rho|^n is (.) ln|rho|
    Fp[1, 3] = -force / (m * m)
    s, c = np.sin(omega * t), np.cos(omega * t)
    Fp[1, 4] = (d_force_d_rho * s + d_force_d_rhod * omega * c) / m
    Fp[1, 5] = (d_force_d_rho * amplitude * t * c + d_force_d_rhod * amplitude * (c - omega * t * s)) / m


@njit(cache=True)
def _hc_guard(mode, j, t, x, p, gx, gp):
    amplitude, omega = p[4], p[5]
    yp, vp, _ = paddle(t, amplitude, omega)
    sign = 1.0 if mode == 0 else -1.0  # onset: rho rises through 0; lift-off: rho falls through 0
    gx[0], gx[1] = -sign, 0.0
    gp[:] = 0.0
    gp[4] = sign * np.sin(omega * t)
    gp[5] = sign * amplitude * t * np.cos(omega * t)
    return sign * (yp - x[0]), sign * vp


@njit(cache=True)
def _hc_reset(mode, j, t, x, p, xr, Rx, Rp, Rt):
    xr[0], xr[1] = x[0], x[1]
    Rx[:, :] = 0.0
    Rx[0, 0] = 1.0
    Rx[1, 1] = 1.0
    Rp[:, :] = 0.0
    Rt[0], Rt[1] = 0.0, 0.0
    return 1 - mode


HUNT_CROSSLEY = HybridModel("seed000-ball-hunt-crossley", 2, 7, 1, _hc_flow, _hc_flow_jac, _one_guard, _hc_guard,
                            _hc_reset)

"""The display stage: the model as stiff as it is, felt through a coupling the device renders passively,
and event-based transients at the impacts the model's simulation detects. Compiled into the servo tick.

Virtual coupling (Colgate, Stanley & Brown 1995, "Issues in the haptic display of tool use"; Adams &
Hannaford 1999, "Stable haptic interaction with virtual environments"). A model stiffer than the device can
display passively is not evaluated at the handle ``x`` but at a massless proxy ``x_p`` joined to the handle by
a spring ``k_c``. Each tick the proxy is where the two forces balance::

    F_model(x_p, v_p) = clamp(k_c (x - x_p), -F_lim, F_lim),    v_p = (x_p - x_p(n-1)) / T

solved by secant steps on a scratch copy of the model's state (the model is stateful; the state is
committed once, for the proxy found), and the handle receives the coupling force. The displayed stiffness
is the series ``k k_c / (k + k_c) < k_c`` for a model slope ``k``, and ``k_c`` is sized below the device's
passive bound ``2 b / T`` (Colgate & Schenkel 1997; for a static nonlinear law of slope at most ``k_c``,
Miller, Colgate & Freeman 2000, "Guaranteed stability of haptic systems with nonlinear virtual
environments"), so no model stiffness reaches the device. What it gives up: the floor feels softer, and
travel under a force ``F`` runs ``F / k_c`` deeper than the model's. ``F_lim`` keeps the coupling below
the device's force limit: pressed harder, the handle sinks through the floor at that force rather than
saturating the motor. Without a coupling (``k_c = 0``) the model is evaluated at the handle, as the servo
always did.

Transients (Kuchenbecker, Fiene & Niemeyer 2006, "Improving contact realism through event-based haptic
feedback", IEEE TVCG 12(2)). When the model's kernel reports an impact (``model_impact``: event code and
speed ``v``) and the model carries a transient for that event, an open-loop pulse
``A e^(-t / tau) sin(omega t)``, ``A = gain |v|``, is added to the force. Each tick outputs the pulse's mean
over the tick (the closed-form integral), so its impulse does not depend on the rate; the pulse is clipped
to keep the total within ``TRANSIENT_FORCE_SHARE`` of the force limit and its change per tick within
``TRANSIENT_RATE_SHARE`` of the rate limit. It lasts ``TRANSIENT_SPAN_TAU`` decay times; a new impact
restarts it.
"""

from __future__ import annotations

import math

from numba import njit

from hapticam.render.layout import (C_TR0, S_DF, S_DSLOPE, S_DXP, S_TR_A, S_TR_LAST, S_TR_T, S_TR_TAU, S_TR_W,
                                    TR_EVENT_CODES, TR_FIELDS, TR_SLOT_SIZE)

#: proxy solve: at most this many model evaluations per tick, stopping once the forces agree within tolerance
MAX_SOLVE_EVALUATIONS = 8
SOLVE_TOLERANCE_N = 1e-4
#: the coupling's force stays within this share of the device's force limit (the rest is the transients')
COUPLING_FORCE_SHARE = 0.9
#: a transient keeps the total force within this share of the limit, and its change per tick within this
#: share of the rate limit (the rest is the model's)
TRANSIENT_FORCE_SHARE = 0.95
TRANSIENT_RATE_SHARE = 0.5
#: a transient ends this many decay times after its impact (its envelope at e^-8 = 0.03 %)
TRANSIENT_SPAN_TAU = 8.0

# Global names the templates below call; :func:`hapticam.render.servo.build_servo` binds them to the model's
# kernels (``try_model`` to ``_try_model`` bound to them) (:func:`hapticam.render.specialize.specialize`).
force_fn = impact_fn = try_model = None


@njit(cache=True, nogil=True)
def start_display(srv, x):
    """Place the display proxy at the handle ``x`` (m) with no force: a new model, or the first tick."""
    srv[S_DXP] = x
    srv[S_DF] = 0.0
    srv[S_DSLOPE] = 0.0
    srv[S_TR_A] = 0.0


@njit(nogil=True)
def _try_model(p, s, scratch, slen, xp, xp0, x, a, dt, kc, f_lim):
    """The model on a copy of its state at proxy ``xp`` (m): ``(g, coupling force)``, ``g`` the model's force
    less the coupling's (N): its root is the balancing proxy."""
    for i in range(slen):
        scratch[i] = s[i]
    fm = force_fn(p, scratch, xp, (xp - xp0) / dt, a, dt)
    fc = min(max(kc * (x - xp), -f_lim), f_lim)
    return fm - fc, fc


@njit(nogil=True)
def _display_force(p, s, scratch, slen, x, a, dt, kc, f_lim, srv):
    """The coupling force (N) on the handle at ``x`` (m) with the model ``(p, s)`` at the balancing proxy
    (module docstring); commits the model's state for that proxy and keeps the proxy in ``srv``.

    ``g(x_p)`` rises with slope ``k + k_c >= k_c`` for a model slope ``k >= 0``: a Newton step from the last
    tick's balance, then a step of slope ``k_c`` (which reaches past the root, so the two bracket it), then
    Illinois regula falsi (a model with a falling stretch may leave it unbracketed: then secant steps)."""
    xp0 = srv[S_DXP]
    reach = max(abs(x - xp0), 1e-3)                      # no step beyond the handle's distance (or 1 mm)
    xa = xp0 - (srv[S_DF] - kc * (x - xp0)) / (kc + max(srv[S_DSLOPE], 0.0))
    ga, fc = try_model(p, s, scratch, slen, xa, xp0, x, a, dt, kc, f_lim)
    xp, g = xa, ga
    if math.isfinite(g) and abs(g) > SOLVE_TOLERANCE_N:
        xb = xa - min(max(ga / kc, -reach), reach)
        gb, fc = try_model(p, s, scratch, slen, xb, xp0, x, a, dt, kc, f_lim)
        xp, g = xb, gb
        for _ in range(MAX_SOLVE_EVALUATIONS - 2):
            if not math.isfinite(g) or abs(g) <= SOLVE_TOLERANCE_N or gb == ga:
                break
            xc = xb - gb * (xb - xa) / (gb - ga)
            if ga * gb > 0.0:                            # not bracketed: a bounded secant step
                xc = xb + min(max(xc - xb, -reach), reach)
            gc, fc = try_model(p, s, scratch, slen, xc, xp0, x, a, dt, kc, f_lim)
            if gc * gb < 0.0:
                xa, ga = xb, gb
            elif ga * gb < 0.0:
                ga *= 0.5                                # Illinois: the retained end's weight halved
            xb, gb = xc, gc
            xp, g = xc, gc
    if not math.isfinite(g):
        return math.nan
    for i in range(slen):
        s[i] = scratch[i]
    if xp != xp0:
        srv[S_DSLOPE] = (g + fc - srv[S_DF]) / (xp - xp0)  # the model's local slope, next tick's first step
    srv[S_DXP] = xp
    srv[S_DF] = fc
    return fc


@njit(nogil=True)
def _pulse_mean(t0, t1, omega, tau):
    """Mean over ``[t0, t1]`` (s) of ``e^(-t / tau) sin(omega t)`` (closed form of the integral)."""
    a = 1.0 / tau
    d = a * a + omega * omega
    i0 = -math.exp(-a * t0) * (a * math.sin(omega * t0) + omega * math.cos(omega * t0)) / d
    i1 = -math.exp(-a * t1) * (a * math.sin(omega * t1) + omega * math.cos(omega * t1)) / d
    return (i1 - i0) / (t1 - t0)


@njit(nogil=True)
def _transient_force(p, s, cfg, slot, dt, f_base, f_max, rate_max, srv):
    """The transient pulse's force (N) for this tick, and the peak (N) of a pulse this tick's impact started
    (0: none). ``f_base`` is the model's force this tick (N); limits as in the module docstring."""
    code, speed = impact_fn(p, s)
    started = 0.0
    if code > 0:
        for i in range(len(TR_EVENT_CODES)):
            base = C_TR0 + TR_SLOT_SIZE * slot + TR_FIELDS * i
            if TR_EVENT_CODES[i] == code and cfg[base] > 0.0:
                srv[S_TR_A] = cfg[base] * abs(speed)
                srv[S_TR_W] = cfg[base + 1]
                srv[S_TR_TAU] = cfg[base + 2]
                srv[S_TR_T] = 0.0
                started = srv[S_TR_A]
    pulse = 0.0
    if srv[S_TR_A] > 0.0:
        t0 = srv[S_TR_T]
        pulse = srv[S_TR_A] * _pulse_mean(t0, t0 + dt, srv[S_TR_W], srv[S_TR_TAU])
        srv[S_TR_T] = t0 + dt
        if t0 + dt > TRANSIENT_SPAN_TAU * srv[S_TR_TAU]:
            srv[S_TR_A] = 0.0
    room = TRANSIENT_FORCE_SHARE * f_max
    if pulse > 0.0:
        pulse = min(pulse, max(room - f_base, 0.0))
    elif pulse < 0.0:
        pulse = max(pulse, min(-room - f_base, 0.0))
    step = TRANSIENT_RATE_SHARE * rate_max * dt
    pulse = min(max(pulse, srv[S_TR_LAST] - step), srv[S_TR_LAST] + step)
    srv[S_TR_LAST] = pulse
    return pulse, started

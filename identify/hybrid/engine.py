"""Hybrid dynamical systems with forward trajectory sensitivity, switching-time sensitivity included.

A :class:`HybridModel` is a set of numba-compiled functions over a fixed-size continuous state ``x``
(n_x), a parameter vector ``p`` (n_p) and an integer mode (seed 000 eqs. 1-5)::

    flow(mode, t, x, p, dx)                          dx = F_i(x, t, p)                 (eq. 1)
    flow_jac(mode, t, x, p, Fx, Fp)                  Fx = dF_i/dx, Fp = dF_i/dp
    n_guards(mode) -> int
    guard(mode, j, t, x, p, gx, gp) -> (g, g_t)      f_i(x, t, p); an event is g rising through 0 (eq. 3)
    reset(mode, j, t, x, p, xr, Rx, Rp, Rt) -> mode'  x+ = phi_i(x-, t, p) and its Jacobians      (eq. 2)

Modes whose state is smaller than n_x keep the unused entries constant (zero flow). The sensitivity
``S = dx/d(directions)`` is carried along the trajectory for any set of m directions: the caller gives
``S0 = dx0/d(direction)`` and ``Pd = dp/d(direction)``; the default directions are the initial state then the
parameters. A direction that moves the initial time t0 enters through ``S0 = dx0/da - F(x0, t0) dt0/da``
(eq. 11). Between events (eq. 8)::

    S' = F_x S + F_p Pd

and at an event, with the guard gradient g_x, g_p, g_t at the state just before it (eq. 14, lambda_t = dt_e/da)::

    lambda_t = -(g_x S- + g_p Pd) / (g_x F- + g_t)
    S+ = R_x S- + R_p Pd + (R_x F- + R_t - F+) lambda_t          (eq. 12 in the Hiskens-Pai / saltation form)

Seed 000 prints eq. 7 as ``d alpha / d t_i`` (it is ``d t_i / d alpha``) and swaps the +/- labels of the text;
eq. 12 written out is the saltation form above (``lambda- + Delta lambda``, eq. 9, expands to it).

Integration is classical fixed-step RK4 on (x, S) together (one step per mode may be given), so S is the exact
derivative of the discrete flow map; steps end exactly on the requested output times. lambda_t and the jump
use the flow F at the event (the continuous-time formulas); they match the discrete map to the RK4 error of
one step, O(h^4) for smooth flows but only O(h^1.5) where the flow is not smooth (Hunt-Crossley contact
|rho|^1.5 at lift-off), which is why such a mode gets a finer step. Events are located on the RK4 partial step
``x(t + s) = RK4(x(t), s)`` by safeguarded regula falsi to the round-off of t, so the discrete map is smooth
in the parameters between event-sequence changes (finite differences agree with S). A guard is armed once it
has been seen negative in the current mode, so a reset that lands exactly on a guard does not re-trigger it;
a guard that starts on zero and is positive at the end of the first step (the state never left it: a ball
that the paddle catches again at once) stops the simulation with an error rather than passing through.

The built kernel closes over the model's compiled functions; numba cannot cache such closures across
processes, so it is compiled once per process and model (:func:`kernel_for`) and kept.

References
----------
Hiskens, I. A., Pai, M. A. (2000). Trajectory sensitivity analysis of hybrid systems. IEEE TCAS-I 47(2).
Patoglu, V., Gillespie, R. B. The Haptic Probe (seed 000), eqs. 1-14.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba import njit

from hapticam.errors import IdentificationError

OK, TOO_MANY_EVENTS, NOT_FINITE, NOT_TRANSVERSAL, STUCK = 0, 1, 2, 3, 4
#: a guard within this of zero when its mode is entered starts on the guard (a reset landed on it)
ON_GUARD = 1e-9
_STATUS = {TOO_MANY_EVENTS: "more events than max_events (Zeno or chattering?)",
           STUCK: "the state crossed a guard it started on without leaving it first (sticking contact)",
           NOT_FINITE: "the state became non-finite", NOT_TRANSVERSAL: "the flow is tangent to a guard at an event"}


@dataclass(frozen=True)
class HybridModel:
    """A hybrid system as compiled functions (signatures in the module docstring)."""

    name: str
    n_x: int
    n_p: int
    max_guards: int
    flow: Callable
    flow_jac: Callable
    n_guards: Callable
    guard: Callable
    reset: Callable


@dataclass
class Events:
    """Events in order: time (s), modes, guard index, state and sensitivity either side, lambda_t = dt_e/d dir."""

    t: np.ndarray
    mode_from: np.ndarray
    mode_to: np.ndarray
    guard: np.ndarray
    x_minus: np.ndarray
    x_plus: np.ndarray
    lambda_t: np.ndarray
    S_minus: np.ndarray
    S_plus: np.ndarray


@dataclass
class Trajectory:
    """States ``x[k]`` and sensitivities ``S[k] = dx/d dir`` at ``t[k]``, the mode there, and the events."""

    t: np.ndarray
    x: np.ndarray
    S: np.ndarray
    mode: np.ndarray
    events: Events


def _build_kernel(model: HybridModel) -> Callable:
    """Compile the simulation kernel of ``model`` (one closure per model; see module docstring)."""
    flow, flow_jac, n_guards, guard, reset = model.flow, model.flow_jac, model.n_guards, model.guard, model.reset
    n, npar, G = model.n_x, model.n_p, model.max_guards

    @njit
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

    @njit
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

    @njit
    def copy_state(x, S, xd, Sd):
        for i in range(x.shape[0]):
            xd[i] = x[i]
            for q in range(S.shape[1]):
                Sd[i, q] = S[i, q]

    @njit
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

    @njit
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

    return run


_KERNELS: dict[str, Callable] = {}


def kernel_for(model: HybridModel) -> Callable:
    """The compiled simulation kernel of ``model`` (built on first use in this process)."""
    if model.name not in _KERNELS:
        _KERNELS[model.name] = _build_kernel(model)
    return _KERNELS[model.name]


def default_directions(model: HybridModel) -> tuple[np.ndarray, np.ndarray]:
    """``S0 = [I 0]``, ``Pd = [0 I]``: sensitivities to the initial state, then to the parameters."""
    n, q = model.n_x, model.n_p
    S0 = np.zeros((n, n + q))
    S0[:, :n] = np.eye(n)
    Pd = np.zeros((q, n + q))
    Pd[:, n:] = np.eye(q)
    return S0, Pd


def _check(model: HybridModel, x0: np.ndarray, p: np.ndarray, t_out: np.ndarray, h: np.ndarray) -> None:
    if x0.shape != (model.n_x,) or p.shape != (model.n_p,):
        raise IdentificationError(f"{model.name}: x0 must have {model.n_x} entries and p {model.n_p}, "
                                  f"got {x0.shape} and {p.shape}")
    if not (np.all(np.isfinite(x0)) and np.all(np.isfinite(p)) and np.all(np.isfinite(t_out))):
        raise IdentificationError(f"{model.name}: initial state, parameters and output times must be finite")
    if t_out.ndim != 1 or t_out.size == 0:
        raise IdentificationError(f"{model.name}: output times must be a non-empty 1-D array")
    d = np.diff(t_out)
    if not (np.all(d >= 0) or np.all(d <= 0)):
        raise IdentificationError(f"{model.name}: output times must be monotonic")
    if h.ndim != 1 or h.size == 0 or not (np.all(np.isfinite(h)) and np.all(h > 0)):
        raise IdentificationError(f"{model.name}: step h must be positive, got {h}")


def simulate(model: HybridModel, x0: np.ndarray, p: np.ndarray, t_out: np.ndarray, *, mode0: int = 0,
             t0: float | None = None, h: float | np.ndarray = 1e-3, S0: np.ndarray | None = None, Pd: np.ndarray | None = None,
             events: bool = True, max_events: int = 10_000, stop_after: int = 0) -> Trajectory:
    """Simulate ``model`` from ``(t0, x0, mode0)`` with sensitivities, sampled at ``t_out`` (s).

    Parameters
    ----------
    x0, p : initial state (model units) and parameter vector.
    t_out : output times (s), monotonic; may run backwards from t0 (then ``events`` must be False: resets are
        not invertible in general).
    mode0, t0 : initial mode and time (s); t0 defaults to ``t_out[0]``.
    h : RK4 step (s), or one step per mode (mode i uses ``h[min(i, len(h) - 1)]``): a mode whose flow is
        not smooth (Hunt-Crossley contact near zero penetration) needs a finer step than free flight.
    S0, Pd : initial sensitivity (n_x x m) and parameter directions (n_p x m); default
        :func:`default_directions` (m = n_x + n_p).
    events : False flows in ``mode0`` and ignores the guards (used to continue a mode past its switch).
    stop_after : stop at that event (> 0); outputs after it keep ``mode = -1`` and undefined states.

    Returns
    -------
    Trajectory with ``S[k] = dx(t_k)/d dir`` at fixed t_k and the events' ``lambda_t = dt_e/d dir``.
    """
    x0 = np.asarray(x0, dtype=float)
    p = np.asarray(p, dtype=float)
    t_out = np.atleast_1d(np.asarray(t_out, dtype=float))
    h = np.atleast_1d(np.asarray(h, dtype=float))
    _check(model, x0, p, t_out, h)
    t0 = float(t_out[0]) if t0 is None else float(t0)
    if S0 is None or Pd is None:
        S0, Pd = default_directions(model)
    S0 = np.ascontiguousarray(S0, dtype=float)
    Pd = np.ascontiguousarray(Pd, dtype=float)
    if S0.shape[0] != model.n_x or Pd.shape != (model.n_p, S0.shape[1]):
        raise IdentificationError(f"{model.name}: S0 must be n_x x m and Pd n_p x m")
    if t_out[-1] < t0 and events:
        raise IdentificationError(f"{model.name}: backward integration is only possible with events=False")
    n, m, K, E = model.n_x, S0.shape[1], t_out.size, max_events
    X, SS, MODE = np.empty((K, n)), np.empty((K, n, m)), np.empty(K, np.int64)
    ev = (np.empty(E), np.empty((E, 3), np.int64), np.empty((E, n)), np.empty((E, n)), np.empty((E, m)),
          np.empty((E, n, m)), np.empty((E, n, m)))
    status, n_ev = kernel_for(model)(int(mode0), t0, x0, S0, Pd, p, t_out, h, bool(events),
                                      int(stop_after), X, SS, MODE, *ev)
    if status != OK:
        raise IdentificationError(f"{model.name}: simulation failed: {_STATUS[status]}")
    e_t, e_i, e_xm, e_xp, e_lt, e_sm, e_sp = (a[:n_ev] for a in ev)
    return Trajectory(t_out, X, SS, MODE, Events(e_t, e_i[:, 0], e_i[:, 1], e_i[:, 2], e_xm, e_xp, e_lt, e_sm, e_sp))


@dataclass
class EventStep:
    """One step of an impact map (flow to the next event and reset) and its derivatives.

    ``t`` (s) and ``x_plus`` are the event time and the state just after it, ``mode`` the new mode;
    ``dt = dt_e/d dir`` (m,) and ``dx_plus = d x_plus/d dir`` (n_x x m) are total derivatives along the
    caller's directions (the event moves with them, so ``dx_plus = S+ + F+ lambda_t``).
    """

    t: float
    x_plus: np.ndarray
    mode: int
    dt: np.ndarray
    dx_plus: np.ndarray


def event_map(model: HybridModel, mode: int, t0: float, x0: np.ndarray, p: np.ndarray, dx0: np.ndarray,
              dt0: np.ndarray, dp: np.ndarray, *, h: float | np.ndarray = 1e-3, t_max: float = 10.0) -> EventStep:
    """Flow ``model`` from ``(t0 s, x0)`` in ``mode`` to its next event (within ``t_max`` s) and reset.

    The directions are given as ``dx0 = dx0/d dir`` (n_x x m), ``dt0 = dt0/d dir`` (m,) and
    ``dp = dp/d dir`` (n_p x m); the initial sensitivity is ``S0 = dx0 - F(x0, t0) dt0`` (seed 000 eq. 11).
    This is the impact map of seed 000 section 4 with its Jacobian (the state augmented with time).
    """
    x0 = np.asarray(x0, dtype=float)
    p = np.asarray(p, dtype=float)
    f0 = np.empty(model.n_x)
    model.flow(int(mode), float(t0), x0, p, f0)
    S0 = np.asarray(dx0, dtype=float) - np.outer(f0, np.asarray(dt0, dtype=float))  # seed 000 eq. 11
    traj = simulate(model, x0, p, np.array([t0, t0 + t_max]), mode0=mode, h=h, S0=S0, Pd=dp, max_events=2,
                    stop_after=1)
    ev = traj.events
    if ev.t.size == 0:
        raise IdentificationError(f"{model.name}: no event within {t_max} s of t = {t0} s")
    f_plus = np.empty(model.n_x)
    model.flow(int(ev.mode_to[0]), float(ev.t[0]), ev.x_plus[0], p, f_plus)
    dx_plus = ev.S_plus[0] + np.outer(f_plus, ev.lambda_t[0])  # total derivative: the event moves too
    return EventStep(float(ev.t[0]), ev.x_plus[0].copy(), int(ev.mode_to[0]), ev.lambda_t[0].copy(), dx_plus)

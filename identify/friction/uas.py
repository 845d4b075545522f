"""The universal adaptive stabilizer (UAS) observer of seed 003 (eqs. 16-23, Table II), as published.

The observer runs a copy of the pendulum driven by the measured angular velocities ``q'``::

    e = q' - qhat'                                    (eq. 19)
    k' = |e|^2,  k(t0) = k0                           (eq. 20)
    N = E_{3,1}(-k^3)                                 (eq. 21, lambda = 1, alpha = 3)
    H(qhat) qhat'' + B + G = -fhat(qhat'; z) + H(qhat) N e      (eqs. 16, 22; friction as -f)
    z_n' = (gamma + lu_n (zu_n - z_n) + ll_n (zl_n - z_n)) |e|    (eq. 23)

integrated together by RK4 at the sample rate (the measured ``q'`` linearly interpolated at half steps).

What eq. 23 does
----------------
Eq. 23 never looks at the friction or at the sign of anything: with ``S(t) = integral_0^t |e| dt`` every
parameter moves along the same exponential toward a fixed point set by Table II and ``gamma``::

    z_n(t) = z*_n + (z_n(0) - z*_n) exp(-(lu_n + ll_n) S(t)),   z*_n = (gamma + lu_n zu_n + ll_n zl_n) / (lu_n + ll_n)

(:func:`eq23_closed_form`, :func:`eq23_end_point`). Table IV equals these end points with ``gamma = 5.33e-3``
(:data:`.paper.GAMMA`) to 0.02 %, whatever the data. The observer's output is therefore *not* identified
friction; :mod:`.greybox` is. The observer is kept to reproduce the paper (Table V) and to show this.

Read-out rules: :func:`readout_simulation` (sec. IV-A: the estimates just after ``|e|`` falls below 0.01
after its peak) and :func:`readout_experiment` (sec. IV-B: the mean from ``|e| < 0.05`` until the motion
stops).

References
----------
Wadi, Mukhopadhyay & Romdhane (seed 003), eqs. 16-23, Table II, sec. IV.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from hapticam.errors import IdentificationError
from hapticam.identify.friction import paper
from hapticam.identify.friction.furuta import coefficients, friction_value
from hapticam.identify.friction.mittag_leffler import nussbaum_gain

N_STATE = 16  # qhat (2), qhat' (2), k, z (10), S = integral |e| dt
#: rate (rad/s) below which every joint must stay for the motion to count as stopped (sec. IV-B read-out)
MOTION_STOP_RADPS = 10.0 * paper.NOISE_RATE_RADPS


@dataclass(frozen=True)
class UASSettings:
    """Table II and the values the paper omits (:mod:`.paper`)."""

    gamma: float = paper.GAMMA
    k0: float = paper.K0
    zl: tuple[float, ...] = tuple(paper.TABLE2_ZL)
    zu: tuple[float, ...] = tuple(paper.TABLE2_ZU)
    lambda_l: tuple[float, ...] = tuple(paper.TABLE2_LAMBDA_L)
    lambda_u: tuple[float, ...] = tuple(paper.TABLE2_LAMBDA_U)
    squared: bool = True  # the friction law of eqs. 17-18: squared Stribeck term (as the plant's)

    def arrays(self) -> np.ndarray:
        """``[zl, zu, lambda_l, lambda_u]`` as a (4, 10) array, validated."""
        a = np.array([self.zl, self.zu, self.lambda_l, self.lambda_u], dtype=np.float64)
        if a.shape != (4, 10) or not np.all(np.isfinite(a)) or np.any(a[2:] <= 0.0):
            raise IdentificationError("UAS settings: 10 finite bounds each, confidences lambda > 0 (Table II)")
        if not (self.k0 > 0.0 and math.isfinite(self.gamma)):
            raise IdentificationError("UAS settings: k0 must be > 0 and gamma finite (eqs. 20, 23)")
        return a


@njit(cache=True, nogil=True)
def _rhs(c, fn, bnd, gamma, squared, x, wm0, wm1, fr, dx):
    """Observer right-hand side at state ``x`` with measured rates ``(wm0, wm1)``; writes ``dx``."""
    e0 = wm0 - x[2]  # eq. 19
    e1 = wm1 - x[3]
    en = math.sqrt(e0 * e0 + e1 * e1)
    for j in range(2):  # the friction combinations of eqs. 17-18 from z
        zd = x[5 + 5 * j]
        fr[4 * j] = fn[j] * zd  # F_n mu_d
        fr[4 * j + 1] = fn[j] * (x[6 + 5 * j] - zd)  # F_n (mu_s - mu_d)
        fr[4 * j + 2] = x[8 + 5 * j]  # theta_t
        fr[4 * j + 3] = x[7 + 5 * j] * math.tanh(4.0 * fn[j] / x[9 + 5 * j])  # mu_v tanh(4 F_n / F_nt)
    s0 = math.sin(x[0])
    k0 = math.cos(x[0])
    s1 = math.sin(x[1])
    k1 = math.cos(x[1])
    w0 = x[2]
    w1 = x[3]
    h11 = c[0] + c[1] * s1 * s1  # H(qhat)  (eq. 7 + m2 L1^2)
    h12 = -c[2] * k1
    h22 = c[3]
    r0 = -(c[8] * 2.0 * s1 * k1 * w0 * w1 + c[9] * s1 * w1 * w1) - (c[4] * s0 - c[5] * s1 * k0)
    r1 = -(c[10] * s1 * k1 * w0 * w0) - (-c[6] * s0 * k1 + c[7] * s1)
    r0 -= friction_value(fr, 0, w0, squared)  # eq. 16 with Qhat = -fhat
    r1 -= friction_value(fr, 1, w1, squared)
    det = h11 * h22 - h12 * h12
    if not det > 0.0:
        return 1
    nk = nussbaum_gain(x[4])  # eq. 21
    dx[0] = w0
    dx[1] = w1
    dx[2] = (h22 * r0 - h12 * r1) / det + nk * e0  # H^-1 (... + u), u = H N(k) e  (eq. 22)
    dx[3] = (h11 * r1 - h12 * r0) / det + nk * e1
    dx[4] = en * en  # eq. 20
    for n in range(10):
        dx[5 + n] = (gamma + bnd[3, n] * (bnd[1, n] - x[5 + n]) + bnd[2, n] * (bnd[0, n] - x[5 + n])) * en  # eq. 23
    dx[15] = en  # S = integral |e| dt
    return 0


@njit(cache=True, nogil=True)
def uas_step(c, fn, bnd, gamma, squared, x, wa, wb, h, out, work):
    """One RK4 step of the observer from ``x`` (measured rates ``wa`` at the start, ``wb`` at the end,
    linear in between) into ``out``. ``work`` is a (6, 16) scratch array. Returns a status."""
    fr = work[5, :8]
    for stage in range(4):
        f = 0.0 if stage == 0 else (0.5 * h if stage < 3 else h)
        for i in range(N_STATE):
            work[4, i] = x[i] + f * work[stage - 1, i] if stage > 0 else x[i]
        tau = 0.0 if stage == 0 else (0.5 if stage < 3 else 1.0)
        if _rhs(c, fn, bnd, gamma, squared, work[4], wa[0] + tau * (wb[0] - wa[0]), wa[1] + tau * (wb[1] - wa[1]),
                fr, work[stage]) != 0:
            return 1
    for i in range(N_STATE):
        out[i] = x[i] + h * (work[0, i] + 2.0 * work[1, i] + 2.0 * work[2, i] + work[3, i]) / 6.0  # RK4
        if not math.isfinite(out[i]):
            return 1
    return 0


@njit(cache=True, nogil=True)
def uas_kernel(c, fn, bnd, gamma, squared, w_meas, h, x0, out, e_norm):
    """Run the observer over all samples of ``w_meas`` (n, 2); ``out`` (n, 16) states, ``e_norm`` (n) |e|.

    Returns 0, or the index of the first failed step + 1."""
    work = np.empty((6, N_STATE))
    out[0, :] = x0
    for n in range(w_meas.shape[0]):
        e0 = w_meas[n, 0] - out[n, 2]
        e1 = w_meas[n, 1] - out[n, 3]
        e_norm[n] = math.sqrt(e0 * e0 + e1 * e1)  # eq. 19
        if n + 1 < w_meas.shape[0]:
            if uas_step(c, fn, bnd, gamma, squared, out[n], w_meas[n], w_meas[n + 1], h, out[n + 1], work) != 0:
                return n + 1
    return 0


@dataclass
class UASResult:
    """The observer's trajectories: ``q_hat``, ``w_hat`` (n, 2) rad, rad/s; ``k`` (n); ``z`` (n, 10) in the
    order of :data:`.paper.PARAM_NAMES`; ``S`` (n) = integral |e| dt (rad); ``e_norm`` (n) rad/s."""

    t_s: np.ndarray
    q_hat: np.ndarray
    w_hat: np.ndarray
    k: np.ndarray
    z: np.ndarray
    S: np.ndarray
    e_norm: np.ndarray


def _prepare(t_s: np.ndarray, w_meas: np.ndarray, q0: np.ndarray, z0: np.ndarray) -> tuple[np.ndarray, ...]:
    t = np.asarray(t_s, dtype=np.float64)
    w = np.ascontiguousarray(w_meas, dtype=np.float64)
    q0 = np.asarray(q0, dtype=np.float64)
    z0 = np.asarray(z0, dtype=np.float64)
    if t.ndim != 1 or t.size < 2 or w.shape != (t.size, 2):
        raise IdentificationError(f"UAS: need t (n >= 2) and measured rates (n, 2); got {t.shape}, {w.shape}")
    dt = np.diff(t)
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(w)) and dt[0] > 0 and np.allclose(dt, dt[0], rtol=1e-6)):
        raise IdentificationError("UAS: t must be finite and uniformly increasing, the rates finite")
    if q0.shape != (2,) or z0.shape != (10,) or not np.all(np.isfinite(q0)) or np.any(~(z0 > 0.0)):
        raise IdentificationError("UAS: q0 must be 2 finite angles and z0 10 positive parameters")
    return t, w, q0, z0, float(dt[0])


def uas_observe(t_s: np.ndarray, w_meas: np.ndarray, q0: np.ndarray, z0: np.ndarray,
                settings: UASSettings = UASSettings()) -> UASResult:
    """Run the UAS observer on measured rates ``w_meas`` (n, 2) rad/s at uniform times ``t_s``.

    ``q0`` (rad) is the observer's initial angle and ``w_meas[0]`` its initial rate (the paper starts it
    from the measured, noisy state); ``z0`` the ten initial parameters (order :data:`.paper.PARAM_NAMES`).
    """
    t, w, q0, z0, h = _prepare(t_s, w_meas, q0, z0)
    bnd = settings.arrays()
    x0 = np.concatenate([q0, w[0], [settings.k0], z0, [0.0]])
    out = np.empty((t.size, N_STATE))
    e_norm = np.zeros(t.size)
    status = uas_kernel(coefficients("lagrangian"), paper.FN_N, bnd, settings.gamma, settings.squared, w, h, x0,
                        out, e_norm)
    if status:
        raise IdentificationError(f"UAS: the observer diverged at step {status} (t = {t[status]:g} s)")
    return UASResult(t, out[:, :2], out[:, 2:4], out[:, 4], out[:, 5:15], out[:, 15], e_norm)


class UASObserver:
    """The observer one sample at a time (same arithmetic as :func:`uas_observe`).

    ``update(w_next)`` advances from the last measured rate to ``w_next`` by one sample period ``dt_s``
    and returns the ten parameters ``z``.
    """

    def __init__(self, q0: np.ndarray, w0: np.ndarray, z0: np.ndarray, dt_s: float,
                 settings: UASSettings = UASSettings()) -> None:
        _, w, q0, z0, _ = _prepare(np.array([0.0, dt_s]), np.array([w0, w0], dtype=np.float64), q0, z0)
        self._bnd = settings.arrays()
        self._settings = settings
        self._c = coefficients("lagrangian")
        self._h = float(dt_s)
        self.x = np.concatenate([q0, w[0], [settings.k0], z0, [0.0]])
        self._w = w[0].copy()
        self._work = np.empty((6, N_STATE))

    @property
    def z(self) -> np.ndarray:
        """The ten parameter estimates (a copy)."""
        return self.x[5:15].copy()

    def update(self, w_next: np.ndarray) -> np.ndarray:
        w_next = np.asarray(w_next, dtype=np.float64)
        if w_next.shape != (2,) or not np.all(np.isfinite(w_next)):
            raise IdentificationError("UAS update: expected 2 finite measured rates (rad/s)")
        out = np.empty(N_STATE)
        if uas_step(self._c, paper.FN_N, self._bnd, self._settings.gamma, self._settings.squared, self.x,
                    self._w, w_next, self._h, out, self._work) != 0:
            raise IdentificationError("UAS update: the observer diverged")
        self.x, self._w = out, w_next.copy()
        return self.z


def eq23_end_point(settings: UASSettings = UASSettings()) -> np.ndarray:
    """``z* = (gamma + lu zu + ll zl) / (lu + ll)``: where eq. 23 takes every parameter, whatever the data."""
    zl, zu, ll, lu = settings.arrays()
    return (settings.gamma + lu * zu + ll * zl) / (lu + ll)  # fixed point of eq. 23


def eq23_closed_form(z0: np.ndarray, S: np.ndarray, settings: UASSettings = UASSettings()) -> np.ndarray:
    """``z(t) = z* + (z0 - z*) exp(-(lu + ll) S(t))`` for ``S = integral |e| dt``: the solution of eq. 23."""
    zl, zu, ll, lu = settings.arrays()
    zs = eq23_end_point(settings)
    return zs + (np.asarray(z0) - zs) * np.exp(-np.outer(np.asarray(S), lu + ll))  # eq. 24's solution


def readout_simulation(res: UASResult, threshold: float = paper.READOUT_SIM) -> tuple[np.ndarray, int]:
    """Sec. IV-A: the estimates at the first sample after the peak of ``|e|`` where ``|e| < threshold``.

    Returns ``(z, index)``; raises if the error never falls below the threshold after its peak."""
    peak = int(np.argmax(res.e_norm))
    below = np.flatnonzero(res.e_norm[peak:] < threshold)
    if below.size == 0:
        raise IdentificationError(f"UAS read-out: |e| never fell below {threshold:g} after its peak")
    i = peak + int(below[0])
    return res.z[i].copy(), i


def readout_experiment(res: UASResult, w_meas: np.ndarray, threshold: float = paper.READOUT_EXP,
                       stop_radps: float = MOTION_STOP_RADPS) -> tuple[np.ndarray, tuple[int, int]]:
    """Sec. IV-B: the mean of the estimates from ``|e| < threshold`` (after the peak) until the motion stops
    (the last sample with a measured rate above ``stop_radps``). Returns ``(z, (start, stop))``."""
    _, start = readout_simulation(res, threshold)
    moving = np.flatnonzero(np.max(np.abs(np.asarray(w_meas)), axis=1) > stop_radps)
    stop = int(moving[-1]) + 1 if moving.size else res.z.shape[0]
    if stop <= start:
        stop = start + 1
    return res.z[start:stop].mean(axis=0), (start, stop)

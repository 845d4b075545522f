"""The thermostat of seed 000 (Table 1): a first-order switching system, and its closed forms.

State ``x`` (room temperature, arbitrary units), parameters ``p = [tau, u1, u2, s1, s2]``; mode 0 heats
(``x' = -tau x + u1``) until ``x = s1``, mode 1 cools (``x' = -tau x + u2``) until ``x = s2``; resets are the
identity. Seed 000's Table 2 prints no values; hapticam uses ``tau = 1 1/s, u1 = 2, u2 = 0, s1 = 1.5,
s2 = 0.5`` from ``x0 = 0`` and a perturbed ``tau = 1.02`` (:data:`NOMINAL`, :data:`TAU_PERTURBED`).
With these the first switch is ``t1 = -ln(1 - tau s1/u1)/tau = ln 4`` and ``dt1/dtau = 3 - ln 4``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hapticam.identify.hybrid.engine import HybridModel

#: (tau 1/s, u1, u2, s1, s2): the values hapticam chose for seed 000's Table 2
NOMINAL = np.array([1.0, 2.0, 0.0, 1.5, 0.5])
#: the perturbed tau of the reconstruction (Figs. 2-3)
TAU_PERTURBED = 1.02


@njit(cache=True)
def _flow(mode, t, x, p, dx):
    dx[0] = -p[0] * x[0] + (p[1] if mode == 0 else p[2])  # F_i = -tau x + u_i  (seed 000 Table 1)


@njit(cache=True)
def _flow_jac(mode, t, x, p, Fx, Fp):
    Fx[0, 0] = -p[0]
    Fp[0, :] = 0.0
    Fp[0, 0] = -x[0]
    Fp[0, 1 if mode == 0 else 2] = 1.0


@njit(cache=True)
def _n_guards(mode):
    return 1


@njit(cache=True)
def _guard(mode, j, t, x, p, gx, gp):
    gp[:] = 0.0
    if mode == 0:
        gx[0] = 1.0
        gp[3] = -1.0
        return x[0] - p[3], 0.0  # f_1 = x - s1  (seed 000 Table 1)
    gx[0] = -1.0
    gp[4] = 1.0
    return p[4] - x[0], 0.0  # f_2 = x - s2, oriented to rise as x falls through s2


@njit(cache=True)
def _reset(mode, j, t, x, p, xr, Rx, Rp, Rt):
    xr[0] = x[0]  # phi = x+ = x-  (seed 000 Table 1)
    Rx[0, 0] = 1.0
    Rp[0, :] = 0.0
    Rt[0] = 0.0
    return 1 - mode


THERMOSTAT = HybridModel("seed000-thermostat", 1, 5, 1, _flow, _flow_jac, _n_guards, _guard, _reset)


def switch_times(p: np.ndarray, t_end: float, x0: float = 0.0) -> np.ndarray:
    """Closed-form switching instants (s) up to ``t_end`` from ``x0`` in mode 0.

    In mode i, ``x(t) = u_i/tau + (x0 - u_i/tau) exp(-tau t)``, so the time to reach the threshold s is
    ``ln((x0 - u_i/tau)/(s - u_i/tau))/tau``.
    """
    tau, u1, u2, s1, s2 = p
    out, t, x, mode = [], 0.0, x0, 0
    while True:
        u, s = (u1, s1) if mode == 0 else (u2, s2)
        dt = np.log((x - u / tau) / (s - u / tau)) / tau
        t += dt
        if t > t_end:
            return np.array(out)
        out.append(t)
        x, mode = s, 1 - mode


def closed_form(p: np.ndarray, t: np.ndarray, x0: float = 0.0) -> np.ndarray:
    """Closed-form trajectory x(t) from ``x0`` in mode 0 (Table 1's flows between the switch times)."""
    tau, u1, u2, _, _ = p
    t = np.asarray(t, dtype=float)
    sw = np.concatenate([[0.0], switch_times(p, float(t.max()), x0)])
    xs, x = [x0], x0
    for i in range(1, sw.size):
        x = p[3] if i % 2 == 1 else p[4]
        xs.append(x)
    seg = np.searchsorted(sw, t, side="right") - 1
    u = np.where(seg % 2 == 0, u1, u2)
    start = np.asarray(xs)[seg]
    return u / tau + (start - u / tau) * np.exp(-tau * (t - sw[seg]))


def dt1_dtau(p: np.ndarray) -> float:
    """d t1 / d tau of the first switch from x0 = 0: ``ln(1 - tau s1/u1)/tau^2 + (s1/u1)/(tau (1 - tau s1/u1))``."""
    tau, u1, _, s1, _ = p
    r = tau * s1 / u1
    return float(np.log(1.0 - r) / tau**2 + (s1 / u1) / (tau * (1.0 - r)))


def dt2_dtau(p: np.ndarray) -> float:
    """d t2 / d tau of the second switch (x0 = 0, u2 = 0): ``dt1/dtau - ln(s1/s2)/tau^2``."""
    tau, _, u2, s1, s2 = p
    if u2 != 0.0:
        raise ValueError("dt2_dtau's closed form assumes u2 = 0")
    return dt1_dtau(p) - float(np.log(s1 / s2)) / tau**2

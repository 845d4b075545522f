"""The tilted Furuta pendulum of seed 003 (eqs. 1-10, Table I), energy-consistent, compiled.

Kinematics (fig. 2): the arm turns by ``theta0`` about ``z0`` (tilted by ``phi`` about ``y``); the pendulum
turns by ``theta1`` about the arm axis ``x1`` and hangs along ``z0`` at ``theta1 = 0``. With the
downward vertical ``d = (sin phi, 0, cos phi)`` in the tilted frame the Lagrangian ``L = T - V`` is::

    T = 1/2 q'^T H(q) q'
    H11 = j1z + m1 l1^2 + m2 L1^2 + (m2 l2^2 + j2y) sin^2 theta1 + j2z cos^2 theta1
    H12 = -m2 l2 L1 cos theta1,   H22 = j2x + m2 l2^2
    V = -g sin(phi) (m1 l1 + m2 L1) cos theta0 - m2 g l2 (sin theta0 sin theta1 sin phi + cos theta1 cos phi)

and Euler-Lagrange (eq. 2) gives ``H q'' + B(q, q') + G(q) = -f(q')`` with ``G = dV/dq`` (eq. 9 as
printed) and, with ``A = m2 l2^2 + j2y - j2z``, ``b = m2 l2 L1``::

    B0 = A sin(2 theta1) theta0' theta1' + b sin(theta1) theta1'^2
    B1 = -A sin(theta1) cos(theta1) theta0'^2

Seed 003 prints H11 without ``m2 L1^2`` (eq. 7) and ``B`` as ``[-(m2 l2^2 - j2y + j2x) sin 2theta1 theta0'
theta1' - b sin theta1 theta1'^2, (m2 l2^2 - j2y + j2z) sin theta1 cos theta1 theta0'^2]`` (eq. 8): those
are not the terms of any inertia matrix's Lagrangian, and a friction-free simulation with them gains
energy. They are kept as ``variant="printed"`` only to show that. Friction is ``-f(q')`` (eq. 5 with the
square of Brown & McPhee 2016, :func:`friction_torque`); eqs. 6/10 print ``+f``, which would feed the motion.

One coefficient vector (:func:`coefficients`) carries either variant into the compiled kernels::

    H11 = c0 + c1 s^2,  H12 = -c2 cos theta1,  H22 = c3            (s = sin theta1)
    G0 = c4 sin theta0 - c5 s cos theta0,  G1 = -c6 sin theta0 cos theta1 + c7 s
    B0 = c8 sin 2theta1 theta0' theta1' + c9 s theta1'^2,  B1 = c10 s cos theta1 theta0'^2

Friction parameters are the eight combinations ``[c1, c2, v_t, c4]`` per joint of :func:`.paper.combinations`.

References
----------
Wadi, Mukhopadhyay & Romdhane (seed 003), eqs. 2-10 and Table I.
Brown, P., McPhee, J. (2016), J. Comput. Nonlinear Dynam. 11(5) (friction law, squared Stribeck term).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from hapticam.errors import IdentificationError
from hapticam.identify.friction import paper

VARIANTS = ("lagrangian", "printed")


def coefficients(variant: str = "lagrangian", phi_rad: float = paper.TILT_PHI_RAD) -> np.ndarray:
    """The 11 coefficients of H, G and B (module docstring) from Table I and the tilt ``phi_rad``."""
    if variant not in VARIANTS:
        raise IdentificationError(f"variant: expected one of {', '.join(VARIANTS)}, got {variant!r}")
    m1, m2, g = paper.M1_KG, paper.M2_KG, paper.G_MPS2
    l1, l2, L1 = paper.L1_CG_M, paper.L2_CG_M, paper.L1_M
    j1z, j2x, j2y, j2z = paper.J1Z_KGM2, paper.J2X_KGM2, paper.J2Y_KGM2, paper.J2Z_KGM2
    a_big = m2 * l2 ** 2 + j2y - j2z  # H11 = (j1z + m1 l1^2 + m2 L1^2 + j2z) + A sin^2 theta1  (eq. 7 + m2 L1^2)
    b = m2 * l2 * L1  # -H12 / cos theta1  (eq. 7)
    c = np.array([j1z + m1 * l1 ** 2 + m2 * L1 ** 2 + j2z, a_big, b, j2x + m2 * l2 ** 2,
                  g * math.sin(phi_rad) * (m1 * l1 + m2 * L1), g * math.sin(phi_rad) * m2 * l2,  # eq. 9
                  m2 * g * l2 * math.sin(phi_rad), m2 * g * l2 * math.cos(phi_rad),  # eq. 9
                  a_big, b, -a_big])  # B from the Lagrangian of H
    if variant == "printed":
        c[0] -= m2 * L1 ** 2  # eq. 7 as printed: H11 without m2 L1^2
        c[8] = -(m2 * l2 ** 2 - j2y + j2x)  # eq. 8 as printed
        c[9] = -b
        c[10] = m2 * l2 ** 2 - j2y + j2z
    return c


@njit(cache=True, nogil=True, fastmath=True)
def friction_torque(fr, j, w, squared, out):
    """Friction torque ``f_j(w)`` (N m) of joint ``j`` at rate ``w`` (rad/s) and its partial derivatives.

    ``fr[4j:4j+4] = [c1, c2, v_t, c4]``. Writes ``out = [f, df/dw, df/dc1, df/dc2, df/dv_t, df/dc4]``::

        f = c1 tanh(4 w / v_t) + c2 s(w / v_t) + c4 w,   s(u) = u / (u^2/4 + 3/4)^2   (eq. 5, squared)

    (``squared=False``: ``s(u) = u / (u^2/4 + 3/4)``, eq. 5 as printed).
    """
    c1 = fr[4 * j]
    c2 = fr[4 * j + 1]
    vt = fr[4 * j + 2]
    c4 = fr[4 * j + 3]
    u = w / vt
    t = math.tanh(4.0 * u)
    d = 0.25 * u * u + 0.75  # u^2/4 + 3/4
    if squared:
        s = u / (d * d)  # Brown & McPhee (2016)
        ds = (d - u * u) / (d * d * d)  # s'(u) = (D - u^2) / D^3
    else:
        s = u / d  # seed 003 eq. 5 as printed
        ds = (d - 0.5 * u * u) / (d * d)  # s'(u) = (D - u^2/2) / D^2
    dfu = c1 * 4.0 * (1.0 - t * t) + c2 * ds  # df/du
    out[0] = c1 * t + c2 * s + c4 * w  # eq. 5
    out[1] = dfu / vt + c4
    out[2] = t
    out[3] = s
    out[4] = -dfu * u / vt  # du/dv_t = -u / v_t
    out[5] = w


@njit(cache=True, nogil=True)
def friction_value(fr, j, w, squared):
    """``f_j(w)`` (N m) alone (as :func:`friction_torque`, without the partial derivatives)."""
    u = w / fr[4 * j + 2]
    d = 0.25 * u * u + 0.75  # u^2/4 + 3/4
    if squared:
        d = d * d  # Brown & McPhee (2016); seed 003 eq. 5 prints it unsquared
    return fr[4 * j] * math.tanh(4.0 * u) + fr[4 * j + 1] * u / d + fr[4 * j + 3] * w  # eq. 5


@njit(cache=True, nogil=True)
def accel(c, fr, squared, x, acc):
    """Accelerations ``q'' = H^-1 (-B - G - f)`` (rad/s^2) at state ``x = [theta0, theta1, w0, w1]``.

    Writes ``acc[0:2]``; returns 0, or 1 if H is singular or the result is not finite.
    """
    s0 = math.sin(x[0])
    k0 = math.cos(x[0])
    s1 = math.sin(x[1])
    k1 = math.cos(x[1])
    w0 = x[2]
    w1 = x[3]
    h11 = c[0] + c[1] * s1 * s1  # eq. 7 (+ m2 L1^2)
    h12 = -c[2] * k1
    h22 = c[3]
    b0 = c[8] * 2.0 * s1 * k1 * w0 * w1 + c[9] * s1 * w1 * w1  # Coriolis / centrifugal
    b1 = c[10] * s1 * k1 * w0 * w0
    g0 = c[4] * s0 - c[5] * s1 * k0  # eq. 9
    g1 = -c[6] * s0 * k1 + c[7] * s1
    r0 = -b0 - g0 - friction_value(fr, 0, w0, squared)  # eq. 6 with Q = -f
    r1 = -b1 - g1 - friction_value(fr, 1, w1, squared)
    det = h11 * h22 - h12 * h12
    if not det > 0.0:
        return 1
    acc[0] = (h22 * r0 - h12 * r1) / det  # H^-1 r
    acc[1] = (h11 * r1 - h12 * r0) / det
    if not (math.isfinite(acc[0]) and math.isfinite(acc[1])):
        return 1
    return 0


@njit(cache=True, nogil=True, fastmath=True)
def accel_jac(c, fr, squared, x, acc, dax, dap, tmp):
    """:func:`accel` and its partial derivatives: ``dax`` (2x4) by the state, ``dap`` (2x8) by the friction
    combinations; ``tmp`` (6) is scratch. From ``H q'' = r``: ``dq''/dy = H^-1 (dr/dy - (dH/dy) q'')``."""
    s0 = math.sin(x[0])
    k0 = math.cos(x[0])
    s1 = math.sin(x[1])
    k1 = math.cos(x[1])
    w0 = x[2]
    w1 = x[3]
    h11 = c[0] + c[1] * s1 * s1
    h12 = -c[2] * k1
    h22 = c[3]
    det = h11 * h22 - h12 * h12
    if not det > 0.0:
        return 1
    i11 = h22 / det  # H^-1
    i12 = -h12 / det
    i22 = h11 / det
    s2 = 2.0 * s1 * k1  # sin 2theta1
    c2 = k1 * k1 - s1 * s1  # cos 2theta1
    friction_torque(fr, 1, w1, squared, tmp)
    f1, df1 = tmp[0], tmp[1]
    for m in range(4):
        dap[1, 4 + m] = -tmp[2 + m]  # dr1/dp (joint 1), held until multiplied by H^-1 below
        dap[0, 4 + m] = 0.0
    friction_torque(fr, 0, w0, squared, tmp)
    for m in range(4):
        dap[0, m] = -tmp[2 + m]
        dap[1, m] = 0.0
    r0 = -(c[8] * s2 * w0 * w1 + c[9] * s1 * w1 * w1) - (c[4] * s0 - c[5] * s1 * k0) - tmp[0]  # eq. 6, Q = -f
    r1 = -(c[10] * s1 * k1 * w0 * w0) - (-c[6] * s0 * k1 + c[7] * s1) - f1
    acc[0] = i11 * r0 + i12 * r1
    acc[1] = i12 * r0 + i22 * r1
    # dr/dy - (dH/dy) q'' for y = theta0, theta1, w0, w1 (only H depends on theta1)
    d00 = -c[4] * k0 - c[5] * s1 * s0
    d10 = c[6] * k0 * k1
    d01 = (-(2.0 * c[8] * c2 * w0 * w1 + c[9] * k1 * w1 * w1) + c[5] * k1 * k0
           - (c[1] * s2 * acc[0] + c[2] * s1 * acc[1]))
    d11 = -(c[10] * c2 * w0 * w0) - (c[6] * s0 * s1 + c[7] * k1) - c[2] * s1 * acc[0]
    d02 = -c[8] * s2 * w1 - tmp[1]
    d12 = -2.0 * c[10] * s1 * k1 * w0
    d03 = -(c[8] * s2 * w0 + 2.0 * c[9] * s1 * w1)
    d13 = -df1
    dax[0, 0] = i11 * d00 + i12 * d10
    dax[1, 0] = i12 * d00 + i22 * d10
    dax[0, 1] = i11 * d01 + i12 * d11
    dax[1, 1] = i12 * d01 + i22 * d11
    dax[0, 2] = i11 * d02 + i12 * d12
    dax[1, 2] = i12 * d02 + i22 * d12
    dax[0, 3] = i11 * d03 + i12 * d13
    dax[1, 3] = i12 * d03 + i22 * d13
    for m in range(8):
        a0 = dap[0, m]
        a1 = dap[1, m]
        dap[0, m] = i11 * a0 + i12 * a1
        dap[1, m] = i12 * a0 + i22 * a1
    return 0


@njit(cache=True, nogil=True)
def rk4_step(c, fr, squared, x, h, out, k, y, a):
    """One classical RK4 step of length ``h`` (s) from ``x`` into ``out`` (sec. IV-A); ``k`` (4x4), ``y``
    (4), ``a`` (2) are scratch. Returns a status."""
    for stage in range(4):
        f = 0.0 if stage == 0 else (0.5 * h if stage < 3 else h)
        for i in range(4):
            y[i] = x[i] + f * k[stage - 1, i] if stage > 0 else x[i]
        if accel(c, fr, squared, y, a) != 0:
            return 1
        k[stage, 0] = y[2]
        k[stage, 1] = y[3]
        k[stage, 2] = a[0]
        k[stage, 3] = a[1]
    for i in range(4):
        out[i] = x[i] + h * (k[0, i] + 2.0 * k[1, i] + 2.0 * k[2, i] + k[3, i]) / 6.0  # RK4
    return 0


@njit(cache=True, nogil=True)
def simulate_kernel(c, fr, squared, x0, h, out):
    """RK4 from ``x0`` for ``out.shape[0] - 1`` steps of ``h`` (s); ``out[i]`` is the state at ``i h``.

    Returns the index of the first failed step + 1, or 0."""
    k = np.empty((4, 4))
    y = np.empty(4)
    a = np.empty(2)
    for i in range(4):
        out[0, i] = x0[i]
    for n in range(out.shape[0] - 1):
        if rk4_step(c, fr, squared, out[n], h, out[n + 1], k, y, a) != 0:
            return n + 1
    return 0


def simulate(x0: np.ndarray, fr: np.ndarray, duration_s: float = paper.SIM_DURATION_S,
             dt_s: float = paper.SIM_DT_S, variant: str = "lagrangian", squared: bool = True,
             phi_rad: float = paper.TILT_PHI_RAD) -> tuple[np.ndarray, np.ndarray]:
    """Simulate the pendulum from ``x0 = [theta0, theta1, theta0', theta1']`` (rad, rad/s).

    ``fr`` is the eight friction combinations (:func:`.paper.combinations`; zeros and ``v_t = 1`` for no
    friction). Returns ``(t_s, X)`` with ``X[i] = [theta0, theta1, theta0', theta1']`` at ``t_s[i]``.
    """
    x0 = np.asarray(x0, dtype=np.float64)
    fr = np.asarray(fr, dtype=np.float64)
    if x0.shape != (4,) or fr.shape != (8,) or not (np.all(np.isfinite(x0)) and np.all(np.isfinite(fr))):
        raise IdentificationError("simulate: x0 must be 4 finite values and fr 8 finite friction combinations")
    if np.any(fr[[2, 6]] <= 0.0) or not (dt_s > 0.0 and duration_s > 0.0):
        raise IdentificationError("simulate: v_t, dt_s and duration_s must be > 0")
    n = int(round(duration_s / dt_s))
    out = np.empty((n + 1, 4))
    status = simulate_kernel(coefficients(variant, phi_rad), fr, squared, x0, dt_s, out)
    if status:
        raise IdentificationError(f"simulate: the integration failed at step {status} (t = {status * dt_s:g} s)")
    return np.arange(n + 1) * dt_s, out


def noisy_record(duration_s: float = paper.SIM_DURATION_S, seed: int = paper.RECORD_SEED,
                 fr: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The simulation experiment of sec. IV-A: from :data:`.paper.SIM_X0` with the friction ``fr`` (default
    Table III's truth) by RK4 at 1 kHz, plus the measurement noise of :mod:`.paper` (angles and rates).

    Returns ``(t_s, X, X_meas)``: times (s), true and measured states ``[theta0, theta1, theta0', theta1']``.
    """
    t, X = simulate(paper.SIM_X0, paper.combinations(paper.TRUTH) if fr is None else fr, duration_s=duration_s)
    rng = np.random.default_rng(seed)
    Xm = X.copy()
    Xm[:, :2] += rng.normal(0.0, paper.NOISE_ANGLE_RAD, (t.size, 2))  # sec. IV-A, v ~ N(0, 0.1) (deg)
    Xm[:, 2:] += rng.normal(0.0, paper.NOISE_RATE_RADPS, (t.size, 2))  # (deg/s)
    return t, X, Xm


def mass_matrix(q1: np.ndarray, variant: str = "lagrangian") -> np.ndarray:
    """H(q) (kg m^2), shape ``(..., 2, 2)``, at pendulum angles ``q1`` (rad) (eq. 7, + m2 L1^2)."""
    c = coefficients(variant)
    s, k = np.sin(q1), np.cos(q1)
    out = np.empty(np.shape(q1) + (2, 2))
    out[..., 0, 0] = c[0] + c[1] * s * s
    out[..., 0, 1] = out[..., 1, 0] = -c[2] * k
    out[..., 1, 1] = c[3]
    return out


def potential(q: np.ndarray, phi_rad: float = paper.TILT_PHI_RAD) -> np.ndarray:
    """V(q) (J) of eq. 4 (module docstring); ``q[..., 0] = theta0``, ``q[..., 1] = theta1``."""
    q = np.asarray(q, dtype=np.float64)
    m1, m2, g = paper.M1_KG, paper.M2_KG, paper.G_MPS2
    th0, th1 = q[..., 0], q[..., 1]
    return (-g * math.sin(phi_rad) * (m1 * paper.L1_CG_M + m2 * paper.L1_M) * np.cos(th0)
            - m2 * g * paper.L2_CG_M * (np.sin(th0) * np.sin(th1) * math.sin(phi_rad)
                                        + np.cos(th1) * math.cos(phi_rad)))  # V = -sum m g (d . OG)  (eq. 4)


def gravity(q: np.ndarray, phi_rad: float = paper.TILT_PHI_RAD) -> np.ndarray:
    """G(q) (N m) as printed in eq. 9, shape ``(..., 2)``."""
    c = coefficients("lagrangian", phi_rad)
    q = np.asarray(q, dtype=np.float64)
    th0, th1 = q[..., 0], q[..., 1]
    return np.stack([c[4] * np.sin(th0) - c[5] * np.sin(th1) * np.cos(th0),
                     -c[6] * np.sin(th0) * np.cos(th1) + c[7] * np.sin(th1)], axis=-1)  # eq. 9


def energy(X: np.ndarray, variant: str = "lagrangian", phi_rad: float = paper.TILT_PHI_RAD) -> np.ndarray:
    """Total energy ``T + V`` (J) along states ``X[..., 4]``, with the H of ``variant``."""
    X = np.asarray(X, dtype=np.float64)
    H = mass_matrix(X[..., 1], variant)
    w = X[..., 2:4]
    return 0.5 * np.einsum("...i,...ij,...j->...", w, H, w) + potential(X[..., :2], phi_rad)  # T = q'^T H q' / 2

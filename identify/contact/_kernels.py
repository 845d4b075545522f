"""Compiled recursions of the single-point contact estimators (seed 004 section 2.2.1).

Python validates and allocates; these kernels only do arithmetic into the arrays they are given and
report failure by a status code (0 ok, 1 a non-finite value appeared: the run stops at that sample and
the caller reports where).

- :func:`rls_kernel`: recursive least squares with forgetting (seed 004 eqs. 2.3-2.5), used by RLS
  (regressor ``[x, x', x'']``) and instantaneous LS (``[x, x']``).
- :func:`kalman_kernel`: Kalman filter for a constant parameter state (seed 004 eqs. 2.8-2.9, identity
  transition), with optional process noise ``Q``.
- :func:`ia_kernel`: the indirect adaptive law (seed 004 eqs. 2.6-2.7) integrated by backward Euler.

References
----------
seed 004: Agar, "Contact parameter estimation using a space manipulator verification facility", sec. 2.2.1.
"""

from __future__ import annotations

import numpy as np
from numba import njit

STATUS_OK = 0
STATUS_NONFINITE = 1


@njit(cache=True, nogil=True)
def rls_kernel(phi, y, lam, p_max, theta, P, theta_out, pdiag_out, err_out):
    """RLS over the rows of ``phi`` (n x p) and ``y`` (n), in place.

    ``theta`` (p) and ``P`` (p x p) hold the initial estimate and covariance factor and end as the final
    ones. ``theta_out[i]`` / ``pdiag_out[i]``: estimate and diag(P) after sample ``i``; ``err_out[i]``:
    the a-priori error. ``p_max > 0`` bounds diag(P) against wind-up (forgetting is suspended for a step
    as far as needed, Salgado, Goodwin & Middleton 1988); ``p_max <= 0`` is the plain recursion.
    Returns ``(status, index reached, steps in which the bound acted)``.
    """
    n, p = phi.shape
    g = np.empty(p)
    bound_steps = 0
    for i in range(n):
        # g = P phi ; r = phi' P phi
        r = 0.0
        for j in range(p):
            acc = 0.0
            for k in range(p):
                acc += P[j, k] * phi[i, k]
            g[j] = acc
            r += phi[i, j] * acc
        den = lam + r  # lambda + phi' P phi  (seed 004 eq. 2.4, denominator)
        pred = 0.0
        for j in range(p):
            pred += phi[i, j] * theta[j]
        e = y[i] - pred  # Y - phi' theta  (eq. 2.3)
        err_out[i] = e
        for j in range(p):
            theta[j] += g[j] / den * e  # theta = theta + L e, L = P phi / (lambda + phi' P phi)  (eqs. 2.3-2.4)
        for j in range(p):
            for k in range(j, p):
                val = P[j, k] - g[j] * g[k] / den  # P - P phi phi' P / (lambda + phi' P phi)  (eq. 2.5)
                P[j, k] = val
                P[k, j] = val
        lam_eff = lam
        if p_max > 0.0:
            for j in range(p):
                need = P[j, j] / p_max
                if need > lam_eff:
                    lam_eff = need
            if lam_eff > 1.0:
                lam_eff = 1.0
            if lam_eff > lam:
                bound_steps += 1
        inv = 1.0 / lam_eff
        ok = np.isfinite(e)
        for j in range(p):
            for k in range(p):
                P[j, k] *= inv  # P = (...) / lambda  (eq. 2.5)
            theta_out[i, j] = theta[j]
            pdiag_out[i, j] = P[j, j]
            if not (np.isfinite(theta[j]) and np.isfinite(P[j, j])):
                ok = False
        if not ok:
            return STATUS_NONFINITE, i, bound_steps
    return STATUS_OK, n, bound_steps


@njit(cache=True, nogil=True)
def kalman_kernel(H, z, r, Q, theta, P, theta_out, pdiag_out, innov_out):
    """Kalman filter with state ``theta = [k, b]`` (seed 004 eq. 2.9) over the rows of ``H`` and ``z``.

    Model (seed 004 eq. 2.8 with G = I): ``theta[i+1] = theta[i] + w``, ``z[i] = H[i] theta[i] + v``,
    ``cov(w) = Q``, ``var(v) = r``. In place like :func:`rls_kernel`; ``innov_out[i]`` is the innovation.
    With ``Q = 0`` and ``P0 = r P0_rls`` this is RLS with lambda = 1 (same gain, ``P = r P_rls``).
    Returns ``(status, index reached)``.
    """
    n, p = H.shape
    g = np.empty(p)
    for i in range(n):
        for j in range(p):
            for k in range(p):
                P[j, k] += Q[j, k]  # predict: theta- = G theta, P- = G P G' + Q with G = I  (eq. 2.8)
        s = r
        for j in range(p):
            acc = 0.0
            for k in range(p):
                acc += P[j, k] * H[i, k]
            g[j] = acc  # P H'
            s += H[i, j] * acc  # S = H P H' + r
        pred = 0.0
        for j in range(p):
            pred += H[i, j] * theta[j]
        nu = z[i] - pred  # innovation z - H theta
        innov_out[i] = nu
        for j in range(p):
            theta[j] += g[j] / s * nu  # theta+ = theta- + K nu, K = P H' / S
        for j in range(p):
            for k in range(j, p):
                val = P[j, k] - g[j] * g[k] / s  # P+ = (I - K H) P-  (symmetric form)
                P[j, k] = val
                P[k, j] = val
        ok = np.isfinite(nu)
        for j in range(p):
            theta_out[i, j] = theta[j]
            pdiag_out[i, j] = P[j, j]
            if not (np.isfinite(theta[j]) and np.isfinite(P[j, j])):
                ok = False
        if not ok:
            return STATUS_NONFINITE, i
    return STATUS_OK, n


@njit(cache=True, nogil=True)
def ia_kernel(phi, y, dt, gamma, theta, theta_out, err_out):
    """Indirect adaptive estimation (seed 004 eqs. 2.6-2.7) over the rows of ``phi`` and ``y``, in place.

    ``theta' = -Gamma phi (F_hat - F)`` with ``F_hat = phi' theta`` is integrated by backward Euler with
    ``phi`` frozen over the step, solved in closed form (Sherman-Morrison)::

        theta[i+1] = theta[i] - dt[i] Gamma phi (phi' theta[i] - F) / (1 + dt[i] phi' Gamma phi)

    which equals forward Euler to first order in ``dt`` and, unlike it, cannot diverge for any gain.
    ``err_out[i]`` is ``F_hat - F`` before the step. Returns ``(status, index reached)``.
    """
    n, p = phi.shape
    g = np.empty(p)
    for i in range(n):
        q = 0.0
        for j in range(p):
            acc = 0.0
            for k in range(p):
                acc += gamma[j, k] * phi[i, k]
            g[j] = acc  # Gamma phi
            q += phi[i, j] * acc  # phi' Gamma phi
        fhat = 0.0
        for j in range(p):
            fhat += phi[i, j] * theta[j]  # F_hat = phi' theta  (eq. 2.6)
        e = fhat - y[i]  # F~ = F_hat - F_meas  (eq. 2.7)
        err_out[i] = e
        scale = dt[i] * e / (1.0 + dt[i] * q)
        ok = np.isfinite(e)
        for j in range(p):
            theta[j] -= g[j] * scale  # theta' = -Gamma phi F~  (eq. 2.7, backward Euler)
            theta_out[i, j] = theta[j]
            if not np.isfinite(theta[j]):
                ok = False
        if not ok:
            return STATUS_NONFINITE, i
    return STATUS_OK, n

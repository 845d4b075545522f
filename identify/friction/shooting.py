"""Compiled kernels of the grey-box fit (:mod:`.greybox`): multiple shooting with forward sensitivities, and
the window integrals of its equation-error start.

:func:`shooting_kernel` integrates each segment's state by the RK4 of :mod:`.furuta` and, beside it, the
sensitivity ``X = dx/d(x0, p)`` (4 x 12: the segment's initial state, then the eight friction combinations)
of the variational equation ``X' = A X + B`` (``A = df/dx``, ``B = df/dp``), two ways:

- near a friction reversal (a joint slower than :data:`SLOW_VT` transition rates ``v_t`` at the step's
  start), where ``A`` swings within a step (``tanh(4 w / v_t)``), the exact derivative of the RK4 map,
  stage by stage (four Jacobians);
- elsewhere a second-order step with ``A``, ``B`` taken once, at RK4's midpoint stage::

      Z = A X + B,   X(t + h) = X + h Z + (h^2 / 2) A Z

  (a Taylor step about ``t`` in which the midpoint ``A``, ``B`` supply the ``A' X + B'`` term: local error
  O(h^3); one Jacobian instead of four, about 3x faster over the seed 003 record).

The sensitivities agree with finite differences of the simulation to ~1e-4 at 1 kHz; only the residuals
(exact) decide where the optimum is. numba kernels: they run once per solver evaluation over every sample
(35,000 steps x 12 sensitivity columns for the seed 003 record).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from hapticam.identify.friction.furuta import accel, accel_jac

NC = 12  # sensitivity columns: 4 initial state + 8 parameters
SLOW_VT = 5.0  # below this many v_t a joint is near a friction reversal: exact RK4 sensitivities


@njit(cache=True, nogil=True, fastmath=True)
def _sensitivity_rate(Y, dax, dap, K):
    """``K = A Y + B`` (module docstring) for ``A = [[0, I], [dax]]``, ``B = [[0], [0 | dap]]``."""
    for j in range(NC):
        K[0, j] = Y[2, j]
        K[1, j] = Y[3, j]
        for r in range(2):
            v = dax[r, 0] * Y[0, j] + dax[r, 1] * Y[1, j] + dax[r, 2] * Y[2, j] + dax[r, 3] * Y[3, j]
            if j >= 4:
                v += dap[r, j - 4]  # B: d(accel)/d(combination)
            K[2 + r, j] = v


@njit(cache=True, nogil=True, fastmath=True)
def _exact_step(c, fr, squared, x, X, h, k, y, Y, K, acc, dax, dap, tmp):
    """One RK4 step of the state and the exact derivative of that step (four stage Jacobians), in place."""
    for st in range(4):
        f = 0.0 if st == 0 else (0.5 * h if st < 3 else h)
        for i in range(4):
            y[i] = x[i] + f * k[st - 1, i] if st > 0 else x[i]
            for j in range(NC):
                Y[i, j] = X[i, j] + f * K[st - 1, i, j] if st > 0 else X[i, j]
        if accel_jac(c, fr, squared, y, acc, dax, dap, tmp) != 0:
            return 1
        k[st, 0] = y[2]
        k[st, 1] = y[3]
        k[st, 2] = acc[0]
        k[st, 3] = acc[1]
        _sensitivity_rate(Y, dax, dap, K[st])
    for i in range(4):
        x[i] += h * (k[0, i] + 2.0 * k[1, i] + 2.0 * k[2, i] + k[3, i]) / 6.0  # RK4
        for j in range(NC):
            X[i, j] += h * (K[0, i, j] + 2.0 * K[1, i, j] + 2.0 * K[2, i, j] + K[3, i, j]) / 6.0
    return 0


@njit(cache=True, nogil=True, fastmath=True)
def _midpoint_step(c, fr, squared, x, X, h, k, y, Z, AZ, acc, dax, dap, tmp):
    """One RK4 step of the state (Jacobian at the midpoint stage) and the second-order sensitivity step."""
    for st in range(4):
        f = 0.0 if st == 0 else (0.5 * h if st < 3 else h)
        for i in range(4):
            y[i] = x[i] + f * k[st - 1, i] if st > 0 else x[i]
        if st == 1:
            status = accel_jac(c, fr, squared, y, acc, dax, dap, tmp)
        else:
            status = accel(c, fr, squared, y, acc)
        if status != 0:
            return 1
        k[st, 0] = y[2]
        k[st, 1] = y[3]
        k[st, 2] = acc[0]
        k[st, 3] = acc[1]
    for i in range(4):
        x[i] += h * (k[0, i] + 2.0 * k[1, i] + 2.0 * k[2, i] + k[3, i]) / 6.0  # RK4
    _sensitivity_rate(X, dax, dap, Z)  # Z = A X + B
    half = 0.5 * h * h
    for j in range(NC):
        for r in range(2):
            AZ[r, j] = dax[r, 0] * Z[0, j] + dax[r, 1] * Z[1, j] + dax[r, 2] * Z[2, j] + dax[r, 3] * Z[3, j]
        X[0, j] += h * Z[0, j] + half * Z[2, j]  # (A Z) rows 0-1 = Z rows 2-3
        X[1, j] += h * Z[1, j] + half * Z[3, j]
        X[2, j] += h * Z[2, j] + half * AZ[0, j]
        X[3, j] += h * Z[3, j] + half * AZ[1, j]
    return 0


@njit(cache=True, nogil=True, fastmath=True)
def _segment(c, fr, squared, x0, n0, n1, h, meas, weights, xscale, res, jac, gram, use_gram):
    """One segment (samples ``n0..n1-1``) of :func:`shooting_kernel`. Returns 0 or the failing sample + 1."""
    m = meas.shape[1]
    x = x0.copy()
    X = np.zeros((4, NC))
    Y = np.empty((4, NC))
    Z = np.empty((4, NC))
    K = np.empty((4, 4, NC))
    y = np.empty(4)
    k = np.empty((4, 4))
    acc = np.empty(2)
    dax = np.empty((2, 4))
    dap = np.empty((2, 8))
    tmp = np.empty(6)
    row = np.empty(13)
    slow0 = SLOW_VT * fr[2]  # rad/s: near a reversal of the arm (joint 0) / the pendulum (joint 1)
    slow1 = SLOW_VT * fr[6]
    for i in range(4):
        X[i, i] = 1.0
    if use_gram:
        gram[:, :] = 0.0
    for n in range(n0, n1):
        for ch in range(m):
            wt = weights[ch]
            if use_gram:
                for j in range(4):
                    row[j] = X[ch, j] * wt * xscale[j]
                for j in range(8):
                    row[4 + j] = X[ch, 4 + j] * wt * fr[j]
                row[12] = (x[ch] - meas[n, ch]) * wt
                for a in range(13):
                    ra = row[a]
                    for b in range(a, 13):
                        gram[a, b] += ra * row[b]
            else:
                res[n * m + ch] = (x[ch] - meas[n, ch]) * wt
                for j in range(NC):
                    jac[n * m + ch, j] = X[ch, j] * wt
        if n + 1 == n1:
            break
        if abs(x[2]) < slow0 or abs(x[3]) < slow1:
            status = _exact_step(c, fr, squared, x, X, h, k, y, Y, K, acc, dax, dap, tmp)
        else:
            status = _midpoint_step(c, fr, squared, x, X, h, k, y, Z, Y, acc, dax, dap, tmp)
        if status != 0:
            return n + 1
    if use_gram:
        for a in range(13):
            for b in range(a):
                gram[a, b] = gram[b, a]
    return 0


@njit(cache=True, nogil=True)
def shooting_kernel(c, fr, squared, x0s, starts, h, meas, weights, xscale, res, jac, gram):
    """Simulate each segment ``s`` from ``x0s[s]`` over samples ``starts[s]..starts[s+1]-1`` with RK4 and
    its sensitivities. ``meas`` (n, m) holds the measured channels (angles, then rates if m = 4), ``weights``
    (m) their 1/sigma. If ``gram`` has one entry per segment, accumulate the Gram matrices there (module
    docstring); otherwise write the weighted residuals ``res`` (n*m) and their Jacobian ``jac`` (n*m, 12:
    initial state, then parameters). Returns 0 or the first failing sample + 1."""
    nseg = starts.size - 1
    use_gram = gram.shape[0] == nseg
    g = np.empty((13, 13))
    for s in range(nseg):
        if use_gram:
            g = gram[s]
        status = _segment(c, fr, squared, x0s[s], starts[s], starts[s + 1], h, meas, weights, xscale, res, jac,
                          g, use_gram)
        if status != 0:
            return status
    return 0


@njit(cache=True, nogil=True)
def window_regressors(w, h, idx, vt, out):
    """Trapezoid integrals over the windows ``[idx[i], idx[i+1]]`` (samples ``h`` s apart) of the three
    friction regressors of eq. 5 at the rates ``w`` (rad/s) for transition rate ``vt``: ``tanh(4 u)``,
    ``u / (u^2/4 + 3/4)^2`` (squared, Brown & McPhee 2016) and ``w``, ``u = w / vt``. Writes ``out``
    (len(idx) - 1, 3)."""
    prev0 = 0.0
    prev1 = 0.0
    prev2 = 0.0
    for i in range(idx.size - 1):
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        for n in range(idx[i], idx[i + 1] + 1):
            u = w[n] / vt
            d = 0.25 * u * u + 0.75
            f0 = math.tanh(4.0 * u)  # eq. 5
            f1 = u / (d * d)
            f2 = w[n]
            if n > idx[i]:
                a0 += 0.5 * h * (prev0 + f0)  # trapezoid rule
                a1 += 0.5 * h * (prev1 + f1)
                a2 += 0.5 * h * (prev2 + f2)
            prev0 = f0
            prev1 = f1
            prev2 = f2
        out[i, 0] = a0
        out[i, 1] = a1
        out[i, 2] = a2

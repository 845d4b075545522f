"""Segment parameters of one direction by least squares: constant per segment (EWLS with ``lam = 1`` on
regressors centred at each segment's midpoint, equal to the batch solution) or continuous piecewise
linear between knots (one least-squares fit of hat functions). Each returns the parameter table
``[m, b, k, F0]`` per entry, its standard deviations, the RMS residual and the sample count per segment."""

from __future__ import annotations

import numpy as np

from hapticam.identify.impedance.ewls import ewls_fit


def _segment_index(x: np.ndarray, bp: np.ndarray) -> np.ndarray:
    return np.clip(np.searchsorted(bp, x, side="right") - 1, 0, bp.size - 2)


def constant_segments(x, phi, y, bp, free, fixed_vec, x_col, one_col):
    """Per segment: EWLS with lam = 1 on regressors centred at the segment midpoint (= batch LS)."""
    nseg = bp.size - 1
    seg_of = _segment_index(x, bp)
    p = len(free)
    theta = np.tile(fixed_vec, (nseg, 1))
    std = np.zeros((nseg, 4))
    rms = np.zeros(nseg)
    counts = np.bincount(seg_of, minlength=nseg)
    for s in range(nseg):
        sel = seg_of == s
        c = 0.5 * (bp[s] + bp[s + 1])
        ph = phi[sel].copy()
        ph[:, x_col] -= c  # k (x - c) + (F0 + k c): the same model, well conditioned
        res = ewls_fit(ph, y[sel], 1.0)
        th = res.theta.copy()
        A = np.eye(p)
        A[one_col, x_col] = -c  # F0 = F0_c - c k ; theta = A theta_c
        th = A @ th
        r = y[sel] - phi[sel] @ th
        dof = max(int(sel.sum()) - p, 1)
        sigma2 = float(r @ r) / dof
        cov = sigma2 * (A @ res.P @ A.T)
        theta[s, free] = th
        std[s, free] = np.sqrt(np.maximum(np.diag(cov), 0.0))
        rms[s] = float(np.sqrt(np.mean(r * r))) if r.size else 0.0
    return theta, std, rms, counts


def linear_knots(x, phi, y, bp, free, fixed_vec, x_col, one_col, ewls_path, lam):
    """Continuous piecewise-linear parameters with knots ``bp``: one least-squares fit of hat functions.

    ``k(x) x + F0(x)`` is unchanged by ``k += d, F0_j -= d x_j`` (one null direction); ``d`` is chosen so
    the knots' stiffness matches the EWLS profile on average.
    """
    nk = bp.size
    p = len(free)
    seg_of = _segment_index(x, bp)
    w = np.clip((x - bp[seg_of]) / (bp[seg_of + 1] - bp[seg_of]), 0.0, 1.0)
    n = x.size
    cols = np.zeros((n, nk * p))
    rows = np.arange(n)
    for j in range(p):
        cols[rows, seg_of * p + j] = phi[:, j] * (1.0 - w)
        cols[rows, (seg_of + 1) * p + j] = phi[:, j] * w
    scale = np.sqrt(np.mean(cols * cols, axis=0))
    scale[~(scale > 0)] = 1.0
    sol, *_ = np.linalg.lstsq(cols / scale, y, rcond=1e-12)
    coef = (sol / scale).reshape(nk, p)
    r = y - cols @ (sol / scale)
    # gauge: mean knot stiffness equal to the EWLS profile's at the knots
    k_prof = np.interp(bp, x, ewls_path[:, x_col])
    d = float(np.mean(k_prof - coef[:, x_col]))
    coef[:, x_col] += d
    coef[:, one_col] -= d * bp
    dof = max(n - nk * p + 1, 1)
    sigma2 = float(r @ r) / dof
    M = (cols / scale).T @ (cols / scale)
    cov = sigma2 * np.linalg.pinv(M, rcond=1e-10) / np.outer(scale, scale)
    theta = np.tile(fixed_vec, (nk, 1))
    std = np.zeros((nk, 4))
    theta[:, free] = coef
    std[:, free] = np.sqrt(np.maximum(np.diag(cov), 0.0)).reshape(nk, p)
    counts = np.bincount(seg_of, minlength=nk - 1)
    rms = np.array([float(np.sqrt(np.mean(r[seg_of == s] ** 2))) if counts[s] else 0.0 for s in range(nk - 1)])
    return theta, std, rms, counts

"""Global least squares for the single-point contact law (seed 004 sec. 2.2.1, eqs. 2.10-2.11).

All samples of a contact form one overdetermined system ``Y = Phi' theta`` with rows ``[x, x']`` (and,
optionally, a constant: the contact datum, see :mod:`~hapticam.identify.contact.onset`), solved once:
``theta = (Phi Phi')^-1 Phi Y``. The covariance is ``s2 (Phi Phi')^-1`` with ``s2 = RSS / (n - p)``.
The history is the growing-window solution (the estimate using samples ``0..i``), from cumulative normal
equations: what the estimate would have been had the record stopped at ``t[i]``.

References
----------
seed 004: Agar, sec. 2.2.1, "Global Least Squares Algorithm".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.identify.contact.result import EstimateResult, as_signal, derivatives, sample_times


def _column_scales(phi: np.ndarray) -> np.ndarray:
    s = np.sqrt(np.mean(phi * phi, axis=0))  # RMS of each regressor, for conditioning only
    s[~(s > 0)] = 1.0
    return s


def solve_ls(phi: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Least squares ``theta = (Phi Phi')^-1 Phi Y`` (seed 004 eq. 2.11) on column-scaled regressors.

    Returns ``(theta, cov, s2, rank)`` with ``cov = s2 (Phi Phi')^-1`` and ``s2 = RSS / (n - p)``.
    """
    n, p = phi.shape
    s = _column_scales(phi)
    q, rmat = np.linalg.qr(phi / s)
    diag = np.abs(np.diag(rmat))
    rank = int(np.sum(diag > diag.max() * 1e-10)) if diag.max() > 0 else 0
    if rank < p:
        return np.full(p, np.nan), np.full((p, p), np.nan), float("nan"), rank
    theta_s = np.linalg.solve(rmat, q.T @ y)  # R theta = Q' y, the QR form of eq. 2.11
    res = y - (phi / s) @ theta_s
    s2 = float(res @ res) / max(n - p, 1)  # residual variance
    rinv = np.linalg.inv(rmat)
    cov_s = s2 * (rinv @ rinv.T)  # s2 (Phi Phi')^-1 in scaled units
    return theta_s / s, cov_s / np.outer(s, s), s2, rank


def growing_window(phi: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``theta_i`` = least squares on rows ``0..i`` for every ``i`` (NaN while singular), shape (n, p)."""
    n, p = phi.shape
    s = _column_scales(phi)
    ph = phi / s
    A = np.cumsum(ph[:, :, None] * ph[:, None, :], axis=0)  # sum phi phi' up to i
    c = np.cumsum(ph * y[:, None], axis=0)  # sum phi y up to i
    out = np.full((n, p), np.nan)
    scale = np.arange(1, n + 1, dtype=np.float64)
    det_ok = np.linalg.cond(A / scale[:, None, None]) < 1e10
    if np.any(det_ok):
        out[det_ok] = np.linalg.solve(A[det_ok], c[det_ok][:, :, None])[:, :, 0] / s
    return out


class GlobalLS:
    """Global least squares on ``[x, x']`` (seed 004 eqs. 2.10-2.11), optionally with a constant column.

    Parameters
    ----------
    intercept : bool
        Add a constant regressor (force offset ``c = -k x0``: a datum error ``x0``).
    """

    def __init__(self, intercept: bool = False) -> None:
        self.intercept = bool(intercept)
        self.names: tuple[str, ...] = ("k_Npm", "b_Nspm") + (("c_N",) if self.intercept else ())

    def regressors(self, x_m: np.ndarray, v_mps: np.ndarray) -> np.ndarray:
        """The rows ``[x, x'(, 1)]``."""
        cols = [x_m, v_mps] + ([np.ones_like(x_m)] if self.intercept else [])
        return np.column_stack(cols)

    def fit(self, x_m: Any, v_mps: Any, f_N: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(theta, cov)`` from displacement (m), velocity (m/s), force (N)."""
        x = as_signal("x_m", x_m)
        v = as_signal("v_mps", v_mps, x.size)
        f = as_signal("f_N", f_N, x.size)
        theta, cov, _, rank = solve_ls(self.regressors(x, v), f)
        if rank < len(self.names):
            raise IdentificationError(f"gls: the regressors {self.names} are linearly dependent on this record "
                                      "(no motion, or no velocity at all)")
        return theta, cov


def gls(t_s: Any, x_m: Any, f_N: Any, v_mps: Any = None, *, intercept: bool = False) -> EstimateResult:
    """Global least squares estimate over a record (seed 004 eqs. 2.10-2.11).

    Parameters
    ----------
    t_s, x_m, f_N : array_like
        Uniform sample times (s), displacement (m), force (N).
    v_mps : array_like, optional
        Measured velocity (m/s); None differentiates ``x_m``.
    intercept : bool
        Also fit a constant force offset (see :class:`GlobalLS`).
    """
    x = as_signal("x_m", x_m)
    f = as_signal("f_N", f_N, x.size)
    t, dt = sample_times(t_s, x.size)
    v = derivatives(x, dt)[0] if v_mps is None else as_signal("v_mps", v_mps, x.size)
    est = GlobalLS(intercept)
    theta, cov = est.fit(x, v, f)
    phi = est.regressors(x, v)
    res = f - phi @ theta
    return EstimateResult("gls", est.names, theta, cov, growing_window(phi, f), t, "time",
                          extra={"sigma2_N2": float(res @ res) / max(x.size - len(theta), 1),
                                 "residual_N": res})

"""Exponentially weighted least squares (EWLS), seed 001 Table 1, compiled with numba.

With regressor ``phi = [a v x 1]`` (seed 001 eq. 9), output ``y = F`` (eq. 10) and parameters
``theta = [m b k F0]`` (eq. 11), each step is::

    L = P phi / (lam + phi' P phi)          (seed 001 Table 1a)
    P = (P - L phi' P) / lam                (Table 1b)
    e = y - phi' theta                      (Table 1c)
    theta = theta + L e                     (Table 1d)

Numerical care for millions of samples:

- Regressors are scaled by per-column scales ``s`` (default: their RMS) so ``P`` is well conditioned;
  the estimate is unscaled on return (``theta_j = theta~_j / s_j``), which is the same estimator.
- ``P`` is kept exactly symmetric: the update is the symmetric rank-1 form
  ``P - g g' / (lam + r)`` with ``g = P phi``, ``r = phi' g``, computed on the upper triangle and mirrored.
- Covariance wind-up: when a regressor is not excited, ``P`` grows by ``1 / lam`` per step along the
  unexcited direction (wind-up) and the next excitation gets an enormous gain. Here forgetting is
  suspended for a step whenever dividing by ``lam`` would raise a diagonal element of ``P`` above
  ``p_max`` (in scaled units: ``p_max = 1`` caps the forgotten information at that of one RMS sample);
  the step uses the largest effective ``lam' in [lam, 1]`` that respects the cap. This is the
  bounded-covariance rule of Salgado, Goodwin & Middleton (1988). With ``lam = 1`` it never acts, and
  the recursion is ordinary recursive least squares, equal to the batch solution (with prior ``P0``).

References
----------
seed 001: Colton & Hollerbach, Table 1 and eqs. 9-11.
Ljung & Soderstrom (1983), Theory and Practice of Recursive Identification (seed 001 ref. 14).
Salgado, Goodwin & Middleton (1988), "Modified least squares algorithm incorporating exponential
resetting and forgetting", Int. J. Control 47(2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from hapticam.errors import IdentificationError

STATUS_OK = 0
STATUS_NONFINITE = 1


@njit(cache=True, nogil=True)
def ewls_kernel(phi, y, lam, theta, P, p_max, theta_out, pdiag_out, err_out, record_idx, p_rec):
    """Run EWLS over all rows of ``phi`` (n x p, already scaled) and ``y`` (n), in place.

    ``theta`` (p) and ``P`` (p x p) hold the initial estimate and covariance and are overwritten with
    the final ones. Per step ``i``: ``theta_out[i]`` the estimate after the step, ``pdiag_out[i]`` the
    diagonal of ``P`` after the step, ``err_out[i]`` the prior error ``e`` (Table 1c). The full ``P``
    after step ``record_idx[j]`` goes to ``p_rec[j]`` (``record_idx`` increasing). Returns
    ``(status, windup_steps)``: status 0 ok, 1 a non-finite value appeared (the run stops there).
    """
    n, p = phi.shape
    g = np.empty(p)
    windup = 0
    rec = 0
    nrec = record_idx.shape[0]
    for i in range(n):
        # g = P phi ; r = phi' P phi
        r = 0.0
        for j in range(p):
            acc = 0.0
            for k in range(p):
                acc += P[j, k] * phi[i, k]
            g[j] = acc
            r += phi[i, j] * acc
        den = lam + r
        # e = y - phi' theta  (seed 001 Table 1c)
        pred = 0.0
        for j in range(p):
            pred += phi[i, j] * theta[j]
        e = y[i] - pred
        err_out[i] = e
        # theta = theta + L e with L = P phi / (lam + phi' P phi)  (Table 1a, 1d)
        for j in range(p):
            theta[j] += g[j] / den * e
        # P' = P - L phi' P = P - g g' / den (symmetric form of Table 1b, before division by lam)
        for j in range(p):
            for k in range(j, p):
                val = P[j, k] - g[j] * g[k] / den
                P[j, k] = val
                P[k, j] = val
        # bounded covariance: largest lam' in [lam, 1] keeping diag(P') / lam' <= p_max
        lam_eff = lam
        for j in range(p):
            need = P[j, j] / p_max
            if need > lam_eff:
                lam_eff = need
        if lam_eff > 1.0:
            lam_eff = 1.0
        if lam_eff > lam:
            windup += 1
        inv = 1.0 / lam_eff
        for j in range(p):
            for k in range(p):
                P[j, k] *= inv  # P = P' / lam  (Table 1b)
        ok = np.isfinite(e)
        for j in range(p):
            theta_out[i, j] = theta[j]
            pdiag_out[i, j] = P[j, j]
            if not np.isfinite(theta[j]) or not np.isfinite(P[j, j]):
                ok = False
        if rec < nrec and record_idx[rec] == i:
            for j in range(p):
                for k in range(p):
                    p_rec[rec, j, k] = P[j, k]
            rec += 1
        if not ok:
            return STATUS_NONFINITE, windup
    return STATUS_OK, windup


@dataclass
class EWLSResult:
    """Output of :func:`ewls_fit` in the caller's (unscaled) units.

    Attributes
    ----------
    theta : numpy.ndarray
        Final estimate (p).
    P : numpy.ndarray
        Final covariance factor (p x p); the parameter covariance is ``sigma2 * P``.
    theta_path : numpy.ndarray
        Estimate after each sample (n x p).
    pdiag_path : numpy.ndarray
        Diagonal of ``P`` after each sample (n x p).
    errors : numpy.ndarray
        Prior prediction errors (Table 1c), n.
    P_recorded : numpy.ndarray
        Full ``P`` after each step listed in ``record_idx`` (len x p x p).
    sigma2 : float
        Residual variance of the prior errors after the first ``10 p`` samples (the noise estimate).
    windup_steps : int
        Steps in which forgetting was suspended by the covariance bound.
    """

    theta: np.ndarray
    P: np.ndarray
    theta_path: np.ndarray
    pdiag_path: np.ndarray
    errors: np.ndarray
    P_recorded: np.ndarray
    sigma2: float
    windup_steps: int


def _scales(phi: np.ndarray) -> np.ndarray:
    s = np.sqrt(np.mean(phi * phi, axis=0))
    s[~(s > 0)] = 1.0
    return s


def ewls_fit(phi: Any, y: Any, lam: float = 0.999, *, theta0: Any = None, p0: float = 1e8,
             p_max: float = 1.0, scale: Any = "rms", record_idx: Any = None) -> EWLSResult:
    """Exponentially weighted least squares over the rows of ``phi`` (seed 001 Table 1).

    Parameters
    ----------
    phi : array_like, shape (n, p)
        Regressors, one row per sample (seed 001 eq. 9: ``[a v x 1]``).
    y : array_like, shape (n,)
        Outputs (seed 001 eq. 10: the force, N).
    lam : float
        Forgetting factor, ``0 < lam <= 1`` (seed 001 section 5 uses 0.999; 1 is ordinary RLS).
    theta0 : array_like, optional
        Initial estimate (default zeros).
    p0 : float
        Initial covariance ``P0 = p0 I`` in scaled units (large: a weak prior).
    p_max : float
        Covariance bound (scaled units) of the anti-wind-up rule; must be positive.
    scale : "rms", None or array_like
        Column scales: their RMS (default), none, or given values (positive).
    record_idx : array_like of int, optional
        Steps after which to keep the full ``P`` (strictly increasing).
    """
    phi_a = np.ascontiguousarray(np.asarray(phi, dtype=np.float64))
    y_a = np.ascontiguousarray(np.asarray(y, dtype=np.float64))
    if phi_a.ndim != 2 or y_a.ndim != 1 or phi_a.shape[0] != y_a.shape[0]:
        raise IdentificationError(f"ewls: phi must be (n, p) and y (n,), got {phi_a.shape} and {y_a.shape}")
    n, p = phi_a.shape
    if n == 0 or p == 0:
        raise IdentificationError("ewls: no samples or no regressors")
    if not (0.0 < lam <= 1.0):
        raise IdentificationError(f"ewls: forgetting factor must be in (0, 1], got {lam}")
    if not (p0 > 0 and p_max > 0):
        raise IdentificationError("ewls: p0 and p_max must be positive")
    if not (np.all(np.isfinite(phi_a)) and np.all(np.isfinite(y_a))):
        raise IdentificationError("ewls: phi and y must be finite")
    if isinstance(scale, str) and scale == "rms":
        s = _scales(phi_a)
    elif scale is None:
        s = np.ones(p)
    else:
        s = np.asarray(scale, dtype=np.float64).reshape(p)
        if not np.all(s > 0):
            raise IdentificationError("ewls: scales must be positive")
    phis = phi_a / s  # phi~ = phi / s, theta~ = theta * s: the same predictions
    theta = np.zeros(p) if theta0 is None else np.asarray(theta0, dtype=np.float64).reshape(p) * s
    P = np.eye(p) * p0
    rec = np.zeros(0, dtype=np.int64) if record_idx is None else np.asarray(record_idx, dtype=np.int64)
    if rec.size and (np.any(np.diff(rec) <= 0) or rec[0] < 0 or rec[-1] >= n):
        raise IdentificationError("ewls: record_idx must be strictly increasing indices into the samples")
    theta_out = np.empty((n, p))
    pdiag_out = np.empty((n, p))
    err = np.empty(n)
    p_rec = np.empty((rec.size, p, p))
    status, windup = ewls_kernel(phis, y_a, float(lam), theta, P, float(p_max), theta_out, pdiag_out, err,
                                 rec, p_rec)
    if status != STATUS_OK:
        raise IdentificationError("ewls: the recursion produced a non-finite value (regressors out of range?)")
    sinv = 1.0 / s
    burn = min(n - 1, 10 * p)
    tail = err[burn:]
    sigma2 = float(np.mean(tail * tail)) if tail.size else 0.0
    return EWLSResult(theta=theta * sinv, P=P * np.outer(sinv, sinv), theta_path=theta_out * sinv,
                      pdiag_path=pdiag_out * sinv * sinv, errors=err,
                      P_recorded=p_rec * np.outer(sinv, sinv)[None, :, :], sigma2=sigma2,
                      windup_steps=int(windup))


class EWLS:
    """Recursive EWLS estimator (seed 001 Table 1) fed one block of samples at a time.

    Parameters
    ----------
    n_params : int
        Number of regressors ``p`` (4 for ``[a v x 1]``).
    lam : float
        Forgetting factor in (0, 1].
    scale : array_like, optional
        Fixed column scales (positive); default ones. Fixed scales keep blocks consistent.
    p0, p_max : float
        Initial covariance ``p0 I`` and covariance bound, in scaled units.
    theta0 : array_like, optional
        Initial estimate (unscaled units).

    Examples
    --------
    >>> est = EWLS(2, lam=1.0)
    >>> est.update(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([1.0, 2.0, 3.0]))
    array([1., 2.])
    """

    def __init__(self, n_params: int, lam: float = 0.999, *, scale: Any = None, p0: float = 1e8,
                 p_max: float = 1.0, theta0: Any = None) -> None:
        if int(n_params) < 1:
            raise IdentificationError(f"EWLS: n_params must be >= 1, got {n_params}")
        if not (0.0 < lam <= 1.0):
            raise IdentificationError(f"EWLS: forgetting factor must be in (0, 1], got {lam}")
        if not (p0 > 0 and p_max > 0):
            raise IdentificationError("EWLS: p0 and p_max must be positive")
        self.p = int(n_params)
        self.lam = float(lam)
        self.p_max = float(p_max)
        self.s = np.ones(self.p) if scale is None else np.asarray(scale, dtype=np.float64).reshape(self.p)
        if not np.all(self.s > 0):
            raise IdentificationError("EWLS: scales must be positive")
        self._theta = np.zeros(self.p) if theta0 is None else np.asarray(theta0, float).reshape(self.p) * self.s
        self._P = np.eye(self.p) * p0
        self.n_seen = 0
        self.windup_steps = 0

    @property
    def theta(self) -> np.ndarray:
        """Current estimate (unscaled units)."""
        return self._theta / self.s

    @property
    def P(self) -> np.ndarray:
        """Current covariance factor (unscaled units)."""
        return self._P / np.outer(self.s, self.s)

    def update(self, phi: Any, y: Any) -> np.ndarray:
        """Process samples (rows of ``phi``, entries of ``y``) in order; return the current estimate."""
        phi_a = np.atleast_2d(np.asarray(phi, dtype=np.float64))
        y_a = np.atleast_1d(np.asarray(y, dtype=np.float64))
        if phi_a.shape[1] != self.p or phi_a.shape[0] != y_a.shape[0]:
            raise IdentificationError(f"EWLS.update: expected phi (n, {self.p}) and y (n,), got "
                                      f"{phi_a.shape} and {y_a.shape}")
        if not (np.all(np.isfinite(phi_a)) and np.all(np.isfinite(y_a))):
            raise IdentificationError("EWLS.update: phi and y must be finite")
        n = phi_a.shape[0]
        theta_out = np.empty((n, self.p))
        pdiag = np.empty((n, self.p))
        err = np.empty(n)
        status, windup = ewls_kernel(np.ascontiguousarray(phi_a / self.s), np.ascontiguousarray(y_a),
                                     self.lam, self._theta, self._P, self.p_max, theta_out, pdiag, err,
                                     np.zeros(0, dtype=np.int64), np.empty((0, self.p, self.p)))
        if status != STATUS_OK:
            raise IdentificationError("EWLS.update: the recursion produced a non-finite value")
        self.n_seen += n
        self.windup_steps += int(windup)
        return self.theta

"""The recursive single-point contact estimators of seed 004 (section 2.2.1), as small classes with a
per-sample ``update()`` and a functional batch form beside each (filterpy style).

=========================  ==========================  ===========================================
estimator                  regressor ``phi``           recursion
=========================  ==========================  ===========================================
:class:`RLS` / ``rls``     ``[x, x', x'']`` -> k, b, m  RLS with forgetting, eqs. 2.3-2.5
:class:`ILS` / ``ils``     ``[x, x']`` -> k, b          the same recursion, velocity given or
                                                        differenced
:class:`ContactKalman` /   ``H = [x, x']`` -> k, b      Kalman filter, state ``[k, b]``, G = I,
``kalman``                                              eqs. 2.8-2.9
:class:`IndirectAdaptive`  ``[x, x']`` -> k, b          ``theta' = -Gamma phi (F_hat - F)``,
/ ``indirect_adaptive``                                 eqs. 2.6-2.7
=========================  ==========================  ===========================================

Defaults are the thesis's settings (seed 004 sec. 3.2.5): k0 = 1e6 N/m, b0 = 50 N s/m, P0 = 1e5 I,
lambda = 0.98, Gamma = diag(2e9, 2.5e3).

Gamma is used as the adaptation gain. Eq. 2.7 prints ``-Gamma^-1 phi F~``; with the thesis's
Gamma = diag(2e9, 2.5e3) the literal inverse gives adaptation rates ``Gamma^-1 x^2 = 5e-10 * 1e-8``
= 5e-18 1/s for the stiffness at x ~ 1e-4 m (a time constant of ~1e17 s): nothing would ever converge,
yet the thesis's IA column matches the others. The numbers are gains (Slotine & Li's adaptation law
``theta' = -P phi e`` with ``Gamma^-1`` appearing only in the Lyapunov function), so that is how they
are used here (rate ``Gamma_kk x^2`` = 20 1/s at 1e-4 m).

The Kalman filter with no process noise is RLS with lambda = 1 (same gain, ``P_kalman = r P_rls`` when
``P0_kalman = r P0_rls``); this is why the thesis's Kalman and GLS columns agree. Here the Kalman prior
is ``P0 = p0 r I`` so that equality holds with the same ``p0``, and ``P`` is then the parameter
covariance when ``r`` is the force-noise variance (default: estimated from a batch residual).

References
----------
seed 004: Agar, sec. 2.2.1 (eqs. 2.2-2.9) and sec. 3.2.5 (settings).
Slotine & Li (1991), Applied Nonlinear Control, ch. 8 (seed 004 ref. 27).
Salgado, Goodwin & Middleton (1988), Int. J. Control 47(2) (covariance bound ``p_max``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.identify.contact._kernels import STATUS_OK, ia_kernel, kalman_kernel, rls_kernel
from hapticam.identify.contact.result import EstimateResult, as_signal, derivatives, sample_times

K0_NPM = 1e6       # initial stiffness guess (seed 004 sec. 3.2.5)
B0_NSPM = 50.0     # initial damping guess (seed 004 sec. 3.2.5)
P0 = 1e5           # P0 = 1e5 I (seed 004 sec. 3.2.5)
LAMBDA = 0.98      # forgetting factor (seed 004 sec. 3.2.5)
GAMMA = (2e9, 2.5e3)  # IA gain (seed 004 sec. 3.2.5), used as the gain (module docstring)


def _vector(name: str, values: Any, p: int) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    if a.size != p or not np.all(np.isfinite(a)):
        raise IdentificationError(f"{name}: expected {p} finite numbers, got {values!r}")
    return a.copy()


def _check_rls(lam: float, p0: float, p_max: float | None) -> float:
    if not (0.0 < lam <= 1.0):
        raise IdentificationError(f"forgetting factor lambda must be in (0, 1], got {lam}")
    if not (p0 > 0 and np.isfinite(p0)):
        raise IdentificationError(f"p0 must be positive, got {p0}")
    if p_max is not None and not p_max > 0:
        raise IdentificationError(f"p_max must be positive, got {p_max}")
    return -1.0 if p_max is None else float(p_max)


class _RecursiveLS:
    """RLS with forgetting over a fixed regressor (seed 004 eqs. 2.3-2.5)."""

    names: tuple[str, ...] = ()

    def __init__(self, theta0: Any, lam: float = LAMBDA, p0: float = P0, p_max: float | None = None) -> None:
        p = len(self.names)
        self.theta = _vector("theta0", theta0, p)
        self.p_max = _check_rls(lam, p0, p_max)
        self.lam = float(lam)
        self.P = np.eye(p) * p0  # P0 = a I  (seed 004 sec. 2.2.1)
        self._th = np.empty((1, p))
        self._pd = np.empty((1, p))
        self._e = np.empty(1)

    def _step(self, phi: np.ndarray, f_N: float) -> np.ndarray:
        status, _, _ = rls_kernel(phi.reshape(1, -1), np.array([float(f_N)]), self.lam, self.p_max,
                                  self.theta, self.P, self._th, self._pd, self._e)
        if status != STATUS_OK:
            raise IdentificationError(f"{type(self).__name__}: the recursion produced a non-finite value")
        return self.theta.copy()


class RLS(_RecursiveLS):
    """Recursive least squares on ``phi = [x, x', x'']``, ``theta = [k, b, m]`` (seed 004 eqs. 2.2-2.5).

    Parameters
    ----------
    theta0 : array_like
        Initial ``[k (N/m), b (N s/m), m (kg)]``.
    lam : float
        Forgetting factor in (0, 1].
    p0 : float
        ``P0 = p0 I`` (SI units of the regressors).
    p_max : float, optional
        Bound on diag(P) against covariance wind-up when a regressor is not excited; None: none.
    """

    names = ("k_Npm", "b_Nspm", "m_kg")

    def __init__(self, theta0: Any = (K0_NPM, B0_NSPM, 0.0), lam: float = LAMBDA, p0: float = P0,
                 p_max: float | None = None) -> None:
        super().__init__(theta0, lam, p0, p_max)

    def update(self, f_N: float, x_m: float, v_mps: float, a_mps2: float) -> np.ndarray:
        """One sample: force (N), displacement (m), velocity (m/s), acceleration (m/s^2); the new estimate."""
        return self._step(np.array([x_m, v_mps, a_mps2], dtype=np.float64), f_N)


class ILS(_RecursiveLS):
    """Instantaneous least squares: the RLS recursion on ``phi = [x, x']``, ``theta = [k, b]`` (seed 004
    sec. 2.2.1, mass neglected). Parameters as :class:`RLS` with ``theta0 = [k, b]``."""

    names = ("k_Npm", "b_Nspm")

    def __init__(self, theta0: Any = (K0_NPM, B0_NSPM), lam: float = LAMBDA, p0: float = P0,
                 p_max: float | None = None) -> None:
        super().__init__(theta0, lam, p0, p_max)

    def update(self, f_N: float, x_m: float, v_mps: float) -> np.ndarray:
        """One sample: force (N), displacement (m), velocity (m/s); the new estimate."""
        return self._step(np.array([x_m, v_mps], dtype=np.float64), f_N)


class ContactKalman:
    """Kalman filter with state ``[k, b]``, identity transition and output ``F = [x, x'] [k, b]``
    (seed 004 eqs. 2.8-2.9).

    Parameters
    ----------
    theta0 : array_like
        Initial ``[k, b]``.
    r : float
        Force measurement noise variance (N^2).
    p0 : float
        Prior ``P0 = p0 r I`` (module docstring).
    q : float or array_like
        Process noise covariance ``Q`` (scalar: ``q I``); 0 (default) is the thesis's ``w = 0``.
    """

    names = ("k_Npm", "b_Nspm")

    def __init__(self, theta0: Any = (K0_NPM, B0_NSPM), r: float = 1.0, p0: float = P0, q: Any = 0.0) -> None:
        self.theta = _vector("theta0", theta0, 2)
        if not (r > 0 and p0 > 0):
            raise IdentificationError(f"kalman: r and p0 must be positive, got r={r}, p0={p0}")
        Q = np.asarray(q, dtype=np.float64)
        self.Q = np.eye(2) * float(Q) if Q.ndim == 0 else Q.reshape(2, 2).copy()
        if not (np.all(np.isfinite(self.Q)) and np.all(np.linalg.eigvalsh(self.Q) >= 0)):
            raise IdentificationError("kalman: Q must be a finite positive semi-definite matrix")
        self.r = float(r)
        self.P = np.eye(2) * (p0 * r)  # P0 = a I  (seed 004 sec. 2.2.1)
        self._th = np.empty((1, 2))
        self._pd = np.empty((1, 2))
        self._e = np.empty(1)

    def update(self, f_N: float, x_m: float, v_mps: float) -> np.ndarray:
        """One sample: force (N), displacement (m), velocity (m/s); the new estimate."""
        status, _ = kalman_kernel(np.array([[x_m, v_mps]], dtype=np.float64), np.array([float(f_N)]), self.r,
                                  self.Q, self.theta, self.P, self._th, self._pd, self._e)
        if status != STATUS_OK:
            raise IdentificationError("ContactKalman: the recursion produced a non-finite value")
        return self.theta.copy()


class IndirectAdaptive:
    """Indirect adaptive estimator ``theta' = -Gamma phi (phi' theta - F)`` (seed 004 eqs. 2.6-2.7),
    Gamma used as the gain (module docstring), backward-Euler integrated.

    Parameters
    ----------
    theta0 : array_like
        Initial ``[k, b]``.
    gamma : array_like
        Gain: 2 numbers (diagonal) or a 2 x 2 positive definite matrix (SI: N/m / (N m) etc.).
    """

    names = ("k_Npm", "b_Nspm")

    def __init__(self, theta0: Any = (K0_NPM, B0_NSPM), gamma: Any = GAMMA) -> None:
        self.theta = _vector("theta0", theta0, 2)
        self.gamma = gain_matrix(gamma)
        self._th = np.empty((1, 2))
        self._e = np.empty(1)

    def update(self, f_N: float, x_m: float, v_mps: float, dt_s: float) -> np.ndarray:
        """One sample over a step ``dt_s`` (s); the new estimate."""
        if not dt_s > 0:
            raise IdentificationError(f"IndirectAdaptive: dt_s must be positive, got {dt_s}")
        status, _ = ia_kernel(np.array([[x_m, v_mps]], dtype=np.float64), np.array([float(f_N)]),
                              np.array([float(dt_s)]), self.gamma, self.theta, self._th, self._e)
        if status != STATUS_OK:
            raise IdentificationError("IndirectAdaptive: the recursion produced a non-finite value")
        return self.theta.copy()


def gain_matrix(gamma: Any) -> np.ndarray:
    """The IA gain as a symmetric positive definite 2 x 2 matrix."""
    g = np.asarray(gamma, dtype=np.float64)
    g = np.diag(g) if g.shape == (2,) else g
    if g.shape != (2, 2) or not np.all(np.isfinite(g)) or not np.allclose(g, g.T) \
            or np.any(np.linalg.eigvalsh(g) <= 0):
        raise IdentificationError(f"gamma: expected 2 positive gains or a 2x2 positive definite matrix, got {gamma!r}")
    return np.ascontiguousarray(g)


def _inputs(t_s: Any, x_m: Any, f_N: Any, v_mps: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    x = as_signal("x_m", x_m)
    f = as_signal("f_N", f_N, x.size)
    t, dt = sample_times(t_s, x.size)
    v = derivatives(x, dt)[0] if v_mps is None else as_signal("v_mps", v_mps, x.size)
    return t, x, f, v, dt


def _run_ls(name: str, est: _RecursiveLS, t: np.ndarray, phi: np.ndarray, f: np.ndarray) -> EstimateResult:
    n, p = phi.shape
    hist, pdiag, err = np.empty((n, p)), np.empty((n, p)), np.empty(n)
    status, reached, bound_steps = rls_kernel(np.ascontiguousarray(phi), f, est.lam, est.p_max, est.theta, est.P,
                                              hist, pdiag, err)
    if status != STATUS_OK:
        raise IdentificationError(f"{name}: the recursion produced a non-finite value at sample {reached} "
                                  f"(t = {t[reached]:.6g} s); set p_max to bound the covariance")
    sigma2 = float(np.mean(err[n // 2:] ** 2))  # a-priori error variance after convergence
    factor = 1.0 if est.lam == 1.0 else 1.0 / (1.0 + est.lam)  # steady-state cov of the weighted LS: s2 P/(1+lam)
    return EstimateResult(name, est.names, est.theta.copy(), sigma2 * factor * est.P, hist, t, "time",
                          extra={"sigma2_N2": sigma2, "pdiag": pdiag, "prior_error_N": err,
                                 "covariance_bound_steps": int(bound_steps), "lambda": est.lam})


def rls(t_s: Any, x_m: Any, f_N: Any, *, theta0: Any = (K0_NPM, B0_NSPM, 0.0), lam: float = LAMBDA,
        p0: float = P0, p_max: float | None = None) -> EstimateResult:
    """RLS on ``[x, x', x'']`` over a record (seed 004 eqs. 2.2-2.5); x' and x'' by central differences.

    Parameters
    ----------
    t_s, x_m, f_N : array_like
        Uniform sample times (s), displacement into the contact (m), contact force (N).
    theta0, lam, p0, p_max
        As :class:`RLS`.

    Returns
    -------
    EstimateResult
        ``theta = [k, b, m]``; covariance ``s2 P / (1 + lambda)`` (steady-state approximation, ``s2`` the
        a-priori error variance over the second half); history per sample.
    """
    x = as_signal("x_m", x_m)
    f = as_signal("f_N", f_N, x.size)
    t, dt = sample_times(t_s, x.size)
    v, a = derivatives(x, dt)
    return _run_ls("rls", RLS(theta0, lam, p0, p_max), t, np.column_stack([x, v, a]), f)


def ils(t_s: Any, x_m: Any, f_N: Any, v_mps: Any = None, *, theta0: Any = (K0_NPM, B0_NSPM), lam: float = LAMBDA,
        p0: float = P0, p_max: float | None = None) -> EstimateResult:
    """Instantaneous least squares on ``[x, x']`` over a record (seed 004 sec. 2.2.1).

    ``v_mps`` is the measured velocity (m/s); None differentiates ``x_m``. Returns as :func:`rls`, with
    ``theta = [k, b]``.
    """
    t, x, f, v, _ = _inputs(t_s, x_m, f_N, v_mps)
    return _run_ls("ils", ILS(theta0, lam, p0, p_max), t, np.column_stack([x, v]), f)


def kalman(t_s: Any, x_m: Any, f_N: Any, v_mps: Any = None, *, theta0: Any = (K0_NPM, B0_NSPM),
           r: float | None = None, p0: float = P0, q: Any = 0.0) -> EstimateResult:
    """Kalman filter estimate of ``[k, b]`` over a record (seed 004 eqs. 2.8-2.9).

    ``r`` is the force noise variance (N^2); None estimates it from the batch least-squares residual of
    the same record. The covariance returned is the filter's ``P`` (the parameter covariance when ``r`` is
    right and ``q = 0``).
    """
    t, x, f, v, _ = _inputs(t_s, x_m, f_N, v_mps)
    H = np.column_stack([x, v])
    theta_ls = np.linalg.lstsq(H, f, rcond=None)[0]
    if r is None:
        res = f - H @ theta_ls
        r = max(float(np.mean(res ** 2)), 1e-300)
    est = ContactKalman(theta0, r, p0, q)
    prior = est.theta.copy()
    n = x.size
    hist, pdiag, innov = np.empty((n, 2)), np.empty((n, 2)), np.empty(n)
    status, reached = kalman_kernel(np.ascontiguousarray(H), f, est.r, est.Q, est.theta, est.P, hist, pdiag, innov)
    if status != STATUS_OK:
        raise IdentificationError(f"kalman: non-finite value at sample {reached} (t = {t[reached]:.6g} s)")
    status = prior_status(est.theta, theta_ls, prior, est.P) if not np.any(est.Q) else "ok"
    return EstimateResult("kalman", est.names, est.theta.copy(), est.P.copy(), hist, t, "time", status=status,
                          extra={"r_N2": est.r, "pdiag": pdiag, "innovation_N": innov,
                                 "prior_shift": est.theta - theta_ls})


#: a prior that moves an estimate by more than this many of its standard errors dominates it
PRIOR_SHIFT_SE = 3.0


def prior_status(theta: np.ndarray, theta_ls: np.ndarray, prior: np.ndarray, cov: np.ndarray) -> str:
    """``"ok"``, or which parameter a Kalman prior dominates. Without process noise the filter's estimate is
    the least-squares one shifted by the prior, ``theta - theta_ls = P P0^-1 (theta0 - theta_ls)``; a shift of
    more than :data:`PRIOR_SHIFT_SE` standard errors means the record does not outweigh the prior."""
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    shift = np.abs(theta - theta_ls) / np.where(se > 0, se, np.inf)
    worst = int(np.argmax(shift))
    if not shift[worst] > PRIOR_SHIFT_SE:
        return "ok"
    name, unit = (("k", "N/m"), ("b", "N s/m"))[worst]
    return (f"prior-dominated: the prior {name}0 = {prior[worst]:.3g} {unit} moves {name} "
            f"{shift[worst]:.0f} standard errors from the record's least squares ({theta_ls[worst]:.4g} {unit})")


def indirect_adaptive(t_s: Any, x_m: Any, f_N: Any, v_mps: Any = None, *, theta0: Any = (K0_NPM, B0_NSPM),
                      gamma: Any = GAMMA) -> EstimateResult:
    """Indirect adaptive estimate of ``[k, b]`` over a record (seed 004 eqs. 2.6-2.7); no covariance."""
    t, x, f, v, _ = _inputs(t_s, x_m, f_N, v_mps)
    est = IndirectAdaptive(theta0, gamma)
    n = x.size
    dt = np.empty(n)
    dt[1:] = np.diff(t)
    dt[0] = dt[1]
    hist, err = np.empty((n, 2)), np.empty(n)
    status, reached = ia_kernel(np.column_stack([x, v]), f, dt, est.gamma, est.theta, hist, err)
    if status != STATUS_OK:
        raise IdentificationError(f"ia: non-finite value at sample {reached} (t = {t[reached]:.6g} s)")
    return EstimateResult("ia", est.names, est.theta.copy(), None, hist, t, "time",
                          extra={"error_N": err, "gamma": est.gamma})

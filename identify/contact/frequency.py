"""Frequency-domain estimators of ``F = k x + b x'`` (seed 004 sec. 2.2.2): ETFE, output error (OEM),
equation error (EEM) and generalised maximum likelihood (GMLE).

Each works on the discrete Fourier transforms ``X``, ``V``, ``F`` of displacement, velocity and force at
a set of chosen frequencies (the thesis's "frequencies of interest"; here chosen automatically as the
``n_freq`` non-zero bins below ``f_max`` with the largest ``|X|``, or given).

**The velocity term.** The thesis writes the velocity's transform as ``j w X`` (eqs. 2.12, 2.19). On a
finite record that does not start and end at the same displacement this is wrong: integrating by parts,
``FT(x') = j w X + x(T) e^{-j w T} - x(0)``, and the missing end term biases b and, through it, k (a contact
record starts at the datum and ends pressed in, so it never closes). Here ``V`` is the transform of the
velocity samples themselves, so ``F = k X + b V`` holds bin by bin exactly whenever ``f = k x + b v`` holds
sample by sample (the DFT is linear). ``derivative="jw"`` gives the thesis's literal form (exact on
periodic records).

- **ETFE**: per frequency, the complex equation ``F = k X + b V`` is two real equations in ``(k, b)``; with
  ``V = j w X`` their solution is the gain/phase reading ``1/(X/F) = k + j b w`` of eq. 2.13. Several
  frequencies are combined by an inverse-variance weighted mean, each parameter with the weight
  ``1 / var`` its bin gives it under white force noise (equal noise in every bin); the per-frequency
  estimates are the history.
- **OEM** (eqs. 2.14-2.18): Newton-Raphson on the force output error. The model is linear in ``(k, b)``,
  so the first step lands on the minimum and the second changes nothing: it converges in one iteration.
- **EEM** (eqs. 2.19-2.23): least squares of ``V = -(k/b) X + (1/b) F``; non-iterative; ``k = -th1/th2``,
  ``b = 1/th2``. It explodes as b -> 0 (``F`` and ``X`` become collinear and ``th2`` is noise).
- **GMLE** (eqs. 2.24-2.26): noise on the displacement, none on the force. With
  ``c = V - j w X`` (the finite-record term, known from the data) the displacement model is
  ``X(theta) = (F - b c) / (k + j b w)``. The thesis gives the update ``theta - M^-1 g`` (its eq. "2.26",
  printed twice) only by reference; here it is Gauss-Newton on the displacement residual with
  ``R = mean |Z - X(theta)|^2`` re-estimated each iteration (eq. 2.26 for one output), step halved while
  the likelihood does not improve. With one output ``R`` is a scalar: it sets the likelihood and the
  covariance, not the step.

Covariances are ``(R/2) (A'A)^-1`` on the real-stacked (real and imaginary parts) equations with ``R`` the
complex residual variance per bin; EEM's and ETFE's are propagated to ``(k, b)`` to first order.

References
----------
seed 004: Agar, sec. 2.2.2 (eqs. 2.12-2.26).
Klein & Morelli (2006), Aircraft System Identification, ch. 7 (the finite-record term of FT(x')).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.identify.contact.result import EstimateResult, as_signal, derivatives, sample_times

NAMES = ("k_Npm", "b_Nspm")


@dataclass
class Spectra:
    """Transforms at the chosen frequencies: ``X`` (m s), ``V`` (m), ``F`` (N s); ``w`` (rad/s)."""

    freq_Hz: np.ndarray
    X: np.ndarray
    V: np.ndarray
    F: np.ndarray
    derivative: str

    @property
    def w(self) -> np.ndarray:
        return 2.0 * np.pi * self.freq_Hz


def spectra(t_s: Any, x_m: Any, f_N: Any, v_mps: Any = None, *, freqs_Hz: Any = None, n_freq: int = 30,
            f_max_Hz: float | None = None, derivative: str = "velocity") -> Spectra:
    """DFTs of displacement, velocity and force at the frequencies of interest (module docstring)."""
    x = as_signal("x_m", x_m)
    f = as_signal("f_N", f_N, x.size)
    _, dt = sample_times(t_s, x.size)
    if derivative not in ("velocity", "jw"):
        raise IdentificationError(f"derivative: expected 'velocity' or 'jw', got {derivative!r}")
    v = derivatives(x, dt)[0] if v_mps is None else as_signal("v_mps", v_mps, x.size)
    freq = np.fft.rfftfreq(x.size, dt)
    X, F = np.fft.rfft(x) * dt, np.fft.rfft(f) * dt  # finite Fourier transforms (continuous-time scaling)
    V = 1j * 2 * np.pi * freq * X if derivative == "jw" else np.fft.rfft(v) * dt
    bins = _choose_bins(freq, X, freqs_Hz, n_freq, f_max_Hz)
    return Spectra(freq[bins], X[bins], V[bins], F[bins], derivative)


def _choose_bins(freq: np.ndarray, X: np.ndarray, freqs_Hz: Any, n_freq: int, f_max_Hz: float | None) -> np.ndarray:
    nyq = freq[-1]
    if freqs_Hz is not None:
        want = np.atleast_1d(np.asarray(freqs_Hz, dtype=np.float64))
        if want.size == 0 or not np.all(np.isfinite(want)) or np.any(want <= 0) or np.any(want > nyq):
            raise IdentificationError(f"freqs_Hz: expected frequencies in (0, {nyq:g}] Hz, got {freqs_Hz!r}")
        bins = np.unique(np.clip(np.rint(want / freq[1]).astype(int), 1, freq.size - 1))
    else:
        if n_freq < 2:
            raise IdentificationError(f"n_freq: at least 2 frequencies are needed, got {n_freq}")
        f_max = nyq / 4.0 if f_max_Hz is None else float(f_max_Hz)
        cand = np.nonzero((freq > 0) & (freq <= f_max) & (freq < nyq))[0]
        bins = np.sort(cand[np.argsort(-np.abs(X[cand]))[:n_freq]])
    if bins.size < 2:
        raise IdentificationError("frequency-domain estimators need at least 2 frequencies: the record is too short")
    return bins


def _stack(cols: list[np.ndarray]) -> np.ndarray:
    """Complex columns -> real rows (real parts, then imaginary parts)."""
    a = np.column_stack(cols)
    return np.vstack([a.real, a.imag])


def _ls_real(A: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``theta = [Re(A*A)]^-1 Re(A*y)`` (eqs. 2.17, 2.23) and its covariance ``(R/2)(A'A)^-1``."""
    s = np.sqrt(np.mean(A * A, axis=0))
    s[~(s > 0)] = 1.0
    As = A / s
    theta_s, *_ = np.linalg.lstsq(As, y, rcond=None)
    res = y - As @ theta_s
    m = A.shape[0] // 2
    R = float(res @ res) / max(m - A.shape[1] / 2.0, 1.0)  # complex residual variance per bin
    cov = 0.5 * R * np.linalg.pinv(As.T @ As) / np.outer(s, s)
    return theta_s / s, cov, R


def etfe(sp: Spectra) -> EstimateResult:
    """ETFE: per-frequency ``(k, b)`` from ``F = k X + b V`` (eq. 2.13), inverse-variance combined."""
    m = sp.freq_Hz.size
    per = np.full((m, 2), np.nan)
    cinv = np.full((m, 2), np.nan)
    for i in range(m):
        A = np.array([[sp.X[i].real, sp.V[i].real], [sp.X[i].imag, sp.V[i].imag]])
        if abs(np.linalg.det(A)) <= 1e-12 * np.linalg.norm(A[:, 0]) * np.linalg.norm(A[:, 1]):
            continue
        per[i] = np.linalg.solve(A, [sp.F[i].real, sp.F[i].imag])  # k + j b w = F/X  (eq. 2.13)
        cinv[i] = np.diag(np.linalg.inv(A.T @ A))  # var(k_i), var(b_i) per unit bin noise
    ok = np.all(np.isfinite(per), axis=1)
    if np.count_nonzero(ok) < 1:
        raise IdentificationError("etfe: no usable frequency (displacement and velocity spectra collinear)")
    w = 1.0 / cinv[ok]  # inverse-variance weights per parameter
    theta = np.sum(w * per[ok], axis=0) / np.sum(w, axis=0)
    res = sp.F - theta[0] * sp.X - theta[1] * sp.V
    R = float(np.sum(np.abs(res) ** 2)) / max(m - 1, 1)
    cov = np.diag(0.5 * R / np.sum(w, axis=0))
    gain = np.abs(sp.X / sp.F)
    phase = np.angle(sp.X / sp.F)
    return EstimateResult("etfe", NAMES, theta, cov, per, sp.freq_Hz.copy(), "frequency",
                          extra={"gain_mpN": gain, "phase_rad": phase, "R": R, "freq_Hz": sp.freq_Hz.copy()})


def oem(sp: Spectra, theta0: Any = (1e6, 50.0), max_iter: int = 20, tol: float = 1e-10) -> EstimateResult:
    """Output error by Newton-Raphson (eqs. 2.14-2.18) from ``theta0``; converges in one iteration."""
    theta = np.asarray(theta0, dtype=np.float64).reshape(2).copy()
    A = _stack([sp.X, sp.V])  # rows of h = [1, j w] X  (eq. 2.18), real-stacked
    z = np.concatenate([sp.F.real, sp.F.imag])
    hist = [theta.copy()]
    iterations = 0
    for _ in range(max_iter):
        step, *_ = np.linalg.lstsq(A / np.abs(A).max(axis=0), z - A @ theta, rcond=None)
        step = step / np.abs(A).max(axis=0)  # [Re sum h* h]^-1 Re sum h* (Z - h theta)  (eq. 2.17)
        if np.all(np.abs(step) <= tol * np.maximum(np.abs(theta), 1e-300)):
            break
        theta = theta + step  # theta = theta_prev + d theta  (eq. 2.16)
        hist.append(theta.copy())
        iterations += 1
    _, cov, R = _ls_real(A, z)
    status = "ok" if iterations < max_iter else f"not converged in {max_iter} iterations"
    return EstimateResult("oem", NAMES, theta, cov, np.array(hist), np.arange(len(hist), dtype=float), "iteration",
                          iterations=iterations, status=status, extra={"R": R, "freq_Hz": sp.freq_Hz.copy()})


def eem(sp: Spectra) -> EstimateResult:
    """Equation error (eqs. 2.19-2.23): ``V = -(k/b) X + (1/b) F`` by least squares."""
    A = _stack([sp.X, sp.F])
    y = np.concatenate([sp.V.real, sp.V.imag])
    th, cov_th, R = _ls_real(A, y)  # theta = [Re(x* x)]^-1 Re(x* y)  (eq. 2.23)
    status = "ok"
    if th[1] == 0 or not np.all(np.isfinite(th)):
        return EstimateResult("eem", NAMES, np.full(2, np.nan), None, np.full((1, 2), np.nan), np.zeros(1),
                              "iteration", status="singular: no damping in the data (b -> 0)")
    k, b = -th[0] / th[1], 1.0 / th[1]  # th = [-k/b, 1/b]  (eq. 2.19)
    J = np.array([[-1.0 / th[1], th[0] / th[1] ** 2], [0.0, -1.0 / th[1] ** 2]])  # d(k, b)/d(th1, th2)
    cov = J @ cov_th @ J.T
    if np.sqrt(cov_th[1, 1]) > abs(th[1]):
        status = "ill-conditioned: 1/b is not distinguishable from 0 (damping not excited)"
    theta = np.array([k, b])
    return EstimateResult("eem", NAMES, theta, cov, theta[None, :], np.zeros(1), "iteration", status=status,
                          extra={"theta_eq": th, "R": R, "freq_Hz": sp.freq_Hz.copy()})


def _gmle_model(sp: Spectra, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Displacement model ``X(theta) = (F - b c)/(k + j b w)`` and its real-stacked Jacobian."""
    jw = 1j * sp.w
    c = sp.V - jw * sp.X  # finite-record term of FT(x') (module docstring)
    den = theta[0] + theta[1] * jw
    xm = (sp.F - theta[1] * c) / den  # X = F/(k + j b w) with the end term  (eqs. 2.13, 2.24)
    dk = -xm / den  # dX/dk
    db = -(c + xm * jw) / den  # dX/db
    return xm, _stack([dk, db])


def gmle(sp: Spectra, theta0: Any = (1e6, 50.0), max_iter: int = 50, tol: float = 1e-10) -> EstimateResult:
    """Generalised maximum likelihood with displacement noise (eqs. 2.24-2.26), Gauss-Newton from ``theta0``."""
    theta = np.asarray(theta0, dtype=np.float64).reshape(2).copy()
    if not theta[0] > 0:
        raise IdentificationError(f"gmle: the initial stiffness must be positive, got {theta[0]}")
    m = sp.freq_Hz.size
    xm, J = _gmle_model(sp, theta)
    nu = sp.X - xm
    R = float(np.sum(np.abs(nu) ** 2)) / m  # R = sum V V* / N  (eq. 2.26, one output)
    hist, r_hist = [theta.copy()], [R]
    iterations, status = 0, f"not converged in {max_iter} iterations"
    for _ in range(max_iter):
        s = np.abs(J).max(axis=0)
        s[~(s > 0)] = 1.0
        step = np.linalg.lstsq(J / s, np.concatenate([nu.real, nu.imag]), rcond=None)[0] / s  # Gauss-Newton
        alpha, improved = 1.0, False
        while alpha > 1e-6:
            trial = theta + alpha * step
            xt, Jt = _gmle_model(sp, trial)
            Rt = float(np.sum(np.abs(sp.X - xt) ** 2)) / m  # R re-estimated (eq. 2.26)
            if Rt <= R * (1 + 1e-12) and trial[0] > 0:
                improved = True
                break
            alpha *= 0.5
        if not improved:
            status = "ok"
            break
        converged = np.all(np.abs(trial - theta) <= tol * np.maximum(np.abs(trial), 1e-300))
        theta, xm, J, R = trial, xt, Jt, Rt
        nu = sp.X - xm
        hist.append(theta.copy())
        r_hist.append(R)
        iterations += 1
        if converged:
            status = "ok"
            break
    sc = np.sqrt(np.sum(J * J, axis=0))
    sc[~(sc > 0)] = 1.0
    cov = 0.5 * R * m / max(m - 1, 1) * np.linalg.pinv((J / sc).T @ (J / sc)) / np.outer(sc, sc)  # (R/2)(J'J)^-1
    loglik = -m * np.log(np.pi * max(R, 1e-300)) - m  # complex Gaussian log-likelihood at R-hat (eq. 2.25)
    return EstimateResult("gmle", NAMES, theta, cov, np.array(hist), np.arange(len(hist), dtype=float), "iteration",
                          iterations=iterations, status=status,
                          extra={"R_history": np.array(r_hist), "loglik": float(loglik), "freq_Hz": sp.freq_Hz.copy()})


class FrequencyEstimator:
    """One frequency-domain estimator with its settings; ``fit(t_s, x_m, f_N, v_mps=None)``.

    Parameters
    ----------
    method : str
        An estimator of the ``spectral`` family (:data:`hapticam.identify.estimators.SPECTRAL_ESTIMATORS`):
        ``etfe``, ``oem``, ``eem``, ``gmle`` or a plugin's.
    theta0 : array_like
        Initial ``[k, b]`` for the iterative ones (OEM, GMLE).
    freqs_Hz, n_freq, f_max_Hz, derivative
        As :func:`spectra`.
    """

    def __init__(self, method: str, theta0: Any = (1e6, 50.0), *, freqs_Hz: Any = None, n_freq: int = 30,
                 f_max_Hz: float | None = None, derivative: str = "velocity") -> None:
        from hapticam.identify.estimators import SPECTRAL_ESTIMATORS

        if not SPECTRAL_ESTIMATORS.knows(method):
            raise IdentificationError(f"unknown frequency-domain method {method!r} (known: "
                                      f"{', '.join(SPECTRAL_ESTIMATORS.names())})")
        self.method = method
        self.estimate = SPECTRAL_ESTIMATORS.get(method)
        self.theta0 = theta0
        self.opts = {"freqs_Hz": freqs_Hz, "n_freq": n_freq, "f_max_Hz": f_max_Hz, "derivative": derivative}

    def fit(self, t_s: Any, x_m: Any, f_N: Any, v_mps: Any = None) -> EstimateResult:
        sp = spectra(t_s, x_m, f_N, v_mps, **self.opts)
        return self.estimate(sp, self.theta0)

"""Power-law / Hunt-Crossley contact fit ``F = k d^n (1 + b' d')`` (seed 004 eq. 3.1 with Hunt-Crossley
damping, seed 000 eq. 26).

Nonlinear least squares on the force residual (the force sensor carries the noise), parameters
``(ln k, n, b', delta)``: ``delta`` shifts the displacement datum (``d -> d - delta``), because a power law
with ``n > 1`` rises so gently that the force-spike datum is late by ``(threshold/k)^(1/n)``. The
``contact`` model's Hunt-Crossley law is ``F = k d^n + b d^n d'`` (:mod:`hapticam.models.contact`), so its
damping is ``b = k b'``. Initial values come from a straight line through ``(ln d, ln F)``.

References
----------
seed 004: Agar, eq. 3.1 and Table 3-5. seed 000: Patoglu & Gillespie, eq. 26 (Hunt & Crossley, 1975).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from hapticam.errors import IdentificationError
from hapticam.identify.contact.result import as_signal

REL_SE_MAX = 0.1  # a parameter is identified when its standard error is at most 10 % of its value


@dataclass
class PowerLawFit:
    """Result of :func:`fit_power_law`.

    Attributes: ``k`` (N/m^n), ``n``, ``b_prime_spm`` (s/m), ``datum_shift_m`` (m, added to the datum),
    ``se`` (standard errors by name), ``cov`` (covariance of ``names``), ``rms_N``, ``b_identifiable`` and
    ``b_verdict``.
    """

    k: float
    n: float
    b_prime_spm: float
    datum_shift_m: float
    names: tuple[str, ...]
    cov: np.ndarray
    se: dict[str, float]
    rms_N: float
    b_identifiable: bool
    b_verdict: str

    @property
    def b_Nspm(self) -> float:
        """The ``contact`` model's Hunt-Crossley damping ``b = k b'`` (N s/m^(n+1))."""
        return self.k * self.b_prime_spm


def _model(p: np.ndarray, d: np.ndarray, v: np.ndarray, use_b: bool, use_shift: bool) -> tuple[np.ndarray, np.ndarray]:
    """Force and Jacobian columns ``d/d(ln k, n[, b'][, delta])``."""
    lnk, n = p[0], p[1]
    bp = p[2] if use_b else 0.0
    delta = p[2 + use_b] if use_shift else 0.0
    e = d - delta
    pos = e > 0
    ep = np.where(pos, e, 1.0)
    base = np.where(pos, np.exp(lnk) * ep ** n, 0.0)  # k d^n
    damp = 1.0 + bp * v
    f = base * damp  # F = k d^n (1 + b' d')
    cols = [f, np.where(pos, f * np.log(ep), 0.0)]  # dF/dln k, dF/dn
    if use_b:
        cols.append(base * v)  # dF/db'
    if use_shift:
        cols.append(np.where(pos, -n * f / ep, 0.0))  # dF/d delta
    return f, np.column_stack(cols)


def _initial(d: np.ndarray, f: np.ndarray) -> tuple[float, float]:
    sel = (d > 0) & (f > 0.05 * np.max(f))
    if np.count_nonzero(sel) < 3:
        raise IdentificationError("power-law fit: fewer than 3 samples with both displacement and force > 0")
    n0, lnk0 = np.polyfit(np.log(d[sel]), np.log(f[sel]), 1)  # ln F = ln k + n ln d  (eq. 3.1)
    return float(lnk0), float(np.clip(n0, 0.2, 8.0))


def fit_power_law(d_m: Any, f_N: Any, v_mps: Any = None, *, fit_damping: bool = True,
                  fit_datum: bool = True) -> PowerLawFit:
    """Fit ``F = k (d - delta)^n (1 + b' d')`` to penetration ``d_m`` (m), force ``f_N`` (N), rate ``v_mps``.

    Parameters
    ----------
    fit_damping : bool
        Fit ``b'`` (needs ``v_mps``); False fits the static law ``F = k d^n`` (Table 3-5).
    fit_datum : bool
        Fit the datum shift ``delta`` (module docstring).
    """
    d = as_signal("d_m", d_m)
    f = as_signal("f_N", f_N, d.size)
    if fit_damping and v_mps is None:
        raise IdentificationError("power-law fit: fitting b' needs the penetration rate v_mps")
    v = np.zeros_like(d) if v_mps is None else as_signal("v_mps", v_mps, d.size)
    lnk0, n0 = _initial(d, f)
    p0 = [lnk0, n0] + ([0.0] if fit_damping else []) + ([0.0] if fit_datum else [])
    span = float(np.ptp(d))
    lo = [-np.inf, 0.05] + ([-np.inf] if fit_damping else []) + ([-0.5 * span] if fit_datum else [])
    hi = [np.inf, 10.0] + ([np.inf] if fit_damping else []) + ([0.5 * span] if fit_datum else [])

    def res(p: np.ndarray) -> np.ndarray:
        return _model(p, d, v, fit_damping, fit_datum)[0] - f

    def jac(p: np.ndarray) -> np.ndarray:
        return _model(p, d, v, fit_damping, fit_datum)[1]

    sol = least_squares(res, np.array(p0), jac=jac, bounds=(lo, hi), x_scale="jac", xtol=1e-14, ftol=1e-14,
                        gtol=1e-14, max_nfev=500)
    if not sol.success:
        raise IdentificationError(f"power-law fit did not converge: {sol.message}")
    p, J = sol.x, jac(sol.x)
    dof = max(d.size - p.size, 1)
    s2 = float(sol.fun @ sol.fun) / dof  # residual variance
    sc = np.sqrt(np.sum(J * J, axis=0))
    sc[~(sc > 0)] = 1.0
    cov_p = s2 * np.linalg.pinv((J / sc).T @ (J / sc)) / np.outer(sc, sc)  # s2 (J'J)^-1, column-scaled
    k = float(np.exp(p[0]))
    T = np.eye(p.size)
    T[0, 0] = k  # dk/dln k = k
    cov = T @ cov_p @ T.T
    names = ("k", "n") + (("b_prime_spm",) if fit_damping else ()) + (("datum_shift_m",) if fit_datum else ())
    se = {nm: float(np.sqrt(max(cov[i, i], 0.0))) for i, nm in enumerate(names)}
    bp = float(p[2]) if fit_damping else 0.0
    ident, verdict = _b_verdict(bp, se.get("b_prime_spm"), fit_damping)
    return PowerLawFit(k, float(p[1]), bp, float(p[-1]) if fit_datum else 0.0, names, cov, se,
                       float(np.sqrt(np.mean(sol.fun ** 2))), ident, verdict)


def _b_verdict(bp: float, se: float | None, fitted: bool) -> tuple[bool, str]:
    if not fitted or se is None:
        return False, "not fitted (static law)"
    if se <= REL_SE_MAX * abs(bp):
        return True, f"identified: b' = {bp:.4g} +- {se:.2g} s/m"
    return False, (f"not identifiable: b' = {bp:.3g} +- {se:.2g} s/m (standard error above "
                   f"{REL_SE_MAX:.0%} of the value; the rate is not excited enough)")

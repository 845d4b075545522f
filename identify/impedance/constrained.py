"""Least squares under linear inequality constraints, for fits that must stay passive.

Problem (LSI)::

    minimise  theta' G theta - 2 h' theta      (G = X'X, h = X'y: the normal equations of ||X theta - y||^2)
    subject to C theta <= d

Solved exactly by Lawson & Hanson's reduction (1974, ch. 23) to least-distance programming (LDP) and
non-negative least squares (:mod:`hapticam.identify.impedance.nnls`): with the Cholesky factor ``G = L L'`` and ``z = L' theta``,
the objective is ``||z - z0||^2`` (``z0 = L' theta0``, ``theta0 = G^-1 h`` the unconstrained solution), so
with ``w = z - z0`` the problem is ``min ||w|| s.t. E w >= f`` where ``E = -C L'^-1`` and
``f = C theta0 - d``. LDP's solution is ``w = -r[:n] / r[n]`` with ``r = [E'; f'] u - e_{n+1}`` and
``u >= 0`` the NNLS solution of ``min ||[E'; f'] u - e_{n+1}||`` (Lawson & Hanson Theorem 23.4); ``r = 0``
means the constraints are infeasible. When ``theta0`` already satisfies every constraint it is returned
unchanged (``w = 0``).

``G`` is Jacobi-scaled before the factorisation and regularised by a relative ridge, so parameters of
different units (kg, N s/m, N/m, N) and unexcited directions (a null space) do not spoil the solve.

References
----------
Lawson, C. L. & Hanson, R. J. (1974), *Solving Least Squares Problems*, ch. 23 (LSI, LDP, NNLS).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

from hapticam.errors import IdentificationError
from hapticam.identify.impedance.nnls import nnls

RIDGE = 1e-10  # relative to the (unit) diagonal after Jacobi scaling


@dataclass
class ConstrainedSolution:
    """Result of :func:`constrained_lsq`.

    ``theta`` the constrained solution, ``theta0`` the unconstrained one, ``active`` the indices of the
    constraints that hold with equality at ``theta`` (to ``1e-9`` of their scale), ``cost_increase`` the
    rise of the least-squares objective over the unconstrained optimum (same units as ``||X theta - y||^2``).
    """

    theta: np.ndarray
    theta0: np.ndarray
    active: np.ndarray
    cost_increase: float


def constrained_lsq(G: np.ndarray, h: np.ndarray, C: np.ndarray, d: np.ndarray) -> ConstrainedSolution:
    """Minimise ``theta' G theta - 2 h' theta`` subject to ``C theta <= d`` (module notes)."""
    G = np.asarray(G, dtype=np.float64)
    h = np.asarray(h, dtype=np.float64)
    C = np.atleast_2d(np.asarray(C, dtype=np.float64))
    d = np.asarray(d, dtype=np.float64).ravel()
    n = h.size
    if G.shape != (n, n) or C.shape[1:] != (n,) or d.size != C.shape[0]:
        raise IdentificationError("constrained_lsq: inconsistent shapes of G, h, C, d")
    if not (np.all(np.isfinite(G)) and np.all(np.isfinite(h)) and np.all(np.isfinite(C)) and np.all(np.isfinite(d))):
        raise IdentificationError("constrained_lsq: non-finite input")
    scale = np.sqrt(np.diag(G))
    scale[~(scale > 0)] = 1.0
    Gs = G / np.outer(scale, scale) + RIDGE * np.eye(n)          # Jacobi scaling, theta = theta_s / scale
    hs = h / scale
    Cs = C / scale
    factor = cho_factor(Gs, lower=True)
    ts0 = cho_solve(factor, hs)                                   # theta0 = G^-1 h
    slack = Cs @ ts0 - d                                          # f = C theta0 - d
    theta0 = ts0 / scale
    if C.shape[0] == 0 or np.all(slack <= 0.0):
        return ConstrainedSolution(theta0, theta0.copy(), np.zeros(0, dtype=np.int64), 0.0)
    L = np.tril(factor[0])
    E = -solve_triangular(L, Cs.T, lower=True).T                  # E = -C L'^-1 (rows: constraints)
    # LDP by NNLS (Lawson & Hanson Theorem 23.4): min ||[E'; f'] u - e_{n+1}||, u >= 0
    rows = np.vstack([E.T, slack[None, :]])
    target = np.zeros(n + 1)
    target[n] = 1.0
    try:
        u, _ = nnls(rows, target, maxiter=50 * (rows.shape[1] + 10))
    except IdentificationError:
        raise IdentificationError("the constrained fit did not converge (NNLS iteration limit): the "
                                  "constraints are too many or too ill-conditioned for this capture") from None
    r = rows @ u - target
    if not abs(r[n]) > 1e-14:
        raise IdentificationError("the constraints cannot all be met (infeasible constrained fit)")
    w = -r[:n] / r[n]                                             # w = z - z0
    ts = ts0 + solve_triangular(L.T, w, lower=False)              # theta = L'^-1 (z0 + w)
    theta = ts / scale
    viol = Cs @ ts - d
    tol = 1e-9 * max(1.0, float(np.max(np.abs(d))) if d.size else 1.0, float(np.max(np.abs(Cs @ ts))))
    active = np.flatnonzero(viol > -tol)
    increase = float(w @ w)                                      # ||z - z0||^2 = objective increase
    return ConstrainedSolution(theta, theta0, active, increase)

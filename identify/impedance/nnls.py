"""Non-negative least squares, ``min ||A x - b|| subject to x >= 0``, by Lawson & Hanson's active-set method
(C. L. Lawson and R. J. Hanson, "Solving Least Squares Problems", 1974, ch. 23, algorithm NNLS).

The constrained fit (:mod:`hapticam.identify.impedance.constrained`) solves small problems (a few hundred unknowns at
most) with it; scipy's ``nnls`` gives the same answer but importing ``scipy.optimize`` costs half a second
of every ``hapticam identify impedance`` run.
"""

from __future__ import annotations

import numpy as np

from hapticam.errors import IdentificationError


def nnls(A: np.ndarray, b: np.ndarray, maxiter: int | None = None) -> tuple[np.ndarray, float]:
    """``(x, ||A x - b||)`` with ``x >= 0`` minimising ``||A x - b||`` (Lawson & Hanson, algorithm NNLS).

    ``maxiter`` bounds the inner iterations (default ``3 n``); reaching it raises IdentificationError.
    """
    A = np.asarray(A, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m, n = A.shape
    maxiter = 3 * n if maxiter is None else int(maxiter)
    tol = 10.0 * np.finfo(np.float64).eps * max(m, n) * max(np.abs(A).sum(axis=0).max(initial=0.0), 1.0)
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)                       # the set P of free (positive) variables
    w = A.T @ b                                             # w = A' (b - A x), the dual
    iterations = 0
    while not passive.all() and np.max(np.where(passive, -np.inf, w)) > tol:
        passive[int(np.argmax(np.where(passive, -np.inf, w)))] = True
        while True:
            iterations += 1
            if iterations > maxiter:
                raise IdentificationError("non-negative least squares: iteration limit reached")
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(A[:, passive], b, rcond=None)[0]
            if np.all(z[passive] > tol):
                x = z
                break
            blocked = passive & (z <= tol)                  # step from x towards z until one hits zero
            alpha = float(np.min(x[blocked] / (x[blocked] - z[blocked])))
            x = x + alpha * (z - x)
            passive &= x > tol
            x[~passive] = 0.0
        w = A.T @ (b - A @ x)
    return x, float(np.linalg.norm(A @ x - b))

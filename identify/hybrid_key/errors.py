"""Standard errors of the hybrid key's fits: from a residual's Jacobian, and the variance inflation of
residuals correlated in time (a model's misfit is not white noise)."""

from __future__ import annotations

from typing import Callable

import numpy as np


def jacobian_errors(residual: Callable[[np.ndarray], np.ndarray], z: np.ndarray, rel_step: float = 1e-3
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The residual at ``z`` and the standard errors of ``z`` from its forward-difference Jacobian:
    sqrt(diag(s^2 (J^T J)^+)), s^2 = RSS / (N - p)."""
    r0 = residual(z)
    J = np.empty((r0.size, z.size))
    for i in range(z.size):
        h = rel_step * max(abs(z[i]), 1e-12)
        zi = z.copy()
        zi[i] += h
        J[:, i] = (residual(zi) - r0) / h
    s2 = float(r0 @ r0) / max(r0.size - z.size, 1)
    cov = s2 * np.linalg.pinv(J.T @ J)
    return r0, np.sqrt(np.clip(np.diag(cov), 0.0, None))


def correlation_inflation(r: np.ndarray, max_lag: int = 200) -> float:
    """Variance inflation of a mean over correlated residuals, 1 + 2 sum_k rho_k (lags until rho first
    drops below 0, at most ``max_lag``): the least-squares standard errors assume white residuals, a
    model's misfit is not (N / inflation is the effective number of samples)."""
    r = r - r.mean()
    den = float(r @ r)
    total = 1.0
    for k in range(1, min(max_lag, r.size // 4)):
        rho = float(r[:-k] @ r[k:]) / den if den > 0 else 0.0
        if rho <= 0.0:
            break
        total += 2.0 * rho
    return total

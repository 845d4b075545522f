"""The result every single-point contact estimator returns, and the input checks they share.

An :class:`EstimateResult` carries the final estimate of ``F = k x + b x'`` (seed 004 eq. 2.1; RLS also
``m``), its covariance where the estimator defines one, and a history: per sample for the recursive
estimators (``t_s`` set), per iteration for the iterative ones, per frequency for ETFE (``axis`` says
which).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hapticam.errors import IdentificationError


@dataclass
class EstimateResult:
    """Output of one estimator.

    Attributes
    ----------
    name : str
        Estimator code (``rls``, ``ils``, ``ia``, ``kalman``, ``gls``, ``etfe``, ``oem``, ``eem``, ``gmle``).
    names : tuple of str
        Parameter names, e.g. ``("k_Npm", "b_Nspm")`` or ``("k_Npm", "b_Nspm", "m_kg")``.
    theta : numpy.ndarray
        Final estimate, SI units (N/m, N s/m, kg).
    cov : numpy.ndarray or None
        Covariance of ``theta`` where the estimator defines one (units squared).
    history : numpy.ndarray
        Estimate history, shape (h, p).
    axis : numpy.ndarray
        What the history is indexed by: time (s), iteration number, or frequency (Hz).
    axis_kind : str
        ``"time"``, ``"iteration"`` or ``"frequency"``.
    iterations : int
        Iterations an iterative estimator needed (0 for the others).
    status : str
        ``"ok"`` or the reason a run stopped early.
    extra : dict
        Estimator-specific diagnostics (residual variance, chosen frequencies, ...).
    """

    name: str
    names: tuple[str, ...]
    theta: np.ndarray
    cov: np.ndarray | None
    history: np.ndarray
    axis: np.ndarray
    axis_kind: str
    iterations: int = 0
    status: str = "ok"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def k_Npm(self) -> float:
        """Stiffness estimate (N/m)."""
        return float(self.theta[0])

    @property
    def b_Nspm(self) -> float:
        """Damping estimate (N s/m)."""
        return float(self.theta[1])

    @property
    def se(self) -> np.ndarray | None:
        """Standard errors (square roots of the covariance diagonal), or None."""
        if self.cov is None:
            return None
        return np.sqrt(np.maximum(np.diag(self.cov), 0.0))


def as_signal(name: str, values: Any, n: int | None = None) -> np.ndarray:
    """A finite 1-D float array (of length ``n`` when given), or one clear error."""
    a = np.ascontiguousarray(np.asarray(values, dtype=np.float64))
    if a.ndim != 1:
        raise IdentificationError(f"{name}: expected a 1-D array, got shape {a.shape}")
    if n is not None and a.size != n:
        raise IdentificationError(f"{name}: expected {n} samples, got {a.size}")
    if a.size < 3:
        raise IdentificationError(f"{name}: at least 3 samples are needed, got {a.size}")
    if not np.all(np.isfinite(a)):
        raise IdentificationError(f"{name}: contains NaN or inf")
    return a


def sample_times(t_s: Any, n: int) -> tuple[np.ndarray, float]:
    """Checked sample times (strictly increasing, uniform within 1 %) and the mean step (s)."""
    t = as_signal("t_s", t_s, n)
    dt = np.diff(t)
    if not np.all(dt > 0):
        raise IdentificationError("t_s: sample times must be strictly increasing")
    mean = float(np.mean(dt))
    if np.max(np.abs(dt - mean)) > 0.01 * mean:
        raise IdentificationError("t_s: sampling must be uniform (steps within 1 % of their mean); resample first")
    return t, mean


def derivatives(x: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Velocity and acceleration of ``x`` by central differences (ends one-sided), step ``dt`` (s).

    ``x'[i] = (x[i+1] - x[i-1]) / (2 dt)``, ``x''[i] = (x[i+1] - 2 x[i] + x[i-1]) / dt^2``: the finite
    differences the RLS estimator uses internally (seed 004 sec. 2.2.1, RLS).
    """
    v = np.gradient(x, dt)  # x' by central differences, one-sided at the ends
    a = np.empty_like(x)
    a[1:-1] = (x[2:] - 2.0 * x[1:-1] + x[:-2]) / (dt * dt)  # x'' by the second central difference
    a[0] = a[1]
    a[-1] = a[-2]
    return v, a

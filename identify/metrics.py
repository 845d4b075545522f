"""Fit metrics shared by identification and verification.

Two fits, under their own names, because users read "fit" both ways:

``fit_percent`` is seed 003 eq. 53 (the coefficient of determination in percent)::

    fit = 100 (1 - sum (F_hat - F)^2 / sum (F - mean F)^2)

``nrmse_fit_percent`` is the normalised-RMS-error fit that MATLAB's ``compare`` and most
system-identification tools report (Ljung, "System Identification: Theory for the User", 1999)::

    nrmse_fit = 100 (1 - ||F_hat - F|| / ||F - mean F||)

Both are 100 for a perfect prediction and 0 for the mean; ``nrmse_fit = 100 (1 - sqrt(1 - fit / 100))``,
so the NRMSE fit is the stricter (99.78 % of the first is 95.3 % of the second). Every threshold in
hapticam is on ``fit_percent``; ``nrmse_fit_percent`` is reported beside it.
``rms_error`` and ``max_error`` are in the signal's units (N for forces).

References
----------
seed 003: Wadi, Mukhopadhyay & Romdhane, eq. 53.
L. Ljung, "System Identification: Theory for the User", 2nd ed., 1999 (the NRMSE fit).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hapticam.errors import IdentificationError


def _pair(reference: Any, estimate: Any) -> tuple[np.ndarray, np.ndarray]:
    ref = np.asarray(reference, dtype=np.float64).ravel()
    est = np.asarray(estimate, dtype=np.float64).ravel()
    if ref.shape != est.shape:
        raise IdentificationError(f"metrics: reference has {ref.size} samples, estimate {est.size}")
    if ref.size == 0:
        raise IdentificationError("metrics: no samples")
    if not (np.all(np.isfinite(ref)) and np.all(np.isfinite(est))):
        raise IdentificationError("metrics: reference and estimate must be finite")
    return ref, est


def _error_ratio(reference: Any, estimate: Any) -> float:
    """``sum (est - ref)^2 / sum (ref - mean ref)^2``: 0 for an exact estimate of a constant reference, inf
    for an inexact one (a constant reference has no variance)."""
    ref, est = _pair(reference, estimate)
    sse = float(np.sum((est - ref) ** 2))
    sst = float(np.sum((ref - ref.mean()) ** 2))
    if sst == 0.0:
        return 0.0 if sse == 0.0 else float("inf")
    return sse / sst


def fit_percent(reference: Any, estimate: Any) -> float:
    """Seed 003 eq. 53: ``100 (1 - sum (est - ref)^2 / sum (ref - mean ref)^2)`` in percent.

    A constant reference has no variance: the fit is 100 for an exact estimate and ``-inf`` otherwise.
    """
    return 100.0 * (1.0 - _error_ratio(reference, estimate))


def nrmse_fit_percent(reference: Any, estimate: Any) -> float:
    """The NRMSE fit ``100 (1 - ||est - ref|| / ||ref - mean ref||)`` in percent (MATLAB's ``compare``).

    A constant reference has no variance: the fit is 100 for an exact estimate and ``-inf`` otherwise.
    """
    return 100.0 * (1.0 - float(np.sqrt(_error_ratio(reference, estimate))))


def rms_error(reference: Any, estimate: Any) -> float:
    """Root-mean-square of ``estimate - reference``."""
    ref, est = _pair(reference, estimate)
    return float(np.sqrt(np.mean((est - ref) ** 2)))


def max_error(reference: Any, estimate: Any) -> float:
    """Largest absolute value of ``estimate - reference``."""
    ref, est = _pair(reference, estimate)
    return float(np.max(np.abs(est - ref)))


def fit_report(reference: Any, estimate: Any) -> dict[str, float]:
    """``{"fit_percent", "nrmse_fit_percent", "rms_N", "max_N", "samples"}`` for a force prediction."""
    ref, est = _pair(reference, estimate)
    return {"fit_percent": fit_percent(ref, est), "nrmse_fit_percent": nrmse_fit_percent(ref, est), "rms_N": rms_error(ref, est), "max_N": max_error(ref, est),
            "samples": int(ref.size)}

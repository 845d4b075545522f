"""``contact.huber``: the linear contact law ``F = k d + b d'`` by Huber's robust regression (Huber,
"Robust Estimation of a Location Parameter", 1964), solved by iteratively reweighted least squares, in the
``contact`` family's signature (``hapticam.identify.estimators``): a force record with a few wild samples
(a knock on the probe, a dropped sensor byte) does not pull the estimate the way least squares lets it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hapticam.identify.contact.result import EstimateResult

#: Huber's threshold in robust standard deviations (95 % efficiency under Gaussian noise)
HUBER_C = 1.345
MAX_ITERATIONS = 50


def huber(t_s: np.ndarray, d_m: np.ndarray, f_N: np.ndarray, v_mps: np.ndarray, settings: Any) -> EstimateResult:
    """``[k (N/m), b (N s/m)]`` from penetration ``d_m`` (m), its rate ``v_mps`` (m/s) and force ``f_N`` (N)."""
    phi = np.column_stack([d_m, v_mps])
    weights = np.ones(f_N.size)
    history = []
    theta = np.zeros(2)
    for iteration in range(1, MAX_ITERATIONS + 1):
        root_w = np.sqrt(weights)
        new, *_ = np.linalg.lstsq(phi * root_w[:, None], f_N * root_w, rcond=None)
        history.append(new)
        residual = f_N - phi @ new
        scale = 1.4826 * np.median(np.abs(residual - np.median(residual))) or 1.0   # MAD, N
        weights = np.minimum(1.0, HUBER_C * scale / np.maximum(np.abs(residual), 1e-300))
        if np.allclose(new, theta, rtol=1e-10, atol=0.0):
            break
        theta = new
    return EstimateResult("huber", ("k_Npm", "b_Nspm"), new, None, np.array(history),
                          np.arange(1, len(history) + 1, dtype=float), "iteration", iterations=iteration)

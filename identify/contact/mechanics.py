"""Contact mechanics the thesis uses around its estimates (seed 004 secs. 3.4-3.6, 4.1.2).

- Springs in series (eq. 3.4): ``k = (1/k_measured - 1/k_rig)^-1``, and its sample-wise form for records:
  the probe (or rig) carries the same force, so the wall's penetration is ``x - F/k_probe`` and its rate
  ``x' - F'/k_probe`` (exact for a massless series spring, whatever the wall's law).
- Power law ``F = k d^n`` (eq. 3.1) and the secant stiffness ``F / d(F)`` at a load (Table 3-7).
- Hertz (eqs. 3.2-3.3): ``F = (4/3) sqrt(R) E* d^(3/2)`` with
  ``1/E* = (1 - nu1^2)/E1 + (1 - nu2^2)/E2``. The thesis's footnote 3 prints ``E*`` as that sum itself
  (a modulus would then have units 1/Pa); its 1.3e10 N/m^1.5 for the aluminium half-sphere comes from the
  reciprocal, which is what :func:`hertz_stiffness` uses.
- The error estimate ``dk/k = sqrt((dx/x)^2 + (dF/F)^2)`` (the second eq. 3.5).
- Initial damping ``b0 = 2 zeta sqrt(k m)`` (sec. 4.1.2; 38.37 N s/m for zeta 0.02, k 1e5 N/m, m 9.2 kg).

References
----------
seed 004: Agar, eqs. 3.1-3.5, Tables 3-5 to 3-9, sec. 4.1.2 and sec. 5.2.1.
Johnson (1985), Contact Mechanics, sec. 4.2 (seed 004 ref. 44).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hapticam.errors import IdentificationError


def _positive(name: str, value: Any) -> np.ndarray:
    a = np.asarray(value, dtype=np.float64)
    if not (np.all(np.isfinite(a)) and np.all(a > 0)):
        raise IdentificationError(f"{name}: expected positive finite values, got {value!r}")
    return a


def series_stiffness(k_measured_Npm: Any, k_rig_Npm: Any) -> np.ndarray | float:
    """The wall's stiffness from a measurement through a series spring: ``(1/k_m - 1/k_rig)^-1`` (eq. 3.4).

    Raises when ``k_measured >= k_rig`` (a chain cannot be stiffer than its stiffest link's partner).
    """
    km = _positive("k_measured_Npm", k_measured_Npm)
    kr = _positive("k_rig_Npm", k_rig_Npm)
    if np.any(km >= kr):
        raise IdentificationError("series stiffness: the measured stiffness must be below the rig/probe "
                                  f"stiffness (got {np.max(km):.4g} >= {np.min(kr):.4g} N/m)")
    out = 1.0 / (1.0 / km - 1.0 / kr)  # k_calc = (1/k_SMT+payload - 1/k_SMT)^-1  (eq. 3.4)
    return float(out) if out.ndim == 0 else out


def series_stiffness_se(k_measured_Npm: float, se_measured_Npm: float, k_rig_Npm: float) -> float:
    """First-order standard error of :func:`series_stiffness`: ``dk/dk_m = (k / k_m)^2``."""
    k = series_stiffness(k_measured_Npm, k_rig_Npm)
    return float((k / k_measured_Npm) ** 2 * se_measured_Npm)  # d/dk_m (1/k_m - 1/k_r)^-1 = k^2 / k_m^2


def remove_series_compliance(x_m: np.ndarray, v_mps: np.ndarray, f_N: np.ndarray, k_probe_Npm: float,
                             dt_s: float) -> tuple[np.ndarray, np.ndarray]:
    """The wall-side displacement and rate: ``x - F/k_p`` and ``x' - F'/k_p`` (F' by central differences)."""
    kp = float(_positive("probe_stiffness_Npm", k_probe_Npm))
    fdot = np.gradient(f_N, dt_s)
    return x_m - f_N / kp, v_mps - fdot / kp  # the series spring deflects F/k_p  (eq. 3.4, per sample)


def power_law_displacement(f_N: Any, k: float, n: float) -> np.ndarray | float:
    """``d = (F / k)^(1/n)`` from ``F = k d^n`` (eq. 3.1); k in N/m^n."""
    f = _positive("f_N", f_N)
    out = (f / float(_positive("k", k))) ** (1.0 / float(_positive("n", n)))  # invert F = k d^n  (eq. 3.1)
    return float(out) if out.ndim == 0 else out


def secant_stiffness(f_N: Any, k: float, n: float) -> np.ndarray | float:
    """Secant stiffness ``F / d`` (N/m) at load ``F`` on ``F = k d^n`` (seed 004 Fig. 3-19, Table 3-7)."""
    f = _positive("f_N", f_N)
    out = f / power_law_displacement(f, k, n)  # slope of the line from the origin to (d, F)
    return float(out) if np.ndim(out) == 0 else out


def effective_modulus(E1_Pa: float, nu1: float, E2_Pa: float, nu2: float) -> float:
    """``E* = [(1 - nu1^2)/E1 + (1 - nu2^2)/E2]^-1`` (Pa); the reciprocal the thesis's footnote 3 omits."""
    E1, E2 = float(_positive("E1_Pa", E1_Pa)), float(_positive("E2_Pa", E2_Pa))
    if not (-1.0 < nu1 < 0.5 and -1.0 < nu2 < 0.5):
        raise IdentificationError(f"Poisson's ratios must be in (-1, 0.5), got {nu1}, {nu2}")
    return 1.0 / ((1 - nu1 ** 2) / E1 + (1 - nu2 ** 2) / E2)  # Johnson eq. 4.22


def hertz_stiffness(radius_m: float, E1_Pa: float, nu1: float, E2_Pa: float, nu2: float) -> float:
    """Hertz factor ``k* = (16/9)^(1/2) R^(1/2) E*`` (N/m^1.5) of a sphere on a half-space (eq. 3.3)."""
    R = float(_positive("radius_m", radius_m))
    return (16.0 / 9.0) ** 0.5 * R ** 0.5 * effective_modulus(E1_Pa, nu1, E2_Pa, nu2)  # eq. 3.3


def hertz_displacement(f_N: Any, radius_m: float, E1_Pa: float, nu1: float, E2_Pa: float, nu2: float) -> Any:
    """``d = (9 F^2 / (16 R E*^2))^(1/3)`` (eq. 3.2)."""
    f = _positive("f_N", f_N)
    Es = effective_modulus(E1_Pa, nu1, E2_Pa, nu2)
    return (9.0 * f ** 2 / (16.0 * float(radius_m) * Es ** 2)) ** (1.0 / 3.0)  # eq. 3.2


def stiffness_relative_error(dx_m: float, x_m: float, dF_N: float, F_N: float) -> float:
    """``dk/k = sqrt((dx/x)^2 + (dF/F)^2)`` (the second eq. 3.5 of seed 004)."""
    return float(np.hypot(dx_m / x_m, dF_N / F_N))  # eq. 3.5 (error analysis)


def percent_error(k_reference_Npm: Any, k_estimate_Npm: Any) -> Any:
    """``(k_ref - k_est) / k_ref * 100`` (the first eq. 3.5; the thesis's tables print its magnitude)."""
    ref = _positive("k_reference_Npm", k_reference_Npm)
    return (ref - np.asarray(k_estimate_Npm, dtype=np.float64)) / ref * 100.0  # eq. 3.5 (payload error)


def damping_from_ratio(zeta: float, k_Npm: float, m_kg: float) -> float:
    """Initial damping guess ``b0 = 2 zeta sqrt(k m)`` (N s/m; seed 004 sec. 4.1.2)."""
    if not zeta >= 0:
        raise IdentificationError(f"zeta must be >= 0, got {zeta}")
    return 2.0 * zeta * float(np.sqrt(_positive("k_Npm", k_Npm) * _positive("m_kg", m_kg)))  # b = 2 zeta sqrt(k m)

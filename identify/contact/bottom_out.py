"""A key's bottom-out from the steep end of its press stroke: a Hunt-Crossley wall on a spring.

At the end of a key's travel the stem meets the housing floor. Over the last part of the press stroke the
measured force is the return spring's (nearly a straight line) plus the floor's Hunt-Crossley contact::

    F(x) = a + c (x - x_0) + k (x - x_b)_+^n (1 + b' x')             (seed 004 eq. 3.1, seed 000 eq. 26)

with ``x_b`` the bottom-out datum (m), ``k`` (N/m^n), ``n``, ``b'`` (s/m) and ``(.)_+ = max(., 0)``.
:func:`fit_bottom_out` fits the five or six parameters by nonlinear least squares on the press stroke's
last ``window_m``, after removing a series compliance (the probe tip, or the rig:
:func:`~hapticam.identify.contact.mechanics.remove_series_compliance`, seed 004 section 3.5) when its
stiffness is given. The spring line is a nuisance: fitted, not reported as the floor's.

The result is a :class:`~hapticam.models.contact.Contact` wall (``law: hunt-crossley``, ``side: +1``) at
``x_b``: :meth:`BottomOut.contact` builds it, and ``hapticam identify impedance --bottom-out`` composes it
with the impedance table fitted on the travel before ``x_b``.

Whether the capture reaches bottom-out at all is judged from the fit: the wall must carry at least
:data:`MIN_WALL_FORCE_FRACTION` of the force rise over the window, and its datum must lie inside the
window with a standard error under :data:`MAX_DATUM_SE_FRACTION` of the wall's depth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from hapticam.errors import IdentificationError
from hapticam.identify.contact.mechanics import remove_series_compliance

DEFAULT_WINDOW_M = 0.6e-3          # the press stroke's last 0.6 mm: a switch's floor is reached within it
MIN_WALL_FORCE_FRACTION = 0.5      # the wall carries at least half of the force rise over the window
MAX_DATUM_SE_FRACTION = 0.2        # the datum is known to a fifth of the wall's depth or better
MIN_SAMPLES = 20


@dataclass
class BottomOut:
    """A fitted floor. ``x_b_m`` (m, at the probe's position scale; with a series correction, the
    wall side's), ``k`` (N/m^n), ``n``, ``b_prime_spm`` (s/m: the ``contact`` model's ``b = k b'``),
    ``depth_m`` (how far the data go past ``x_b``), ``force_N`` (the wall's force at that depth),
    ``se`` (standard errors by name), ``rms_N`` (fit residual), ``samples``, ``probe_stiffness_Npm``
    (the series compliance removed, or None) and ``notes``."""

    x_b_m: float
    k: float
    n: float
    b_prime_spm: float
    depth_m: float
    force_N: float
    se: dict[str, float]
    rms_N: float
    samples: int
    probe_stiffness_Npm: float | None
    notes: list[str]

    @property
    def b_Nspm(self) -> float:
        """Hunt-Crossley damping of the ``contact`` model, ``b = k b'`` (N s/m^(n+1))."""
        return self.k * self.b_prime_spm

    def contact(self) -> Any:
        """The floor as a ``contact`` model (Hunt-Crossley wall resisting ``x > x_b``)."""
        from hapticam.models.contact import Contact

        return Contact("hunt-crossley", self.x_b_m, self.k, max(self.b_Nspm, 0.0), n=self.n, side=1)

    def to_dict(self) -> dict[str, Any]:
        return {"x_b_m": self.x_b_m, "k": self.k, "n": self.n, "b_prime_spm": self.b_prime_spm,
                "depth_m": self.depth_m, "force_N": self.force_N, "se": dict(self.se), "rms_N": self.rms_N,
                "samples": self.samples, "probe_stiffness_Npm": self.probe_stiffness_Npm, "notes": list(self.notes)}


def _model(p: np.ndarray, x: np.ndarray, v: np.ndarray, x0: float, use_b: bool) -> tuple[np.ndarray, np.ndarray]:
    """Force and Jacobian columns d/d(a, c, ln k, n, x_b[, b'])  (module equation)."""
    a, c, lnk, n, xb = p[:5]
    bp = p[5] if use_b else 0.0
    d = x - xb
    pos = d > 0
    dp = np.where(pos, d, 1.0)
    wall = np.where(pos, np.exp(lnk) * dp ** n, 0.0)              # k d^n
    damp = 1.0 + bp * v
    f = a + c * (x - x0) + wall * damp
    cols = [np.ones_like(x), x - x0, wall * damp, np.where(pos, wall * damp * np.log(dp), 0.0),
            np.where(pos, -n * wall * damp / dp, 0.0)]
    if use_b:
        cols.append(wall * v)
    return f, np.column_stack(cols)


def _press_window(x: np.ndarray, v: np.ndarray, window_m: float) -> np.ndarray:
    """Indices of press samples (v > 0) within ``window_m`` of the deepest press sample."""
    press = v > 0
    if np.count_nonzero(press) < MIN_SAMPLES:
        raise IdentificationError("bottom-out: the capture has too few pressing samples (v > 0)")
    x_end = float(np.max(x[press]))
    return np.flatnonzero(press & (x >= x_end - window_m))


def _start(x: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Initial (a, c, ln k, n, x_b): the spring line through the window's first half, the datum where the
    force leaves it by a tenth of the rise, and ``n = 1.5`` (Hertz) through the deepest sample."""
    x0 = float(np.min(x))
    half = x <= x0 + 0.5 * np.ptp(x)
    c, a = np.polyfit(x[half] - x0, f[half], 1) if np.count_nonzero(half) >= 3 else (0.0, float(f[0]))
    excess = f - (a + c * (x - x0))
    rise = float(np.max(excess))
    if not rise > 0:
        raise IdentificationError("bottom-out: the force does not rise above the spring's line at the end of travel")
    above = x[excess > 0.1 * rise]
    xb = float(np.min(above)) if above.size else x0 + 0.5 * np.ptp(x)
    depth = max(float(np.max(x)) - xb, 1e-9)
    k0 = rise / depth ** 1.5
    return np.array([a, c, np.log(k0), 1.5, xb])


def fit_bottom_out(x_m: Any, f_N: Any, v_mps: Any, *, dt_s: float | None = None,
                   probe_stiffness_Npm: float | None = None, window_m: float = DEFAULT_WINDOW_M,
                   fit_damping: bool = True) -> BottomOut:
    """Fit the floor at the end of the press stroke (module docstring); raises
    :class:`~hapticam.errors.IdentificationError` when the capture does not reach one.

    ``x_m`` (m), ``f_N`` (N), ``v_mps`` (m/s) are a capture's columns; ``dt_s`` (s) is needed with
    ``probe_stiffness_Npm`` (N/m), the series compliance to remove first (seed 004 eq. 3.4)."""
    x, f, v = (np.asarray(a, dtype=np.float64) for a in (x_m, f_N, v_mps))
    if not (x.shape == f.shape == v.shape and x.ndim == 1):
        raise IdentificationError("bottom-out: x, force and velocity must be 1-D arrays of one length")
    if not (np.isfinite(window_m) and window_m > 0):
        raise IdentificationError(f"bottom-out: window must be a positive length (m), got {window_m!r}")
    notes: list[str] = []
    if probe_stiffness_Npm is not None:
        if dt_s is None:
            raise IdentificationError("bottom-out: removing a series stiffness needs the sample period")
        x, v = remove_series_compliance(x, v, f, probe_stiffness_Npm, dt_s)
        notes.append(f"series compliance of {probe_stiffness_Npm:.4g} N/m removed (seed 004 eq. 3.4)")
    idx = _press_window(x, v, window_m)
    if idx.size < MIN_SAMPLES:
        raise IdentificationError(f"bottom-out: {idx.size} pressing samples in the last {window_m * 1e3:g} mm "
                                  f"(need {MIN_SAMPLES})")
    xs, fs, vs = x[idx], f[idx], v[idx]
    p0 = _start(xs, fs)
    x0 = float(np.min(xs))
    use_b = fit_damping
    if use_b:
        p0 = np.append(p0, 0.0)
    lo = [-np.inf, -np.inf, -np.inf, 0.5, x0] + ([-np.inf] if use_b else [])
    hi = [np.inf, np.inf, np.inf, 4.0, float(np.max(xs))] + ([np.inf] if use_b else [])
    p0 = np.clip(p0, np.array(lo) + 1e-12, np.array(hi) - 1e-12)
    sol = least_squares(lambda p: _model(p, xs, vs, x0, use_b)[0] - fs, p0,
                        jac=lambda p: _model(p, xs, vs, x0, use_b)[1], bounds=(lo, hi), x_scale="jac",
                        xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=2000)
    return _result(sol, xs, fs, vs, x0, use_b, probe_stiffness_Npm, notes)


def _result(sol: Any, xs: np.ndarray, fs: np.ndarray, vs: np.ndarray, x0: float, use_b: bool,
            kp: float | None, notes: list[str]) -> BottomOut:
    p = sol.x
    _, J = _model(p, xs, vs, x0, use_b)
    s2 = float(sol.fun @ sol.fun) / max(xs.size - p.size, 1)     # residual variance
    sc = np.sqrt(np.sum(J * J, axis=0))
    sc[~(sc > 0)] = 1.0
    cov = s2 * np.linalg.pinv((J / sc).T @ (J / sc)) / np.outer(sc, sc)   # s2 (J'J)^-1
    k = float(np.exp(p[2]))
    se_raw = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    se = {"k": k * se_raw[2], "n": se_raw[3], "x_b_m": se_raw[4]}
    if use_b:
        se["b_prime_spm"] = se_raw[5]
    depth = float(np.max(xs)) - float(p[4])
    wall = k * max(depth, 0.0) ** p[3]
    rise = float(np.max(fs) - np.min(fs))
    if not (depth > 0 and wall >= MIN_WALL_FORCE_FRACTION * rise and se["x_b_m"] <= MAX_DATUM_SE_FRACTION * depth):
        raise IdentificationError(f"bottom-out: the capture does not reach a floor (a wall of {wall:.3g} N over "
                                  f"{depth * 1e6:.3g} um against a rise of {rise:.3g} N in the window)")
    return BottomOut(float(p[4]), k, float(p[3]), float(p[5]) if use_b else 0.0, depth, wall, se,
                     float(np.sqrt(np.mean(sol.fun ** 2))), int(xs.size), kp, notes)


def capture_velocity(capture: Any) -> np.ndarray:
    """The capture's velocity column (m/s), or central differences of its position."""
    if capture.v_mps is not None:
        return np.asarray(capture.v_mps, dtype=np.float64)
    return np.gradient(capture.x_m, capture.t_s)


def split_at_bottom_out(capture: Any, probe_stiffness_Npm: float | None = None,
                        window_m: float = DEFAULT_WINDOW_M) -> tuple[BottomOut, Any]:
    """Fit the floor of ``capture`` and return it with a copy of the capture whose samples past the floor's
    datum are excluded (``Capture.excluded``), so an impedance table fitted to the copy ends at ``x_b`` and
    holds its force beyond it, and the floor's ``contact`` model adds the wall there."""
    import dataclasses

    v = capture_velocity(capture)
    dt = float(np.median(np.diff(capture.t_s)))
    bottom = fit_bottom_out(capture.x_m, capture.f_N, v, dt_s=dt, probe_stiffness_Npm=probe_stiffness_Npm,
                            window_m=window_m)
    x_wall = capture.x_m if probe_stiffness_Npm is None else capture.x_m - capture.f_N / probe_stiffness_Npm
    beyond = np.flatnonzero(x_wall > bottom.x_b_m)
    excluded = np.union1d(np.asarray(capture.excluded, dtype=np.int64), beyond).astype(np.int64)
    return bottom, dataclasses.replace(capture, excluded=excluded)

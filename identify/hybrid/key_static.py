"""First estimates of a piano-like key from a slow press and release (quasi-static), in closed form.

On a slow stroke the key's and hammer's inertia are negligible and the force the probe reads is
(the ``hybrid-key`` model, :mod:`hapticam.models.hybrid_key`)::

    hammer on the jack (before let-off)        F = k_r x + F_p + r m_h g
    hammer in flight (just after let-off)      F = k_r x + F_p
    hammer on the backcheck (x > x_l)          F = k_r x + F_p + r m_h g
    releasing, escaped (x_r < x < x_l)         F = k_r x + F_p + (r - d_c / (x_l - x_r)) m_h g
    on the keybed (x > x_kb)                   + k_kb (x - x_kb)  (+ b_kb v)

so the press gives ``k_r`` and ``F_p + r m_h g`` (a line), the let-off point ``x_l`` (where the force
drops by the hammer's weight through the lever), ``F_p`` alone (the force during the flight), ``r m_h g``
(the drop), the check drop ``d_c`` (the hammer falls ``d_c`` onto the backcheck in ``t_f``, ``d_c =
g t_f^2 / 2`` whatever the key's constant speed) and the keybed (``x_kb``, ``k_kb``: the line of the
steep end); the release gives the repetition point ``x_r`` (where the weight comes back) and, from the
escaped level, ``d_c / (r (x_l - x_r))``, hence the lever ratio ``r`` and the hammer mass ``m_h``.
What a slow stroke cannot give: the key mass, the contact stiffness and damping, the string, the
keybed's damping (see :mod:`hapticam.identify.hybrid.key_fit` for the excitations that do).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.signal import butter, filtfilt

from hapticam.errors import IdentificationError


@dataclass
class StaticEstimates:
    """Closed-form estimates from a slow press and release (SI units; see the module docstring)."""

    return_spring_Npm: float
    preload_N: float
    weight_through_lever_N: float       # r m_h g
    let_off_m: float
    check_drop_m: float
    repetition_m: float
    keybed_m: float
    keybed_k_Npm: float
    lever_ratio: float
    hammer_mass_kg: float
    notes: list[str] = field(default_factory=list)


def smooth(x: np.ndarray, dt: float, cutoff_hz: float) -> np.ndarray:
    """Zero-phase second-order Butterworth low-pass of ``x`` sampled every ``dt`` (s)."""
    wn = min(2.0 * cutoff_hz * dt, 0.99)
    b, a = butter(2, wn)
    return filtfilt(b, a, x) if x.size > 12 else x.copy()


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) index pairs of the runs of True in ``mask``."""
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)))


def static_estimates(t_s: np.ndarray, x_m: np.ndarray, f_N: np.ndarray, gravity_mps2: float = 9.81
                     ) -> StaticEstimates:
    """Estimate the quasi-static parameters from a slow press past let-off onto the keybed and back."""
    dt = float(np.median(np.diff(t_s)))
    xs = smooth(x_m, dt, 20.0)
    v = np.gradient(xs, dt)
    top = int(np.argmax(xs))
    if top < 10 or top > x_m.size - 10:
        raise IdentificationError("slow stroke: the capture must press and then release the key")
    press = np.arange(top)
    lo, hi = xs[0], xs[top]
    # 1. the line below let-off: k_r x + (F_p + r m_h g), fitted on the first half of the press (robust:
    #    refitted on the samples within 3 MADs)
    sel = press[(xs[press] > lo + 0.1 * (hi - lo)) & (xs[press] < lo + 0.5 * (hi - lo)) & (v[press] > 0)]
    if sel.size < 20:
        raise IdentificationError("slow stroke: too few pressing samples below let-off")
    k_r, c0 = np.polyfit(x_m[sel], f_N[sel], 1)
    for _ in range(2):
        r = f_N[sel] - (k_r * x_m[sel] + c0)
        keep = np.abs(r - np.median(r)) < 3.0 * 1.4826 * np.median(np.abs(r - np.median(r))) + 1e-9
        k_r, c0 = np.polyfit(x_m[sel][keep], f_N[sel][keep], 1)
    e = f_N - (k_r * x_m + c0)
    noise = 1.4826 * np.median(np.abs(np.diff(e[sel]))) / np.sqrt(2.0)
    # 2. let-off: the first pressing run where the force sits well below the line (the hammer in flight)
    drop_level = np.median(e[press][e[press] < -max(10 * noise, 0.02 * abs(c0))]) if np.any(
        e[press] < -max(10 * noise, 0.02 * abs(c0))) else np.nan
    if not np.isfinite(drop_level):
        raise IdentificationError("slow stroke: no let-off found (the force never drops below the line)")
    flight = (e[press] < 0.5 * drop_level)
    runs = [(a, b) for a, b in _runs(flight) if b - a >= 5]
    if not runs:
        raise IdentificationError("slow stroke: no hammer flight found after let-off")
    a, b = max(runs, key=lambda ab: ab[1] - ab[0])
    x_l = float(x_m[a])
    inner = slice(a + (b - a) // 5, b - (b - a) // 5 + 1)
    weight = float(-np.median(e[press][inner]))           # r m_h g: the drop during the flight
    preload = float(c0 - weight)
    t_f = (b - a) * dt
    check_drop = 0.5 * gravity_mps2 * t_f * t_f           # d_c = g t_f^2 / 2 (fall onto the rising backcheck)
    # 3. keybed: the steep end of the press, e = k_kb (x - x_kb)
    above = (e[press] > max(0.5 * weight, 20 * noise)) & (xs[press] > x_l)
    end_runs = [(a2, b2) for a2, b2 in _runs(above) if b2 >= top - 2]   # the run that lasts to the turn
    steep = press[end_runs[0][0]:end_runs[0][1]] if end_runs else press[:0]
    steep = steep[e[steep] > 0.1 * (e[steep].max() if steep.size else 0.0)]  # past the felt's first touch
    if steep.size >= 10:
        k_kb, c_kb = np.polyfit(x_m[steep], e[steep], 1)
        x_kb = float(-c_kb / k_kb)
    else:
        k_kb, x_kb = 0.0, float(hi)
    # 4. release: escaped level between x_r and x_l, and the repetition point where the weight returns
    rel = np.arange(top, x_m.size)
    mid = rel[(xs[rel] < x_l - 0.1 * (x_l - lo)) & (xs[rel] > lo + 0.05 * (hi - lo))]
    low = mid[e[mid] < -0.25 * weight]
    if low.size < 10:
        raise IdentificationError("slow stroke: the release shows no escaped level (did the key return?)")
    x_r = float(np.min(x_m[low]))
    level = float(np.median(e[low]) + weight)             # (r - d_c / (x_l - x_r)) m_h g
    frac = 1.0 - level / weight                           # d_c / (r (x_l - x_r))
    notes = []
    if not 0.0 < frac <= 1.0:
        raise IdentificationError("slow stroke: the escaped release level is not below the jack level")
    lever = check_drop / (frac * (x_l - x_r))
    hammer_mass = weight / (lever * gravity_mps2)
    notes.append(f"slow stroke: k_r, F_p + r m_h g from the line below let-off; let-off at {x_l * 1e3:.3f} mm, "
                 f"flight {t_f * 1e3:.1f} ms -> d_c; repetition at {x_r * 1e3:.3f} mm and the escaped level -> r")
    return StaticEstimates(return_spring_Npm=float(k_r), preload_N=preload, weight_through_lever_N=weight,
                           let_off_m=x_l, check_drop_m=float(check_drop), repetition_m=x_r, keybed_m=x_kb,
                           keybed_k_Npm=float(k_kb), lever_ratio=float(lever), hammer_mass_kg=float(hammer_mass),
                           notes=notes)

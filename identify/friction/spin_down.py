"""Friction from spin-downs of a knob or flywheel: angle only (``J theta'' = -f(theta')``).

A spin-down rig spins the knob up and lets go; the knob coasts to rest under its friction alone, and
the encoder on its shaft records the angle. Differentiating the angle twice (Savitzky-Golay) gives the
speed ``w`` and the deceleration, and every coasting sample satisfies::

    (J + dJ) theta'' + f(w) = 0

(the product analogue of seed 003's passive pendulum: the data are the free motion, the friction law
is what stops it). With ``J`` known each sample gives ``y = -(J + dJ) theta''`` against ``f(w)``; with ``J``
unknown it needs two spin-downs, one with a known added inertia ``dJ`` (a ring clamped on the knob): then
``y = -dJ theta'' = J theta'' + f(w)`` and ``J`` is a coefficient of the same regression (without the
added inertia ``y`` is 0 and the scale of ``J`` and ``f`` cannot be told apart). The law's levels and their
standard errors come from :func:`hapticam.identify.friction.product.fit_law`.

The coast is found from the angle alone: it starts where, after the peak speed, the deceleration first
exceeds a third of its typical coasting value (the drive held the speed before), and ends one filter
window before the knob stops (below the filter's resolution the speed is not resolved).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from scipy.signal import savgol_filter

from hapticam.capture import Capture
from hapticam.errors import IdentificationError
from hapticam.identify.friction.product import LawFit, fit_law_rotary

#: default Savitzky-Golay window (s) for the angle's derivatives
WINDOW_S = 5e-3


#: acceleration noise allowed, as a fraction of the typical deceleration, when the window is chosen
NOISE_FRACTION = 0.05


def choose_window(t_s: np.ndarray, x: np.ndarray) -> float:
    """The shortest Savitzky-Golay window (s, at least ``WINDOW_S``) whose acceleration noise is at most
    ``NOISE_FRACTION`` of the typical deceleration.

    The angle's noise is the encoder's quantisation ``q / sqrt(12)`` (``q`` the smallest step it records) or
    its white noise (:func:`hapticam.capture.noise_scale`), whichever is larger; a cubic filter's second
    derivative multiplies it by the norm of its coefficients (``savgol_coeffs``). The typical deceleration
    is the 75th percentile of ``|theta''|`` through a 50 ms window while the knob turns at more than a tenth
    of its top speed. A 4096-count encoder needs about 30 ms.
    """
    from scipy.signal import savgol_coeffs

    from hapticam.capture import noise_scale

    dt = float(np.median(np.diff(t_s)))
    steps = np.abs(np.diff(x))
    q = float(np.min(steps[steps > 0])) if np.any(steps > 0) else 0.0
    sigma = max(q / math.sqrt(12.0), noise_scale(x))          # uniform quantisation error: q / sqrt(12)
    n_long = min(max(7, int(round(0.05 / dt)) | 1), (x.size // 4) | 1)
    speed = np.abs(savgol_filter(x, n_long, 3, deriv=1, delta=dt))
    moving = speed > 0.1 * speed.max()
    typical = float(np.percentile(np.abs(savgol_filter(x, n_long, 3, deriv=2, delta=dt))[moving], 75))
    n = max(7, int(round(WINDOW_S / dt)) | 1)
    while n < x.size // 8:
        gain = float(np.linalg.norm(savgol_coeffs(n, 3, deriv=2, delta=dt)))
        if sigma * gain <= NOISE_FRACTION * typical:
            break
        n += 2
    return n * dt


def derivatives(t_s: np.ndarray, x: np.ndarray, window_s: float = WINDOW_S) -> tuple[np.ndarray, np.ndarray]:
    """Speed and acceleration of ``x`` by a cubic Savitzky-Golay filter over ``window_s`` (odd samples >= 7)."""
    dt = float(np.median(np.diff(t_s)))
    n = max(7, int(round(window_s / dt)) | 1)
    if x.size <= n:
        raise IdentificationError(f"{x.size} samples are fewer than the {n}-sample differentiation window")
    v = savgol_filter(x, n, 3, deriv=1, delta=dt)     # cubic least-squares fits over the window
    a = savgol_filter(x, n, 3, deriv=2, delta=dt)
    return v, a


@dataclass
class Coast:
    """One capture's coasting samples: speed ``w`` (rad/s), deceleration ``alpha`` (rad/s^2), the capture's
    added inertia ``added`` (kg m^2) and the sample range ``[start, stop)``."""

    name: str
    theta: np.ndarray
    w: np.ndarray
    alpha: np.ndarray
    added: float
    start: int
    stop: int
    peak_speed: float


def find_coast(capture: Capture, added_inertia: float = 0.0, window_s: float | None = None) -> Coast:
    """The coasting part of a spin-down capture (module docstring), from its angle column only; the
    differentiation window is :func:`choose_window`'s unless ``window_s`` is given."""
    t, x = capture.t_s, capture.x_m
    window_s = choose_window(t, x) if window_s is None else window_s
    w, alpha = derivatives(t, x, window_s)
    n_win = max(7, int(round(window_s / capture.dt_s)) | 1)
    peak = int(np.argmax(np.abs(w)))
    sgn = 1.0 if w[peak] > 0 else -1.0
    decel = -alpha * sgn                                # positive while friction slows the knob
    speed = w * sgn
    below = np.flatnonzero(speed[peak:] <= 0.0)
    end = peak + (int(below[0]) if below.size else speed.size - peak)
    if end - peak < 4 * n_win:
        raise IdentificationError(f"{capture.name}: the knob does not coast after its peak speed "
                                  f"({abs(w[peak]):.3g} rad/s); not a spin-down")
    typical = float(np.percentile(decel[peak:end], 75))
    if not typical > 0.0:
        raise IdentificationError(f"{capture.name}: no deceleration after the peak speed; not a spin-down")
    start = peak + int(np.argmax(decel[peak:end] > typical / 3.0)) + n_win   # past the release transient
    stop_speed = max(0.01 * speed[peak], typical * n_win * capture.dt_s)      # the filter's speed resolution
    slow = np.flatnonzero(speed[start:end] < stop_speed)
    stop = start + (int(slow[0]) if slow.size else end - start)
    valid = capture.valid[start:stop]
    if speed[stop - 1] > 0.5 * speed[peak]:
        raise IdentificationError(f"{capture.name}: the knob keeps {speed[stop - 1] / speed[peak]:.0%} of its peak speed "
                                  "to the end; not a spin-down (let it coast to rest)")
    if stop - start < 4 * n_win:
        raise IdentificationError(f"{capture.name}: the coast is too short ({stop - start} samples)")
    return Coast(capture.name, x[start:stop][valid], w[start:stop][valid], alpha[start:stop][valid], float(added_inertia), start, stop,
                 float(abs(w[peak])))


def fit_spin_downs(captures: Sequence[Capture], law: str, *, inertia: float | None = None,
                   added_inertia: Sequence[float] | None = None,
                   window_s: float | None = None) -> tuple[LawFit, list[Coast]]:
    """Fit ``law`` to one or more spin-downs (module docstring). ``inertia`` (kg m^2) is ``J`` if known;
    ``added_inertia`` the inertia added to each capture's knob (default 0 each)."""
    added = list(added_inertia) if added_inertia is not None else [0.0] * len(captures)
    if len(added) != len(captures):
        raise IdentificationError(f"{len(added)} added inertias for {len(captures)} captures")
    if inertia is not None and not (math.isfinite(inertia) and inertia > 0.0):
        raise IdentificationError(f"inertia: must be > 0 kg m^2, got {inertia!r}")
    if any(not (math.isfinite(a) and a >= 0.0) for a in added):
        raise IdentificationError("added inertia: must be >= 0 kg m^2")
    if inertia is None and not any(a > 0.0 for a in added):
        raise IdentificationError("a spin-down gives friction over inertia only: give the inertia (--inertia) or "
                                  "a second spin-down with a known added inertia (--added-inertia)")
    coasts = [find_coast(c, a, window_s) for c, a in zip(captures, added)]
    w = np.concatenate([c.w for c in coasts])
    alpha = np.concatenate([c.alpha for c in coasts])
    theta = np.concatenate([c.theta for c in coasts])
    dj = np.concatenate([np.full(c.w.size, c.added) for c in coasts])
    if inertia is not None:
        fit, _ = fit_law_rotary(law, w, -(inertia + dj) * alpha, theta)   # (J + dJ) theta'' + f(w) = 0
        fit.extra["inertia_kgm2"] = inertia
        fit.extra_se["inertia_kgm2"] = 0.0
    else:                                                                  # -dJ theta'' = J theta'' + f(w)
        fit, _ = fit_law_rotary(law, w, -dj * alpha, theta, alpha[:, None], ("inertia_kgm2",))
        if not fit.extra["inertia_kgm2"] > 0.0:
            raise IdentificationError(f"the spin-downs give a non-positive inertia ({fit.extra['inertia_kgm2']:.3g} "
                                      "kg m^2): check the added inertia and that the captures are spin-downs")
    fit.notes.insert(0, f"{len(coasts)} spin-down(s), {w.size} coasting samples from {fit.speed_range[1]:.3g} rad/s "
                        f"down to {fit.speed_range[0]:.3g} rad/s")
    return fit, coasts


def predicted_coast(fit: LawFit, coast: Coast) -> np.ndarray:
    """The fitted law's deceleration torque ``f(w)`` over a coast (N m; LuGre: its steady-state curve)."""
    return fit.model().steady_state_force(coast.w)


def coast_summary(fit: LawFit, coasts: list[Coast]) -> list[dict[str, Any]]:
    """Per capture: samples used, speed range, and the fit of ``J theta''`` by ``-f(w)`` (seed 003 eq. 53)."""
    from hapticam.identify.metrics import fit_report

    j = fit.extra["inertia_kgm2"]
    out = []
    for c in coasts:
        measured = -(j + c.added) * c.alpha
        rep = fit_report(measured, predicted_coast(fit, c))
        out.append({"capture": c.name, "samples": int(c.w.size), "from_index": c.start, "to_index": c.stop,
                    "peak_speed_radps": c.peak_speed, "added_inertia_kgm2": c.added,
                    "fit_percent": rep["fit_percent"], "rms_Nm": rep["rms_N"]})
    return out

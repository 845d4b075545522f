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

With neither, a capture that also records the drive's torque ``T`` while it spins the knob up (the
launch) gives ``J`` from the launch: there ``T - c = J theta'' + f(w)``, while coasting ``0 = J theta'' + f(w)``,
both fitted at once (the torque read while the knob coasts free is the sensor's offset ``c``: nothing drives
the knob then). The friction and detents then come from the coast with that ``J``, as if it were given: the
launch's torque is far noisier than the coast's angle.

The coast is found from the angle alone: it starts where, after the peak speed, the deceleration first
exceeds a third of its typical coasting value (the drive held the speed before), and ends one filter
window before the knob stops (below the filter's resolution the speed is not resolved).

Detents (``A sin(N theta)``, :func:`~hapticam.identify.friction.product.detent_columns`) pass through the
same Savitzky-Golay filter as the deceleration: at ``N w`` rad/s it scales them by its gain
(:func:`derivative_gain`, 0.96 for 24 detents at 12 rad/s through 5 ms), so the detent columns are scaled
by it too and the launch's torque is smoothed by the filter's kernel (:func:`acceleration_kernel`); the
fitted amplitude is then the detents' own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from scipy.signal import savgol_filter

from hapticam.capture import Capture
from hapticam.errors import IdentificationError
from hapticam.identify.friction.product import DetentGain, LawFit, fit_law_rotary

#: default Savitzky-Golay window (s) for the angle's derivatives
WINDOW_S = 5e-3


#: what a spin-down needs besides the angle to scale friction by
NEEDS_INERTIA = ("a spin-down gives friction over inertia only: give the inertia (--inertia), a second spin-down "
                 "with a known added inertia (--added-inertia), or a capture that records the drive's torque "
                 "while it spins the knob up")

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


def window_samples(window_s: float, dt_s: float) -> int:
    """The Savitzky-Golay window in samples: odd, at least 7."""
    return max(7, int(round(window_s / dt_s)) | 1)


def derivatives(t_s: np.ndarray, x: np.ndarray, window_s: float = WINDOW_S) -> tuple[np.ndarray, np.ndarray]:
    """Speed and acceleration of ``x`` by a cubic Savitzky-Golay filter over ``window_s`` (odd samples >= 7)."""
    dt = float(np.median(np.diff(t_s)))
    n = window_samples(window_s, dt)
    if x.size <= n:
        raise IdentificationError(f"{x.size} samples are fewer than the {n}-sample differentiation window")
    v = savgol_filter(x, n, 3, deriv=1, delta=dt)     # cubic least-squares fits over the window
    a = savgol_filter(x, n, 3, deriv=2, delta=dt)
    return v, a


def derivative_gain(omega_radps: Any, n: int, dt_s: float) -> np.ndarray:
    """Gain of the ``n``-sample cubic Savitzky-Golay second derivative on ``sin(omega t)``, relative to the
    sampled second derivative ``(x[i+1] - 2 x[i] + x[i-1]) / dt^2`` (1 at low frequency; the filter is
    symmetric, so there is no phase)."""
    from scipy.signal import savgol_coeffs

    om = np.abs(np.asarray(omega_radps, dtype=np.float64))
    h = savgol_coeffs(n, 3, deriv=2, delta=dt_s, use="dot")
    lag = (np.arange(n) - n // 2) * dt_s
    response = np.cos(np.multiply.outer(om, lag)) @ h            # sum_j h_j cos(omega j dt): a real response
    sampled = -(2.0 - 2.0 * np.cos(om * dt_s)) / dt_s ** 2        # the second difference's response
    small = np.abs(sampled) < 1e-12 / dt_s ** 2
    return np.where(small, 1.0, response / np.where(small, 1.0, sampled))


def acceleration_kernel(n: int, dt_s: float) -> np.ndarray:
    """The smoothing kernel ``K`` (``n - 2`` samples, sum 1) with ``savgol second derivative = K * second
    difference``: what the filter does to an acceleration, so a torque smoothed by ``K`` matches it."""
    from scipy.signal import savgol_coeffs

    h = savgol_coeffs(n, 3, deriv=2, delta=dt_s, use="conv")
    return (np.cumsum(np.cumsum(h)) * dt_s ** 2)[: n - 2]        # h = [1, -2, 1] / dt^2 convolved with K


@dataclass
class Coast:
    """One capture's coasting samples: speed ``w`` (rad/s), deceleration ``alpha`` (rad/s^2), the capture's
    added inertia ``added`` (kg m^2), the sample range ``[start, stop)``, the peak speed's sample ``peak``
    and the derivative filter (``window_n`` samples of ``dt_s``)."""

    name: str
    theta: np.ndarray
    w: np.ndarray
    alpha: np.ndarray
    added: float
    start: int
    stop: int
    peak_speed: float
    peak: int = 0
    window_n: int = 7
    dt_s: float = 1.0

    def gain(self, per_rad: float) -> np.ndarray:
        """Per sample, the derivative filter's gain on a detent of ``per_rad`` periods per radian."""
        return derivative_gain(per_rad * self.w, self.window_n, self.dt_s)


def find_coast(capture: Capture, added_inertia: float = 0.0, window_s: float | None = None) -> Coast:
    """The coasting part of a spin-down capture (module docstring), from its angle column only; the
    differentiation window is :func:`choose_window`'s unless ``window_s`` is given."""
    t, x = capture.t_s, capture.x_m
    window_s = choose_window(t, x) if window_s is None else window_s
    w, alpha = derivatives(t, x, window_s)
    n_win = window_samples(window_s, capture.dt_s)
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
    return Coast(capture.name, x[start:stop][valid], w[start:stop][valid], alpha[start:stop][valid], float(added_inertia),
                 start, stop, float(abs(w[peak])), peak, n_win, capture.dt_s)


@dataclass
class Launch:
    """The driven samples before a coast: angle, speed, acceleration as :class:`Coast`, and the drive's torque
    ``torque`` (N m) less the ``offset`` read while coasting, smoothed by :func:`acceleration_kernel`."""

    name: str
    theta: np.ndarray
    w: np.ndarray
    alpha: np.ndarray
    torque: np.ndarray
    offset: float
    window_n: int
    dt_s: float

    def gain(self, per_rad: float) -> np.ndarray:
        """As :meth:`Coast.gain`."""
        return derivative_gain(per_rad * self.w, self.window_n, self.dt_s)


def find_launch(capture: Capture, coast: Coast) -> Launch:
    """The launch before ``coast`` (module docstring): from the first sample faster than the coast's slowest
    to one filter window before the peak speed, where the drive still holds the knob."""
    n = coast.window_n
    w, alpha = derivatives(capture.t_s, capture.x_m, n * capture.dt_s)
    speed = w * (1.0 if w[coast.peak] > 0 else -1.0)
    keep = np.zeros(speed.size, dtype=bool)
    keep[n: max(coast.peak - n, n)] = True                    # clear of the filter's ends and of the release
    keep &= (speed > float(np.min(np.abs(coast.w)))) & capture.valid
    if np.count_nonzero(keep) < 4 * n:
        raise IdentificationError(f"{capture.name}: the launch before the coast is too short ({np.count_nonzero(keep)} "
                                  "samples) to give the inertia: give the inertia (--inertia)")
    offset = float(np.median(capture.f_N[coast.start:][capture.valid[coast.start:]]))
    torque = np.convolve(capture.f_N - offset, acceleration_kernel(n, capture.dt_s), mode="same")
    return Launch(capture.name, capture.x_m[keep], w[keep], alpha[keep], torque[keep], offset, n, capture.dt_s)


def _pooled_gain(parts: Sequence[Coast | Launch]) -> DetentGain:
    """The detent columns' gain over the pooled samples of ``parts``, in their order."""
    return lambda per_rad: np.concatenate([p.gain(per_rad) for p in parts])


def inertia_from_launches(captures: Sequence[Capture], coasts: list[Coast], law: str) -> tuple[float, float]:
    """``J`` and its standard error (kg m^2) from the launches' drive torque beside the coasts (module
    docstring): ``T - c = J theta'' + f(w)`` while driven, ``0 = J theta'' + f(w)`` while coasting."""
    launches = [find_launch(cap, c) for cap, c in zip(captures, coasts)]
    parts: list[Coast | Launch] = [*launches, *coasts]
    w, alpha, theta = (np.concatenate([getattr(p, k) for p in parts]) for k in ("w", "alpha", "theta"))
    y = np.concatenate([*(p.torque for p in launches), np.zeros(sum(c.w.size for c in coasts))])
    fit, _ = fit_law_rotary(law, w, y, theta, alpha[:, None], ("inertia_kgm2",), gain=_pooled_gain(parts))
    j, se = fit.extra["inertia_kgm2"], fit.extra_se["inertia_kgm2"]
    if not (j > 0.0 and j > 3.0 * se):
        raise IdentificationError(f"the launch's drive torque gives no inertia (J = {j:.3g} +- {se:.2g} kg m^2): "
                                  f"{NEEDS_INERTIA}")
    return j, se


def fit_spin_downs(captures: Sequence[Capture], law: str, *, inertia: float | None = None,
                   added_inertia: Sequence[float] | None = None,
                   window_s: float | None = None) -> tuple[LawFit, list[Coast]]:
    """Fit ``law`` to one or more spin-downs (module docstring). ``inertia`` (kg m^2) is ``J`` if known;
    ``added_inertia`` the inertia added to each capture's knob (default 0 each); with neither, ``J`` comes from
    the launches' drive torque (every capture must record it)."""
    added = list(added_inertia) if added_inertia is not None else [0.0] * len(captures)
    if len(added) != len(captures):
        raise IdentificationError(f"{len(added)} added inertias for {len(captures)} captures")
    if inertia is not None and not (math.isfinite(inertia) and inertia > 0.0):
        raise IdentificationError(f"inertia: must be > 0 kg m^2, got {inertia!r}")
    if any(not (math.isfinite(a) and a >= 0.0) for a in added):
        raise IdentificationError("added inertia: must be >= 0 kg m^2")
    from_launch = inertia is None and not any(a > 0.0 for a in added)
    if from_launch and any(c.metadata.get("force_absent") for c in captures):
        raise IdentificationError(NEEDS_INERTIA)
    coasts = [find_coast(c, a, window_s) for c, a in zip(captures, added)]
    w = np.concatenate([c.w for c in coasts])
    alpha = np.concatenate([c.alpha for c in coasts])
    theta = np.concatenate([c.theta for c in coasts])
    dj = np.concatenate([np.full(c.w.size, c.added) for c in coasts])
    gain = _pooled_gain(coasts)
    j_se = 0.0
    if from_launch:        # the launch's torque is far noisier than the coast's angle: it gives J, the coast the rest
        inertia, j_se = inertia_from_launches(captures, coasts, law)
    if inertia is not None:
        fit, _ = fit_law_rotary(law, w, -(inertia + dj) * alpha, theta, gain=gain)   # (J + dJ) theta'' + f(w) = 0
        fit.extra["inertia_kgm2"] = inertia
        fit.extra_se["inertia_kgm2"] = j_se
        if from_launch:
            fit.notes.insert(0, f"inertia from the launch's drive torque (less the offset read while coasting), "
                                f"{inertia:.4g} +- {j_se:.2g} kg m^2; the friction and detents from the coast with it "
                                f"(they scale with J: its {j_se / inertia:.2%} is not in their standard errors)")
    else:                                                                  # -dJ theta'' = J theta'' + f(w)
        fit, _ = fit_law_rotary(law, w, -dj * alpha, theta, alpha[:, None], ("inertia_kgm2",), gain=gain)
        if not fit.extra["inertia_kgm2"] > 0.0:
            raise IdentificationError(f"the spin-downs give a non-positive inertia ({fit.extra['inertia_kgm2']:.3g} "
                                      "kg m^2): check the added inertia and that the captures are spin-downs")
    fit.notes.insert(0, f"{len(coasts)} spin-down(s), {w.size} coasting samples from {fit.speed_range[1]:.3g} rad/s "
                        f"down to {fit.speed_range[0]:.3g} rad/s")
    return fit, coasts


def predicted_coast(fit: LawFit, coast: Coast) -> np.ndarray:
    """The fitted law's deceleration torque ``f(w)`` over a coast (N m; LuGre: its steady-state curve)."""
    return fit.to_model().steady_state_force(coast.w)


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

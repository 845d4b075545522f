"""First estimates of a piano-like key from a slow press and release (quasi-static), in closed form.

On a slow stroke the key's and hammer's inertia are negligible and the force the probe reads is
(the ``hybrid-key`` model, :mod:`hapticam.models.hybrid_key.model`)::

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
An independent action shows what the hybrid key lacks, and the stroke identifies it where it shows:
a spring rising before let-off (a piano's jack toe on its let-off button: the let-off bump, a line
``k_b (x - x_b)`` above the press line, taken out of every level), Coulomb friction (the release lies
below the press by ``2 F_c`` more than the hammer's weight can explain once the hammer rests on its rail),
and a release in two steps (the hammer on the backcheck, then on its rail): the hybrid key's hammer rail
(:mod:`hapticam.models.hybrid_key.geometry`), with the jack pickup ``x_j`` where the press first carries
the weight and ``r = d_c / (x_k - x_j)`` from where the release drops it (``x_k``); when the steps cannot
be placed, their mean is the closing check's escaped level (the same work per stroke). Levels are read through a running median
(the key ringing on the probe's tip, landing spikes); the flight ends at the first landing's spike.
What a slow stroke cannot give: the key mass, the contact stiffness and damping, the string, the
keybed's damping (see :mod:`hapticam.identify.hybrid_key.fit` for the excitations that do).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.ndimage import median_filter
from hapticam.errors import IdentificationError
from hapticam.identify.zero_phase import butter_lowpass, filtfilt_odd


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
    friction_N: float = 0.0             # Coulomb friction F_c (0: none seen)
    bump_k_Npm: float = 0.0             # spring rising before let-off (0: none)
    bump_x_m: float = math.inf          # where it starts
    hammer_rail: bool = False           # the release's two steps read as the hammer's rail
    jack_pickup_m: float = 0.0          # key travel before the jack lifts the hammer (with the rail)
    touch_m: float | None = None        # where the probe first touched the key (with the rail; None: unseen)


def smooth(x: np.ndarray, dt: float, cutoff_hz: float) -> np.ndarray:
    """Zero-phase second-order Butterworth low-pass of ``x`` sampled every ``dt`` (s)."""
    wn = min(2.0 * cutoff_hz * dt, 0.99)
    b, a = butter_lowpass(2, wn)
    return filtfilt_odd(b, a, x) if x.size > 12 else x.copy()


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) index pairs of the runs of True in ``mask``."""
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)))


#: Running median (s) of the force for the levels: removes the key's ringing on the probe's tip (about
#: 200 Hz) and the landing spikes (a sample or two), keeps the steps of the let-off and landing where they are.
LEVEL_MEDIAN_S = 0.005
#: Samples this close (s) to the let-off are left out of the bump's line (the low-pass spreads the drop).
LETOFF_MARGIN_S = 0.015


def _press_line(x_m: np.ndarray, f_N: np.ndarray, xs: np.ndarray, v: np.ndarray, press: np.ndarray,
                lo: float, hi: float) -> tuple[float, float, np.ndarray, float]:
    """The line below let-off, k_r x + (F_p + r m_h g + F_c), fitted on 10-50 % of the press (refitted on the
    samples within 3 MADs); returns k_r (N/m), the intercept (N), the samples used and the force noise (N)."""
    sel = press[(xs[press] > lo + 0.1 * (hi - lo)) & (xs[press] < lo + 0.5 * (hi - lo)) & (v[press] > 0)]
    if sel.size < 20:
        raise IdentificationError("slow stroke: too few pressing samples below let-off")
    k_r, c0 = np.polyfit(x_m[sel], f_N[sel], 1)
    for _ in range(2):
        r = f_N[sel] - (k_r * x_m[sel] + c0)
        keep = np.abs(r - np.median(r)) < 3.0 * 1.4826 * np.median(np.abs(r - np.median(r))) + 1e-9
        k_r, c0 = np.polyfit(x_m[sel][keep], f_N[sel][keep], 1)
    e = f_N[sel] - (k_r * x_m[sel] + c0)
    noise = 1.4826 * np.median(np.abs(np.diff(e))) / np.sqrt(2.0)
    return float(k_r), float(c0), sel, float(noise)


def _flight(e: np.ndarray, press: np.ndarray, sel: np.ndarray, thr: float) -> tuple[int, int, float]:
    """The hammer's first flight after let-off on the press: the first run of at least ``MIN_RUN`` samples,
    past the line's samples, where the force (running median) sits below half its typical drop below the
    line; returns its start, stop and the drop (N)."""
    after = press[press > sel.max()]
    low = e[after] < -thr
    if not np.any(low):
        raise IdentificationError("slow stroke: no let-off found (the force never drops below the line)")
    drop_level = float(np.median(e[after][low]))
    runs = [(after[a], after[b - 1] + 1) for a, b in _runs(e[after] < 0.5 * drop_level) if b - a >= MIN_RUN]
    if not runs:
        raise IdentificationError("slow stroke: no hammer flight found after let-off")
    return runs[0][0], runs[0][1], drop_level


#: Fewest samples a run below the line needs to count as the hammer's flight.
MIN_RUN = 5


def _let_off_bump(e: np.ndarray, x_m: np.ndarray, press: np.ndarray, sel: np.ndarray, a: int, margin: int,
                  thr: float) -> tuple[float, float]:
    """A spring that rises before let-off (a piano's jack toe on its let-off button), which the hybrid key
    lacks: the line e = k (x - x_b) fitted where the press rises above the line before the let-off;
    returns (k (N/m), x_b (m)), or (0, inf) when the press stays on its line up to the let-off."""
    before = press[(press > sel.max()) & (press < a - margin)]
    if before.size < 20 or not np.max(e[before]) > thr:
        return 0.0, math.inf
    rising = before[e[before] > 0.25 * np.max(e[before])]
    if rising.size < 20:
        return 0.0, math.inf
    k, c = np.polyfit(x_m[rising], e[rising], 1)
    if not k > 0.0:
        return 0.0, math.inf
    return float(k), float(-c / k)


def static_estimates(t_s: np.ndarray, x_m: np.ndarray, f_N: np.ndarray, gravity_mps2: float = 9.81
                     ) -> StaticEstimates:
    """Estimate the quasi-static parameters from a slow press past let-off onto the keybed and back
    (module docstring), with what the hybrid key lacks when the stroke shows it: a spring rising before
    let-off (the let-off bump) and Coulomb friction (the release below the press by more than the hammer's
    weight: :func:`_release`)."""
    dt = float(np.median(np.diff(t_s)))
    xs = smooth(x_m, dt, 20.0)
    v = np.gradient(xs, dt)
    top = int(np.argmax(xs))
    if top < 10 or top > x_m.size - 10:
        raise IdentificationError("slow stroke: the capture must press and then release the key")
    press = np.arange(top)
    lo, hi = xs[0], xs[top]
    k_r, c0, sel, noise = _press_line(x_m, f_N, xs, v, press, lo, hi)
    e = median_filter(f_N, size=max(int(round(LEVEL_MEDIAN_S / dt)) | 1, 1), mode="nearest") - (k_r * x_m + c0)
    thr = max(10 * noise, 0.02 * abs(c0))
    a, b, _ = _flight(e, press, sel, thr)
    bump_k, bump_x = _let_off_bump(e, x_m, press, sel, a, int(round(LETOFF_MARGIN_S / dt)), thr)
    if bump_k > 0.0:
        e = e - bump_k * np.clip(x_m - bump_x, 0.0, None)
    # the flight ends at the first landing's spike: the force a whole drop above the jack level (the key's
    # ringing on the probe's tip after the let-off step stays below that level)
    raw = f_N - (k_r * x_m + c0) - bump_k * np.clip(x_m - bump_x, 0.0, None)
    landing = np.flatnonzero(raw[a:b] > -float(np.median(e[a:b])))
    b = a + int(landing[0]) if landing.size and landing[0] >= 5 else b
    x_l = float(x_m[a])
    inner = slice(a + (b - a) // 5, b - (b - a) // 5 + 1)
    weight = float(-np.median(e[inner]))                  # r m_h g: the drop during the flight
    t_f = (b - a) * dt
    check_drop = 0.5 * gravity_mps2 * t_f * t_f           # d_c = g t_f^2 / 2 (fall onto the rising backcheck)
    x_kb, k_kb = _keybed_line(e, xs, x_m, press, top, x_l, weight, noise, hi)
    if not k_kb > 0.0:
        raise IdentificationError(f"slow stroke: it turns at {1e3 * hi:.3f} mm without pressing into the keybed "
                                  "(no steep rise at the end of the press): press it onto the keybed")
    friction, x_r, level, notes = _release(e, xs, x_m, top, x_l, lo, hi, weight, noise)
    two_steps = [i for i, n in enumerate(notes) if n.startswith("release: the weight")]
    rail = _rail(e, xs, top, x_l, lo, weight, friction, dt) if two_steps else None
    touch = None
    if rail is not None:
        x_j, x_k = rail                                   # the weight leaves at x_j + d_c / r (geometry module)
        lever = check_drop / (x_k - x_j)
        x_r = x_j
        touch = _touch(e, x_m, press, c0, weight, noise, x_j)
        if touch is not None:
            notes.append(f"touch: the probe met the key at {touch * 1e3:.3f} mm; nothing is felt before it (touch_m)")
        notes[two_steps[0]] = (f"release: the weight leaves the key at {x_k * 1e3:.3f} mm (the hammer from the backcheck onto "
                     f"its rail) and came on at {x_j * 1e3:.3f} mm on the press (the jack's pickup): a hammer rail, "
                     "r = d_c / (x_k - x_j)")
    else:
        frac = 1.0 - level / weight                       # d_c / (r (x_l - x_r))
        if not 0.0 < frac <= 1.0:
            raise IdentificationError("slow stroke: the escaped release level is not below the jack level")
        lever = check_drop / (frac * (x_l - x_r))
    hammer_mass = weight / (lever * gravity_mps2)
    notes.insert(0, f"slow stroke: k_r, F_p + r m_h g from the line below let-off; let-off at {x_l * 1e3:.3f} mm, "
                    f"flight {t_f * 1e3:.1f} ms -> d_c; " + ("the rail's step -> r" if rail else
                    f"repetition at {x_r * 1e3:.3f} mm and the escaped level -> r"))
    if bump_k > 0.0:
        notes.append(f"let-off bump: a spring of {bump_k:.4g} N/m from {bump_x * 1e3:.3f} mm (a jack toe on its "
                     "let-off button), which the hybrid key lacks: a one-sided contact beside it")
    return StaticEstimates(return_spring_Npm=k_r, preload_N=float(c0 - weight - friction),
                           weight_through_lever_N=weight, let_off_m=x_l, check_drop_m=float(check_drop),
                           repetition_m=x_r, keybed_m=x_kb, keybed_k_Npm=float(k_kb), lever_ratio=float(lever),
                           hammer_mass_kg=float(hammer_mass), notes=notes, friction_N=friction,
                           bump_k_Npm=bump_k, bump_x_m=bump_x, hammer_rail=rail is not None,
                           jack_pickup_m=0.0 if rail is None else rail[0], touch_m=touch)


def _touch(e: np.ndarray, x_m: np.ndarray, press: np.ndarray, c0: float, weight: float, noise: float,
           x_j: float) -> float | None:
    """Where the press first touched the key (m): the first sample whose force (``e``: running median minus
    the press line ``k_r x + c0``) rises halfway from nothing (``-c0``) to the key's level before the jack's
    pickup (``-weight``); at most ``x_j``. None when that level is within the noise of nothing, or the
    capture starts on the key."""
    level = c0 - weight                                   # F_p + F_c: the key's own force before the pickup
    if not level > 10.0 * noise:
        return None
    above = np.flatnonzero(e[press] > -c0 + 0.5 * level)
    if above.size == 0 or above[0] < 10:
        return None
    return float(min(x_m[press[above[0]]], x_j))


#: Shortest run (s) of a level that counts as a step of the release or the press (the running median's
#: window is 5 ms; a landing's bounce is shorter than this).
STEP_RUN_S = 0.05
#: Running median (s) for the steps' positions: the key and hammer ring on the probe's tip at about 100 Hz
#: once the jack carries the hammer (twice the level window's period); a median keeps a step where it is.
STEP_MEDIAN_S = 0.02


def _rail(e: np.ndarray, xs: np.ndarray, top: int, x_l: float, lo: float, weight: float, friction: float,
          dt: float) -> tuple[float, float] | None:
    """The hammer rail's two positions from a slow stroke whose release shows two levels (``e``: the running
    median of the force minus the press line): the key position where the release drops to the rail level,
    ``x_k = x_j + d_c / r``, and where the press first rose to the jack level, ``x_j`` (below it the hammer
    lay on its rail; the probe's free travel before the key is part of it). None when either step is not
    a run of at least ``STEP_RUN_S``, or ``x_j >= x_k``."""
    n_run = max(1, int(round(STEP_RUN_S / dt)))
    e = median_filter(e, size=max(int(round(STEP_MEDIAN_S / dt)) | 1, 1), mode="nearest")
    rel = np.arange(top, e.size)
    on_rail = ((e[rel] + 2.0 * friction) < -0.5 * weight) & (xs[rel] < x_l - 0.1 * (x_l - lo))
    runs = [(a, b) for a, b in _runs(on_rail) if b - a >= n_run]
    press = np.arange(top)
    lifted = (e[press] > -0.5 * weight) & (xs[press] < x_l)
    up = [(a, b) for a, b in _runs(lifted) if b - a >= n_run]
    if not runs or not up:
        return None
    x_k = float(xs[rel[runs[0][0]]])
    x_j = float(xs[press[up[0][0]]])
    return (x_j, x_k) if lo <= x_j < x_k < x_l else None


def _keybed_line(e: np.ndarray, xs: np.ndarray, x_m: np.ndarray, press: np.ndarray, top: int, x_l: float,
                 weight: float, noise: float, hi: float) -> tuple[float, float]:
    """Keybed: the steep end of the press, e = k_kb (x - x_kb); returns (x_kb (m), k_kb (N/m))."""
    above = (e[press] > max(0.5 * weight, 20 * noise)) & (xs[press] > x_l)
    end_runs = [(a2, b2) for a2, b2 in _runs(above) if b2 >= top - 2]   # the run that lasts to the turn
    steep = press[end_runs[0][0]:end_runs[0][1]] if end_runs else press[:0]
    steep = steep[e[steep] > 0.1 * (e[steep].max() if steep.size else 0.0)]  # past the felt's first touch
    if steep.size < 10:
        return float(hi), 0.0
    k_kb, c_kb = np.polyfit(x_m[steep], e[steep], 1)
    return float(-c_kb / k_kb), float(k_kb)


def _release(e: np.ndarray, xs: np.ndarray, x_m: np.ndarray, top: int, x_l: float, lo: float, hi: float,
             weight: float, noise: float) -> tuple[float, float, float, list[str]]:
    """Friction, repetition point and escaped level from the release (e: the low-passed force minus the
    press line and bump).

    The hybrid key's release lies below the press by at most the hammer's weight (the escaped level);
    a release lower than that (a piano's hammer resting on its rail carries none of its weight, and the
    key's Coulomb friction lowers the release by 2 F_c) gives F_c = (lowest level - r m_h g) / 2. The
    repetition point is where the weight comes back; the escaped level is the release's mean below the
    jack level between the repetition and let-off points: when the release shows two levels (hammer on
    the backcheck, then on its rail) the hybrid key's single level is their mean (the same work per stroke).
    Returns (F_c (N), x_r (m), level (N), notes)."""
    rel = np.arange(top, x_m.size)
    mid = rel[(xs[rel] < x_l - 0.1 * (x_l - lo)) & (xs[rel] > lo + 0.05 * (hi - lo))]
    if mid.size < 10:
        raise IdentificationError("slow stroke: the release shows no escaped level (did the key return?)")
    notes: list[str] = []
    lowest = -float(np.percentile(e[mid], 10))
    friction = 0.0
    if lowest > weight + max(10.0 * noise, 0.1 * weight):
        friction = 0.5 * (lowest - weight)
        e = e + 2.0 * friction * (np.arange(e.size) >= top)
        notes.append(f"friction: the release lies {lowest:.4g} N below the press, {lowest - weight:.4g} N more than "
                     f"the hammer's weight through the lever: Coulomb friction F_c = {friction:.4g} N (a friction "
                     "component beside the hybrid key)")
    low = mid[e[mid] < -0.25 * weight]
    if low.size < 10:
        raise IdentificationError("slow stroke: the release shows no escaped level (did the key return?)")
    x_r = float(np.min(x_m[low]))
    span = rel[(xs[rel] >= x_r) & (xs[rel] <= x_l)]
    level = float(np.mean(e[span]) + weight)              # (r - d_c / (x_l - x_r)) m_h g
    inside = span[xs[span] < x_l - 0.1 * (x_l - lo)]
    upper = float(np.mean(e[inside] > -0.25 * weight)) if inside.size else 0.0
    if 0.1 < upper < 0.9:
        notes.append(f"release: the weight leaves the key in two steps ({100 * upper:.0f} % of it at the jack level, "
                     "then none: the hammer on the backcheck, then on its rail); the escaped level is their mean "
                     "(the same work per stroke)")
    return friction, x_r, level, notes

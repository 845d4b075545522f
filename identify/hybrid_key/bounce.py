"""Hunt-Crossley damping of the hybrid key's contact from the hammer's bounces in the backcheck after let-off.

Past let-off the jack escapes and the hammer falls the check drop onto the backcheck; it lands, rebounds
and lands again, each flight shorter than the one before: a train of force spikes whose onsets the
captures give to a fraction of a millisecond (:func:`spike_onsets`, :func:`bounce_sequences`). Relative
to the backcheck the hammer flies under the relative gravity ``q = g + r a_k`` (``a_k`` the key's
acceleration through the lever ``r``; a still key, or one moving at constant speed as on a slow press,
leaves ``q = g``): a flight launched at ``u`` lasts ``2 u / q`` and lands at ``u``. So the interval ``T_i``
between landings ``i`` and ``i + 1`` gives the landing speed ``v_(i+1) = q T_i / 2`` and successive
intervals the restitution ``e = T_(i+1) / T_i`` at that speed (:class:`BounceSequence`).

Hunt & Crossley's contact ``m y'' = -k rho^n (1 + alpha rho')`` (the file's ``b = alpha k``,
:mod:`hapticam.models.hybrid_key.model`), scaled by the impact speed ``v``, leaves ``alpha v`` as its only
parameter: the restitution is a function ``e(alpha v)`` for a fixed ``n`` whatever ``k`` and the mass,
with ``e ~ 1 - (2/3) alpha v`` for small ``alpha v`` (Hunt & Crossley, "Coefficient of restitution
interpreted as damping in vibroimpact", 1975; Marhefka & Orin, "A compliant contact model with nonlinear
damping for simulation of robotic systems", 1999, ``alpha = 3 (1 - e) / (2 v)``). That linear form is
off by 0.08 at ``alpha v = 0.5`` (0.75 against the line's 0.67), and gravity during the contact
lowers ``e`` at the slowest landings; so ``e`` and the contact's duration are read off the model's own
kernel, dropping the hammer onto a still backcheck (:func:`kernel_drop`).

Two fits read alpha from the onsets (least squares on the onset times, standard errors from the
Jacobian, ``s^2 = RSS / (N - p)``):

1. :func:`fit_alpha`, the closed form: each sequence's onsets predicted from its first one by the
   recursion ``t_(i+1) = t_i + t_c(v_i) + 2 e(v_i) v_i / q_i``, ``v_(i+1) = e(v_i) v_i`` with ``e`` and the
   contact time ``t_c`` of the kernel's drop at the trial alpha, over alpha and each sequence's first
   landing speed;
2. :func:`fit_alpha_along`, the model itself simulated along the captures (the key driven by the captured
   motion), its landings against the captured onsets, for the sequences whose first landing the model
   places (a slow key past let-off: the hammer falls the check drop, which the slow stroke identified, and
   the model's first landing falls on the captured one, :attr:`BounceSequence.first_speed_mps`).

Alpha is the second's (:func:`backcheck_alpha`), which is how the model's landings will fall; the first is
reported beside it. A sequence that begins where the model's hammer does not land (a hammer thrown by a
fast stroke, whose flight depends on the rest of the model) informs the first only, and without a
sequence the second can use, alpha is not read from the backcheck.

The probe's tip lets the key recoil under each landing, which lengthens the captured contact (about
6 ms on the piano action behind its pad, against about 1 ms for the model's stiffer, fixed ``k``) and
makes the restitution depend less on the speed than a Hunt-Crossley contact's; the intervals include it,
so the alpha fitted is the one with which the model's own landings fall where the captured ones do, not
the felt's alpha.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.ndimage import maximum_filter1d, median_filter
from scipy.optimize import least_squares

from hapticam.identify.hybrid_key.params import FIXED_DEFAULTS, Prepared, to_model
from hapticam.identify.hybrid_key.static import smooth
from hapticam.models.hybrid_key.model import EV_LANDING, EV_LETOFF, EV_LIFTOFF, HybridKey, HybridKeyTrace, hybrid_key_run

#: Running median (s) under which a landing's spike stands out (a landing behind a probe's tip lasts
#: about 6 ms, under half of it).
SPIKE_MEDIAN_S = 0.02
#: A spike's peak above the running median, in force noise standard deviations.
SPIKE_NOISE = 10.0
#: A landing's spike rises from ``ONSET_FRACTION`` of its peak (at least ``ONSET_NOISE`` force noise
#: deviations) to the peak within ``RISE_S`` (s); its onset is the first sample above that level (where a
#: Hunt-Crossley contact's force, rho^1.5, leaves the noise). Peaks closer than ``PEAK_SEPARATION_S`` (s) are one.
RISE_S = 3e-3
ONSET_FRACTION = 0.02
ONSET_NOISE = 3.0
PEAK_SEPARATION_S = 2e-3
#: A bounce's interval lies between ``MIN_RATIO`` of the one before and that one plus ``SLACK_S`` (s, the
#: onsets' jitter): flights shorten.
MIN_RATIO = 0.3
SLACK_S = 5e-4
#: Intervals shorter than this (s) end a sequence: a few contact durations, their restitution unresolved.
MIN_INTERVAL_S = 0.012
#: The kernel's drop bounces down to this fraction of g MIN_INTERVAL_S (m/s; an eighth: a quarter of the
#: slowest landing a sequence keeps, q MIN_INTERVAL_S / 2).
SLOWEST_FRACTION = 0.125
#: Most onsets read per sequence (the later ones depend on every landing before them).
MAX_ONSETS = 8
#: Fewest onsets a sequence needs (two intervals: its first landing speed and the restitution).
MIN_ONSETS = 3
#: Low-pass (Hz) of the key's velocity for the relative gravity (a flight lasts 10-100 ms).
KEY_VELOCITY_CUTOFF_HZ = 20.0
#: An interval counts when the key's velocity through the lever strays from uniform acceleration by at
#: most this fraction of the landing speed, and the relative gravity stays within this fraction of g.
UNIFORM_FRACTION = 0.15
GRAVITY_FRACTION = 0.5
#: Start values (s/m) of alpha for the fit along the captures (a factor 1.5 apart).
ALPHA_GRID = tuple(float(a) for a in np.geomspace(0.1, 40.0, 16))
#: Landings slower than this (m/s) are not compared (the captured sequences end above it).
MIN_SPEED_MPS = 0.03
#: The model's first landing after a let-off within this (s) of the captured one gives its speed, when the
#: jack launched the hammer at most ``THROW_FRACTION`` of that speed (a slow key: the hammer falls the check
#: drop, which the slow stroke identifies; a thrown hammer's flight depends on the rest of the model).
PIN_S = 2e-3
THROW_FRACTION = 0.1
#: Residual (s) of an onset the trial model does not reach (its hammer came to rest before it).
MISSING_S = 0.05
#: Sample interval (s) of the kernel's drop, the length of its runs (s), the longest it bounces (s), the
#: key's travel to let-off (s) and the jack's speed there (a fraction of the landing speed).
DROP_DT_S = 2e-4
DROP_CHUNK_S = 0.1
DROP_MAX_S = 5.0
DROP_APPROACH_S = 0.2
DROP_LAUNCH = 0.02
#: Ratio of successive landing speeds in a restitution table (:func:`drop_table`).
DROP_RATIO = 1.2
#: A matched landing lies within this (s) of the captured onset (verify's onset tolerance).
MATCH_S = 0.01


@dataclass
class BounceSequence:
    """Onsets (s, on the capture's clock) of successive landings in the backcheck after one let-off, and
    the relative gravity ``q = g + r a_k`` (m/s^2) over each interval between them."""

    capture: str
    onsets_s: np.ndarray
    gravity_mps2: np.ndarray
    #: the first landing's speed (m/s) when it is the model's first landing after the let-off (the model
    #: lands within ``PIN_S`` of it: the drop from let-off, which the slow stroke identifies, sets it)
    first_speed_mps: float | None = None

    @property
    def intervals_s(self) -> np.ndarray:
        return np.diff(self.onsets_s)

    def speeds_and_restitutions(self) -> tuple[np.ndarray, np.ndarray]:
        """Landing speeds ``v_(i+1) = q_i T_i / 2`` (m/s) and the restitutions ``e = v_(i+2) / v_(i+1)`` at
        them (the intervals taken as flights: each includes a landing's contact)."""
        v = 0.5 * self.gravity_mps2 * self.intervals_s
        return v[:-1], v[1:] / v[:-1]


def spike_onsets(prep: Prepared) -> tuple[np.ndarray, np.ndarray]:
    """Onsets (s) and peaks (N, above the running median) of the sharp spikes in a capture's force: a peak
    ``SPIKE_NOISE`` noise deviations above the median over ``SPIKE_MEDIAN_S``, the highest within
    ``PEAK_SEPARATION_S``, risen from ``ONSET_FRACTION`` of itself (or ``ONSET_NOISE`` noise deviations) within
    ``RISE_S``."""
    dt = prep.dt_s
    residual = prep.f_N - median_filter(prep.f_N, size=max(int(round(SPIKE_MEDIAN_S / dt)), 3) | 1, mode="nearest")
    width = max(int(round(PEAK_SEPARATION_S / dt)), 1)
    top = maximum_filter1d(residual, size=2 * width + 1, mode="nearest")
    peaks = np.flatnonzero((residual == top) & (residual > SPIKE_NOISE * prep.noise_N))
    rise = max(int(round(RISE_S / dt)), 1)
    onsets: list[float] = []
    heights: list[float] = []
    for i in peaks:
        start = max(i - rise, 0)
        low = np.flatnonzero(residual[start:i + 1] < max(ONSET_FRACTION * residual[i], ONSET_NOISE * prep.noise_N))
        if not low.size:                                  # risen more slowly than an impact
            continue
        onset = (start + low[-1] + 1) * dt
        if onsets and onset - onsets[-1] < PEAK_SEPARATION_S:
            continue
        onsets.append(onset)
        heights.append(float(residual[i]))
    return np.asarray(onsets), np.asarray(heights)


def _relative_gravity(v: np.ndarray, dt_s: float, lever: float, gravity: float, a_s: float, b_s: float
                      ) -> float | None:
    """Relative gravity ``g + r a_k`` (m/s^2) over [a_s, b_s] from the key's velocity ``v`` (m/s, low-passed at
    ``KEY_VELOCITY_CUTOFF_HZ``, sampled every ``dt_s``), or None when the key's acceleration is not uniform
    there (module constants)."""
    i, j = int(round(a_s / dt_s)), int(round(b_s / dt_s))
    if j >= v.size or j - i < 2:
        return None
    span = b_s - a_s
    q = gravity + lever * (v[j] - v[i]) / span
    straight = v[i] + (v[j] - v[i]) * np.arange(j - i + 1) / (j - i)
    stray = lever * float(np.max(np.abs(v[i:j + 1] - straight)))
    if abs(q - gravity) > GRAVITY_FRACTION * gravity or stray > UNIFORM_FRACTION * 0.5 * q * span:
        return None
    return q


def bounce_sequences(prep: Prepared, values: dict[str, float], tip: tuple[float, float] | None = None
                     ) -> list[BounceSequence]:
    """The landings in the backcheck after each of the model's let-offs along the capture (the model at
    ``values`` along the capture, :func:`along_capture`). The first is the highest spike within half the
    model's fall (from let-off to its first landing) of the model's first landing; each next one the highest
    spike between ``MIN_RATIO`` of the last interval and that interval (plus ``SLACK_S``) later (flights
    shorten). A sequence stops at an interval below ``MIN_INTERVAL_S``, where the key's acceleration is not
    uniform, or at ``MAX_ONSETS``."""
    trace = along_capture(prep, values, tip)
    onsets, heights = spike_onsets(prep)
    v_key = smooth(prep.v_mps, prep.dt_s, KEY_VELOCITY_CUTOFF_HZ)
    landing = trace.event_code == EV_LANDING
    lands, speeds = trace.event_time_s[landing], trace.event_speed_mps[landing]
    letoff = trace.event_code == EV_LETOFF
    lets, key_speeds = trace.event_time_s[letoff], trace.event_speed_mps[letoff]
    g, r = values["gravity_mps2"], values["lever_ratio"]
    out = []
    for k, t_let in enumerate(lets):
        end = lets[k + 1] if k + 1 < lets.size else math.inf
        later = np.flatnonzero(lands > t_let)
        if not later.size:
            continue
        t_model, v_model = lands[later[0]], speeds[later[0]]
        pick = _highest(onsets, heights, t_model - 0.5 * (t_model - t_let), t_model + 0.5 * (t_model - t_let))
        if pick is None:
            continue
        seq, qs, longest = [pick], [], 2.4 * v_model / g + MIN_INTERVAL_S
        dropped = r * abs(key_speeds[k]) <= THROW_FRACTION * v_model     # a fall of d_c, not a throw
        pinned = v_model if dropped and abs(pick - t_model) <= PIN_S else None
        while len(seq) < MAX_ONSETS:
            lo = seq[-1] + (MIN_RATIO * longest if len(seq) > 1 else MIN_INTERVAL_S)
            nxt = _highest(onsets, heights, lo, min(seq[-1] + longest + SLACK_S, end))
            if nxt is None or nxt - seq[-1] < MIN_INTERVAL_S:
                break
            q = _relative_gravity(v_key, prep.dt_s, r, g, seq[-1], nxt)
            if q is None:
                if len(seq) >= MIN_ONSETS:
                    break
                seq, qs, pinned = [nxt], [], None         # start again past the non-uniform interval
            else:
                seq.append(nxt)
                qs.append(q)
            longest = nxt - (seq[-2] if len(seq) > 1 else t_let)
        if len(seq) >= MIN_ONSETS:
            out.append(BounceSequence(prep.name, np.asarray(seq), np.asarray(qs), pinned))
    return out


def along_capture(prep: Prepared, values: dict[str, float], tip: tuple[float, float] | None = None,
                  span_s: tuple[float, float] | None = None) -> HybridKeyTrace:
    """The model at ``values`` along the capture's motion: the key pulled through the probe's ``tip``
    (stiffness N/m, damping N s/m) when the tip is a physical pad, damped enough that the model adds no
    damper of its own to the key (:mod:`hapticam.models.hybrid_key.coupling`; such a pad absorbs part of each
    landing and lets the key recoil), else the key driven by the motion. The motion is the fit's (low-passed
    at 3 kHz only: the probe is knocked at each landing, and a zero-phase filter spreads the knock before it).
    ``span_s``: only the samples within it (s), the hammer starting at rest on the key at its start, times
    still on the capture's clock."""
    model = to_model(values, tip) if tip is not None else None
    if model is None or model.key_damping_Nspm > 0.0:
        model = to_model(values)
    i0, i1 = (0, prep.x_m.size) if span_s is None else \
        (max(int(span_s[0] / prep.dt_s), 0), min(int(math.ceil(span_s[1] / prep.dt_s)) + 1, prep.x_m.size))
    trace = model.simulate(prep.x_m[i0:i1], prep.dt_s, v_mps=prep.v_mps[i0:i1], a_mps2=prep.a_mps2[i0:i1])
    trace.event_time_s = trace.event_time_s + i0 * prep.dt_s
    return trace


def _highest(onsets: np.ndarray, heights: np.ndarray, a_s: float, b_s: float) -> float | None:
    sel = np.flatnonzero((onsets > a_s) & (onsets <= b_s))
    return None if not sel.size else float(onsets[sel[np.argmax(heights[sel])]])


def kernel_drop(values: dict[str, float], alpha_spm: float, top_speed_mps: float, slowest_mps: float = 0.0,
                landings: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Drop the model's hammer onto a still backcheck with the model's kernel (its hammer mass, contact
    ``k``, ``n`` and gravity; ``b = alpha k``) at about ``top_speed_mps`` and let it bounce until it lands
    slower than ``slowest_mps``, ``landings`` times, or for ``DROP_MAX_S``. Returns, per landing that lifted
    off again, the landing speed (m/s), the restitution (lift-off over landing speed) and the contact's
    duration (s), fastest first."""
    g, k = values["gravity_mps2"], values["contact_k_Npm"]
    drop = top_speed_mps ** 2 / (2.0 * g)
    lever = 10.0
    let_off = 1.2 * drop / lever                       # within r (x_l - x_r), the check drop
    key_speed = DROP_LAUNCH * top_speed_mps / lever     # the jack launches the hammer at a fiftieth of the speed
    t_let = DROP_APPROACH_S
    key = HybridKey(key_mass_kg=0.0, return_spring_Npm=0.0, preload_N=0.0, hammer_mass_kg=values["hammer_mass_kg"],
                    lever_ratio=lever, contact={"law": "hunt-crossley", "k_Npm": k, "b_Nspm": alpha_spm * k,
                                                "n": values["contact_n"]},
                    gravity_mps2=g, let_off_m=let_off, check_drop_m=drop, repetition_m=0.0)
    p, state = key.params_block(), key.initial_state()
    n = int(round(DROP_CHUNK_S / DROP_DT_S))
    out = [np.empty(n) for _ in range(3)] + [np.empty(n, dtype=np.int64)]
    ev = [np.empty(4 * n, dtype=np.int64), np.empty(4 * n, dtype=np.int64), np.empty(4 * n), np.empty(4 * n)]
    codes, times, speeds = [], [], []
    for chunk in range(int(math.ceil((t_let + DROP_MAX_S) / DROP_CHUNK_S))):
        t = (chunk * n + np.arange(n)) * DROP_DT_S
        x = np.ascontiguousarray(let_off + (np.minimum(t, 1.001 * t_let) - t_let) * key_speed)
        v = np.ascontiguousarray(np.where(t < 1.001 * t_let, key_speed, 0.0))
        count = min(hybrid_key_run(p, state, x, v, np.zeros(n), DROP_DT_S, *out, *ev), ev[0].size)
        codes.append(ev[1][:count].copy())
        times.append(ev[2][:count] + chunk * n * DROP_DT_S)
        speeds.append(ev[3][:count].copy())
        landed = np.concatenate(speeds)[(np.concatenate(codes) == EV_LANDING) & (np.concatenate(times) > t_let)]
        lifted = (codes[-1] == EV_LIFTOFF) & (times[-1] > t_let)
        if landed.size and (landed[-1] < slowest_mps or (landings is not None and landed.size > landings)
                            or (landings is not None and landed.size == landings and lifted.any())):
            break
    code, time, speed = np.concatenate(codes), np.concatenate(times), np.concatenate(speeds)
    rows = [(speed[i], speed[i + 1] / speed[i], time[i + 1] - time[i]) for i in np.flatnonzero(code == EV_LANDING)
            if i + 1 < code.size and code[i + 1] == EV_LIFTOFF and time[i] > t_let and speed[i] > 0.0]
    v, e, tc = (np.asarray(c)[:landings] for c in zip(*rows)) if rows else (np.zeros(0),) * 3
    return v, e, tc


DropTable = tuple[np.ndarray, np.ndarray, np.ndarray]


def drop_table(values: dict[str, float], alpha_spm: float, top_speed_mps: float, slowest_mps: float) -> DropTable:
    """The kernel's restitution and contact time at landing speeds ``DROP_RATIO`` apart from
    ``top_speed_mps`` down to ``slowest_mps``, one :func:`kernel_drop` landing each, fastest first (one
    drop's landings fall by its restitution from one to the next, 0.2 at alpha v = 5: too far apart to
    interpolate)."""
    count = max(int(math.ceil(math.log(top_speed_mps / max(slowest_mps, 1e-3)) / math.log(DROP_RATIO))), 1) + 1
    parts = [kernel_drop(values, alpha_spm, top_speed_mps / DROP_RATIO ** i, landings=1) for i in range(count)]
    v, e, tc = (np.concatenate(c) for c in zip(*parts))
    order = np.argsort(-v)
    return v[order], e[order], tc[order]


def predicted_onsets(seq: BounceSequence, table: DropTable, first_speed_mps: float) -> np.ndarray:
    """Onsets (s) of ``seq``'s landings as the kernel's drop ``table`` (:func:`kernel_drop`) predicts them
    from its first onset and the first landing's speed (m/s): the module's recursion; NaN past the
    landing after which the model's hammer stays on the backcheck."""
    v_d, e_d, tc_d = (c[::-1] for c in table)              # slowest first, for interpolation
    out = np.full(seq.onsets_s.size, np.nan)
    out[0] = seq.onsets_s[0]
    v = first_speed_mps
    for i, q in enumerate(seq.gravity_mps2):
        if not (v_d.size and v >= v_d[0]):
            break
        u = float(np.interp(v, v_d, e_d)) * v
        out[i + 1] = out[i] + float(np.interp(v, v_d, tc_d)) + 2.0 * u / q
        v = u
    return out


def fit_alpha(seqs: Sequence[BounceSequence], values: dict[str, float]) -> tuple[float, float, np.ndarray]:
    """Hunt-Crossley alpha (s/m) and its standard error from bounce sequences: least squares on their onset
    times (module docstring) over ln alpha and the first landing speed of each sequence whose speed is not
    pinned (``first_speed_mps``). Returns alpha, its standard error and every sequence's first landing speed
    (m/s)."""
    rebound = np.array([0.5 * s.gravity_mps2[0] * s.intervals_s[0] for s in seqs])
    pinned = np.array([math.nan if s.first_speed_mps is None else s.first_speed_mps for s in seqs])
    free = np.flatnonzero(~np.isfinite(pinned))
    top = float(min(3.0, 1.2 * max(rebound.max() / MIN_RATIO, np.nanmax(pinned, initial=0.0))))
    slowest = SLOWEST_FRACTION * values["gravity_mps2"] * MIN_INTERVAL_S
    drops: dict[float, DropTable] = {}

    def speeds(z: np.ndarray) -> np.ndarray:
        v0 = pinned.copy()
        v0[free] = z[1:]
        return v0

    def residual(z: np.ndarray) -> np.ndarray:
        alpha = math.exp(z[0])
        if alpha not in drops:
            drops[alpha] = drop_table(values, alpha, top, slowest)
        r = np.concatenate([predicted_onsets(s, drops[alpha], v0)[1:] - s.onsets_s[1:]
                            for s, v0 in zip(seqs, speeds(z))])
        return np.where(np.isfinite(r), r, MISSING_S)

    guess = rebound[free] / 0.7
    z0 = min((np.r_[math.log(a), guess] for a in (0.3, 1.0, 3.0, 10.0)), key=lambda z: float(np.sum(residual(z) ** 2)))
    sol = least_squares(residual, z0, method="trf", diff_step=1e-2, max_nfev=100)
    J = np.asarray(sol.jac)
    s2 = 2.0 * float(sol.cost) / max(J.shape[0] - J.shape[1], 1)
    cov = s2 * np.linalg.pinv(J.T @ J)
    alpha = math.exp(sol.x[0])
    return alpha, alpha * math.sqrt(max(cov[0, 0], 0.0)), speeds(sol.x)


def _model_onsets(prep: Prepared, values: dict[str, float], seqs: Sequence[BounceSequence],
                  tip: tuple[float, float] | None = None) -> list[np.ndarray]:
    """For each sequence of ``seqs``, the model's landings (at ``values`` along the capture from its start,
    :func:`along_capture`: a hammer started at rest on a moving key jolts, and at low speeds a Hunt-Crossley
    contact is nearly elastic) from the one nearest its first onset, in order, one per captured onset (NaN
    where the model lands no more above ``MIN_SPEED_MPS``)."""
    out = []
    for s in seqs:
        trace = along_capture(prep, values, tip, (0.0, s.onsets_s[-1] + MISSING_S))
        keep = (trace.event_code == EV_LANDING) & (trace.event_speed_mps > MIN_SPEED_MPS)
        lands = trace.event_time_s[keep]
        row = np.full(s.onsets_s.size, np.nan)
        if lands.size:
            k = int(np.argmin(np.abs(lands - s.onsets_s[0])))
            got = lands[k:k + s.onsets_s.size]
            row[:got.size] = got
        out.append(row)
    return out


def fit_alpha_along(found: dict[str, tuple[Prepared, list[BounceSequence]]], values: dict[str, float],
                    starts: Sequence[float] = (), tip: tuple[float, float] | None = None) -> tuple[float, float]:
    """Hunt-Crossley alpha (s/m) and its standard error by least squares on the onsets, counted from each
    sequence's first (a captured onset and the model's landing event differ by about a sample), of the
    sequences with a pinned first landing, the model simulated along their captures (:func:`along_capture`),
    from the best of ``ALPHA_GRID`` and ``starts`` (a landing the model misses makes the residual jump: it
    has local minima); NaN, NaN without such a sequence."""
    pinned = {n: (p, [s for s in ss if s.first_speed_mps is not None]) for n, (p, ss) in found.items()}
    pinned = {n: v for n, v in pinned.items() if v[1]}
    if not pinned:
        return math.nan, math.nan

    def residual(z: np.ndarray) -> np.ndarray:
        trial = dict(values, contact_b_Nspm=math.exp(z[0]) * values["contact_k_Npm"])
        r = np.concatenate([(m - m[0] - s.onsets_s + s.onsets_s[0])[1:] for p, ss in pinned.values()
                            for s, m in zip(ss, _model_onsets(p, trial, ss, tip))])
        return np.where(np.isfinite(r), r, MISSING_S)

    candidates = [np.array([math.log(a)]) for a in (*ALPHA_GRID, *starts) if a > 0.0 and math.isfinite(a)]
    z0 = min(candidates, key=lambda z: float(np.sum(residual(z) ** 2)))
    sol = least_squares(residual, z0, method="trf", diff_step=1e-2, max_nfev=60)
    J = np.asarray(sol.jac)
    s2 = 2.0 * float(sol.cost) / max(J.shape[0] - 1, 1)
    alpha = math.exp(sol.x[0])
    return alpha, alpha * math.sqrt(s2 / max(float(J[:, 0] @ J[:, 0]), 1e-300))


def confirm_onsets(prep: Prepared, values: dict[str, float], seqs: Sequence[BounceSequence],
                   tip: tuple[float, float] | None = None) -> np.ndarray:
    """Offsets (s) of the model's landings (at ``values`` along the capture, :func:`along_capture`) from the
    captured onsets of ``seqs``, matched in order from the landing nearest each sequence's first onset
    (NaN: the model lands no more)."""
    return np.concatenate([m - s.onsets_s for s, m in zip(seqs, _model_onsets(prep, values, seqs, tip))])


def backcheck_alpha(preps: Sequence[Prepared], values: dict[str, float], tip: tuple[float, float] | None = None
                    ) -> tuple[float, float, str]:
    """Hunt-Crossley alpha = b / k (s/m) from the bounce sequences in the backcheck after let-off in
    ``preps``: the fit along the captures (module docstring; ``tip`` as in :func:`along_capture`), its
    standard error and a note: the sequences, the restitutions their intervals give beside the kernel's,
    the closed form's alpha and where the model with alpha lands against the captured onsets. NaN, NaN
    and a note saying why when no capture shows a sequence the model places."""
    values = dict(FIXED_DEFAULTS, **values)
    found = {p.name: (p, bounce_sequences(p, values, tip)) for p in preps}
    found = {n: v for n, v in found.items() if v[1]}
    seqs = [s for _, ss in found.values() for s in ss]
    if not seqs:
        return math.nan, math.nan, ("contact: no bounce sequence in the backcheck after let-off was found (at least "
                                    f"{MIN_ONSETS} landing spikes, flights shortening, the key's acceleration "
                                    "uniform)")
    closed, closed_se, _ = fit_alpha(seqs, values)
    names = ", ".join(f"{n} {len(ss)}" for n, (_, ss) in found.items())
    note = (f"contact: {len(seqs)} bounce sequences in the backcheck after let-off ({names}; "
            f"{sum(s.onsets_s.size for s in seqs)} landing onsets); the recursion on their onsets (the kernel's "
            f"drop) gives alpha = b / k = {closed:.3g} +- {closed_se:.2g} s/m")
    alpha, se = fit_alpha_along(found, values, (closed,), tip)
    if not math.isfinite(alpha):
        return alpha, se, (note + "; none begins where the model's hammer first lands after let-off (a slow key: the "
                           "check drop's fall), so the model's own landings cannot be compared: alpha not read")
    fitted = dict(values, contact_b_Nspm=alpha * values["contact_k_Npm"])
    pinned = [(p, [s for s in ss if s.first_speed_mps is not None]) for p, ss in found.values()]
    offsets = np.concatenate([confirm_onsets(p, fitted, ss, tip) for p, ss in pinned if ss])
    worst = float(np.nanmax(np.abs(offsets))) if np.any(np.isfinite(offsets)) else math.nan
    used = sum(len(ss) for _, ss in pinned)
    return alpha, se, (note + f"; fitted along the captures on the {used} sequences the model places, alpha = "
                       f"{alpha:.3g} +- {se:.2g} s/m: the model lands {int(np.sum(np.abs(offsets) <= MATCH_S))} of "
                       f"their {offsets.size} onsets within {MATCH_S * 1e3:g} ms (largest offset "
                       f"{worst * 1e3:.1f} ms); "
                       + _restitutions(seqs, fitted, alpha))


def _restitutions(seqs: Sequence[BounceSequence], values: dict[str, float], alpha: float) -> str:
    """The restitutions the sequences' intervals give at the fastest landings, beside the kernel's at alpha."""
    v = np.concatenate([s.speeds_and_restitutions()[0] for s in seqs])
    e = np.concatenate([s.speeds_and_restitutions()[1] for s in seqs])
    if not v.size:
        return "no restitution read from the intervals"
    v_d, e_d, _ = kernel_drop(values, alpha, float(min(3.0, 1.2 * v.max())), float(v.min()))
    model = np.interp(v, v_d[::-1], e_d[::-1]) if v_d.size else np.full(v.size, np.nan)
    order = np.argsort(-v)[:4]
    return "the intervals' ratios give the restitution " + ", ".join(
        f"{e[i]:.2f} at {v[i]:.2f} m/s (the model {model[i]:.2f})" for i in order)

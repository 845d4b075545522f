"""Identify event-based transients (:mod:`hapticam.models.transients`) from probe captures of a key.

After Kuchenbecker, Fiene & Niemeyer, "Improving contact realism through event-based haptic feedback"
(2006): at an impact of speed ``v`` the rendering adds ``F(t) = g v exp(-t / tau) sin(2 pi f t)``. The pulse
adds what the capture holds at an impact beyond the model's own force, so all is read in the residual:

1. replay: each capture's motion (prepared as :func:`~hapticam.identify.hybrid_key.params.prepare` does)
   drives the model to be rendered at the capture's rate (its hybrid key through
   :meth:`~hapticam.models.hybrid_key.model.HybridKey.simulate`, the rest through the compiled kernel): a key
   coupled to the handle gives a landing as a smooth thump, and the pulse adds only what that lacks. The
   replay gives the model's impacts (time, speed, kind: ``landing`` or ``string``);
2. spikes: the residual above its running median over ``BASELINE_S`` (verify's local baseline) rising above
   ``SPIKE_JNDS`` force JNDs, from the last sample within one JND before it to the first after it; one counts
   when it carries momentum as verify counts an impact (its impulse over one JND times its length and
   ``LEAD_S``), and a rise within ``MATCH_S`` of its onset is its ringing;
3. matching: model events within ``MATCH_S`` of one another are one impact (a landing and the hammer's
   rebounds), of its fastest event's kind; impacts and spikes pair one to one within ``MATCH_S`` (verify's
   onset tolerance), the spikes of largest impulse first;
4. fit, per kind: each impact's pulse train ``g sum_i v_i h(t - t_i)``, from its spike's onset, against the
   spike for ``TAIL_FACTOR`` times its length. For a trial frequency and decay the gain is the regression
   through the origin of the spikes' impulses on the unit-gain trains' (so the pulses carry the impulse
   verify judges, :mod:`hapticam.render.verify.impacts`); frequency and decay are the least-squares fit of
   the shapes under that gain, in turn with each onset refined within a sample. A spike carrying under a
   tenth or over ten times its pulses' impulse is not the impact's own (the model's hammer lands where the
   real one does not): it is left out and the rest fitted again. Standard deviations: the gain's from the
   regression's residuals, frequency's and decay's from the shape fit's Jacobian (``s^2 (J^T J)^-1``,
   inflated for the residuals' correlation; given the onsets).

Resolvability: a capture whose spikes hold fewer than ``MIN_SPIKE_SAMPLES`` samples, or whose fitted
frequency lies above a third of its sample rate, cannot show their shape: its impacts are left out with a
note ("the capture at X Hz cannot resolve a Y ms spike"), and a kind seen only there gets no transient (a
shape the data do not hold would be a guess; the impulse, all such a capture bounds, is in the model's own
force as far as the sampling shows it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy.ndimage import median_filter
from scipy.optimize import least_squares

from hapticam.identify.hybrid_key.errors import correlation_inflation
from hapticam.identify.hybrid_key.params import prepare
from hapticam.models.base import Model
from hapticam.models.composite import Composite
from hapticam.models.hybrid_key.model import HybridKey
from hapticam.models.transients import (DECAY_RANGE_S, EVENT_CODES, EVENT_NAMES, FREQUENCY_RANGE_HZ, GAIN_RANGE,
                                        Transient)

#: Running median (s) of the residual whose excess is a spike: verify's local baseline, ten 1 ms spikes.
BASELINE_S = 0.02
#: A spike rises above this many force JNDs over the baseline.
SPIKE_JNDS = 5.0
#: The force JND as verify applies it: Weber fraction (Jones, "Matching forces: constant errors and
#: differential thresholds", 1989: about 7 %) and floor (N).
FORCE_WEBER, FORCE_FLOOR_N = 0.07, 0.02
#: A spike and a model impact match within this (s): verify's onset tolerance.
MATCH_S = 0.01
#: Longest spike (s); a longer excess is a level the model misses, not an impact's pulse.
MAX_SPIKE_S = 0.05
#: A spike counts when its impulse exceeds one force JND times its length plus this (s), as verify counts
#: an impact (its window opens 5 ms before the onset); a probe tip's ringing carries next to none.
LEAD_S = 5e-3
#: Fewest samples inside a spike whose shape a capture can show.
MIN_SPIKE_SAMPLES = 4
#: The fit reads each spike from its onset for its own length times this, up to the next spike.
TAIL_FACTOR = 2.0
#: Most rounds of onset refinement and shape fit.
ONSET_ROUNDS = 8
#: A spike carrying under 1/OUTLIER_FACTOR or over OUTLIER_FACTOR times its pulses' impulse is not its own.
OUTLIER_FACTOR = 10.0
#: Event codes the fit attaches transients to (the hybrid key's kernel reports them with their speeds).
FITTED_CODES = (EVENT_CODES["landing"], EVENT_CODES["string"])


@dataclass
class Replay:
    """One capture against the model: times (s), captured and model force (N), the spikes' excess over the
    residual's baseline (N), the force JND (N) per sample, the samples used and the model's impacts (times
    in s, event codes, speeds in m/s)."""

    name: str
    dt_s: float
    t_s: np.ndarray
    f_N: np.ndarray
    model_N: np.ndarray
    excess_N: np.ndarray
    jnd_N: np.ndarray
    first: int
    event_s: np.ndarray
    event_code: np.ndarray
    event_speed_mps: np.ndarray


@dataclass
class Spike:
    """A spike of a capture's residual: sample range ``[start, stop)`` (``start`` its onset), onset time (s,
    where the excess rises from zero), peak (N), impulse (N s) of the excess over it."""

    start: int
    stop: int
    onset_s: float
    peak_N: float
    impulse_Ns: float

    @property
    def samples(self) -> int:
        return self.stop - self.start


@dataclass
class Impact:
    """A model impact matched to a captured spike: its events of its kind (times in s, speeds in m/s) and
    where the fit reads the capture (sample range of ``replay``)."""

    replay: Replay
    spike: Spike
    event_s: np.ndarray
    speed_mps: np.ndarray
    window: tuple[int, int] = (0, 0)
    #: correction (s) of the spike's onset, found with the pulse's shape (:func:`refine_onsets`)
    shift_s: float = 0.0

    def times(self) -> np.ndarray:
        """Times (s) of the fitted samples relative to the spike's onset."""
        a, b = self.window
        return self.replay.t_s[a:b] - (self.spike.onset_s + self.shift_s)

    def data(self) -> np.ndarray:
        return self.replay.excess_N[self.window[0]:self.window[1]]

    def offsets_s(self) -> np.ndarray:
        """Each event's delay (s) after the impact's first one: where its pulse starts after the onset."""
        return self.event_s - self.event_s.min()


@dataclass
class Matching:
    """The model's impacts matched to spikes, by kind, and what was left: unmatched spikes and model impacts."""

    impacts: dict[str, list[Impact]] = field(default_factory=dict)
    spikes_alone: int = 0
    impacts_alone: dict[str, int] = field(default_factory=dict)


# -- replay ---------------------------------------------------------------------------------------------
def _key_of(model: Model) -> HybridKey | None:
    return next((c for c in model.components() if isinstance(c, HybridKey)), None)


def _other_force(parts: list[Model], x: np.ndarray, v: np.ndarray, a: np.ndarray, dt: float) -> np.ndarray:
    """Force (N) of ``parts`` (the model beside its hybrid key) along a motion, through the compiled kernel."""
    out = np.zeros(x.size)
    if not parts:
        return out
    from hapticam.models.kernels import model_force
    compiled = Composite(parts).compile()
    state = compiled.reset_state()
    for i in range(x.size):
        out[i] = model_force(compiled.params, state, x[i], v[i], a[i], dt)
    return out


def replay(model: Model, key: HybridKey, name: str, t_s: np.ndarray, x_m: np.ndarray, f_N: np.ndarray) -> Replay:
    """Drive ``model`` (its hybrid key ``key``) along one capture (module step 1) and find the residual's
    excess over its baseline (step 2)."""
    prep = prepare(name, "transients", np.asarray(t_s, float), np.asarray(x_m, float), np.asarray(f_N, float))
    trace = key.simulate(prep.x_m, prep.dt_s, v_mps=prep.v_mps, a_mps2=prep.a_mps2)
    others = [c for c in model.components() if c is not key]
    model_N = trace.force_N + _other_force(others, prep.x_m, prep.v_mps, prep.a_mps2, prep.dt_s)
    residual = prep.f_N - model_N
    half = max(int(round(0.5 * BASELINE_S / prep.dt_s)), 1)
    excess = residual - median_filter(residual, size=2 * half + 1, mode="nearest")
    level = median_filter(prep.f_N, size=2 * half + 1, mode="nearest")
    jnd = np.maximum(FORCE_WEBER * np.abs(level), FORCE_FLOOR_N)
    keep = np.isin(trace.event_code, FITTED_CODES) & (np.abs(trace.event_speed_mps) > 0.0)
    t = np.arange(prep.f_N.size) * prep.dt_s
    return Replay(name, prep.dt_s, t, prep.f_N, model_N, excess, jnd, int(prep.use[0]) if prep.use.size else 0,
                  trace.event_time_s[keep], trace.event_code[keep], np.abs(trace.event_speed_mps[keep]))


# -- spikes and matching --------------------------------------------------------------------------------
def find_spikes(rep: Replay) -> list[Spike]:
    """The spikes of a replay's residual (module step 2), in time order."""
    y, jnd, dt = rep.excess_N, rep.jnd_N, rep.dt_s
    high = y > SPIKE_JNDS * jnd
    high[:rep.first] = False
    longest = max(int(round(MAX_SPIKE_S / dt)), 1)
    spikes: list[Spike] = []
    i = 0
    for i0 in np.flatnonzero(high & ~np.r_[False, high[:-1]]):
        if i0 < i:                              # inside the last spike
            continue
        start = int(i0)
        while start > rep.first and y[start - 1] > jnd[start - 1]:
            start -= 1
        start = max(start - 1, rep.first)      # the last sample within one JND: the onset
        stop = int(i0) + 1
        while stop < y.size and y[stop] > jnd[stop] and stop - start < longest:
            stop += 1
        i = stop
        if spikes and (start < spikes[-1].stop or rep.t_s[start] - spikes[-1].onset_s < MATCH_S):
            continue                            # the last spike's ringing: one impact, as verify counts them
        seg_t, seg_y = rep.t_s[start:stop + 1], np.clip(y[start:stop + 1], 0.0, None)
        impulse = float(np.trapezoid(seg_y, seg_t))
        if impulse > jnd[start] * ((stop - start) * dt + LEAD_S):
            spikes.append(Spike(start, stop, _onset_time(rep, start), float(y[start:stop].max()), impulse))
    return spikes


def _onset_time(rep: Replay, start: int) -> float:
    """Where the excess rises from zero (s): between the onset sample and the next, linearly."""
    y0, y1 = rep.excess_N[start], rep.excess_N[min(start + 1, rep.excess_N.size - 1)]
    return float(rep.t_s[start] + (0.0 if y0 >= 0.0 or y1 <= y0 else min(-y0 / (y1 - y0), 1.0)) * rep.dt_s)


def model_impacts(rep: Replay, match_s: float) -> list[tuple[float, str, np.ndarray, np.ndarray]]:
    """The model's impacts: its events within ``match_s`` (s) of an impact's first one are that impact; each
    is (first time in s, kind of its fastest event, its events of that kind: times s, speeds m/s)."""
    out, i, order = [], 0, np.argsort(rep.event_s)
    times, codes, speeds = rep.event_s[order], rep.event_code[order], rep.event_speed_mps[order]
    while i < times.size:
        j = i + int(np.searchsorted(times[i:], times[i] + match_s, side="right"))
        code = codes[i:j][int(np.argmax(speeds[i:j]))]
        mine = codes[i:j] == code
        out.append((float(times[i]), EVENT_NAMES[int(code)], times[i:j][mine], speeds[i:j][mine]))
        i = j
    return out


def match_impacts(rep: Replay, spikes: list[Spike], match_s: float, into: Matching) -> None:
    """Pair the replay's model impacts with its spikes one to one within ``match_s`` (s), the spikes of
    largest impulse first (an impact's own spike is the largest near it; a probe's tip rings with smaller
    ones), then the closest (module step 3); adds the pairs and the counts of the unpaired to ``into``."""
    impacts = model_impacts(rep, match_s)
    pairs = sorted((-s.impulse_Ns, abs(s.onset_s - imp[0]), i, j) for i, s in enumerate(spikes)
                   for j, imp in enumerate(impacts) if abs(s.onset_s - imp[0]) <= match_s)
    used_s: set[int] = set()
    used_i: set[int] = set()
    for _impulse, _gap, i, j in pairs:
        if i not in used_s and j not in used_i:
            used_s.add(i)
            used_i.add(j)
            into.impacts.setdefault(impacts[j][1], []).append(Impact(rep, spikes[i], *impacts[j][2:]))
    into.spikes_alone += len(spikes) - len(used_s)
    for j in set(range(len(impacts))) - used_i:
        into.impacts_alone[impacts[j][1]] = into.impacts_alone.get(impacts[j][1], 0) + 1


def _set_windows(impacts: list[Impact], spikes_of: dict[int, list[Spike]]) -> None:
    """Where the fit reads each impact (its shape and its impulse): from its spike's onset for
    ``TAIL_FACTOR`` times the spike's length, ending before the next spike of its capture."""
    for imp in impacts:
        later = [s.start for s in spikes_of[id(imp.replay)] if s.start > imp.spike.start] + [imp.replay.t_s.size]
        imp.window = (imp.spike.start, min(imp.spike.start + int(math.ceil(TAIL_FACTOR * imp.spike.samples)) + 1,
                                           later[0]))


# -- the fit ------------------------------------------------------------------------------------------
def unit_pulse(t_s: np.ndarray, frequency_hz: float, decay_s: float) -> np.ndarray:
    """The pulse of unit amplitude, ``exp(-t / tau) sin(2 pi f t)`` for t >= 0 (s), 0 before."""
    t = np.asarray(t_s, dtype=np.float64)
    lag = np.maximum(t, 0.0)
    return np.where(t >= 0.0, np.exp(-lag / decay_s) * np.sin(2.0 * math.pi * frequency_hz * lag), 0.0)


class Stack:
    """One kind's impacts stacked for the fit: every (fitted sample, event) pair's time after the event (s)
    and the event's speed (m/s), which sample it adds to, the spikes' excess (N) and where each impact's
    samples begin."""

    def __init__(self, impacts: list[Impact]) -> None:
        lags, speeds, rows, data, steps, starts = [], [], [], [], [], [0]
        for imp in impacts:
            t = imp.times()
            for v, off in zip(imp.speed_mps, imp.offsets_s()):
                lags.append(t - off)
                speeds.append(np.full(t.size, v))
                rows.append(starts[-1] + np.arange(t.size))
            data.append(imp.data())
            steps.append(np.full(t.size, imp.replay.dt_s))
            starts.append(starts[-1] + t.size)
        self.lag_s, self.speed_mps, self.row = np.concatenate(lags), np.concatenate(speeds), np.concatenate(rows)
        self.data_N, self.dt_s, self.starts = np.concatenate(data), np.concatenate(steps), np.asarray(starts)
        self.spike_impulses_Ns = self.integrals(self.data_N)

    def trains(self, frequency_hz: float, decay_s: float) -> np.ndarray:
        """The impacts' unit-gain pulse trains (sum of v_i h(t - t_i)) at the fitted samples, stacked."""
        return np.bincount(self.row, weights=self.speed_mps * unit_pulse(self.lag_s, frequency_hz, decay_s),
                           minlength=self.data_N.size)

    def integrals(self, values: np.ndarray) -> np.ndarray:
        """Each impact's integral over its fitted samples of a stacked signal (N -> N s)."""
        return np.add.reduceat(values * self.dt_s, self.starts[:-1])

    def gain(self, frequency_hz: float, decay_s: float) -> tuple[float, np.ndarray, np.ndarray]:
        """The gain (N per m/s) that gives the spikes' impulses: their regression through the origin on the
        unit-gain trains' impulses, both over the fitted samples; returns it with the trains' impulses (N s)
        and the stacked trains."""
        trains = self.trains(frequency_hz, decay_s)
        unit = self.integrals(trains)
        den = float(unit @ unit)
        gain = float(self.spike_impulses_Ns @ unit) / den if den > 0.0 else 0.0
        return min(max(gain, GAIN_RANGE[0]), GAIN_RANGE[1]), unit, trains

    def residual(self, z: np.ndarray) -> np.ndarray:
        """The spikes minus the pulse trains at ``z`` = (ln f, ln tau), the gain from the impulses (N)."""
        gain, _unit, trains = self.gain(math.exp(z[0]), math.exp(z[1]))
        return self.data_N - gain * trains


@dataclass
class ShapeFit:
    """A kind's fitted pulse: gain (N per m/s), frequency (Hz), decay (s), their standard deviations (None
    when not estimable), and the spikes' and the pulses' impulses (N s) and peaks (N)."""

    gain: float
    frequency_hz: float
    decay_s: float
    gain_sd: float | None
    frequency_sd_hz: float | None
    decay_sd_s: float | None
    spike_impulses_Ns: np.ndarray
    pulse_impulses_Ns: np.ndarray
    spike_peaks_N: np.ndarray
    pulse_peaks_N: np.ndarray


def refine_onsets(impacts: list[Impact], frequency_hz: float, decay_s: float, gain: float) -> None:
    """Each spike's onset to within a tenth of a sample: the shift within one sample either way that
    fits the pulse train best (the sampled onset is only known to a sample, a phase error of a fast pulse)."""
    for imp in impacts:
        costs = []
        for shift in np.linspace(-imp.replay.dt_s, imp.replay.dt_s, 21):
            imp.shift_s = float(shift)
            costs.append((float(np.sum((imp.data() - gain * Stack([imp]).trains(frequency_hz, decay_s)) ** 2)),
                          float(shift)))
        imp.shift_s = min(costs)[1]


def _best_shape(stack: Stack, width_s: float, highest_hz: float, starts: list[np.ndarray] | None = None) -> Any:
    """The least-squares (ln f, ln tau) from a few starting points (a half period about the spike's width
    ``width_s``, decays around it: the grid keeps off local minima) or from ``starts``."""
    lo = np.log([FREQUENCY_RANGE_HZ[0], DECAY_RANGE_S[0]])
    hi = np.log([min(FREQUENCY_RANGE_HZ[1], highest_hz), DECAY_RANGE_S[1]])
    grid = ((0.5, 0.3), (0.5, 1.0), (0.3, 0.3), (0.3, 1.0), (1.0, 0.3), (1.0, 3.0))
    points = starts if starts is not None else [np.log([a / width_s, b * width_s]) for a, b in grid]
    best = None
    for z0 in points:
        sol = least_squares(stack.residual, np.clip(z0, lo + 1e-9, hi - 1e-9), bounds=(lo, hi))
        if best is None or sol.cost < best.cost:
            best = sol
    return best


def fit_shape(impacts: list[Impact], highest_hz: float) -> ShapeFit:
    """Module step 4 for one kind's impacts; frequencies up to ``highest_hz`` (Hz). The onsets are refined
    with the fitted shape (:func:`refine_onsets`) and the shape fitted again from there, in turn, while the
    fit improves by more than 0.1 % (at most ``ONSET_ROUNDS`` times)."""
    for imp in impacts:
        imp.shift_s = 0.0
    width = float(np.median([imp.spike.samples * imp.replay.dt_s for imp in impacts]))
    stack = Stack(impacts)
    best = _best_shape(stack, width, highest_hz)
    for _round in range(ONSET_ROUNDS):          # onsets and shape, in turn (they trade off against each other)
        f, tau = float(math.exp(best.x[0])), float(math.exp(best.x[1]))
        refine_onsets(impacts, f, tau, stack.gain(f, tau)[0])
        stack = Stack(impacts)
        previous, best = best.cost, _best_shape(stack, width, highest_hz, starts=[best.x])
        if best.cost > (1.0 - 1e-3) * previous:
            break
    f = float(np.clip(math.exp(best.x[0]), *FREQUENCY_RANGE_HZ))      # exp(ln) may step past a bound by an ulp
    tau = float(np.clip(math.exp(best.x[1]), *DECAY_RANGE_S))
    gain, trains, stacked = stack.gain(f, tau)
    r, spikes = best.fun, stack.spike_impulses_Ns
    cov = float(r @ r) / max(r.size - 2, 1) * correlation_inflation(r) * np.linalg.pinv(best.jac.T @ best.jac)
    e = spikes - gain * trains
    gain_sd = (math.sqrt(float(e @ e) / (len(impacts) - 1) / float(trains @ trains))
               if len(impacts) > 1 and trains @ trains > 0.0 else None)
    return ShapeFit(gain, f, tau, gain_sd, f * math.sqrt(max(cov[0, 0], 0.0)), tau * math.sqrt(max(cov[1, 1], 0.0)),
                    spikes, gain * trains, np.array([imp.spike.peak_N for imp in impacts]),
                    np.maximum.reduceat(gain * stacked, stack.starts[:-1]))


# -- identification -----------------------------------------------------------------------------------
Captures = Sequence[tuple[str, np.ndarray, np.ndarray, np.ndarray, "str | None"]]


def _resolved(kind: str, impacts: list[Impact], notes: list[str]) -> list[Impact]:
    """The impacts of captures whose spikes hold at least ``MIN_SPIKE_SAMPLES`` samples (median over the
    capture's spikes); a note for each capture left out."""
    kept: list[Impact] = []
    for rep in {id(imp.replay): imp.replay for imp in impacts}.values():
        mine = [imp for imp in impacts if imp.replay is rep]
        samples = float(np.median([imp.spike.samples for imp in mine]))
        if samples >= MIN_SPIKE_SAMPLES:
            kept += mine
            continue
        notes.append(f"transients: {kind}: the capture {rep.name} at {(1.0 / rep.dt_s):.0f} Hz cannot resolve a "
                     f"{samples * rep.dt_s * 1e3:.2g} ms spike ({samples:.0f} samples inside it, at least "
                     f"{MIN_SPIKE_SAMPLES} needed for its shape): its {len(mine)} impacts are left out")
    return kept


def _fit_kind(kind: str, impacts: list[Impact], notes: list[str]) -> tuple[ShapeFit | None, list[Impact]]:
    """Fit a kind's pulse (:func:`fit_shape`), again without the impacts whose spike is not their own
    (``OUTLIER_FACTOR``, while half remain) and without the captures sampled under three times the fitted
    frequency (which cannot resolve it); notes on what was left out. Returns the fit (None when no capture
    remains) and the impacts it used."""
    left_out = 0
    while impacts:
        fit = fit_shape(impacts, 0.5 / max(imp.replay.dt_s for imp in impacts))
        ratio = fit.spike_impulses_Ns / np.maximum(fit.pulse_impulses_Ns, 1e-300)
        keep = (ratio >= 1.0 / OUTLIER_FACTOR) & (ratio <= OUTLIER_FACTOR)
        coarse = {imp.replay.name: 1.0 / imp.replay.dt_s for imp in impacts
                  if 3.0 * fit.frequency_hz * imp.replay.dt_s > 1.0}
        if not keep.all() and 2 * int(keep.sum()) >= len(impacts) + left_out:
            left_out += int((~keep).sum())
            impacts = [imp for imp, k in zip(impacts, keep) if k]
            continue
        notes.extend(f"transients: {kind}: the capture {name} at {rate:.0f} Hz cannot resolve a "
                     f"{1e3 / (2.0 * fit.frequency_hz):.2g} ms spike (its {fit.frequency_hz:.4g} Hz lies above a third "
                     "of the sample rate): its impacts are left out" for name, rate in coarse.items())
        impacts = [imp for imp in impacts if imp.replay.name not in coarse]
        if not coarse:
            break
    if left_out:
        notes.append(f"transients: {kind}: {left_out} matched impacts left out, their spike carrying under "
                     f"1/{OUTLIER_FACTOR:g} or over {OUTLIER_FACTOR:g} times the pulses' impulse: that spike is not "
                     "the impact's own (the model's hammer lands where the real one does not, or the reverse)")
    return (fit, impacts) if impacts else (None, [])


def _summary(kind: str, fit: ShapeFit, impacts: list[Impact], alone: int, match_s: float) -> str:
    """The note on a kind's fit: the impacts, the pulse, how well the pulses carry the spikes' impulses
    and peaks, and (from several captures) the gain each capture's impacts alone would give."""
    ratio = np.percentile(100.0 * fit.pulse_impulses_Ns / fit.spike_impulses_Ns, [25, 50, 75])
    total = 100.0 * float(fit.pulse_impulses_Ns.sum() / fit.spike_impulses_Ns.sum())
    sd = (lambda v, s=1.0: "" if v is None else f" +- {v * s:.2g}")
    text = (f"transients: {kind}: {len(impacts)} of the model's {kind} impacts matched a captured spike within "
            f"{match_s * 1e3:g} ms ({alone} without one); pulse gain {fit.gain:.4g}{sd(fit.gain_sd)} N/(m/s), "
            f"frequency {fit.frequency_hz:.4g}{sd(fit.frequency_sd_hz)} Hz, decay {fit.decay_s * 1e3:.3g}"
            f"{sd(fit.decay_sd_s, 1e3)} ms, fitted to the capture minus the model; the pulses carry {total:.0f} % "
            f"of the spikes' impulse (each: median {ratio[1]:.0f} %, middle half {ratio[0]:.0f}-{ratio[2]:.0f} %) "
            f"and reach {100 * float(np.median(fit.pulse_peaks_N / fit.spike_peaks_N)):.0f} % of their peaks (median)")
    names = list(dict.fromkeys(imp.replay.name for imp in impacts))
    if len(names) < 2 or fit.gain <= 0.0:
        return text
    parts = []
    for name in names:
        mine = np.array([imp.replay.name == name for imp in impacts])
        unit = fit.pulse_impulses_Ns[mine] / fit.gain
        parts.append(f"{name} {float(fit.spike_impulses_Ns[mine] @ unit / (unit @ unit)):.3g} ({int(mine.sum())})")
    return text + "; the captures alone would give " + ", ".join(parts) + " N/(m/s) (impacts)"


def identify_transients(model: Model, captures: Captures, *, match_s: float = MATCH_S
                        ) -> tuple[tuple[Transient, ...], list[str]]:
    """The event-based transients of ``model`` from ``captures`` ``(name, t_s, x_m, f_N, excitation kind or
    None)`` of the key it models (module docstring): one :class:`~hapticam.models.transients.Transient` per
    event kind its kernel reports and the captures show, and notes on what was and was not fitted (for the
    model file's provenance). ``match_s``: how far (s) a spike and a model impact may lie apart."""
    key = _key_of(model)
    if key is None:
        return (), ["transients: none identified: only a hybrid key's kernel reports the impacts (with their "
                    "speeds) a transient is attached to"]
    matching, spikes_of = Matching(), {}
    for name, t_s, x_m, f_N, *_kind in captures:
        rep = replay(model, key, name, t_s, x_m, f_N)
        spikes_of[id(rep)] = find_spikes(rep)
        match_impacts(rep, spikes_of[id(rep)], match_s, matching)
    transients: list[Transient] = []
    notes: list[str] = []
    for kind in (EVENT_NAMES[code] for code in FITTED_CODES):
        alone = matching.impacts_alone.get(kind, 0)
        impacts = matching.impacts.get(kind, [])
        if not impacts:
            if alone:
                notes.append(f"transients: {kind}: none of the model's {alone} {kind} impacts has a captured spike "
                             f"within {match_s * 1e3:g} ms: no transient")
            continue
        _set_windows(impacts, spikes_of)
        fit, used = _fit_kind(kind, _resolved(kind, impacts, notes), notes)
        if fit is None or not fit.gain > 0.0:
            notes.append(f"transients: {kind}: no capture resolves its spikes: no transient (a capture sampling "
                         f"each spike at least {MIN_SPIKE_SAMPLES} times is needed)" if fit is None else
                         f"transients: {kind}: the spikes carry no impulse beyond the model's force: no transient")
            continue
        transients.append(Transient(kind, fit.gain, fit.frequency_hz, fit.decay_s, fit.gain_sd, fit.frequency_sd_hz,
                                    fit.decay_sd_s, samples=len(used)))
        notes.append(_summary(kind, fit, used, alone, match_s))
    if matching.spikes_alone:
        notes.append(f"transients: {matching.spikes_alone} captured spikes have no model impact within "
                     f"{match_s * 1e3:g} ms (impacts the model does not make, such as further bounces, or a pulse's "
                     "late ringing): no pulse is rendered for them")
    return tuple(transients), notes

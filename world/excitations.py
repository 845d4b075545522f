"""Probe excitations: the commanded position trajectories a position-controlled probe follows.

Each excitation is a small frozen dataclass with ``duration_s``, vectorised ``position(t_s)`` (m),
``velocity(t_s)`` (m/s) and ``acceleration(t_s)`` (m/s^2) given in closed form (the servo uses the
last two as feed-forward), and ``metadata()`` (a JSON-able dict recorded in the capture).

The oscillating excitations are written as ``x = c - A cos(phase)`` so that they start at rest at
the low end of their range ``c - A`` (for a key: at rest, not touching) and never leave
``[c - A, c + A]``.

* :class:`SweptSine` -- seed 001 section 3.1 and section 5: "a 90 second, 1-4 Hz swept-sine position
  input over a 50 mm range"; constant amplitude, frequency linear in time (or exponential).
* :class:`Sine` -- one frequency; seed 001 section 5 validates with a 2 Hz sinusoid.
* :class:`Triangle` -- constant-speed press and release, as switch testers move (quasi-static).
* :class:`Multisine` -- a sum of equal-amplitude cosines with random phases (Godfrey, seed 001 ref.
  [13]), faded in and out with raised-cosine ramps so it starts and ends at rest.
* :class:`StepHold` -- a staircase of held positions joined by raised-cosine transitions.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from hapticam.world.knob import SPEED_PROFILES, SpeedProfile, make_speed_profile
from hapticam.errors import UsageError
from hapticam.world.excitation_parts import FromParts, raised_cosine

EXCITATION_KINDS = ("sweep", "sine", "triangle", "multisine", "step", "spin-down", "turns")
#: Longest excitation accepted (s).
MAX_DURATION_S = 3600.0


def _finite(name: str, value: float, *, positive: bool = False, nonnegative: bool = False) -> float:
    """Return ``value`` as a finite float or raise :class:`UsageError` naming ``name``."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{name}: expected a number, got {value!r}") from None
    if not math.isfinite(out):
        raise UsageError(f"{name}: must be finite, got {out}")
    if positive and out <= 0.0:
        raise UsageError(f"{name}: must be > 0, got {out:g}")
    if nonnegative and out < 0.0:
        raise UsageError(f"{name}: must be >= 0, got {out:g}")
    return out


def _duration(name: str, value: float) -> float:
    out = _finite(name, value, positive=True)
    if out > MAX_DURATION_S:
        raise UsageError(f"{name}: at most {MAX_DURATION_S:g} s, got {out:g}")
    return out


def _times(t_s: Any) -> np.ndarray:
    return np.asarray(t_s, dtype=np.float64)


@dataclass(frozen=True)
class SweptSine:
    """Constant-amplitude swept sine ``x = c - A cos(phi(t))`` (seed 001 sections 3.1 and 5).

    Linear sweep: instantaneous frequency ``f(t) = f0 + (f1 - f0) t / T`` and
    ``phi = 2 pi (f0 t + (f1 - f0) t^2 / (2 T))``. Exponential sweep (``log_sweep=True``):
    ``f(t) = f0 r^(t/T)`` with ``r = f1/f0`` and ``phi = 2 pi f0 T (r^(t/T) - 1) / ln r``.

    Parameters
    ----------
    center_m, amplitude_m : float
        Centre ``c`` and amplitude ``A`` (m); the probe covers ``[c - A, c + A]``. Seed 001 used a
        50 mm range, i.e. ``A = 25 mm``.
    f_start_hz, f_end_hz : float
        Sweep band (Hz); seed 001: 1 to 4 Hz.
    duration_s : float
        Length ``T`` (s); seed 001: 90 s.
    log_sweep : bool
        Exponential instead of linear frequency sweep.
    """

    center_m: float
    amplitude_m: float
    f_start_hz: float = 1.0
    f_end_hz: float = 4.0
    duration_s: float = 90.0
    log_sweep: bool = False

    def __post_init__(self) -> None:
        _finite("center_m", self.center_m)
        _finite("amplitude_m", self.amplitude_m, nonnegative=True)
        _finite("f_start_hz", self.f_start_hz, positive=True)
        _finite("f_end_hz", self.f_end_hz, positive=True)
        _duration("duration_s", self.duration_s)
        if self.log_sweep and self.f_start_hz == self.f_end_hz:
            raise UsageError("log sweep: f_start_hz and f_end_hz must differ")

    def frequency(self, t_s: Any) -> np.ndarray:
        """Instantaneous frequency ``f(t) = phi'(t) / (2 pi)`` (Hz)."""
        t = _times(t_s)
        f0, f1, T = self.f_start_hz, self.f_end_hz, self.duration_s
        if self.log_sweep:
            return f0 * (f1 / f0) ** (t / T)                      # f = f0 r^(t/T)
        return f0 + (f1 - f0) * t / T                              # f = f0 + (f1 - f0) t / T

    def _phase(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """phi, phi', phi'' at ``t``."""
        f0, f1, T = self.f_start_hz, self.f_end_hz, self.duration_s
        if self.log_sweep:
            lnr = math.log(f1 / f0)
            g = (f1 / f0) ** (t / T)
            phi = 2.0 * np.pi * f0 * T * (g - 1.0) / lnr           # phi = 2 pi f0 T (r^(t/T) - 1) / ln r
            dphi = 2.0 * np.pi * f0 * g                            # phi' = 2 pi f(t)
            ddphi = dphi * lnr / T                                 # phi'' = phi' ln r / T
            return phi, dphi, ddphi
        phi = 2.0 * np.pi * (f0 * t + 0.5 * (f1 - f0) * t * t / T)  # phi = 2 pi (f0 t + (f1-f0) t^2 / 2T)
        dphi = 2.0 * np.pi * (f0 + (f1 - f0) * t / T)
        ddphi = np.full_like(t, 2.0 * np.pi * (f1 - f0) / T)
        return phi, dphi, ddphi

    def position(self, t_s: Any) -> np.ndarray:
        """Commanded position (m): ``c - A cos(phi)``."""
        phi, _, _ = self._phase(_times(t_s))
        return self.center_m - self.amplitude_m * np.cos(phi)

    def velocity(self, t_s: Any) -> np.ndarray:
        """Commanded velocity (m/s): ``A sin(phi) phi'``."""
        phi, dphi, _ = self._phase(_times(t_s))
        return self.amplitude_m * np.sin(phi) * dphi

    def acceleration(self, t_s: Any) -> np.ndarray:
        """Commanded acceleration (m/s^2): ``A (cos(phi) phi'^2 + sin(phi) phi'')``."""
        phi, dphi, ddphi = self._phase(_times(t_s))
        return self.amplitude_m * (np.cos(phi) * dphi * dphi + np.sin(phi) * ddphi)

    def metadata(self) -> dict[str, Any]:
        """Parameters recorded in the capture."""
        return {"kind": "sweep", **asdict(self)}


@dataclass(frozen=True)
class Sine:
    """Single sinusoid ``x = c - A cos(2 pi f t)``; seed 001 section 5 validated with 2 Hz.

    Parameters
    ----------
    center_m, amplitude_m : float
        Centre and amplitude (m).
    frequency_hz : float
        Frequency (Hz).
    duration_s : float
        Length (s).
    """

    center_m: float
    amplitude_m: float
    frequency_hz: float = 2.0
    duration_s: float = 10.0

    def __post_init__(self) -> None:
        _finite("center_m", self.center_m)
        _finite("amplitude_m", self.amplitude_m, nonnegative=True)
        _finite("frequency_hz", self.frequency_hz, positive=True)
        _duration("duration_s", self.duration_s)

    def position(self, t_s: Any) -> np.ndarray:
        """Commanded position (m)."""
        w = 2.0 * np.pi * self.frequency_hz
        return self.center_m - self.amplitude_m * np.cos(w * _times(t_s))

    def velocity(self, t_s: Any) -> np.ndarray:
        """Commanded velocity (m/s)."""
        w = 2.0 * np.pi * self.frequency_hz
        return self.amplitude_m * w * np.sin(w * _times(t_s))

    def acceleration(self, t_s: Any) -> np.ndarray:
        """Commanded acceleration (m/s^2)."""
        w = 2.0 * np.pi * self.frequency_hz
        return self.amplitude_m * w * w * np.cos(w * _times(t_s))

    def metadata(self) -> dict[str, Any]:
        """Parameters recorded in the capture."""
        return {"kind": "sine", **asdict(self)}


@dataclass(frozen=True)
class Triangle:
    """Constant-speed press and release between ``c - A`` and ``c + A``, as a switch tester moves.

    Each cycle takes ``period_s``: half pressing at speed ``4 A / period``, half releasing. The
    velocity changes sign instantly at the turning points (acceleration is zero elsewhere; the
    servo's feedback absorbs the corners).

    Parameters
    ----------
    center_m, amplitude_m : float
        Centre and amplitude (m).
    period_s : float
        Duration of one press-and-release (s).
    cycles : int
        Number of press-and-release cycles.
    """

    center_m: float
    amplitude_m: float
    period_s: float = 4.0
    cycles: int = 1

    def __post_init__(self) -> None:
        _finite("center_m", self.center_m)
        _finite("amplitude_m", self.amplitude_m, nonnegative=True)
        _finite("period_s", self.period_s, positive=True)
        if not isinstance(self.cycles, (int, np.integer)) or self.cycles < 1:
            raise UsageError(f"cycles: must be a positive integer, got {self.cycles!r}")
        _duration("period_s * cycles", self.period_s * self.cycles)

    @property
    def duration_s(self) -> float:
        """Total length (s)."""
        return self.period_s * self.cycles

    def _frac(self, t: np.ndarray) -> np.ndarray:
        return np.mod(np.clip(t, 0.0, self.duration_s) / self.period_s, 1.0)

    def position(self, t_s: Any) -> np.ndarray:
        """Commanded position (m): ``c - A + 2 A tri(t/P)``, tri rising 0->1 then falling 1->0."""
        t = _times(t_s)
        u = self._frac(t)
        tri = np.where(u < 0.5, 2.0 * u, 2.0 - 2.0 * u)
        tri = np.where(t >= self.duration_s, 0.0, tri)
        return self.center_m - self.amplitude_m + 2.0 * self.amplitude_m * tri

    def velocity(self, t_s: Any) -> np.ndarray:
        """Commanded velocity (m/s): ``+-4 A / P``."""
        t = _times(t_s)
        u = self._frac(t)
        speed = 4.0 * self.amplitude_m / self.period_s
        out = np.where(u < 0.5, speed, -speed)
        return np.where((t < 0.0) | (t >= self.duration_s), 0.0, out)

    def acceleration(self, t_s: Any) -> np.ndarray:
        """Commanded acceleration (m/s^2): zero between the turning points."""
        return np.zeros_like(_times(t_s))

    def metadata(self) -> dict[str, Any]:
        """Parameters recorded in the capture."""
        return {"kind": "triangle", **asdict(self), "duration_s": self.duration_s}


#: highest frequency (Hz) asked of the probe, whose servo follows a few hundred (ProbeSpec: 200 Hz)
MAX_EXCITATION_HZ = 1000.0


def _check_band(f_lo: float, f_hi: float) -> None:
    if f_hi < f_lo or f_hi > MAX_EXCITATION_HZ:
        raise UsageError(f"band: high end {f_hi:g} Hz is below low end {f_lo:g} Hz" if f_hi < f_lo else
                         f"band: high end {f_hi:g} Hz is above {MAX_EXCITATION_HZ:g} Hz (a probe follows hundreds)")


@dataclass(frozen=True)
class Multisine:
    """Random-phase multisine: ``x = c + A e(t) s(t) / S``.

    ``s(t) = sum_k cos(2 pi f_k t + phase_k)`` with ``n_tones`` frequencies evenly spaced on
    ``[f_min_hz, f_max_hz]`` and phases drawn uniformly from ``[0, 2 pi)`` by a generator seeded
    with ``seed``; ``S = max |s|`` over the excitation, so ``|x - c| <= A``; the envelope ``e`` rises
    and falls by raised cosines of ``ramp_s`` so the probe starts and ends at rest at ``c``.

    Parameters
    ----------
    center_m, amplitude_m : float
        Centre and peak deviation (m).
    f_min_hz, f_max_hz : float
        Band (Hz).
    n_tones : int
        Number of frequencies (1 to 1000).
    duration_s : float
        Length (s).
    seed : int
        Seed of the phases.
    ramp_s : float
        Fade-in and fade-out time (s), at most half the duration.
    """

    center_m: float
    amplitude_m: float
    f_min_hz: float = 0.5
    f_max_hz: float = 8.0
    n_tones: int = 16
    duration_s: float = 20.0
    seed: int = 0
    ramp_s: float = 0.5
    _tones: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _finite("center_m", self.center_m)
        _finite("amplitude_m", self.amplitude_m, nonnegative=True)
        _finite("f_min_hz", self.f_min_hz, positive=True)
        _finite("f_max_hz", self.f_max_hz, positive=True)
        _duration("duration_s", self.duration_s)
        _finite("ramp_s", self.ramp_s, nonnegative=True)
        _check_band(self.f_min_hz, self.f_max_hz)
        if not isinstance(self.n_tones, (int, np.integer)) or not 1 <= self.n_tones <= 1000:
            raise UsageError(f"n_tones: must be an integer from 1 to 1000, got {self.n_tones!r}")
        if 2.0 * self.ramp_s > self.duration_s:
            raise UsageError(f"ramp_s ({self.ramp_s:g} s) exceeds half the duration ({self.duration_s:g} s)")
        freqs = np.linspace(self.f_min_hz, self.f_max_hz, int(self.n_tones))
        phases = np.random.default_rng(self.seed).uniform(0.0, 2.0 * np.pi, int(self.n_tones))
        # S = max |s(t)| on a grid 20x finer than the highest tone, refined by the grid's worst-case error
        grid = np.arange(0.0, self.duration_s, 1.0 / (20.0 * self.f_max_hz))
        peak = 0.0
        for chunk in np.array_split(grid, max(1, grid.size // 20000)):
            s = np.cos(2.0 * np.pi * np.outer(chunk, freqs) + phases).sum(axis=1)
            peak = max(peak, float(np.max(np.abs(s))))
        peak /= math.cos(math.pi / 20.0)      # a grid step of 1/20 period: |s| may exceed the sampled peak
        object.__setattr__(self, "_tones", (freqs, phases, peak))

    @property
    def frequencies_hz(self) -> np.ndarray:
        """The tone frequencies (Hz)."""
        return self._tones[0].copy()

    @property
    def phases_rad(self) -> np.ndarray:
        """The tone phases (rad)."""
        return self._tones[1].copy()

    def _parts(self, t: np.ndarray) -> tuple[np.ndarray, ...]:
        """s, s', s'' (normalised by S) and envelope e, e', e''."""
        freqs, phases, peak = self._tones
        s = np.zeros_like(t)
        ds = np.zeros_like(t)
        dds = np.zeros_like(t)
        for f, ph in zip(freqs, phases):
            w = 2.0 * np.pi * f
            arg = w * t + ph
            c = np.cos(arg)
            s += c
            ds -= w * np.sin(arg)
            dds -= w * w * c
        if self.ramp_s > 0.0:
            r = self.ramp_s
            w_in, dw_in, ddw_in = raised_cosine(t / r)
            w_out, dw_out, ddw_out = raised_cosine((self.duration_s - t) / r)
            e = w_in * w_out
            de = dw_in / r * w_out - w_in * dw_out / r
            dde = ddw_in / r ** 2 * w_out - 2.0 * dw_in * dw_out / r ** 2 + w_in * ddw_out / r ** 2
        else:
            inside = ((t >= 0.0) & (t <= self.duration_s)).astype(np.float64)
            e, de, dde = inside, np.zeros_like(t), np.zeros_like(t)
        return s / peak, ds / peak, dds / peak, e, de, dde

    def position(self, t_s: Any) -> np.ndarray:
        """Commanded position (m)."""
        s, _, _, e, _, _ = self._parts(_times(t_s))
        return self.center_m + self.amplitude_m * e * s

    def velocity(self, t_s: Any) -> np.ndarray:
        """Commanded velocity (m/s): ``A (e' s + e s')``."""
        s, ds, _, e, de, _ = self._parts(_times(t_s))
        return self.amplitude_m * (de * s + e * ds)

    def acceleration(self, t_s: Any) -> np.ndarray:
        """Commanded acceleration (m/s^2): ``A (e'' s + 2 e' s' + e s'')``."""
        s, ds, dds, e, de, dde = self._parts(_times(t_s))
        return self.amplitude_m * (dde * s + 2.0 * de * ds + e * dds)

    def metadata(self) -> dict[str, Any]:
        """Parameters recorded in the capture, including the drawn phases."""
        out = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        return {"kind": "multisine", **out, "frequencies_hz": self._tones[0].tolist(),
                "phases_rad": self._tones[1].tolist()}


@dataclass(frozen=True)
class StepHold(FromParts):
    """Staircase: hold each of ``levels_m`` for ``hold_s``, moving between them by raised cosines.

    A transition from ``a`` to ``b`` lasting ``rise_s`` follows ``a + (b - a)(1 - cos(pi u))/2``,
    ``u = tau / rise_s``, so velocity is continuous and the peak speed is ``pi |b - a| / (2 rise_s)``.

    Parameters
    ----------
    levels_m : tuple of float
        Positions to hold (m), at least one.
    hold_s : float
        Time at each level (s).
    rise_s : float
        Time of each transition (s).
    """

    levels_m: tuple
    hold_s: float = 1.0
    rise_s: float = 0.05

    def __post_init__(self) -> None:
        levels = tuple(_finite(f"levels_m[{i}]", v) for i, v in enumerate(self.levels_m))
        if not levels:
            raise UsageError("levels_m: needs at least one level")
        object.__setattr__(self, "levels_m", levels)
        _finite("hold_s", self.hold_s, positive=True)
        _finite("rise_s", self.rise_s, positive=True)
        if len(levels) > 10000:
            raise UsageError(f"levels_m: at most 10000 levels, got {len(levels)}")
        _duration("duration", self.duration_s)

    @property
    def duration_s(self) -> float:
        """Total length (s)."""
        n = len(self.levels_m)
        return n * self.hold_s + (n - 1) * self.rise_s

    def _parts(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lv = np.asarray(self.levels_m)
        x = np.full_like(t, lv[0])
        v = np.zeros_like(t)
        a = np.zeros_like(t)
        for i in range(1, lv.size):
            t0 = i * self.hold_s + (i - 1) * self.rise_s       # start of the transition into level i
            w, dw, ddw = raised_cosine((t - t0) / self.rise_s)
            d = lv[i] - lv[i - 1]
            x += d * w
            v += d * dw / self.rise_s
            a += d * ddw / self.rise_s ** 2
        return x, v, a

    def metadata(self) -> dict[str, Any]:
        """Parameters recorded in the capture."""
        return {"kind": "step", "levels_m": list(self.levels_m), "hold_s": self.hold_s,
                "rise_s": self.rise_s, "duration_s": self.duration_s}


Excitation = SweptSine | Sine | Triangle | Multisine | StepHold | SpeedProfile


def make_excitation(kind: str, lo_m: float, hi_m: float, duration_s: float | None = None, *,
                    frequency_hz: float | None = None, band_hz: tuple[float, float] | None = None,
                    seed: int = 0) -> Excitation:
    """Build an excitation of ``kind`` covering ``[lo_m, hi_m]`` with the usual defaults.

    ``sweep``: seed 001's 1-4 Hz linear sweep (90 s unless ``duration_s``; ``band_hz`` changes the band).
    ``sine``: ``frequency_hz`` (default 2 Hz, seed 001's validation), 10 s. ``triangle``: one
    quasi-static press and release lasting ``duration_s`` (default 4 s). ``multisine``: 16 tones over
    ``band_hz`` (default 0.5-8 Hz), 20 s, phases from ``seed``. ``step``: five levels up and back down,
    1 s each (``duration_s`` sets the hold).
    """
    lo = _finite("range low", lo_m)
    hi = _finite("range high", hi_m)
    if hi < lo:
        raise UsageError(f"excitation range: high end {hi:g} m is below low end {lo:g} m")
    c, a = 0.5 * (lo + hi), 0.5 * (hi - lo)
    duration_s = None if duration_s is None else _duration("duration_s", duration_s)
    if band_hz is not None:
        _check_band(_finite("band low", band_hz[0], positive=True), _finite("band high", band_hz[1], positive=True))
    if kind == "sweep":
        f0, f1 = band_hz if band_hz is not None else (1.0, 4.0)
        return SweptSine(c, a, f_start_hz=f0, f_end_hz=f1, duration_s=90.0 if duration_s is None else duration_s)
    if kind == "sine":
        f = 2.0 if frequency_hz is None else frequency_hz
        return Sine(c, a, frequency_hz=f, duration_s=10.0 if duration_s is None else duration_s)
    if kind == "triangle":
        return Triangle(c, a, period_s=4.0 if duration_s is None else duration_s, cycles=1)
    if kind == "multisine":
        d = 20.0 if duration_s is None else duration_s
        f0, f1 = band_hz if band_hz is not None else (0.5, 8.0)
        return Multisine(c, a, f_min_hz=f0, f_max_hz=f1, duration_s=d, seed=seed, ramp_s=min(0.5, 0.25 * d))
    if kind == "step":
        levels = tuple(np.concatenate([np.linspace(lo, hi, 5), np.linspace(hi, lo, 5)[1:]]))
        n = len(levels)
        rise = 0.05
        hold = 1.0 if duration_s is None else (duration_s - (n - 1) * rise) / n
        if hold <= 0.0:
            raise UsageError(f"duration {duration_s:g} s is too short for {n} steps of {rise:g} s")
        return StepHold(levels, hold_s=hold, rise_s=rise)
    if kind in SPEED_PROFILES:  # rotary: a spin-down, constant-speed turns (world/knob.py)
        return make_speed_profile(kind, lo, hi, duration_s)
    raise UsageError(f"unknown excitation {kind!r}; choose one of {', '.join(EXCITATION_KINDS)}")

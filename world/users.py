"""Users at the simulated device's handle: scripted position or force trajectories, or a virtual finger.

A *position* user holds the handle through a spring-damper to a reference trajectory
``x_ref(t)``: ``f_user = k_u (x_ref - x) + b_u (v_ref - v)``. With a stiff ``k_u`` this is a scripted
position (a probe, or the path of a recorded capture); with a soft one it is a virtual finger pulling the
handle toward a target. A *force* user pushes with a scripted ``f_user(t)`` (zero impedance: the
hardest case for a stiff virtual wall, nothing damps the handle but the device).

Trajectories are stored on a uniform time grid (``GRID_DT_S``) so the compiled simulator looks them up in
constant time by linear interpolation; past the end the last value is held with zero rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hapticam.errors import ParameterError, UsageError

GRID_DT_S = 1e-4
MODE_POSITION = 0
MODE_FORCE = 1

#: Scripted-position user: stiff enough to impose a path, damped near critically on a 50 g handle.
PROBE_STIFFNESS_N_PER_M = 20_000.0
PROBE_DAMPING_N_S_PER_M = 40.0
#: Virtual finger: a fingertip's order of magnitude (Hajian & Howe 1997 report ~300-800 N/m).
FINGER_STIFFNESS_N_PER_M = 500.0
FINGER_DAMPING_N_S_PER_M = 2.0


@dataclass(frozen=True)
class User:
    """A user at the handle: ``mode`` (position or force), a uniform grid (``t0_s``, ``dt_s``) of the
    reference ``value`` (m or N) and its rate ``rate`` (m/s or N/s), and the hand impedance
    (``stiffness_N_per_m``, ``damping_N_s_per_m``; unused for force users). ``period_s > 0`` repeats
    the trajectory with that period (for runs of unbounded length)."""

    name: str
    mode: int
    t0_s: float
    dt_s: float
    value: np.ndarray
    rate: np.ndarray
    stiffness_N_per_m: float = 0.0
    damping_N_s_per_m: float = 0.0
    period_s: float = 0.0

    def repeating(self) -> "User":
        """The same user repeating its trajectory forever (period = its grid length)."""
        from dataclasses import replace

        return replace(self, period_s=self.dt_s * self.value.size)

    @property
    def duration_s(self) -> float:
        """Time of the last grid point relative to t = 0 (s)."""
        return self.t0_s + self.dt_s * (self.value.size - 1)

    @property
    def x0_m(self) -> float:
        """Initial handle position: the reference's first value for position users, else 0."""
        return float(self.value[0]) if self.mode == MODE_POSITION else 0.0

    def table(self) -> np.ndarray:
        """The ``(n, 2)`` float64 table the compiled simulator reads: value, rate."""
        return np.ascontiguousarray(np.column_stack([self.value, self.rate]), dtype=np.float64)


def _grid(t_s: np.ndarray, y: np.ndarray, what: str) -> tuple[float, np.ndarray, np.ndarray]:
    t = np.asarray(t_s, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if t.size != y.size or t.size < 2:
        raise UsageError(f"{what}: need matching time and value arrays with at least 2 samples")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(y))):
        raise UsageError(f"{what}: time and value arrays must be finite")
    if np.any(np.diff(t) <= 0):
        raise UsageError(f"{what}: time must be strictly increasing")
    n = int(np.floor((t[-1] - t[0]) / GRID_DT_S)) + 1
    tg = t[0] + GRID_DT_S * np.arange(n)
    yg = np.interp(tg, t, y)
    rate = np.gradient(yg, GRID_DT_S) if n > 1 else np.zeros(1)
    return float(t[0]), yg, rate


def position_user(t_s: np.ndarray, x_m: np.ndarray, *, stiffness_N_per_m: float = PROBE_STIFFNESS_N_PER_M,
                  damping_N_s_per_m: float = PROBE_DAMPING_N_S_PER_M, name: str = "trajectory") -> User:
    """A user imposing the position trajectory ``(t_s, x_m)`` through a spring-damper (linear
    interpolation between samples, resampled at ``GRID_DT_S``)."""
    t0, xg, vg = _grid(t_s, x_m, name)
    return User(name, MODE_POSITION, t0, GRID_DT_S, xg, vg, float(stiffness_N_per_m), float(damping_N_s_per_m))


def force_user(t_s: np.ndarray, f_N: np.ndarray, name: str = "force") -> User:
    """A user pushing the handle with the force trajectory ``(t_s, f_N)`` (N along +x)."""
    t0, fg, rg = _grid(t_s, f_N, name)
    return User(name, MODE_FORCE, t0, GRID_DT_S, fg, rg)


def press(depth_m: float = 0.004, duration_s: float = 1.0, *, start_m: float = -0.0005, hold_s: float = 0.2,
          cycles: int = 1) -> User:
    """Scripted press and release: raised-cosine travel from ``start_m`` to ``depth_m``, hold
    ``hold_s``, raised-cosine return; ``cycles`` repetitions filling ``duration_s``."""
    t = np.arange(0.0, duration_s + GRID_DT_S / 2, GRID_DT_S)
    period = duration_s / cycles
    travel = max((period - hold_s) / 2.0, 1e-3)
    phase = np.mod(t, period)
    # raised cosine s(u) = (1 - cos(pi u)) / 2 on u in [0, 1]
    down = 0.5 * (1 - np.cos(np.pi * np.clip(phase / travel, 0, 1)))
    up = 0.5 * (1 - np.cos(np.pi * np.clip((phase - travel - hold_s) / travel, 0, 1)))
    x = start_m + (depth_m - start_m) * (down - up)
    return position_user(t, x, name="press")


def sine(amplitude_m: float = 0.002, frequency_hz: float = 2.0, duration_s: float = 1.0, *,
         center_m: float = 0.002) -> User:
    """Scripted sinusoid ``x = center + A sin(2 pi f t)`` (the validation excitation of seed 001)."""
    t = np.arange(0.0, duration_s + GRID_DT_S / 2, GRID_DT_S)
    return position_user(t, center_m + amplitude_m * np.sin(2 * np.pi * frequency_hz * t), name="sine")


def sweep(amplitude_m: float = 0.002, f0_hz: float = 1.0, f1_hz: float = 4.0, duration_s: float = 4.0, *,
          center_m: float = 0.002) -> User:
    """Scripted linear swept sine from ``f0_hz`` to ``f1_hz`` (seed 001's 1-4 Hz swept excitation):
    ``x = center + A sin(2 pi (f0 t + (f1 - f0) t^2 / (2 T)))``."""
    t = np.arange(0.0, duration_s + GRID_DT_S / 2, GRID_DT_S)
    phase = 2 * np.pi * (f0_hz * t + (f1_hz - f0_hz) * t * t / (2 * duration_s))
    return position_user(t, center_m + amplitude_m * np.sin(phase), name="sweep")


def finger(target_m: float = 0.006, duration_s: float = 1.0, *, press_s: float = 0.3, release_s: float = 0.7,
           rest_m: float = -0.001) -> User:
    """A virtual finger: a soft spring-damper pulling the handle toward ``target_m`` between
    ``press_s`` and ``release_s`` and back to ``rest_m`` otherwise."""
    t = np.arange(0.0, duration_s + GRID_DT_S / 2, GRID_DT_S)
    target = np.where((t >= press_s) & (t < release_s), target_m, rest_m)
    t0, xg, _ = _grid(t, target, "finger")
    return User("finger", MODE_POSITION, t0, GRID_DT_S, xg, np.zeros_like(xg),
                FINGER_STIFFNESS_N_PER_M, FINGER_DAMPING_N_S_PER_M)


USERS = ("press", "sine", "sweep", "finger")


#: the longest travel a named user presses (m): a key's is a few millimetres
MAX_USER_TRAVEL_M = 0.05


def make_user(name: str, duration_s: float, depth_m: float = 0.004) -> User:
    """Build one of the named users (``press``, ``sine``, ``sweep``, ``finger``) for ``duration_s``,
    scaled to a travel of ``depth_m`` (m, in (0, ``MAX_USER_TRAVEL_M``])."""
    if not (math.isfinite(depth_m) and 0.0 < depth_m <= MAX_USER_TRAVEL_M):
        raise ParameterError("depth_m", f"the travel must be in (0, {MAX_USER_TRAVEL_M * 1e3:g}] mm, got "
                             f"{depth_m * 1e3:g} mm")
    if name == "press":
        return press(depth_m, duration_s, cycles=max(1, int(round(duration_s))))
    if name == "sine":
        return sine(depth_m / 2, 2.0, duration_s, center_m=depth_m / 2)
    if name == "sweep":
        return sweep(depth_m / 2, 1.0, 4.0, duration_s, center_m=depth_m / 2)
    if name == "finger":
        return finger(depth_m * 1.5, duration_s, press_s=0.25 * duration_s, release_s=0.75 * duration_s)
    raise UsageError(f"user: expected one of {', '.join(USERS)}, got {name!r}")

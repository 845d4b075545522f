"""The hybrid key run offline: its compiled kernel over sampled key motion, with the hammer's trajectory and
the located events (:meth:`hapticam.models.hybrid_key.model.HybridKey.simulate`; the identification's simulations).
SI units: m, s, N.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from hapticam.errors import ModelValidationError
from hapticam.models.hybrid_key.kernel import hybrid_key_force
from hapticam.models.hybrid_key.layout import MAX_LOGGED_EVENTS, S_EV0, S_EV_COUNT, S_FLAGS, S_W, S_Y
from hapticam.models.validation import as_float


@njit(cache=True, nogil=True, error_model="numpy")
def hybrid_key_run(p, s, x, v, a, dt, out_force, out_y, out_w, out_flags,
                   ev_tick, ev_code, ev_time, ev_speed):
    """Run the kernel over sampled key motion ``x[i]`` (m) at ``t = i dt`` (s), writing the force (N),
    hammer height (m), hammer velocity (m/s) and flags after each tick, and the events (tick index,
    code, time (s) from the first sample, speed (m/s)) into the ``ev_*`` arrays. Returns the number of
    events (may exceed the arrays' size; only the first ones are kept; at most four per tick)."""
    n_ev = 0
    for i in range(x.size):
        out_force[i] = hybrid_key_force(p, s, x[i], v[i], a[i], dt)
        out_y[i] = s[S_Y]
        out_w[i] = s[S_W]
        out_flags[i] = int(s[S_FLAGS])
        ne = min(int(s[S_EV_COUNT]), MAX_LOGGED_EVENTS)
        for j in range(ne):
            if n_ev < ev_tick.size:
                k = S_EV0 + 3 * j
                ev_tick[n_ev] = i
                ev_code[n_ev] = int(s[k])
                ev_time[n_ev] = (i - 1) * dt + s[k + 1]  # tick i runs from sample i-1 to sample i
                ev_speed[n_ev] = s[k + 2]
            n_ev += 1
    return n_ev


@dataclass
class HybridKeyTrace:
    """Result of :meth:`HybridKey.simulate`: per-sample arrays and the located events.

    ``event_code`` uses ``EVENT_NAMES``; ``event_time_s`` is the event's time located inside its tick;
    ``event_speed_mps`` is the landing closing speed, the lift-off separation speed, the hammer speed at
    the string, or the key speed at let-off. ``state`` is the final kernel state."""

    time_s: np.ndarray
    force_N: np.ndarray
    hammer_y_m: np.ndarray
    hammer_v_mps: np.ndarray
    flags: np.ndarray
    event_tick: np.ndarray
    event_code: np.ndarray
    event_time_s: np.ndarray
    event_speed_mps: np.ndarray
    state: np.ndarray

    def events(self, code: int | None = None) -> np.ndarray:
        """Times (s) of the events with ``code`` (all events if None)."""
        if code is None:
            return self.event_time_s.copy()
        return self.event_time_s[self.event_code == code]


def simulate_key(p: np.ndarray, s: np.ndarray, x_m: Any, dt_s: float, v_mps: Any = None,
                 a_mps2: Any = None) -> HybridKeyTrace:
    """Run the kernel with parameters ``p`` from state ``s`` (updated in place) over key positions ``x_m[i]``
    (m) sampled at ``t = i dt_s`` (s). ``v_mps`` and ``a_mps2`` default to finite differences of ``x_m``.
    Returns a :class:`HybridKeyTrace` with the force, hammer trajectory, flags and located events."""
    x = np.ascontiguousarray(x_m, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ModelValidationError("x_m: expected a non-empty 1-D array of key positions")
    dt = as_float("dt_s", dt_s, min_value=0.0, strict_min=True)
    v = np.gradient(x, dt) if v_mps is None and x.size > 1 else np.zeros_like(x) if v_mps is None else v_mps
    v = np.ascontiguousarray(v, dtype=np.float64)
    a = np.gradient(v, dt) if a_mps2 is None and x.size > 1 else np.zeros_like(x) if a_mps2 is None else a_mps2
    a = np.ascontiguousarray(a, dtype=np.float64)
    if v.shape != x.shape or a.shape != x.shape:
        raise ModelValidationError("v_mps: velocity and acceleration must have the shape of x_m")
    n = x.size
    force, y, w = np.empty(n), np.empty(n), np.empty(n)
    flags = np.empty(n, dtype=np.int64)
    cap = 4 * n
    ev_tick, ev_code = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
    ev_time, ev_speed = np.empty(cap), np.empty(cap)
    n_ev = hybrid_key_run(p, s, x, v, a, dt, force, y, w, flags, ev_tick, ev_code, ev_time, ev_speed)
    return HybridKeyTrace(time_s=np.arange(n) * dt, force_N=force, hammer_y_m=y, hammer_v_mps=w,
                          flags=flags, event_tick=ev_tick[:n_ev], event_code=ev_code[:n_ev],
                          event_time_s=ev_time[:n_ev], event_speed_mps=ev_speed[:n_ev], state=s)

"""The vertical hopper (seed 002 sec. 3.3) in plain ``scipy.integrate.solve_ivp`` with terminal events.

This is the simulation a Python user would write, kept beside the compiled one (:mod:`.hopper`) as its
independent reference (tests compare the two) and as the peer of ``hapticam bench identify``. It uses the same
equations, written again from the paper here rather than calling the compiled right-hand side: modes GROUND
(``(y, y')``) and AIR (``(y, y', x, x')``), the leg force of the rest-length actuator
``L = k (l0 + a sin(sigma) - (y - x))`` with ``sigma = pi + omega t`` (see :mod:`.hopper` for why not the printed
force actuator), landing when x falls through 0, lift-off when m g + L falls through 0.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from hapticam.errors import IdentificationError
from hapticam.identify.hopper.model import HopperParams


def _leg(q: HopperParams, t: float, y: float, x: float) -> float:
    s = np.sin(np.pi + q.omega * t)
    if q.actuator == "length":
        return q.k * (q.l0 + q.a * s - (y - x))               # rest-length actuator (see .hopper)
    return q.k * (q.l0 - (y - x)) + q.a * s                   # as printed in seed 002 sec. 3.3


def _ground_rhs(q: HopperParams):
    def f(t: float, s: np.ndarray) -> list[float]:
        return [s[1], (_leg(q, t, s[0], 0.0) - q.mu * q.g) / q.mu]        # mu y'' = L - mu g
    return f


def _air_rhs(q: HopperParams):
    def f(t: float, s: np.ndarray) -> list[float]:
        leg = _leg(q, t, s[0], s[2])
        return [s[1], (leg - q.mu * q.g) / q.mu, s[3], (-leg - q.b * s[3] - q.m * q.g) / q.m]
    return f


def _events(q: HopperParams):
    def lift(t: float, s: np.ndarray) -> float:
        return q.m * q.g + _leg(q, t, s[0], 0.0)                          # G_g: m g + L reaches 0
    lift.terminal, lift.direction = True, -1

    def land(t: float, s: np.ndarray) -> float:
        return s[2]                                                       # G_a: x reaches 0 going down
    land.terminal, land.direction = True, -1
    return lift, land


def simulate_ivp(q: HopperParams, zeta: np.ndarray, t_samples: np.ndarray, rtol: float = 1e-10,
                 atol: float = 1e-12, method: str = "DOP853", max_events: int = 10_000) -> tuple[np.ndarray, int, np.ndarray]:
    """From ``zeta = (y, y')`` on the section at t = 0 (foot down): ``(y at t_samples, final mode, final state)``
    with mode 0 ground, 1 air and the state ``(y, y', x, x')``."""
    t_samples = np.asarray(t_samples, dtype=float)
    lift, land = _events(q)
    ground, air = _ground_rhs(q), _air_rhs(q)
    t, mode, s = 0.0, 0, np.array([zeta[0], zeta[1]], dtype=float)
    y = np.empty(t_samples.size)
    t_end = float(t_samples[-1])
    y[t_samples <= t] = s[0]
    for _ in range(max_events):
        want = t_samples[(t_samples > t)]
        sol = solve_ivp(ground if mode == 0 else air, (t, t_end), s, method=method, rtol=rtol, atol=atol,
                        events=lift if mode == 0 else land, dense_output=True)
        if not sol.success:
            raise IdentificationError(f"solve_ivp failed: {sol.message}")
        t_stop = float(sol.t[-1])
        inside = want[want <= t_stop]
        if inside.size:
            y[(t_samples > t) & (t_samples <= t_stop)] = sol.sol(inside)[0]
        s_stop = sol.y[:, -1]
        if sol.status != 1:                                               # reached t_end
            full = np.concatenate([s_stop, [0.0, 0.0]]) if mode == 0 else s_stop
            return y, mode, full
        t = t_stop
        if mode == 0:                                                     # lift-off: foot at rest on the floor
            mode, s = 1, np.array([s_stop[0], s_stop[1], 0.0, 0.0])
        elif q.m * q.g + _leg(q, t, s_stop[0], 0.0) > 0.0:               # landing: x' := 0, foot pressed down
            mode, s = 0, s_stop[:2].copy()
        else:                                                             # landing into a leg that lifts it
            s = np.array([s_stop[0], s_stop[1], 0.0, 0.0])
    raise IdentificationError(f"more than {max_events} events")


def poincare_map_ivp(q: HopperParams, zeta: np.ndarray, **kw) -> np.ndarray:
    """P(zeta) with solve_ivp; the foot must be down at the next section."""
    _, mode, s = simulate_ivp(q, zeta, np.array([q.period_s]), **kw)
    if mode != 0:
        raise IdentificationError("the foot is in the air at the next section")
    return s[:2].copy()

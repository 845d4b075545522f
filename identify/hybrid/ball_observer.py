"""Newton observers on the bouncing ball's impact maps (seed 000 sections 4-5, Figs. 4-7).

Only event times are measured (the paddle's motion is known, the ball is not seen), as a haptic probe on
the paddle would feel them.

Rigid contact: the impact map takes ``z_k = [t_k s, v_k+ m/s, e]`` (time of impact k, the ball's velocity
just after it, restitution as a state with no dynamics) to ``z_{k+1}``; ``y_k = t_k``. Three unknowns and
one time per impact: the window must hold N >= 3 impacts (more make it over-determined).

Hunt-Crossley contact: the map goes from event to event (contact onset, lift-off, onset, ...), with
``z_k = [t_k s, v_k m/s, k, b]`` (n, the mass and the paddle known) and the input ``u_k`` the mode the
event starts (1 contact, 0 flight); ``y_k = t_k``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hapticam.identify.hybrid import ball
from hapticam.identify.hybrid.engine import event_map, simulate
from hapticam.identify.hybrid.newton_observer import NewtonObserver


@dataclass
class EventRecord:
    """The true events of a simulated run: times (s), the mode each starts, the state after each."""

    t: np.ndarray
    mode: np.ndarray
    x_plus: np.ndarray


def true_events(model, p: np.ndarray, t_end: float, steps=1e-3, x0: np.ndarray = ball.START) -> EventRecord:
    """Events of ``model`` from ``x0`` over ``[0, t_end]`` s (the system to be identified)."""
    traj = simulate(model, np.asarray(x0, float), p, np.array([0.0, t_end]), h=steps, S0=np.zeros((2, 1)),
                    Pd=np.zeros((p.size, 1)), max_events=5000)
    return EventRecord(traj.events.t, traj.events.mode_to, traj.events.x_plus)


def timing_noise(t: np.ndarray, sd_s: float, seed: int) -> np.ndarray:
    """Event times with Gaussian timing noise of standard deviation ``sd_s`` (s)."""
    return t + np.random.default_rng(seed).normal(0.0, sd_s, t.size)


def quantised(t: np.ndarray, rate_hz: float) -> np.ndarray:
    """Event times as a capture at ``rate_hz`` sees them: at the first sample at or after the event."""
    return np.ceil(t * rate_hz) / rate_hz


# ---- rigid contact ---------------------------------------------------------------------------------

def rigid_step(p: np.ndarray):
    """The rigid ball's impact map ``F(z, u)`` and its Jacobian, the paddle and gravity from ``p``."""
    amp, omega = p[1], p[2]

    def step(z, u=None):
        t_k, v_k, e = z
        pp = p.copy()
        pp[0] = e
        x0 = np.array([amp * np.sin(omega * t_k), v_k])
        dx0 = np.array([[amp * omega * np.cos(omega * t_k), 0.0, 0.0], [0.0, 1.0, 0.0]])  # the ball is on y_p(t_k)
        dp = np.zeros((p.size, 3))
        dp[0, 2] = 1.0
        ev = event_map(ball.RIGID, 0, t_k, x0, pp, dx0, np.array([1.0, 0.0, 0.0]), dp)
        jac = np.vstack([ev.dt, ev.dx_plus[1], [0.0, 0.0, 1.0]])
        return np.array([ev.t, ev.x_plus[1], e]), jac

    return step


def measure_time(z, u=None):
    """``y = t_k``: the event's time is what is measured."""
    dy = np.zeros((1, len(z)))
    dy[0, 0] = 1.0
    return np.array([z[0]]), dy


def ballistic_velocity(t1: float, t2: float, p: np.ndarray) -> float:
    """Take-off velocity (m/s) of a free flight from the paddle at t1 to the paddle at t2 (a first guess)."""
    amp, omega, g = p[-3], p[-2], p[-1]
    return (amp * np.sin(omega * t2) - amp * np.sin(omega * t1)) / (t2 - t1) + 0.5 * g * (t2 - t1)


def observe_rigid(times: np.ndarray, p: np.ndarray, e0: float, n_lift: int = 8,
                  iterations: int = 2) -> np.ndarray:
    """Estimates ``[t, v+, e]`` after each measured impact time (rows from the N-th on)."""
    z0 = np.array([times[0], ballistic_velocity(times[0], times[1], p), e0])
    obs = NewtonObserver(rigid_step(p), measure_time, n_lift, z0, iterations, scale=np.array([1e-3, 0.1, 0.1]))
    for t in times:
        obs.update(t)
    return np.array(obs.history)


# ---- Hunt-Crossley contact ----------------------------------------------------------------------------

def hc_step(p: np.ndarray, steps=ball.HC_STEPS):
    """The Hunt-Crossley ball's event map ``F(z, u)`` (u: the mode the event starts) and its Jacobian."""
    amp, omega = p[4], p[5]

    def step(z, u):
        t_k, v_k, k, b = z
        pp = p.copy()
        pp[0], pp[1] = k, b
        x0 = np.array([amp * np.sin(omega * t_k), v_k])
        dx0 = np.zeros((2, 4))
        dx0[0, 0] = amp * omega * np.cos(omega * t_k)
        dx0[1, 1] = 1.0
        dp = np.zeros((p.size, 4))
        dp[0, 2] = dp[1, 3] = 1.0
        ev = event_map(ball.HUNT_CROSSLEY, int(u), t_k, x0, pp, dx0, np.array([1.0, 0.0, 0.0, 0.0]), dp, h=steps)
        jac = np.vstack([ev.dt, ev.dx_plus[1], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
        return np.array([ev.t, ev.x_plus[1], k, b]), jac

    return step


def observe_hunt_crossley(times: np.ndarray, modes: np.ndarray, p: np.ndarray, k0: float, b0: float,
                          v0: float, n_lift: int = 10, iterations: int = 2) -> np.ndarray:
    """Estimates ``[t, v, k, b]`` after each measured event (rows from the N-th on); ``modes[i]`` is the
    mode event i starts (known: onsets and lift-offs alternate) and ``v0`` a guess of the velocity (m/s)
    at the first event."""
    z0 = np.array([times[0], v0, k0, b0])
    scale = np.array([1e-4, 0.1, 0.1 * abs(k0), 0.1 * abs(b0)])
    obs = NewtonObserver(hc_step(p), measure_time, n_lift, z0, iterations, scale=scale)
    for t, u in zip(times, modes):
        obs.update(t, u)
    return np.array(obs.history)

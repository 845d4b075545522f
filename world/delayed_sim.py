"""The simulator as seen through a lockstep link: the reference for the serial and remote adapters.

A lockstep device (:mod:`hapticam.devices.serial_device`, :mod:`hapticam.devices.remote`) samples its
sensor when a command arrives and then applies that command, so the force computed at tick ``k`` acts
on the handle over ``[(k+1) T, (k+2) T)`` instead of ``[k T, (k+1) T)``: one tick of delay. A link
may also quantise the force (hsp v1 carries whole micronewtons, ``s = 1e6`` counts per newton).
:class:`DelayedSimulatedDevice` is the simulator with exactly that I/O and nothing else::

    F_applied(k) = round(s F(k-1)) (1 / s)    held over [k T, (k+1) T), F(-1) = 0

so the force the loop writes on an emulated lockstep device equals the force it writes on this
simulator (same plant, same user), which is how the adapters are tested. A real-time run also has late
replies: at tick ``k`` the newest sample may answer an older command (its age in ticks is what the
serial and remote adapters record as their second diagnostic). Given those ages (``sample_age``), the
simulator presents the same old samples at the same ticks, so the loop's watchdog and ramp act as they
did in the real run and the forces still agree tick for tick.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hapticam.devices.base import IO_AUX0, IO_AUX1, IO_FORCE, IO_SEQ, IO_T, IO_V, IO_X, STATUS_OK, ServoBinding
from hapticam.world.sim import SimParams, SimulatedDevice, sim_advance, sim_sense
from hapticam.world.users import User


HISTORY = 64   # samples kept for presenting an old one (ages beyond this are capped)


@njit(cache=True, nogil=True)
def delayed_sense(state, io):
    """``sense`` over ``(dev, utab, rng, held, age, hist)``: the simulator's sample of this tick, or the
    one ``age[k]`` ticks old."""
    held, age, hist = state[3], state[4], state[5]
    k = int(held[2])
    held[2] = k + 1
    sim_sense(state[0], state[2], io)
    row = k % HISTORY
    hist[row, 0] = io[IO_X]
    hist[row, 1] = io[IO_V]
    hist[row, 2] = io[IO_SEQ]
    hist[row, 3] = io[IO_T]
    hist[row, 4] = io[IO_AUX0]
    j = int(age[k]) if k < age.size else 0
    j = min(max(j, 0), k, HISTORY - 1)
    old = (k - j) % HISTORY
    io[IO_X] = hist[old, 0]
    io[IO_V] = hist[old, 1]
    io[IO_SEQ] = hist[old, 2]
    io[IO_T] = hist[old, 3]
    io[IO_AUX0] = hist[old, 4]
    io[IO_AUX1] = j
    return STATUS_OK


@njit(cache=True, nogil=True)
def delayed_actuate(state, io, dt):
    """``actuate``: apply the force held from the last tick, hold this tick's (``held[1]`` counts per newton,
    0: not quantised)."""
    held = state[3]
    f_prev = held[0]
    s = held[1]
    f = io[IO_FORCE]
    held[0] = np.round(f * s) * (1.0 / s) if s > 0.0 else f   # F_applied(k+1) = round(s F(k)) / s
    if dt == 0.0:
        held[0] = 0.0                                   # the loop's last call: force off at once
    sim_advance(state[0], state[1], f_prev, dt)
    return STATUS_OK


class DelayedSimulatedDevice(SimulatedDevice):
    """The simulator with a lockstep link's one tick of force delay, the force quantised to
    ``1 / counts_per_N`` newtons (0: not quantised)."""

    def __init__(self, params: SimParams | None = None, user: User | None = None, seed: int = 0,
                 counts_per_N: float = 0.0, sample_age: np.ndarray | None = None) -> None:
        self.held = np.array([0.0, float(counts_per_N), 0.0])   # held force (N), counts per N, tick
        self.age = np.zeros(1) if sample_age is None else np.ascontiguousarray(sample_age, dtype=np.float64)
        self.hist = np.zeros((HISTORY, 5))
        super().__init__(params, user, seed)

    def reset(self) -> None:
        """The simulator's reset, no force held, tick 0."""
        super().reset()
        self.held[0] = 0.0
        self.held[2] = 0.0

    def servo_binding(self) -> ServoBinding:
        """Compiled sense/actuate over ``(dev, utab, rng, held, age, hist)``; the loop's clock."""
        return ServoBinding(delayed_sense, delayed_actuate,
                            (self.dev, self.utab, self.rng, self.held, self.age, self.hist), True)

"""What a run of the servo loop leaves: per-tick arrays (:class:`RenderResult`), the reader that copies
new ticks out of the loop's ring (:class:`TickReader`), and a snapshot of the last tick
(:class:`TickSnapshot`), the public read-out for windows and monitors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from hapticam.render.layout import (K_TICK, R_AUX0, R_AUX1, R_DIAG0, R_DIAG1, R_F, R_FCMD, R_FLAGS, R_LATE,
                                    R_T, R_V, R_X, SAFETY_FLAG_SHIFT)
from hapticam.render.stats import LoopStats, SafetyEvent

MODEL_FLAG_MASK = (1 << SAFETY_FLAG_SHIFT) - 1


@dataclass
class RenderResult:
    """Per-tick arrays of a run plus its statistics and safety events.

    ``force_N`` is what was written to the device (after safety), ``force_cmd_N`` what the model asked
    for; ``flags`` holds model flags in bits 0-7 and safety bits ``1 << (8 + code)`` above;
    ``x_true_m``/``user_force_N`` are the device's two diagnostics (the simulator's true handle position
    and the user's force); ``model_diag`` the model's two diagnostics per tick (``(n, 2)``).
    """

    t_s: np.ndarray
    x_m: np.ndarray
    v_mps: np.ndarray
    force_cmd_N: np.ndarray
    force_N: np.ndarray
    flags: np.ndarray
    lateness_us: np.ndarray
    x_true_m: np.ndarray
    user_force_N: np.ndarray
    model_diag: np.ndarray
    stats: LoopStats
    events: list[SafetyEvent] = field(default_factory=list)
    lost_ticks: int = 0

    @classmethod
    def from_rows(cls, rows: np.ndarray, stats: LoopStats, events: list[SafetyEvent], lost: int = 0
                  ) -> "RenderResult":
        return cls(t_s=rows[:, R_T].copy(), x_m=rows[:, R_X].copy(), v_mps=rows[:, R_V].copy(),
                   force_cmd_N=rows[:, R_FCMD].copy(), force_N=rows[:, R_F].copy(),
                   flags=rows[:, R_FLAGS].astype(np.int64), lateness_us=rows[:, R_LATE].copy(),
                   x_true_m=rows[:, R_AUX0].copy(), user_force_N=rows[:, R_AUX1].copy(),
                   model_diag=rows[:, [R_DIAG0, R_DIAG1]].copy(), stats=stats, events=events, lost_ticks=lost)

    @property
    def model_flags(self) -> np.ndarray:
        """Model mode/event flags (bits 0-7)."""
        return self.flags & MODEL_FLAG_MASK

    @property
    def safety_flags(self) -> np.ndarray:
        """Safety interventions per tick: bit ``code`` set when event ``code`` acted."""
        return self.flags >> SAFETY_FLAG_SHIFT

    def events_named(self, name: str) -> list[SafetyEvent]:
        """The logged events called ``name`` (see :data:`hapticam.render.layout.EVENT_NAMES`)."""
        return [e for e in self.events if e.name == name]


class TickReader:
    """Copies the ticks a loop has written since the last read (for telemetry, recording, results).

    Rows the loop overwrote before they were read (the ring is ``ring_capacity`` ticks long) are counted
    in ``lost``, never returned half-written.
    """

    def __init__(self, loop: Any, start: int | None = None) -> None:
        """``loop``: the :class:`~hapticam.render.loop.ServoLoop` (its ``ring`` and ``ctl`` arrays are read);
        ``start``: the first tick to return (default: the next one written)."""
        self.loop = loop
        self.next = int(loop.ctl[K_TICK]) if start is None else int(start)
        self.lost = 0

    def read(self) -> tuple[int, np.ndarray]:
        """Return ``(first_tick, rows)`` of the new ticks (rows is ``(n, RING_COLS)``, a copy)."""
        ring, ctl = self.loop.ring, self.loop.ctl
        n = ring.shape[0]
        head = int(ctl[K_TICK])
        start = max(self.next, head - n)
        self.lost += start - self.next
        rows = ring[np.arange(start, head) % n]
        overwritten = int(ctl[K_TICK]) - n - start  # rows the loop reached while we copied
        if overwritten > 0:
            rows = rows[overwritten:]
            self.lost += overwritten
            start += overwritten
        self.next = head
        return start, rows


class TickSnapshot(NamedTuple):
    """The last completed tick of a loop, by name (SI units; ``model_flags`` bits 0-7 of the model,
    ``safety_flags`` bit ``code`` per intervention that acted; ``diag0``/``diag1`` the model's two
    diagnostics, :func:`hapticam.models.kernels.model_diag`)."""

    tick: int
    t_s: float
    x_m: float
    v_mps: float
    force_cmd_N: float
    force_N: float
    model_flags: int
    safety_flags: int
    diag0: float
    diag1: float

    @classmethod
    def from_row(cls, tick: int, row: np.ndarray) -> "TickSnapshot":
        flags = int(row[R_FLAGS])
        return cls(tick, float(row[R_T]), float(row[R_X]), float(row[R_V]), float(row[R_FCMD]), float(row[R_F]),
                   flags & MODEL_FLAG_MASK, flags >> SAFETY_FLAG_SHIFT, float(row[R_DIAG0]), float(row[R_DIAG1]))

"""Loop statistics and safety events, read from the loop's shared arrays after (or during) a run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from hapticam.render.clock import MISSED_DEADLINE_SHARE
from hapticam.render.layout import (EV_TRANSIENT, EVENT_NAMES, HIST_BIN_NS, INTERVENTIONS, K_COUNT0, K_EV_HEAD,
                                    K_FAULT, K_LATE_MAX_NS, K_MISSES, K_SKIPPED, K_T_FIRST_NS, K_T_LAST_NS, K_TICK,
                                    S_EOUT)


@dataclass(frozen=True)
class SafetyEvent:
    """One logged event: the tick it happened at, its name and a value (force in N, or position in m
    for workspace events, or time in s for ramps and swaps)."""

    tick: int
    name: str
    value: float

    def to_dict(self) -> dict[str, Any]:
        return {"tick": self.tick, "event": self.name, "value": self.value}


@dataclass
class LoopStats:
    """What a run did: ticks, timing (lateness of tick starts against their deadlines, in us), deadline
    misses, safety interventions (ticks each acted) and the fault that stopped the loop, if any; the energy
    the device put into the hand (J: the written force's work on the handle less the device's own damping
    losses, :mod:`hapticam.render.safety`; negative when the hand put energy in, as into any passive object
    over a press and release), transient pulses played, and how the model was displayed
    (:class:`hapticam.render.display.DisplayPlan`)."""

    ticks: int
    rate_hz: float
    clock: str
    scheduling: str = "n/a"
    mean_period_us: float = float("nan")
    lateness_mean_us: float = 0.0
    lateness_p50_us: float = 0.0
    lateness_p99_us: float = 0.0
    lateness_p999_us: float = 0.0
    lateness_max_us: float = 0.0
    misses: int = 0
    skipped: int = 0
    interventions: dict[str, int] = field(default_factory=dict)
    fault: str | None = None
    energy_out_J: float = 0.0
    transients: int = 0
    display: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """Multi-line human-readable report."""
        lines = [f"ticks {self.ticks} at {self.rate_hz:g} Hz ({self.clock} clock, scheduling {self.scheduling})"]
        if self.clock == "real-time":
            lines.append(f"period mean {self.mean_period_us:.2f} us; lateness us: mean {self.lateness_mean_us:.2f} "
                         f"p50 {self.lateness_p50_us:.2f} p99 {self.lateness_p99_us:.2f} "
                         f"p99.9 {self.lateness_p999_us:.2f} max {self.lateness_max_us:.2f}")
            lines.append(f"missed deadlines {self.misses} ({self.skipped} periods skipped)")
        acted = {k: v for k, v in self.interventions.items() if v}
        lines.append("safety interventions (ticks): " +
                     (", ".join(f"{k} {v}" for k, v in acted.items()) if acted else "none"))
        lines.append(f"energy out into the hand {1e3 * self.energy_out_J:.3g} mJ"
                     + (f"; transients {self.transients}" if self.transients else ""))
        if self.fault:
            lines.append(f"FAULT: {self.fault_text()}")
        return "\n".join(lines)

    def fault_text(self) -> str | None:
        """The fault that stopped the loop, with its cause where the name alone does not say it."""
        if self.fault != "missed-deadlines":
            return self.fault
        share = f"{MISSED_DEADLINE_SHARE:.0%}"
        return (f"missed-deadlines: {self.misses} of {self.ticks + self.skipped} periods missed their deadline, more "
                f"than the loop allows ({share} of its periods, and a burst of {share} of ten seconds'); force zeroed "
                f"and the loop stopped: the model's simulation or this machine cannot keep {self.rate_hz:g} Hz")


def hist_percentile_us(hist: np.ndarray, q: float) -> float:
    """The ``q`` quantile (0-1) of the lateness histogram, in us (upper edge of the bin reached)."""
    total = int(hist.sum())
    if total == 0:
        return 0.0
    target = q * total
    idx = int(np.searchsorted(np.cumsum(hist), target, side="left"))
    return (idx + 1) * HIST_BIN_NS * 1e-3


def read_events(ctl: np.ndarray, events: np.ndarray, start: int = 0) -> tuple[list[SafetyEvent], int]:
    """Events logged since index ``start``; returns ``(events, next_start)`` (entries overwritten by a full
    ring are skipped)."""
    head = int(ctl[K_EV_HEAD])
    start = max(start, head - events.shape[0])
    out = []
    for i in range(start, head):
        tick, code, value = events[i % events.shape[0]]
        out.append(SafetyEvent(int(tick), EVENT_NAMES.get(int(code), f"code-{int(code)}"), float(value)))
    return out, head


def loop_stats(ctl: np.ndarray, hist: np.ndarray | None, rate_hz: float, clock: str,
               scheduling: str = "n/a", srv: np.ndarray | None = None,
               display: dict[str, Any] | None = None) -> LoopStats:
    """Build :class:`LoopStats` from the loop's ``ctl`` counters and lateness histogram, its servo state
    ``srv`` (energy out) and the active model's display plan (a dict with its ``summary``)."""
    ticks = int(ctl[K_TICK])
    inter = {EVENT_NAMES[c]: int(ctl[K_COUNT0 + c]) for c in INTERVENTIONS}
    fault = EVENT_NAMES.get(int(ctl[K_FAULT])) if int(ctl[K_FAULT]) else None
    st = LoopStats(ticks=ticks, rate_hz=rate_hz, clock=clock, scheduling=scheduling, interventions=inter,
                   fault=fault, energy_out_J=float(srv[S_EOUT]) if srv is not None else 0.0,
                   transients=int(ctl[K_COUNT0 + EV_TRANSIENT]), display=display)
    if hist is not None and clock == "real-time" and hist.sum() > 0:
        n = int(hist.sum())
        span = int(ctl[K_T_LAST_NS]) - int(ctl[K_T_FIRST_NS])
        st.mean_period_us = span / max(n - 1, 1) * 1e-3
        centres = (np.arange(hist.size) + 0.5) * HIST_BIN_NS * 1e-3
        st.lateness_mean_us = float((hist * centres).sum() / n)
        st.lateness_max_us = int(ctl[K_LATE_MAX_NS]) * 1e-3
        # Percentiles are read off histogram bin edges; the exact maximum bounds them.
        st.lateness_p50_us = min(hist_percentile_us(hist, 0.50), st.lateness_max_us)
        st.lateness_p99_us = min(hist_percentile_us(hist, 0.99), st.lateness_max_us)
        st.lateness_p999_us = min(hist_percentile_us(hist, 0.999), st.lateness_max_us)
        st.misses = int(ctl[K_MISSES])
        st.skipped = int(ctl[K_SKIPPED])
    return st

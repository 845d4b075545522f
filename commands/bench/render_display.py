"""``hapticam bench render``'s display-stage rows: the compiled servo step's compute time per tick for a switch and
the hybrid key, rendered at the handle (the tick without a display stage) and through the display stage (the
coupling's proxy solve, with a transient at the hammer's landings), in one run.

The step is timed alone (the simulated device's physics is not in it): a compiled loop feeds it a 1 Hz press
past the key's travel, sample by sample, and reads the clock around each call; the clock's own cost is measured
on an empty interval and subtracted.
"""

from __future__ import annotations

import copy
import threading
from typing import Any

import numpy as np
from numba import njit

from hapticam.devices.base import IO_SEQ, IO_X
from hapticam.devices.registry import open_device
from hapticam.models.files import load_model_only
from hapticam.models.transients import Transient
from hapticam.render.clock import now_ns, request_realtime
from hapticam.render.loop import LoopConfig, ServoLoop

#: (row name, model, the display stage's goal per tick in us)
DISPLAY_MODELS = (("switch", "example:gateron-brown", 5.0), ("hybrid key", "example:piano-key", 20.0))
#: the transient the hybrid key's row plays at each hammer landing (the piano demo's order of magnitude)
BENCH_TRANSIENT = Transient(event="landing", gain_N_per_mps=2.0, frequency_hz=300.0, decay_s=0.003)


@njit(nogil=True)
def _time_steps(step, xs, io, cfg, ctl, srv, pbuf, sbuf, ring, events, out_ns, ts):
    """Run ``step`` once per position in ``xs`` (m), writing each call's time (ns) into ``out_ns``."""
    for i in range(xs.size):
        io[IO_X] = xs[i]
        io[IO_SEQ] = i + 1
        t0 = now_ns(ts)
        step(i, 0.0, 0, io, cfg, ctl, srv, pbuf, sbuf, ring, events)
        out_ns[i] = now_ns(ts) - t0


@njit(nogil=True)
def _clock_cost(out_ns, ts):
    for i in range(out_ns.size):
        t0 = now_ns(ts)
        out_ns[i] = now_ns(ts) - t0


def _step_times_us(model: Any, display: str, ticks: int) -> np.ndarray:
    """Per-tick compute time (us, clock cost included) of the servo step rendering ``model``."""
    device = open_device("sim")
    with device:
        loop = ServoLoop(model, device, LoopConfig(rate_hz=1000.0, display=display, ring_capacity=1 << 12))
        t = np.arange(ticks) * 1e-3
        xs = 0.012 * 0.5 * (1.0 - np.cos(2.0 * np.pi * t)) - 0.0005       # 1 Hz press to 11.5 mm
        ns = np.zeros(ticks, dtype=np.int64)
        _time_steps(loop.kernels.step, xs, loop.io, loop.cfg, loop.ctl, loop.srv, loop.pbuf, loop.sbuf,
                    loop.ring, loop.events, ns, np.zeros(2, dtype=np.int64))
        return ns * 1e-3


def display_timings(ticks: int = 20_000) -> dict[str, dict[str, Any]]:
    """Per-tick step time (us: mean, p50, p99 after the top 0.1 %) of each row of :data:`DISPLAY_MODELS`, at
    the handle and through the display stage, with the goal; on a thread with the loop's scheduling."""
    out: dict[str, dict[str, Any]] = {}

    def body() -> None:
        request_realtime()
        cost = np.zeros(2000, dtype=np.int64)
        _clock_cost(cost, np.zeros(2, dtype=np.int64))
        clock_us = float(np.median(cost)) * 1e-3
        for name, spec, goal in DISPLAY_MODELS:
            model = load_model_only(spec)
            staged = replace_transients(model, (BENCH_TRANSIENT,)) if "hybrid" in name else model
            row: dict[str, Any] = {"model": spec, "goal_us": goal}
            for label, m, display in (("at_handle", model, "off"), ("display", staged, "auto")):
                _step_times_us(m, display, 200)                             # compile and warm up
                us = np.sort(np.maximum(_step_times_us(m, display, ticks) - clock_us, 0.0))
                kept = us[:max(1, int(us.size * 0.999))]                    # the top 0.1 %: preemption
                row[label] = {"tick_us": float(kept.mean()), "p50_us": float(np.percentile(us, 50)),
                              "p99_us": float(np.percentile(us, 99))}
            row["ratio"] = row["display"]["tick_us"] / max(row["at_handle"]["tick_us"], 1e-9)
            out[name] = row

    th = threading.Thread(target=body, name="bench-display")
    th.start()
    th.join()
    return out


def replace_transients(model: Any, transients: tuple[Transient, ...]) -> Any:
    """A shallow copy of ``model`` carrying ``transients``."""
    staged = copy.copy(model)
    staged.transients = tuple(transients)
    return staged


def format_display_table(rows: dict[str, dict[str, Any]]) -> str:
    """The display-stage rows as text."""
    lines = ["servo step per tick (us, mean / p99), the model at the handle and through the display stage:"]
    for name, r in rows.items():
        a, d = r["at_handle"], r["display"]
        lines.append(f"  {name:<11} {r['model']:<24} at handle {a['tick_us']:6.2f} / {a['p99_us']:6.2f}   "
                     f"display {d['tick_us']:6.2f} / {d['p99_us']:6.2f}   x{r['ratio']:.1f}   "
                     f"(goal <= {r['goal_us']:g} us: {'met' if d['tick_us'] <= r['goal_us'] else 'NOT met'})")
    return "\n".join(lines)

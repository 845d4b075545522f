"""Telemetry (ZeroMQ XPUB, msgpack batches of every tick); control is in :mod:`hapticam.render.control`.

The message schema and the control requests are documented in the README (section "Telemetry and control"). The servo loop
never waits on either: a :class:`Pump` thread copies new ticks out of the loop's ring about 100 times a
second and hands them to the publisher (non-blocking sends behind a high-water mark, dropped batches
counted) and the recorder. The control thread (:class:`~hapticam.render.control.ControlServer`, imported
here too) validates every request and answers errors in-band; its only ways to affect the loop are the
model-swap slot and the stop flag, so nothing a client sends bypasses the safety layer.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from typing import Any, Callable, TextIO

import msgpack
import numpy as np
import zmq

from hapticam.errors import ControlError
from hapticam.progress import StatusLine, shown
from hapticam.render.control import COMMANDS, ControlServer, request  # noqa: F401  (public here too)
from hapticam.render.endpoints import Auth, ServerSecurity, require_loopback, secure_client
from hapticam.render.layout import R_F, R_FCMD, R_FLAGS, R_LATE, R_T, R_V, R_X
from hapticam.render.loop import ServoLoop
from hapticam.render.result import TickReader
from hapticam.render.stats import SafetyEvent, read_events

SCHEMA_VERSION = 1
BATCH_PERIOD_S = 0.01
DEFAULT_HWM = 1000              # batches queued for slow subscribers (~10 s) before dropping

Sink = Callable[[int, np.ndarray, list[SafetyEvent]], None]


class Pump(threading.Thread):
    """Copies new ticks and events out of the loop every ``period_s`` and passes them to the sinks."""

    def __init__(self, loop: ServoLoop, sinks: list[Sink], period_s: float = BATCH_PERIOD_S) -> None:
        super().__init__(name="hapticam-pump", daemon=True)
        self.loop = loop
        self.sinks = sinks
        self.period_s = period_s
        self.reader = TickReader(loop, start=0)
        self._ev_next = 0
        self._halt = threading.Event()
        self.errors: list[str] = []

    def run(self) -> None:
        while not self._halt.wait(self.period_s):
            self.drain()
        self.drain()

    def drain(self) -> None:
        """Forward everything written since the last call (also called once after the loop stops)."""
        first, rows = self.reader.read()
        events, self._ev_next = read_events(self.loop.ctl, self.loop.events, self._ev_next)
        if rows.size == 0 and not events:
            return
        for sink in self.sinks:
            try:
                sink(first, rows, events)
            except Exception as exc:  # a failing sink must not stop the others
                self.errors.append(f"{type(exc).__name__}: {exc}")

    def halt(self) -> None:
        """Stop after a final drain."""
        self._halt.set()
        if self.is_alive():
            self.join()


def tick_batch(seq: int, first: int, rows: np.ndarray, events: list[SafetyEvent], rate_hz: float,
               lost_ticks: int, dropped: int) -> dict[str, Any]:
    """The telemetry message for one batch (schema: the README (section "Telemetry and control"))."""
    return {
        "v": SCHEMA_VERSION, "type": "ticks", "seq": seq, "tick0": int(first), "n": int(rows.shape[0]),
        "rate_hz": rate_hz,
        "t_s": rows[:, R_T].tolist(), "x_m": rows[:, R_X].tolist(), "v_mps": rows[:, R_V].tolist(),
        "force_cmd_N": rows[:, R_FCMD].tolist(), "force_N": rows[:, R_F].tolist(),
        "flags": rows[:, R_FLAGS].astype(np.int64).tolist(), "lateness_us": rows[:, R_LATE].tolist(),
        "events": [e.to_dict() for e in events], "lost_ticks": int(lost_ticks), "dropped_batches": int(dropped),
    }


class TelemetryPublisher:
    """Publishing socket sending one msgpack batch per pump period; never blocks, and counts what it drops.

    The socket is an XPUB with ``XPUB_NODROP``: where a plain PUB drops silently at its high-water mark,
    this one refuses the send (``EAGAIN`` without blocking) while any subscriber's queue is full, so every
    batch is either counted as sent (and reaches every subscriber, however late it reads) or counted as
    dropped (and reaches none). ``sent + dropped`` is the number of batches; the batches carry ``seq``."""

    def __init__(self, address: str, rate_hz: float, hwm: int = DEFAULT_HWM,
                 context: zmq.Context | None = None, security: ServerSecurity | None = None) -> None:
        require_loopback(address, "telemetry", None if security is None else security.auth)
        self.context = context or zmq.Context.instance()
        self.socket = self.context.socket(zmq.XPUB)
        if security is not None:
            security.apply(self.socket)
        self.socket.setsockopt(zmq.XPUB_NODROP, 1)
        self.socket.setsockopt(zmq.SNDHWM, hwm)
        self.socket.setsockopt(zmq.LINGER, 0)
        try:
            self.socket.bind(address)
        except zmq.ZMQError as exc:
            self.socket.close()
            raise ControlError(f"telemetry: cannot bind {address}: {exc}") from exc
        self.address = address
        self.rate_hz = rate_hz
        self.seq = 0
        self.sent = 0
        self.dropped = 0
        self.reader_lost: Callable[[], int] = lambda: 0

    def __call__(self, first: int, rows: np.ndarray, events: list[SafetyEvent]) -> None:
        msg = tick_batch(self.seq, first, rows, events, self.rate_hz, self.reader_lost(), self.dropped)
        self.seq += 1
        try:
            self.socket.send(msgpack.packb(msg, use_bin_type=True), zmq.NOBLOCK)
            self.sent += 1
        except zmq.Again:
            self.dropped += 1

    def close(self) -> None:
        self.socket.close()


#: how often (s) the monitor rewrites its status line in a terminal (batches arrive ~100 times a second)
MONITOR_REFRESH_S = 0.1
MONITOR_HEADER = "seq      tick0   n    t_s       x_mm     force_N   flags   late_max_us  events"


class MonitorPrinter:
    """The monitor's rows: in a terminal one status line rewritten at most every ``refresh_s`` (cut to the
    terminal's width), a batch with safety events written whole on a line of its own above it; elsewhere
    (a pipe, a file) one line per batch."""

    def __init__(self, out: TextIO, refresh_s: float = MONITOR_REFRESH_S, waiting: str = "") -> None:
        self.out = out
        self.live = StatusLine(out) if shown(out) else None
        self.refresh_s = refresh_s
        self._drawn_at = -math.inf
        self._pending: str | None = None
        self._rows = False
        out.write(MONITOR_HEADER + "\n")
        out.flush()
        if self.live is not None and waiting:
            self.live.show(waiting)                # until the first batch

    def row(self, text: str, events: bool) -> None:
        self._rows = True
        if self.live is None or events:
            if self.live is not None:
                self.live.clear()                  # the row stands whole, above the status line
                self._pending, self._drawn_at = None, -math.inf
            self.out.write(text + "\n")
            self.out.flush()
            return
        self._pending = text
        now = time.monotonic()
        if now - self._drawn_at >= self.refresh_s:
            self._draw(now)

    def close(self) -> None:
        """Show the last row and end the status line (blank it when no batch came)."""
        if self.live is not None and not self._rows:
            self.live.clear()
        elif self.live is not None:
            self._draw(time.monotonic())
            self.live.keep()

    def _draw(self, now: float) -> None:
        if self._pending is not None:
            self.live.show(self._pending)
            self._pending = None
        self._drawn_at = now


def monitor_row(msg: dict[str, Any]) -> str:
    """One batch's line: its last tick's time, position, force and flags, the worst lateness, the events."""
    ev = ",".join(e["event"] for e in msg.get("events", []))
    return (f"{msg['seq']:<8d} {msg['tick0']:<7d} {msg['n']:<4d} {msg['t_s'][-1]:<9.3f} "
            f"{msg['x_m'][-1] * 1e3:<8.4f} {msg['force_N'][-1]:<9.4f} {msg['flags'][-1]:<7d} "
            f"{max(msg['lateness_us']):<12.1f} {ev}").rstrip()


def monitor(address: str, duration_s: float | None = None, batches: int | None = None,
            out: TextIO = sys.stdout, context: zmq.Context | None = None, auth: Auth | None = None) -> dict[str, int]:
    """Subscribe to telemetry at ``address`` and print each batch (:class:`MonitorPrinter`: one line per
    batch, or in a terminal one status line); returns counters (``batches``, ``ticks``, ``gaps``: ticks
    missing between consecutive batches)."""
    ctx = context or zmq.Context.instance()
    sock = ctx.socket(zmq.SUB)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SUBSCRIBE, b"")
    sock.setsockopt(zmq.RCVTIMEO, 200)
    secure_client(sock, auth)
    sock.connect(address)
    end = None if duration_s is None else time.monotonic() + duration_s
    counts = {"batches": 0, "ticks": 0, "gaps": 0}
    next_tick = None
    printer = MonitorPrinter(out, waiting=f"waiting for telemetry from {address}")
    try:
        while (end is None or time.monotonic() < end) and (batches is None or counts["batches"] < batches):
            try:
                msg = msgpack.unpackb(sock.recv(), raw=False)
            except zmq.Again:
                continue
            if not isinstance(msg, dict) or msg.get("type") != "ticks" or not msg.get("n"):
                continue
            if next_tick is not None and msg["tick0"] > next_tick:
                counts["gaps"] += msg["tick0"] - next_tick
            next_tick = msg["tick0"] + msg["n"]
            counts["batches"] += 1
            counts["ticks"] += msg["n"]
            printer.row(monitor_row(msg), bool(msg.get("events")))
    finally:
        printer.close()
        sock.close()
    return counts

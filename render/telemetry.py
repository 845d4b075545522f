"""Telemetry (ZeroMQ XPUB, msgpack batches of every tick); control is in :mod:`hapticam.render.control`.

The message schema and the control requests are documented in docs/telemetry.md. The servo loop
never waits on either: a :class:`Pump` thread copies new ticks out of the loop's ring about 100 times a
second and hands them to the publisher (non-blocking sends behind a high-water mark, dropped batches
counted) and the recorder. The control thread (:class:`~hapticam.render.control.ControlServer`, imported
here too) validates every request and answers errors in-band; its only ways to affect the loop are the
model-swap slot and the stop flag, so nothing a client sends bypasses the safety layer. The monitor
(:func:`monitor`) trusts nothing a publisher sends: a message that is not a tick batch is counted and
skipped with one line, and strings from the peer are printed with their control characters escaped.
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
from hapticam.render.endpoints import Auth, ServerSecurity, prepare_bind, prepare_connect, secure_client
from hapticam.render.layout import R_F, R_FCMD, R_FLAGS, R_LATE, R_T, R_V, R_X
from hapticam.render.loop import ServoLoop
from hapticam.render.result import TickReader
from hapticam.render.stats import SafetyEvent, read_events

SCHEMA_VERSION = 1
BATCH_PERIOD_S = 0.01
DEFAULT_HWM = 1000              # batches queued for slow subscribers (~10 s) before dropping
#: the largest message a subscriber may send (bytes; ZMQ_MAXMSGSIZE, which also bounds its handshake): a
#: larger one drops the subscriber. Subscriptions are 1 byte (subscribe/unsubscribe) and the topic; batches
#: have none, so this only has to pass the handshakes: PLAIN's HELLO with the longest secret is 271 bytes,
#: a SUB's CURVE INITIATE 276 (measured: neither connects at 270 and 274). A CURVE subscriber that adds its
#: own metadata (ZMQ_METADATA) beyond some 40 bytes is dropped at its handshake; hapticam's clients add none.
#: At 512 bytes a flood held up to 14 MB (``TelemetryPublisher``).
MAX_SUBSCRIBER_MESSAGE_BYTES = 320
#: the most messages of one subscriber queued for the publisher (ZMQ_RCVHWM): ZeroMQ then takes a burst in
#: smaller pieces, so that the publisher counts it sooner (it does not bound what a burst makes it hold)
SUBSCRIBER_QUEUE = 4
#: the most subscription messages read per batch (the rest wait, in ZeroMQ's bounded queues, for the next)
SUBSCRIPTIONS_PER_BATCH = 1000
#: refused subscriptions (any topic but the empty one) after which the socket is reopened (TelemetryPublisher)
MAX_REFUSED_SUBSCRIPTIONS = 64
#: how long (s) a reopening waits for its TCP port to be released by the closed socket (about 2 ms measured)
REBIND_WAIT_S = 0.5

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
    """The telemetry message for one batch (schema: docs/telemetry.md)."""
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
    dropped (and reaches none). ``sent + dropped`` is the number of batches; the batches carry ``seq``.

    What a subscriber can make the publisher hold is bounded in size per message and over time. ZeroMQ keeps
    every distinct topic a subscriber sends in a trie of about 50 bytes per topic byte, freed only when that
    subscriber disconnects; batches have no topic, so only the empty one means anything. Subscriptions are
    therefore handled by hand (``XPUB_MANUAL``): before each batch the publisher reads them, applies the empty
    topic (and its unsubscription) and counts every other message in ``refused_subscriptions``; once more
    than ``MAX_REFUSED_SUBSCRIPTIONS`` were refused since the socket opened, it closes the socket and binds it
    again (counted in ``resets``), which frees the trie and drops every subscriber (they reconnect by
    themselves and miss the batches of the meantime). A message larger than ``MAX_SUBSCRIBER_MESSAGE_BYTES``
    drops its sender. What ZeroMQ takes in between two batches, before it can be counted, is still held until
    the reset, and it grows with the size of the topics: 10,000 subscriptions of 1000 bytes in bursts held
    63 to 110 MB (the limit was 1024 bytes then); of 319 bytes, the largest now taken, 0.2 to 2.2 MB, and
    up to 5.7 MB from a subscriber reconnecting for each burst or on a loaded machine (147 MB without the
    resets; ``tests/test_hostile_peers.py``).
    ``warning``: what to tell the user about who can connect (:func:`~hapticam.render.endpoints.prepare_bind`)."""

    def __init__(self, address: str, rate_hz: float, hwm: int = DEFAULT_HWM,
                 context: zmq.Context | None = None, security: ServerSecurity | None = None) -> None:
        self.warning = prepare_bind(address, "telemetry", None if security is None else security.auth)
        self.context = context or zmq.Context.instance()
        self.address, self.hwm, self.security = address, hwm, security
        self.socket: zmq.Socket | None = self._bound_socket()
        self.rate_hz = rate_hz
        self.seq = 0
        self.sent = 0
        self.dropped = 0
        self.refused_subscriptions = 0
        self.resets = 0
        self._refused_here = 0                     # refused since the socket was (re)opened
        self.reader_lost: Callable[[], int] = lambda: 0

    def _bound_socket(self, retry_s: float = 0.0) -> zmq.Socket:
        """A new XPUB bound to the address; ``retry_s``: how long (s) to retry while the address is still
        held (a socket just closed releases its TCP port a few milliseconds later)."""
        sock = self.context.socket(zmq.XPUB)
        if self.security is not None:
            self.security.apply(sock)
        for option, value in ((zmq.XPUB_NODROP, 1), (zmq.XPUB_MANUAL, 1), (zmq.SNDHWM, self.hwm),
                              (zmq.RCVHWM, SUBSCRIBER_QUEUE), (zmq.MAXMSGSIZE, MAX_SUBSCRIBER_MESSAGE_BYTES),
                              (zmq.LINGER, 0)):
            sock.setsockopt(option, value)          # before bind: they apply to every subscriber
        give_up = time.monotonic() + retry_s
        while True:
            try:
                sock.bind(self.address)
                return sock
            except zmq.ZMQError as exc:
                if exc.errno == zmq.EADDRINUSE and time.monotonic() < give_up:
                    time.sleep(0.001)
                    continue
                sock.close()
                raise ControlError(f"telemetry: cannot bind {self.address}: {exc}") from exc

    def read_subscriptions(self) -> None:
        """Apply the subscriptions to every batch (the empty topic), count the others without applying them,
        and reopen the socket once too many were refused (class docstring)."""
        for _ in range(SUBSCRIPTIONS_PER_BATCH):
            try:
                message = self.socket.recv(zmq.NOBLOCK)
            except zmq.Again:
                return
            if message in (b"\x01", b"\x00"):               # for the subscriber that sent it
                self.socket.setsockopt(zmq.SUBSCRIBE if message == b"\x01" else zmq.UNSUBSCRIBE, b"")
                continue
            self.refused_subscriptions += 1
            self._refused_here += 1
            if self._refused_here > MAX_REFUSED_SUBSCRIPTIONS:
                self._reopen()
                return

    def _reopen(self) -> None:
        self.socket.close()
        self.socket, self._refused_here = None, 0
        self.resets += 1
        self.socket = self._bound_socket(REBIND_WAIT_S)   # on failure (the address was taken) no batch goes out

    def __call__(self, first: int, rows: np.ndarray, events: list[SafetyEvent]) -> None:
        msg = tick_batch(self.seq, first, rows, events, self.rate_hz, self.reader_lost(), self.dropped)
        self.seq += 1
        if self.socket is None:                     # a reopening failed
            self.dropped += 1
            return
        self.read_subscriptions()
        try:
            self.socket.send(msgpack.packb(msg, use_bin_type=True), zmq.NOBLOCK)
            self.sent += 1
        except zmq.Again:
            self.dropped += 1

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()


#: how often (s) the monitor rewrites its status line in a terminal (batches arrive ~100 times a second)
MONITOR_REFRESH_S = 0.1
MONITOR_HEADER = "seq      tick0   n    t_s       x_mm     force_N   flags   late_max_us  events"


class MonitorPrinter:
    """The monitor's rows: in a terminal one status line rewritten at most every ``refresh_s`` (cut to the
    terminal's width), a batch with safety events written whole on a line of its own above it; elsewhere
    (a pipe, a file) one line per batch."""

    def __init__(self, out: TextIO, refresh_s: float = MONITOR_REFRESH_S, waiting: str = "",
                 err: TextIO | None = None) -> None:
        self.out = out
        self.err = sys.stderr if err is None else err
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

    def note(self, text: str) -> None:
        """A line that is not a batch (a skipped message): in a terminal above the status line, else on ``err``
        (so that ``out`` stays one line per batch)."""
        if self.live is None:
            self.err.write(text + "\n")
            self.err.flush()
            return
        self.live.clear()
        self._drawn_at = -math.inf
        self.out.write(text + "\n")
        self.out.flush()

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


#: the largest message the monitor takes (bytes; a larger one drops the publisher's connection): the largest
#: batch is a simulated-clock run's chunk, half of at most 3.6 million ticks at about 63 bytes each (113 MB)
MONITOR_MAX_MESSAGE_BYTES = 128 * 1024 * 1024
#: how many messages wait unread in the monitor (ZMQ_RCVHWM; the publisher queues 1000 more for it)
MONITOR_QUEUE = 4
#: the batch fields the monitor reads: a list of ``n`` numbers each
MONITOR_SERIES = ("t_s", "x_m", "force_N", "flags", "lateness_us")
MAX_SHOWN_EVENTS = 8
MAX_SHOWN_CHARS = 40


def printable(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` safe to print on a terminal: every non-printable character (escape codes, control characters,
    bidirectional overrides) written as its ``\\xNN``/``\\uNNNN`` escape, cut to ``limit`` characters."""
    shown = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def batch_problem(msg: Any) -> str | None:
    """Why ``msg`` (an unpacked telemetry message) is not a tick batch the monitor can show; ``None`` if it is.
    Every field the monitor reads is checked for its type (docs/telemetry.md)."""
    if not isinstance(msg, dict):
        return f"not a map but {type(msg).__name__}"
    if msg.get("type") != "ticks":
        return f"type {printable(repr(msg.get('type')))} is not 'ticks'"
    for key in ("seq", "tick0", "n"):
        if not (isinstance(msg.get(key), int) and not isinstance(msg.get(key), bool) and msg[key] >= 0):
            return f"'{key}' is not a count (a whole number >= 0)"
    for key in MONITOR_SERIES:
        series = msg.get(key)
        if not (isinstance(series, list) and len(series) == msg["n"] and all(map(_number, series))):
            return f"'{key}' is not a list of n = {msg['n']} numbers"
    if not all(isinstance(f, int) for f in msg["flags"]):
        return "'flags' are not whole numbers"
    events = msg.get("events", [])
    if not (isinstance(events, list) and all(isinstance(e, dict) and isinstance(e.get("event"), str) for e in events)):
        return "'events' is not a list of maps with an 'event' name"
    return None


def monitor_row(msg: dict[str, Any]) -> str:
    """One batch's line: its last tick's time, position, force and flags, the worst lateness, the events
    (names escaped: :func:`printable`). ``msg`` has passed :func:`batch_problem` and has ``n > 0``."""
    names = [printable(e["event"]) for e in msg.get("events", [])]
    ev = ",".join(names[:MAX_SHOWN_EVENTS]) + (f",... ({len(names)} events)" if len(names) > MAX_SHOWN_EVENTS else "")
    return (f"{msg['seq']:<8d} {msg['tick0']:<7d} {msg['n']:<4d} {msg['t_s'][-1]:<9.3f} "
            f"{msg['x_m'][-1] * 1e3:<8.4f} {msg['force_N'][-1]:<9.4f} {msg['flags'][-1]:<7d} "
            f"{max(msg['lateness_us']):<12.1f} {ev}").rstrip()


def _unpacked(data: bytes) -> tuple[Any, str | None]:
    """A message's msgpack contents, or the reason it has none."""
    try:
        return msgpack.unpackb(data, raw=False), None
    except Exception as exc:                 # whatever a publisher sends is only a malformed message here
        return None, f"not msgpack ({type(exc).__name__})"


def monitor(address: str, duration_s: float | None = None, batches: int | None = None,
            out: TextIO = sys.stdout, context: zmq.Context | None = None, auth: Auth | None = None,
            err: TextIO | None = None) -> dict[str, int]:
    """Subscribe to telemetry at ``address`` and print each batch (:class:`MonitorPrinter`: one line per
    batch, or in a terminal one status line); returns counters (``batches``, ``ticks``, ``gaps``: ticks
    missing between consecutive batches, ``malformed``: messages that were not a tick batch, each skipped
    with one line on ``err`` (default stderr; in a terminal, above the status line)).
    Nothing a publisher sends raises here: any message is a batch, an empty batch, or malformed."""
    ctx = context or zmq.Context.instance()
    prepare_connect(address)
    sock = ctx.socket(zmq.SUB)
    for option, value in ((zmq.LINGER, 0), (zmq.RCVTIMEO, 200), (zmq.RCVHWM, MONITOR_QUEUE),
                          (zmq.MAXMSGSIZE, MONITOR_MAX_MESSAGE_BYTES)):
        sock.setsockopt(option, value)
    sock.setsockopt(zmq.SUBSCRIBE, b"")
    secure_client(sock, auth)
    sock.connect(address)
    end = None if duration_s is None else time.monotonic() + duration_s
    counts = {"batches": 0, "ticks": 0, "gaps": 0, "malformed": 0}
    next_tick = None
    printer = MonitorPrinter(out, waiting=f"waiting for telemetry from {printable(address, 200)}",
                             err=sys.stderr if err is None else err)
    try:
        while (end is None or time.monotonic() < end) and (batches is None or counts["batches"] < batches):
            try:
                data = sock.recv()
            except zmq.Again:
                continue
            msg, problem = _unpacked(data)
            problem = problem or batch_problem(msg)
            if problem is not None:
                counts["malformed"] += 1
                printer.note(f"skipped a malformed message ({len(data)} bytes): {problem}")
                continue
            if msg["n"] == 0:
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
        if counts["malformed"]:
            printer.err.write(f"{counts['malformed']} malformed messages skipped\n")
            printer.err.flush()
    return counts

"""Telemetry (ZeroMQ PUB, msgpack batches of every tick) and control (ZeroMQ REP, msgpack requests).

The message schema and the control requests are documented in the README (section "Telemetry and control"). The servo loop
never waits on either: a :class:`Pump` thread copies new ticks out of the loop's ring about 100 times a
second and hands them to the publisher (non-blocking sends behind a high-water mark, dropped batches
counted) and the recorder. The :class:`ControlServer` thread validates every request and answers errors
in-band; its only ways to affect the loop are the model-swap slot and the stop flag, so nothing a client
sends bypasses the safety layer.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
import time
from typing import Any, Callable, TextIO

import msgpack
import numpy as np
import zmq

from hapticam.errors import ControlError, HapticError
from hapticam.render.layout import K_RUNNING, R_F, R_FCMD, R_FLAGS, R_LATE, R_T, R_V, R_X
from hapticam.render.loop import ServoLoop
from hapticam.render.result import TickReader
from hapticam.render.recording import Recorder
from hapticam.render.stats import SafetyEvent, read_events

SCHEMA_VERSION = 1
BATCH_PERIOD_S = 0.01
DEFAULT_HWM = 1000              # batches queued for slow subscribers (~10 s) before dropping
MAX_REQUEST_BYTES = 64 * 1024
TRANSPORT_MAX_BYTES = 16 * 1024 * 1024  # larger messages are cut off by ZeroMQ (connection dropped)
COMMANDS = ("status", "load_model", "set_param", "record_start", "record_stop", "stop")

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
                 context: zmq.Context | None = None) -> None:
        require_loopback(address, "telemetry")
        self.context = context or zmq.Context.instance()
        self.socket = self.context.socket(zmq.XPUB)
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


LOOPBACK_HOSTS = ("127.", "localhost", "[::1]")


def require_loopback(address: str, what: str) -> None:
    """Refuse to bind beyond this machine: the control and telemetry sockets have no authentication, so
    only loopback TCP (127.0.0.0/8, localhost, [::1]) and ipc:// endpoints are served."""
    if address.startswith("ipc://"):
        return
    host = address[len("tcp://"):] if address.startswith("tcp://") else ""
    if not host.startswith(LOOPBACK_HOSTS):
        raise ControlError(f"{what}: {address} is not a loopback address; without authentication hapticam "
                           "binds only to 127.0.0.1, localhost, [::1] or ipc://")


class ControlServer(threading.Thread):
    """REP socket answering the control requests of the README (section "Telemetry and control").

    ``load_model`` is given a function that loads and validates a model file (the CLI passes
    :func:`hapticam.models.files.load_model_only`).
    """

    def __init__(self, address: str, loop: ServoLoop, recorder: Recorder,
                 load_model: Callable[[str], Any], status_extra: Callable[[], dict] | None = None,
                 context: zmq.Context | None = None, *, record_dir: str | os.PathLike[str] = ".",
                 model_dir: str | os.PathLike[str] | None = None,
                 check_model: Callable[[Any], None] | None = None) -> None:
        super().__init__(name="hapticam-control", daemon=True)
        require_loopback(address, "control")
        self.record_dir = Path(record_dir).resolve()
        self.model_dir = None if model_dir is None else Path(model_dir).resolve()
        if not self.record_dir.is_dir():
            raise ControlError(f"control: recording folder {self.record_dir} does not exist")
        if self.model_dir is not None and not self.model_dir.is_dir():
            raise ControlError(f"control: model folder {self.model_dir} does not exist")
        self.check_model = check_model or (lambda model: None)
        self.context = context or zmq.Context.instance()
        self.socket = self.context.socket(zmq.REP)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.MAXMSGSIZE, TRANSPORT_MAX_BYTES)
        try:
            self.socket.bind(address)
        except zmq.ZMQError as exc:
            self.socket.close()
            raise ControlError(f"control: cannot bind {address}: {exc}") from exc
        self.address = address
        self.loop = loop
        self.recorder = recorder
        self.load_model = load_model
        self.status_extra = status_extra or dict
        self._halt = threading.Event()
        self.requests = 0
        self.errors = 0

    def run(self) -> None:
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        while not self._halt.is_set():
            try:
                if not poller.poll(50):
                    continue
                data = self.socket.recv(zmq.NOBLOCK)
            except zmq.ZMQError:
                continue
            reply = self.handle(data)
            try:
                self.socket.send(msgpack.packb(reply, use_bin_type=True))
            except zmq.ZMQError:
                pass
        self.socket.close()

    def halt(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join()

    # -- requests -----------------------------------------------------------------------------------
    def handle(self, data: bytes) -> dict[str, Any]:
        """Answer one request (bytes in, reply mapping out); never raises."""
        self.requests += 1
        try:
            req = self._parse(data)
            cmd = req["cmd"]
            reply = getattr(self, f"_cmd_{cmd}")(req)
            return {"ok": True, "cmd": cmd, **reply}
        except (HapticError, ValueError, TypeError, KeyError, OSError) as exc:
            self.errors += 1
            return {"ok": False, "error": str(exc) or type(exc).__name__}
        except Exception as exc:  # anything else is still only a bad request to the client
            self.errors += 1
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    @staticmethod
    def _parse(data: bytes) -> dict[str, Any]:
        if len(data) > MAX_REQUEST_BYTES:
            raise ControlError(f"request larger than {MAX_REQUEST_BYTES} bytes")
        try:
            req = msgpack.unpackb(data, raw=False, strict_map_key=True)
        except Exception as exc:
            raise ControlError(f"request is not valid msgpack ({type(exc).__name__})") from None
        if not isinstance(req, dict):
            raise ControlError("request must be a msgpack map with a 'cmd' field")
        cmd = req.get("cmd")
        if cmd not in COMMANDS:
            raise ControlError(f"unknown cmd {cmd!r}; expected one of {', '.join(COMMANDS)}")
        return req

    @staticmethod
    def _string(req: dict[str, Any], key: str) -> str:
        val = req.get(key)
        if not isinstance(val, str) or not val or len(val) > 4096 or "\x00" in val:
            raise ControlError(f"'{key}' must be a non-empty string")
        return val

    def _cmd_status(self, req: dict[str, Any]) -> dict[str, Any]:
        loop = self.loop
        model = loop.model
        return {"ticks": loop.ticks, "rate_hz": loop.rate_hz, "running": bool(loop.ctl[K_RUNNING]),
                "model": getattr(model, "kind", "compiled"), "stats": loop.stats().to_dict(),
                "recording": str(self.recorder.path) if self.recorder.active else None,
                "events": [e.to_dict() for e in loop.all_events()[-20:]], **self.status_extra()}

    def _cmd_load_model(self, req: dict[str, Any]) -> dict[str, Any]:
        name = self._file_name(req)
        if name.startswith("example:"):
            source = name
        elif self.model_dir is None:
            raise ControlError("load_model: only bundled models (example:NAME) here; start the render with "
                               "--model-dir to allow model files")
        else:
            source = str(self.model_dir / name)
        model = self.load_model(source)
        self.check_model(model)
        self.loop.load_model(model)
        return {"model": getattr(model, "kind", "compiled")}

    @staticmethod
    def _file_name(req: dict[str, Any]) -> str:
        """A file name (no folder, no '..') or a bundled name: requests never name a path."""
        if "path" in req:
            raise ControlError("give the file's 'name' (inside the folder fixed at start), not a 'path'")
        name = ControlServer._string(req, "name")
        if name.startswith("example:"):
            return name
        if "/" in name or "\\" in name or name in (".", "..") or name.startswith("."):
            raise ControlError(f"'name' must be a plain file name, got {name!r}")
        return name

    def _cmd_set_param(self, req: dict[str, Any]) -> dict[str, Any]:
        name = self._string(req, "name")
        value = req.get("value")
        if not _plain_value(value):
            raise ControlError("'value' must be a number, a string, or a list of numbers")
        self.loop.set_parameter(name, value, check=self.check_model)
        return {"name": name}

    def _cmd_record_start(self, req: dict[str, Any]) -> dict[str, Any]:
        path = self.record_dir / self._file_name(req)
        if path.exists():
            raise ControlError(f"record_start: {path.name} exists in the recording folder; choose another name")
        self.recorder.start(path)
        return {"path": str(path)}

    def _cmd_record_stop(self, req: dict[str, Any]) -> dict[str, Any]:
        done = self.recorder.stop()
        if done is None:
            raise ControlError("not recording")
        return {"path": str(done[0]), "ticks": done[1]}

    def _cmd_stop(self, req: dict[str, Any]) -> dict[str, Any]:
        self.loop.request_stop()
        return {"ticks": self.loop.ticks}


def _plain_value(value: Any, depth: int = 0) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float, str)):
        return True
    if isinstance(value, list) and depth == 0 and len(value) <= 1_000_000:
        return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    return False


def request(address: str, message: dict[str, Any], timeout_s: float = 5.0,
            context: zmq.Context | None = None) -> dict[str, Any]:
    """Send one control request and return the reply (a REQ socket per call)."""
    ctx = context or zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, int(timeout_s * 1000))
    try:
        sock.connect(address)
        sock.send(msgpack.packb(message, use_bin_type=True))
        return msgpack.unpackb(sock.recv(), raw=False)
    except zmq.Again:
        raise ControlError(f"no reply from {address} within {timeout_s:g} s") from None
    finally:
        sock.close()


def monitor(address: str, duration_s: float | None = None, batches: int | None = None,
            out: TextIO = sys.stdout, context: zmq.Context | None = None) -> dict[str, int]:
    """Subscribe to telemetry at ``address`` and print one line per batch; returns counters
    (``batches``, ``ticks``, ``gaps``: ticks missing between consecutive batches)."""
    ctx = context or zmq.Context.instance()
    sock = ctx.socket(zmq.SUB)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SUBSCRIBE, b"")
    sock.setsockopt(zmq.RCVTIMEO, 200)
    sock.connect(address)
    end = None if duration_s is None else time.monotonic() + duration_s
    counts = {"batches": 0, "ticks": 0, "gaps": 0}
    next_tick = None
    out.write("seq      tick0   n    t_s       x_mm     force_N   flags   late_max_us  events\n")
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
            ev = ",".join(e["event"] for e in msg.get("events", []))
            out.write(f"{msg['seq']:<8d} {msg['tick0']:<7d} {msg['n']:<4d} {msg['t_s'][-1]:<9.3f} "
                      f"{msg['x_m'][-1] * 1e3:<8.4f} {msg['force_N'][-1]:<9.4f} {msg['flags'][-1]:<7d} "
                      f"{max(msg['lateness_us']):<12.1f} {ev}\n")
            out.flush()
    finally:
        sock.close()
    return counts

"""Serve a device over ZeroMQ for :class:`~hapticam.devices.remote.RemoteDevice` (``hapticam device serve``).

:func:`serve_device` binds a REP socket (loopback, where any local user can connect, or ``ipc://``; another
interface only with ``allow_network=True``; ``hapticam device serve`` binds by default where only its user
can connect: :mod:`hapticam.commands.serve`), takes messages of at most ``SERVE_MAX_MESSAGE_BYTES`` (a
larger one drops its client) and answers, one request at a time:

- msgpack ``{"op": "hello", "protocol": 1, "rate_hz": R}`` -> ``{"ok": true, "protocol": 1, "spec": {...},
  "simulated": bool}``; a simulated device is then stepped by ``1 / R`` seconds per request;
- msgpack ``{"op": "ping"}`` -> ``{"ok": true}`` (the client measures the round trip);
- msgpack ``{"op": "bye"}`` -> zero force, ``{"ok": true}``;
- a tick request (``REQUEST`` of :mod:`hapticam.devices.remote`): sample the device with its binding's
  ``sense``, reply (``REPLY``: status, the request's sequence number, the I/O block), then command the
  request's force with ``actuate``. Sampling before actuating is the lockstep order the adapter
  documents (one tick of delay); replying before actuating keeps the physics out of the round trip.

Zero force is the served device's last command whatever ends a client's run: its loop's last request (zero,
flagged last), ``bye``, the server stopping, or, for a client that vanished with a force on, the server's
watchdog (no tick request for ``watchdog_ms``).

The device is driven through its own compiled sense/actuate functions (one call each per request), so any
device with a servo binding can be served; the simulator is the usual one. A malformed request gets
``{"ok": false, "error": ...}`` (a REP socket must answer every request) and is counted.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlsplit

import msgpack
import numpy as np
import zmq

from hapticam.devices.base import (IO_AUX0, IO_AUX1, IO_FORCE, IO_HAS_V, IO_SIZE, IO_T, IO_V, IO_X, Device)
from hapticam.devices.remote import FLAG_LAST, PROTOCOL, REP_MAGIC, REPLY, REQ_MAGIC, REQUEST
from hapticam.errors import DeviceError, UsageError

DEFAULT_ADDRESS = "tcp://127.0.0.1:5601"


@dataclass
class ServeStats:
    """What a server did: tick requests answered, handshakes, malformed requests, device fault replies,
    forces zeroed by the watchdog (a client silent with a force on)."""

    ticks: int = 0
    handshakes: int = 0
    bad_requests: int = 0
    device_faults: int = 0
    watchdog_zeroes: int = 0
    endpoint: str = ""


def port_problem(address: str) -> str | None:
    """What is wrong with a tcp:// endpoint's port (None if nothing): a number from 0 to 65535 or ``*``
    (ZeroMQ would otherwise bind another port than the one printed)."""
    if not address.startswith("tcp://"):
        return None
    port = address.rsplit(":", 1)[-1] if address.count(":") >= 2 else ""
    if port == "*" or (port.isdigit() and int(port) <= 65535):
        return None
    return f"{address}: the port must be a number from 0 to 65535 (or *), got {port or 'none'!r}"


def check_bind_address(address: str, allow_network: bool = False) -> str:
    """``address`` if it is a loopback TCP endpoint or ipc/inproc; another interface needs ``allow_network``
    (a served device accepts force commands from whoever connects)."""
    if not isinstance(address, str) or "://" not in address:
        raise UsageError(f"serve address: a ZeroMQ endpoint such as {DEFAULT_ADDRESS}, got {address!r}")
    scheme = address.split("://", 1)[0]
    if scheme in ("ipc", "inproc"):
        return address
    if scheme != "tcp":
        raise UsageError(f"serve address: tcp://, ipc:// or inproc://, got {address!r}")
    if (problem := port_problem(address)) is not None:
        raise UsageError(f"serve address {problem}")
    host = urlsplit(address).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not allow_network:
        raise UsageError(f"serve address {address}: not a loopback address; serving a device to the network "
                         "lets anyone who can reach it command forces: pass allow_network (--allow-network)")
    return address


#: the largest message a served device accepts (bytes): a larger one drops its client (ZMQ_MAXMSGSIZE)
SERVE_MAX_MESSAGE_BYTES = 64 * 1024


class _Served:
    """One device's binding and I/O block, driven per request."""

    def __init__(self, device: Device) -> None:
        self.device = device.open()
        self.binding = device.servo_binding()
        self.io = np.zeros(IO_SIZE)
        self.dt_s = 1e-3
        self.pending = 0                                   # an actuate fault, reported with the next reply
        self.holding = False                               # the last command was not zero
        self.last_tick_s = 0.0                             # when the last tick request arrived (monotonic s)
        self.stop()                                        # zero force from the start (and the compiled
                                                           # actuate loaded before a client waits on it)

    def hello(self, msg: dict[str, Any]) -> dict[str, Any]:
        if msg.get("protocol") != PROTOCOL:
            return {"ok": False, "error": f"protocol {msg.get('protocol')!r} not supported (server: {PROTOCOL})"}
        rate = msg.get("rate_hz", 1000.0)
        if not (isinstance(rate, (int, float)) and 100.0 <= rate <= 10_000.0):
            return {"ok": False, "error": f"rate_hz must be 100-10000, got {rate!r}"}
        self.dt_s = 1.0 / float(rate)
        return {"ok": True, "protocol": PROTOCOL, "spec": self.device.spec.to_dict(),
                "simulated": bool(self.binding.simulated)}

    def tick(self, seq: int, force_N: float, last: bool) -> bytes:
        b, io = self.binding, self.io
        status = int(b.sense(b.state, io)) or self.pending
        reply = REPLY.pack(REP_MAGIC, status, seq, io[IO_T], io[IO_X], io[IO_V], io[IO_HAS_V], io[IO_AUX0],
                           io[IO_AUX1])
        io[IO_FORCE] = force_N if force_N == force_N else 0.0
        self.pending = int(b.actuate(b.state, io, 0.0 if last else self.dt_s))
        self.holding = io[IO_FORCE] != 0.0
        self.last_tick_s = time.monotonic()
        return reply

    def stop(self) -> None:
        """Command zero force (the loop's last call: ``dt_s = 0``)."""
        self.io[IO_FORCE] = 0.0
        self.binding.actuate(self.binding.state, self.io, 0.0)
        self.holding = False


def _answer(served: _Served, msg: bytes, stats: ServeStats) -> bytes:
    if len(msg) == REQUEST.size and int.from_bytes(msg[:4], "little") == REQ_MAGIC:
        _, flags, seq, force = REQUEST.unpack(msg)
        stats.ticks += 1
        reply = served.tick(seq, force, bool(flags & FLAG_LAST))
        stats.device_faults += served.pending != 0
        return reply
    try:
        req = msgpack.unpackb(msg, raw=False, strict_map_key=True)    # stated: defaults changed across msgpack
        op = req.get("op") if isinstance(req, dict) else None
    except Exception:                          # any malformed message is answered as unknown, never raised
        op = None
    if op == "hello":
        stats.handshakes += 1
        return msgpack.packb(served.hello(req))
    if op == "ping":
        return msgpack.packb({"ok": True})
    if op == "bye":
        served.stop()
        return msgpack.packb({"ok": True})
    stats.bad_requests += 1
    return msgpack.packb({"ok": False, "error": "expected a tick request or a msgpack map with op hello|ping|bye"})


def serve_device(device: Device, address: str = DEFAULT_ADDRESS, *, stop: threading.Event | None = None,
                 on_ready: Callable[[str], None] | None = None, allow_network: bool = False,
                 poll_ms: int = 50, watchdog_ms: float = 100.0) -> ServeStats:
    """Serve ``device`` on ``address`` until ``stop`` is set (or KeyboardInterrupt); returns the counts.

    ``on_ready(endpoint)`` is called once bound (with the port resolved when the address ends in ``:*``).
    The device is opened here and left open (its owner closes it); zero force is commanded on exit, and
    when no tick request came for ``watchdog_ms`` (ms; checked every ``poll_ms``) after a nonzero force."""
    check_bind_address(address, allow_network)
    if not (isinstance(watchdog_ms, (int, float)) and 0 < watchdog_ms < float("inf")):
        raise UsageError(f"serve watchdog_ms: a positive number of ms, got {watchdog_ms!r}")
    served = _Served(device)
    stats = ServeStats()
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.MAXMSGSIZE, SERVE_MAX_MESSAGE_BYTES)        # before bind: a larger message drops its peer
    try:
        try:
            sock.bind(address)
        except zmq.ZMQError as exc:
            raise DeviceError(f"cannot serve on {address}: {exc}") from exc
        stats.endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        if on_ready is not None:
            on_ready(stats.endpoint)
        while stop is None or not stop.is_set():
            if sock.poll(poll_ms):
                sock.send(_answer(served, sock.recv(), stats))
            if served.holding and time.monotonic() - served.last_tick_s > watchdog_ms * 1e-3:
                served.stop()                              # the client went silent with a force on
                stats.watchdog_zeroes += 1
    except KeyboardInterrupt:
        pass
    finally:
        served.stop()
        sock.close(0)
        ctx.term()
    return stats


class DeviceServer:
    """:func:`serve_device` on a background thread: ``with DeviceServer(device) as endpoint: ...``."""

    def __init__(self, device: Device, address: str = "tcp://127.0.0.1:*", allow_network: bool = False,
                 watchdog_ms: float = 100.0) -> None:
        self.device, self.address, self.allow_network = device, address, allow_network
        self.watchdog_ms = watchdog_ms
        self.stats: ServeStats | None = None
        self.endpoint = ""
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="hapticam-device-server", daemon=True)

    def _run(self) -> None:
        try:
            self.stats = serve_device(self.device, self.address, stop=self._stop, on_ready=self._bound,
                                      allow_network=self.allow_network, poll_ms=20, watchdog_ms=self.watchdog_ms)
        except BaseException as exc:  # reported by start()
            self._error = exc
            self._ready.set()

    def _bound(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self._ready.set()

    def start(self, timeout_s: float = 10.0) -> str:
        """Start serving; returns the bound endpoint."""
        self._thread.start()
        if not self._ready.wait(timeout_s) or self._error is not None:
            raise DeviceError(f"device server did not start: {self._error}") from self._error
        return self.endpoint

    def stop(self) -> ServeStats:
        """Stop serving (zero force) and return the counts."""
        self._stop.set()
        self._thread.join()
        return self.stats or ServeStats()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

"""A device served by another process or machine over ZeroMQ: ``--device zmq:ADDRESS``.

The server (:func:`hapticam.devices.remote_server.serve_device`, ``hapticam device serve``) owns the
device; this adapter is its proxy in the servo loop.

Before the loop (Python, pyzmq): a DEALER socket connects to the server's REP socket, sends a msgpack
``{"op": "hello", "protocol": 1, "rate_hz": ...}`` and receives ``{"ok": true, "spec": {...},
"simulated": ...}``, the served device's :class:`~hapticam.devices.base.DeviceSpec`, checked as any
device's is (a server is a peer: an infinite, NaN or negative figure refuses the handshake before a force is
sent); one first request fetches the handle's position before the first tick.

Each tick (compiled, :func:`remote_sense` / :func:`remote_actuate`): lockstep request/reply of fixed
little-endian structs, sent and received with libzmq's ``zmq_send``/``zmq_recv`` and ``ZMQ_DONTWAIT``
called from numba (``types.ExternalFunction``) on the raw socket pyzmq created (``socket.underlying``),
in the very libzmq pyzmq loaded (found in the process's memory map, loaded for the JIT with
``llvmlite.binding.load_library_permanently``; every symbol is checked before anything is compiled).
Tick ``k`` consumes the reply to request ``k`` (sent by tick ``k-1``) and sends request ``k+1``::

    request  <IIqd   magic "HCR1", flags (1: the loop's last command), seq, force_N (model convention)
    reply    <Iiq6d  magic "HCA1", device status, seq echo, t_s, x_m, v_mps, has_v, aux0, aux1

The server samples the device when a request arrives, replies, then applies the force: the position a
tick uses is one period old (one tick of delay) plus the network's delay. A reply that has not arrived
is stale data (the loop's watchdog zeroes the force after ``stale_ticks``); a reply older than the last
one is discarded. The two diagnostics recorded per tick are the served device's first one (the
simulator's true position) and the age of the sample in requests (0 in lockstep). Silence for ``silence_ms`` stops the loop (``FAULT_SILENT``); a served device's
fault status is passed on (``ERR_REMOTE`` recoverable, ``FAULT_REMOTE`` fatal).

Network delay erodes passivity: a wall rendered from a position ``d`` seconds old behaves like a
sampled wall with period ``T + d``, so Colgate & Schenkel's bound ``K < 2 b / (T + 2 d)`` shrinks with
every millisecond of round trip, and a stiff model that is passive on a local device can add energy
through the network. The adapter's spec therefore says ``passivity_required`` (the loop keeps the
passivity observer/controller of Hannaford & Ryu 2002 on for remote devices) and its
``max_stiffness_N_per_m`` is the served device's bound derated by the measured round trip.

References
----------
Colgate, J. E. and Schenkel, G. G. (1997). Passivity of a class of sampled-data systems: application to
haptic interfaces. J. Robotic Systems 14(1). Hannaford, B. and Ryu, J.-H. (2002). Time-domain
passivity control of haptic interfaces. IEEE Trans. Robotics and Automation 18(1).
"""

from __future__ import annotations

import ctypes
import errno
import math
import os
import struct
import time
from dataclasses import dataclass
from typing import Any

import llvmlite.binding as llb
import msgpack
import numpy as np
import zmq
from numba import njit, types

from hapticam.devices.base import (IO_AUX0, IO_AUX1, IO_FORCE, IO_HAS_V, IO_SEQ, IO_SIZE, IO_T, IO_V, IO_X,
                                   Device, DeviceSpec, DeviceState, ServoBinding, UnopenedDeviceSpec)
from hapticam.errors import DependencyMissingError, DeviceError, UsageError

PROTOCOL = 1
REQ_MAGIC = 0x31524348          # b"HCR1" little endian
REP_MAGIC = 0x31414348          # b"HCA1"
REQUEST = struct.Struct("<IIqd")
REPLY = struct.Struct("<Iiq6d")
REQUEST_SIZE = 24               # REQUEST.size, as a constant the compiled code can read
REPLY_SIZE = 64                 # REPLY.size
FLAG_LAST = 1
PINGS = 5
ZMQ_DONTWAIT = 1
ZMQ_SNDMORE = 2
_SYMBOLS = ("zmq_send", "zmq_recv", "zmq_errno")


def libzmq_path() -> str:
    """Path of the libzmq pyzmq loaded (its bundled copy in ``pyzmq.libs``, or the system's), read from
    the process's memory map after pyzmq's backend is imported."""
    import zmq.backend.cython  # noqa: F401  (loads libzmq)

    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        for line in maps:
            path = line.rsplit(None, 1)[-1] if line.count("/") else ""
            if "libzmq" in os.path.basename(path):
                return path
    raise DependencyMissingError("zmq device: cannot find the libzmq that pyzmq loaded (pyzmq built without a "
                                 "shared libzmq?); reinstall pyzmq from its wheel")


def _load_libzmq() -> None:
    path = libzmq_path()
    lib = ctypes.CDLL(path)
    missing = [s for s in _SYMBOLS if not hasattr(lib, s)]
    if missing:
        raise DeviceError(f"zmq device: {path} lacks {', '.join(missing)}")
    llb.load_library_permanently(path)


_load_libzmq()
z_send = types.ExternalFunction("zmq_send", types.int32(types.int64, types.int64, types.uint64, types.int32))
z_recv = types.ExternalFunction("zmq_recv", types.int32(types.int64, types.int64, types.uint64, types.int32))
z_errno = types.ExternalFunction("zmq_errno", types.int32())

ERR_BAD_REPLY = 1
ERR_TX = 2
ERR_REMOTE = 3
FAULT_SOCKET = -1
FAULT_SILENT = -2
FAULT_REMOTE = -3
STATUS_TEXT = {ERR_BAD_REPLY: "malformed reply dropped", ERR_TX: "request not sent (no connection or queue full)",
               ERR_REMOTE: "the served device reported a recoverable fault", FAULT_SOCKET: "socket error",
               FAULT_SILENT: "server silent longer than silence_ms",
               FAULT_REMOTE: "the served device reported a fatal fault"}

I_SOCK, I_SEQ, I_SEEN, I_FRESH, I_SILENT, I_SILENCE_LIMIT, I_REMOTE_STATUS, I_ERRNO = range(8)
I_N_REPLY, I_N_STALE, I_N_OLD, I_N_BAD, I_N_TX_FAIL, I_N_REMOTE_ERR = range(8, 14)
I_SIZE = 14
COUNTERS = {"replies": I_N_REPLY, "stale_ticks": I_N_STALE, "old_replies": I_N_OLD, "bad_replies": I_N_BAD,
            "tx_failures": I_N_TX_FAIL, "remote_errors": I_N_REMOTE_ERR}
F_X, F_V, F_HAS_V, F_T, F_AUX0, F_AUX1, F_FMAX = range(7)
F_SIZE = 7
RX_CAP = 128


@dataclass(frozen=True)
class RemoteDeviceSpec(DeviceSpec):
    """A served device's specification as seen through the network: ``passivity_required`` (the loop
    keeps its passivity observer on) and the handshake's measured round trip (s)."""

    passivity_required: bool = True
    round_trip_s: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        rtt = self.round_trip_s
        if not (isinstance(rtt, (int, float)) and not isinstance(rtt, bool) and 0.0 <= rtt < math.inf):
            raise DeviceError(f"{self.name}: the device's specification is not physical: round_trip_s = {rtt!r} "
                              "(a finite number of seconds >= 0)")


@njit(cache=True, nogil=True)
def _take_reply(ist, fst, rx32, rx64, rxf):
    """Consume one reply in the receive buffer; returns 1 if it is fresh."""
    ist[I_N_REPLY] += 1
    seq = rx64[1]
    if seq <= ist[I_SEEN]:
        ist[I_N_OLD] += 1                                    # older than the last reply: discarded
        return 0
    ist[I_SEEN] = seq
    ist[I_FRESH] += 1
    ist[I_REMOTE_STATUS] = rx32[1]
    fst[F_T] = rxf[2]
    fst[F_X] = rxf[3]
    fst[F_V] = rxf[4]
    fst[F_HAS_V] = rxf[5]
    fst[F_AUX0] = rxf[6]
    fst[F_AUX1] = rxf[7]
    return 1


@njit(cache=True, nogil=True)
def remote_sense(state, io):
    """The binding's ``sense``: take every reply waiting (non-blocking), keep the newest (module docstring)."""
    ist, fst, rxb, rx32, rx64, rxf = state[0], state[1], state[4], state[5], state[6], state[7]
    fresh = 0
    status = 0
    for _ in range(64):
        rc = z_recv(ist[I_SOCK], rxb.ctypes.data, RX_CAP, ZMQ_DONTWAIT)
        if rc < 0:
            e = z_errno()
            if e != errno.EAGAIN and e != errno.EINTR:
                ist[I_ERRNO] = e
                return FAULT_SOCKET
            break
        if rc == 0:
            continue                                         # the REP envelope's empty delimiter
        if rc != REPLY_SIZE or rx32[0] != REP_MAGIC:
            ist[I_N_BAD] += 1
            status = ERR_BAD_REPLY
            continue
        fresh += _take_reply(ist, fst, rx32, rx64, rxf)
    if fresh > 0:
        ist[I_SILENT] = 0
        rs = ist[I_REMOTE_STATUS]
        if rs != 0:
            ist[I_N_REMOTE_ERR] += 1
            status = ERR_REMOTE if rs > 0 else FAULT_REMOTE
    elif ist[I_SEEN] != ist[I_SEQ]:                          # a request is waiting for its reply
        ist[I_SILENT] += 1
        ist[I_N_STALE] += 1
    io[IO_X] = fst[F_X]
    io[IO_V] = fst[F_V]
    io[IO_HAS_V] = fst[F_HAS_V]
    io[IO_SEQ] = ist[I_FRESH]
    io[IO_T] = fst[F_T]
    io[IO_AUX0] = fst[F_AUX0]                               # the served device's first diagnostic
    io[IO_AUX1] = ist[I_SEQ] - ist[I_SEEN]                  # age of the sample in requests
    if ist[I_SILENT] >= ist[I_SILENCE_LIMIT]:
        return FAULT_SILENT
    return status


@njit(cache=True, nogil=True)
def remote_actuate(state, io, dt_s):
    """The binding's ``actuate``: send request ``seq`` with ``io[IO_FORCE]`` clamped to the device maximum
    (an empty delimiter frame, then the struct; non-blocking)."""
    ist, fst, txb, tx32, tx64, txf = state[0], state[1], state[2], state[3], state[8], state[9]
    f = io[IO_FORCE]
    fmax = fst[F_FMAX]
    f = min(max(f, -fmax), fmax) if f == f else 0.0
    ist[I_SEQ] += 1
    tx32[0] = REQ_MAGIC
    tx32[1] = FLAG_LAST if dt_s == 0.0 else 0
    tx64[1] = ist[I_SEQ]
    txf[2] = f
    rc = z_send(ist[I_SOCK], 0, 0, ZMQ_DONTWAIT | ZMQ_SNDMORE)
    if rc >= 0:
        rc = z_send(ist[I_SOCK], txb.ctypes.data, REQUEST_SIZE, ZMQ_DONTWAIT)
    if rc >= 0:
        return 0
    e = z_errno()
    if e == errno.EAGAIN or e == errno.EINTR:
        ist[I_N_TX_FAIL] += 1
        return ERR_TX
    ist[I_ERRNO] = e
    return FAULT_SOCKET


class RemoteDevice(Device):
    """The proxy of a served device (module docstring).

    Parameters
    ----------
    address : str
        The server's ZeroMQ endpoint, e.g. ``tcp://127.0.0.1:5601`` or ``ipc:///tmp/hapticam-device``.
    timeout_s : float
        Handshake timeout (s).
    silence_ms : float
        The loop stops (``FAULT_SILENT``) after this long without a fresh reply.
    rate_hz : float
        Servo rate (the server steps a simulated device by ``1 / rate_hz`` per request).
    """

    status_causes = STATUS_TEXT

    def __init__(self, address: str, *, timeout_s: float = 2.0, silence_ms: float = 500.0,
                 rate_hz: float = 1000.0) -> None:
        super().__init__()
        if not isinstance(address, str) or "://" not in address:
            raise UsageError(f"device zmq needs an endpoint: --device zmq:tcp://HOST:PORT (got {address!r})")
        for name, v in (("timeout_s", timeout_s), ("silence_ms", silence_ms), ("rate_hz", rate_hz)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise UsageError(f"zmq {name}: a positive number, got {v!r}")
        self.address, self.timeout_s = address, float(timeout_s)
        self.silence_ms, self.rate_hz = float(silence_ms), float(rate_hz)
        self.spec = UnopenedDeviceSpec.named(f"zmq:{address}")   # until the server states its own
        self.remote_simulated = False
        self.ist = np.zeros(I_SIZE, dtype=np.int64)
        self.fst = np.zeros(F_SIZE)
        self.txb = np.zeros(REQUEST_SIZE, dtype=np.uint8)
        self.rxb = np.zeros(RX_CAP, dtype=np.uint8)
        self._io = np.zeros(IO_SIZE)
        self._ctx: zmq.Context[Any] | None = None
        self._sock: zmq.Socket[Any] | None = None

    @classmethod
    def from_options(cls, address: str, **options: Any) -> "RemoteDevice":
        """``--device zmq:ADDRESS`` (render options other than the remote ones are ignored)."""
        keys = ("timeout_s", "silence_ms", "rate_hz")
        return cls(address, **{k: options[k] for k in keys if k in options})

    def _state(self) -> tuple:
        return (self.ist, self.fst, self.txb, self.txb.view(np.int32), self.rxb, self.rxb.view(np.int32),
                self.rxb.view(np.int64), self.rxb.view(np.float64), self.txb.view(np.int64),
                self.txb.view(np.float64))

    def counters(self) -> dict[str, int]:
        """The adapter's fault counters (module docstring)."""
        return {name: int(self.ist[i]) for name, i in COUNTERS.items()}

    def status_text(self, code: int) -> str:
        """A status code's cause in words (:data:`STATUS_TEXT`); for a served device's fault, with the code
        its own adapter returned (the last one a reply carried)."""
        text = super().status_text(code)
        if int(code) in (ERR_REMOTE, FAULT_REMOTE):
            text += f" (the served device's last code {int(self.ist[I_REMOTE_STATUS]):#06x})"
        return text

    def servo_binding(self) -> ServoBinding:
        """Compiled sense/actuate over the socket handle and buffers; real time only."""
        self._require_open()
        self.ist[I_SILENCE_LIMIT] = max(1, int(math.ceil(self.silence_ms * 1e-3 * self.rate_hz)))
        return ServoBinding(remote_sense, remote_actuate, self._state(), False)

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self._sock is not None
        wait_ms = int(self.timeout_s * 1000)
        if not self._sock.poll(wait_ms, zmq.POLLOUT):      # IMMEDIATE: writable once connected
            raise DeviceError(f"{self.spec.name}: cannot reach {self.address} within {self.timeout_s:g} s "
                              "(is 'hapticam device serve' running there?)")
        self._sock.send_multipart([b"", msgpack.packb(request)], zmq.NOBLOCK)
        if not self._sock.poll(wait_ms):
            raise DeviceError(f"{self.spec.name}: no reply to {request.get('op')!r} within {self.timeout_s:g} s "
                              f"(is 'hapticam device serve' running on {self.address}?)")
        parts = self._sock.recv_multipart()
        try:
            reply = msgpack.unpackb(parts[-1])
        except (ValueError, msgpack.ExtraData) as exc:
            raise DeviceError(f"{self.spec.name}: malformed handshake reply") from exc
        if not isinstance(reply, dict) or not reply.get("ok"):
            raise DeviceError(f"{self.spec.name}: the server refused {request.get('op')!r}: "
                              f"{reply.get('error') if isinstance(reply, dict) else reply!r}")
        return reply

    def session_notes(self) -> dict[str, Any]:
        """The link as the session log keeps it: address, the handshake's round trip (s), whether the served
        device is simulated."""
        rtt = getattr(self.spec, "round_trip_s", None)
        return {"address": self.address, "round_trip_s": rtt,
                "remote_simulated": bool(getattr(self, "remote_simulated", False))}

    def _served_spec(self, spec: Any) -> DeviceSpec:
        """The served device's spec from the handshake, named ``zmq:NAME@ADDRESS`` and checked like any
        device's (:class:`DeviceSpec`): a server is a peer, and its figures size every force."""
        try:
            s = dict(spec)
            if not isinstance(s.get("name"), str):
                raise TypeError(f"the device's name is {repr(s.get('name'))[:60]}, not a string")
            s["name"] = f"zmq:{s['name']}@{self.address}"
            s["workspace_m"] = tuple(s["workspace_m"])
            s.pop("passivity_required", None)
            s.pop("round_trip_s", None)
        except (KeyError, TypeError, ValueError) as exc:
            raise DeviceError(f"{self.spec.name}: malformed device spec from the server: {exc}") from exc
        if s.get("axis", "linear") != "linear":           # render read the model in m and N before connecting
            raise DeviceError(f"{self.spec.name}: the served device's axis is {str(s['axis'])[:20]!r}; a remote "
                              "device renders a linear axis (m, N)")
        try:
            return DeviceSpec(**s)
        except TypeError as exc:                           # a field missing or unknown
            raise DeviceError(f"{self.spec.name}: malformed device spec from the server: {exc}") from exc

    def _handshake(self) -> None:
        reply = self._call({"op": "hello", "protocol": PROTOCOL, "rate_hz": self.rate_hz})
        rtts = []
        for _ in range(PINGS):                             # round trip: median of a few pings
            t0 = time.perf_counter()
            self._call({"op": "ping"})
            rtts.append(time.perf_counter() - t0)
        rtt = float(np.median(rtts))
        if reply.get("protocol") != PROTOCOL:
            raise DeviceError(f"{self.spec.name}: server speaks protocol {reply.get('protocol')}, we {PROTOCOL}")
        served = self._served_spec(reply.get("spec"))
        T = 1.0 / self.rate_hz
        derate = T / (T + 2.0 * rtt)                       # K < 2 b / (T + 2 d): the bound with delay d = rtt
        self.spec = RemoteDeviceSpec(**{**served.__dict__,
                                        "max_stiffness_N_per_m": served.max_stiffness_N_per_m * derate,
                                        "passivity_required": True, "round_trip_s": rtt})
        self.remote_simulated = bool(reply.get("simulated", False))
        self.ist[:] = 0
        self.fst[:] = 0.0
        self.ist[I_SOCK] = self._sock.underlying
        self.ist[I_SILENCE_LIMIT] = max(1, int(math.ceil(self.silence_ms * 1e-3 * self.rate_hz)))
        self.fst[F_FMAX] = self.spec.max_force_N
        self._read()                                       # the handle's position before the first tick

    def _open(self) -> None:
        self._ctx = zmq.Context()
        self._sock = self._ctx.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.setsockopt(zmq.IMMEDIATE, 1)            # queue only to a live connection
        try:
            self._sock.connect(self.address)
            self._handshake()
        except zmq.ZMQError as exc:
            self._close()
            raise DeviceError(f"{self.spec.name}: {exc}") from exc
        except BaseException:
            self._close()
            raise

    def _close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.send_multipart([b"", msgpack.packb({"op": "bye"})], zmq.NOBLOCK)
                self._sock.poll(200)
            except zmq.ZMQError:
                pass
            self._sock.close(0)
            self._sock = None
        if self._ctx is not None:
            self._ctx.term()
            self._ctx = None

    def _read(self) -> DeviceState:
        """Python-level read (setup, tests): one request with the last force, wait for its reply."""
        st = self._state()
        if remote_actuate(st, self._io, 1.0 / self.rate_hz) < 0:
            raise DeviceError(f"{self.spec.name}: {STATUS_TEXT[FAULT_SOCKET]} (errno {int(self.ist[I_ERRNO])})")
        remote_sense(st, self._io)                         # its first call loads the compiled code: not timed
        deadline = time.monotonic() + self.timeout_s
        while self.ist[I_SEEN] != self.ist[I_SEQ]:         # until the reply to this request
            remote_sense(st, self._io)
            if time.monotonic() > deadline:
                raise DeviceError(f"{self.spec.name}: no reply within {self.timeout_s:g} s")
            self._sock.poll(10)
        has_v = self.fst[F_HAS_V] > 0
        return DeviceState(t_s=float(self.fst[F_T]), x_m=float(self.fst[F_X]),
                           v_mps=float(self.fst[F_V]) if has_v else None)

    def _write(self, force_N: float) -> None:
        """Python-level write: one request (its reply is consumed by the next read or tick)."""
        self._io[IO_FORCE] = force_N
        if self._sock is not None:
            remote_actuate(self._state(), self._io, 1.0 / self.rate_hz)

"""Frames of the hapticam serial protocol (hsp v1): CRC, encoder and parser, compiled and Python.

A frame is ``A5 5A | type (u8) | len (u8) | payload (len bytes) | CRC (u16)``, little endian, with the
CRC over ``type``, ``len`` and the payload (not the two sync bytes). The CRC is CRC-16/CCITT-FALSE
(polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR); its check value, the CRC of the
ASCII string ``"123456789"``, is 0x29B1. The message types and payload layouts are in
``devices/serial_protocol.md``; the firmware side's reference implementation is
``devices/emulators/hsp_emu.c``.

The compiled functions (:func:`crc16_ccitt`, :func:`put_frame`, :func:`find_frame`) run inside the servo
tick on preallocated ``uint8`` buffers; the Python helpers (:func:`frame`, :func:`parse_frames`, the
``pack_*``/``unpack_*`` functions) serve the handshake before the loop starts and the tests, and call the
same compiled code so there is one implementation of the framing.

References
----------
Koopman, P. and Chakravarty, T. (2004). Cyclic redundancy code (CRC) polynomial selection for embedded
networks. DSN 2004. (CRC-16/CCITT-FALSE parameters and check value: the "Catalogue of parametrised CRC
algorithms", reveng.sourceforge.io, entry CRC-16/IBM-3740.)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
from numba import njit

from hapticam.errors import DeviceError

PROTOCOL_VERSION = 1
SYNC0 = 0xA5
SYNC1 = 0x5A
HEADER = 4            # sync, sync, type, len
OVERHEAD = 6          # header + CRC
MAX_PAYLOAD = 64      # longest payload a v1 frame carries (INFO with a 24-character name is 58)
CRC_INIT = 0xFFFF
CRC_POLY = 0x1021
CRC_CHECK = 0x29B1    # CRC-16/CCITT-FALSE of b"123456789"

# host -> device
T_HELLO = 0x01        # u16 protocol version                         -> INFO
T_CONFIG = 0x02       # u16 watchdog_ms, u16 stream_hz (0: lockstep)  -> ACK | ERROR
T_ENABLE = 0x03       # (empty)                                       -> ACK, then STATE (seq echo 0)
T_FORCE = 0x04        # u32 seq, i32 force on the handle along +x (uN) -> STATE (lockstep)
T_SET_ZERO = 0x05     # (empty): counts = 0 at the present position   -> ACK
T_DISABLE = 0x06      # (empty): force off                            -> ACK
T_POSITION = 0x07     # probing: u32 seq, i32 target (counts), u32 force limit (uN, 0: the device's) -> PROBE_STATE
T_AXIS = 0x08         # axis kind: (empty) -> AXIS_INFO (a firmware without it: ERROR 2, a linear axis)
# device -> host
T_INFO = 0x81
T_STATE = 0x82
T_ACK = 0x83
T_ERROR = 0x84
T_PROBE_STATE = 0x85  # probing: u32 seq, u32 time us, i32 counts, i32 actuator uN, i32 load cell uN, u16 status, u16 rx err
T_AXIS_INFO = 0x86    # u8 axis kind (AXIS_LINEAR, AXIS_ROTARY)

#: AXIS_INFO's axis kinds: linear (every field in m and N) or rotary (rad and N m in the same fields)
AXIS_LINEAR = 0
AXIS_ROTARY = 1
AXIS_KINDS = {AXIS_LINEAR: "linear", AXIS_ROTARY: "rotary"}

FORCE_LEN = 8
STATE_LEN = 20
INFO_FIXED_LEN = 34   # u16 + 8 x f32, then the name (ASCII, up to 24 bytes)
MAX_NAME = 24
POSITION_LEN = 12
PROBE_STATE_LEN = 24
AXIS_INFO_LEN = 1

# STATE status bits
ST_ENABLED = 0x01     # force output enabled
ST_WATCHDOG = 0x02    # the firmware watchdog zeroed the force since the last STATE
ST_CLAMPED = 0x04     # the commanded force exceeded the device's maximum and was clamped
ST_RX_ERROR = 0x08    # the device dropped a bad frame (CRC, length) since the last STATE
ST_FAULT = 0x10       # the device's own fault (amplifier, temperature): force off
ST_CONTACT = 0x20     # probing: the probed switch's electrical contact is closed
ST_SERVO_LIMIT = 0x40  # probing: the position servo's force reached its limit since the last PROBE_STATE

# ERROR codes
E_LENGTH = 1          # payload length wrong for the type
E_TYPE = 2            # unknown type
E_NOT_ENABLED = 3     # FORCE before ENABLE
E_CONFIG = 4          # CONFIG value out of range
E_VERSION = 5         # protocol version not supported

# find_frame results
FRAME_NONE = 0        # no complete frame: keep bytes from ``start`` and read more
FRAME_OK = 1          # a frame at ``start``; the next search begins at ``next``
FRAME_BAD = 2         # a sync pair at ``start`` led to a bad CRC or length: dropped, search from ``next``


@njit(cache=True, nogil=True)
def crc16_ccitt(buf, start, n):
    """CRC-16/CCITT-FALSE of ``buf[start:start+n]``: ``c <- (c << 1) ^ (0x1021 if msb else 0)`` per bit,
    MSB first, from 0xFFFF, no final XOR (bitwise form of the CCITT generator x^16 + x^12 + x^5 + 1)."""
    c = CRC_INIT
    for i in range(start, start + n):
        c ^= np.int64(buf[i]) << 8                       # next byte into the top of the register
        for _ in range(8):
            if c & 0x8000:
                c = ((c << 1) ^ CRC_POLY) & 0xFFFF       # shift out the MSB, subtract the generator
            else:
                c = (c << 1) & 0xFFFF
    return c


@njit(cache=True, nogil=True)
def put_frame(buf, pos, ftype, plen):
    """Complete the frame whose payload is already at ``buf[pos+4 : pos+4+plen]``: write the sync bytes,
    type, length and CRC. Returns the index just past the frame."""
    buf[pos] = SYNC0
    buf[pos + 1] = SYNC1
    buf[pos + 2] = ftype
    buf[pos + 3] = plen
    c = crc16_ccitt(buf, pos + 2, plen + 2)
    buf[pos + 4 + plen] = c & 0xFF                       # CRC little endian
    buf[pos + 5 + plen] = c >> 8
    return pos + OVERHEAD + plen


@njit(cache=True, nogil=True)
def put_u32(buf, pos, value):
    """Write ``value`` (taken modulo 2^32) little endian at ``buf[pos:pos+4]``."""
    v = np.int64(value) & 0xFFFFFFFF
    for i in range(4):
        buf[pos + i] = (v >> (8 * i)) & 0xFF


@njit(cache=True, nogil=True)
def get_u32(buf, pos):
    """Unsigned 32-bit little-endian integer at ``buf[pos:pos+4]``."""
    v = np.int64(0)
    for i in range(4):
        v |= np.int64(buf[pos + i]) << (8 * i)
    return v


@njit(cache=True, nogil=True)
def get_i32(buf, pos):
    """Signed (two's complement) 32-bit little-endian integer at ``buf[pos:pos+4]``."""
    v = get_u32(buf, pos)
    return v - (np.int64(1) << 32) if v >= (np.int64(1) << 31) else v


@njit(cache=True, nogil=True)
def get_u16(buf, pos):
    """Unsigned 16-bit little-endian integer at ``buf[pos:pos+2]``."""
    return np.int64(buf[pos]) | (np.int64(buf[pos + 1]) << 8)


@njit(cache=True, nogil=True)
def find_frame(buf, pos, n):
    """Search ``buf[pos:n]`` for one frame. Returns ``(result, start, next)``.

    ``FRAME_OK``: a frame with a good CRC starts at ``start`` (type ``buf[start+2]``, payload length
    ``buf[start+3]``) and ends before ``next``. ``FRAME_BAD``: the sync pair at ``start`` heads a frame
    with a bad CRC or an impossible length; it is dropped and the search goes on from ``next`` (just after
    that sync pair, so a real frame inside the damaged bytes is still found). ``FRAME_NONE``: no complete
    frame; bytes from ``start`` on must be kept (a frame may be arriving). Bytes before ``start`` are
    noise between frames.
    """
    i = pos
    while i + 1 < n and not (buf[i] == SYNC0 and buf[i + 1] == SYNC1):
        i += 1
    if i + 1 >= n:                                       # no sync pair: keep a trailing 0xA5
        keep = n - 1 if n > pos and buf[n - 1] == SYNC0 else n
        return FRAME_NONE, keep, keep
    if i + HEADER > n:
        return FRAME_NONE, i, i
    plen = np.int64(buf[i + 3])
    if plen > MAX_PAYLOAD:
        return FRAME_BAD, i, i + 2
    end = i + OVERHEAD + plen
    if end > n:
        return FRAME_NONE, i, i
    got = np.int64(buf[end - 2]) | (np.int64(buf[end - 1]) << 8)
    if crc16_ccitt(buf, i + 2, plen + 2) != got:
        return FRAME_BAD, i, i + 2
    return FRAME_OK, i, end


# -- Python side: handshake and tests ------------------------------------------------------------------------
def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (``crc16(b"123456789") == 0x29B1``)."""
    buf = np.frombuffer(bytes(data), dtype=np.uint8)
    return int(crc16_ccitt(buf, 0, buf.size))


def frame(ftype: int, payload: bytes = b"") -> bytes:
    """One complete frame of ``ftype`` carrying ``payload``."""
    if not 0 <= ftype <= 0xFF or len(payload) > MAX_PAYLOAD:
        raise DeviceError(f"hsp frame: type {ftype} or payload length {len(payload)} out of range")
    buf = np.zeros(OVERHEAD + len(payload), dtype=np.uint8)
    buf[HEADER:HEADER + len(payload)] = np.frombuffer(payload, dtype=np.uint8)
    put_frame(buf, 0, ftype, len(payload))
    return buf.tobytes()


def parse_frames(data: bytes) -> tuple[list[tuple[int, bytes]], int, bytes]:
    """Split ``data`` into frames. Returns ``(frames, bad, rest)``: the good frames as ``(type, payload)``,
    the number of frames dropped for a bad CRC or length, and the unconsumed tail (an incomplete frame)."""
    buf = np.frombuffer(bytes(data), dtype=np.uint8)
    frames: list[tuple[int, bytes]] = []
    bad, pos, n = 0, 0, buf.size
    while True:
        res, start, nxt = find_frame(buf, pos, n)
        if res == FRAME_NONE:
            return frames, bad, bytes(buf[start:])
        if res == FRAME_BAD:
            bad += 1
        else:
            frames.append((int(buf[start + 2]), bytes(buf[start + HEADER:nxt - 2])))
        pos = nxt


@dataclass(frozen=True)
class Info:
    """The INFO reply: what the device says about itself (SI units)."""

    version: int
    counts_per_m: float
    max_force_N: float
    continuous_force_N: float
    workspace_m: tuple[float, float]
    damping_N_s_per_m: float
    mass_kg: float
    max_force_rate_N_per_s: float
    name: str


@dataclass(frozen=True)
class State:
    """The STATE reply: sequence echo, device time (us, wraps at 2^32), counts, applied force on the
    handle along +x (uN), status bits, device-side count of dropped frames (wraps at 2^16)."""

    seq: int
    time_us: int
    counts: int
    force_uN: int
    status: int
    rx_errors: int


@dataclass(frozen=True)
class ProbeState:
    """The PROBE_STATE reply (probing frames): sequence echo, device time (us, wraps), counts, the actuator's force
    on the handle along +x (uN), the load cell's force, the push of the probe on the object along +x
    (uN), status bits (``ST_CONTACT``: the switch's electrical contact), device-side count of dropped frames."""

    seq: int
    time_us: int
    counts: int
    actuator_uN: int
    load_uN: int
    status: int
    rx_errors: int


_INFO = struct.Struct("<H8f")
_STATE = struct.Struct("<IIiiHH")
_POSITION = struct.Struct("<IiI")
_PROBE_STATE = struct.Struct("<IIiiiHH")


def pack_hello(version: int = PROTOCOL_VERSION) -> bytes:
    return frame(T_HELLO, struct.pack("<H", version))


def pack_config(watchdog_ms: int, stream_hz: int) -> bytes:
    return frame(T_CONFIG, struct.pack("<HH", watchdog_ms, stream_hz))


def pack_force(seq: int, force_uN: int) -> bytes:
    return frame(T_FORCE, struct.pack("<Ii", seq & 0xFFFFFFFF, force_uN))


def pack_info(info: Info) -> bytes:
    name = info.name.encode("ascii", "replace")[:MAX_NAME]
    return frame(T_INFO, _INFO.pack(info.version, info.counts_per_m, info.max_force_N, info.continuous_force_N,
                                     info.workspace_m[0], info.workspace_m[1], info.damping_N_s_per_m,
                                     info.mass_kg, info.max_force_rate_N_per_s) + name)


def unpack_info(payload: bytes) -> Info:
    """Decode an INFO payload; a short one is a :class:`DeviceError`."""
    if not INFO_FIXED_LEN <= len(payload) <= INFO_FIXED_LEN + MAX_NAME:
        raise DeviceError(f"hsp INFO: payload of {len(payload)} bytes (expected {INFO_FIXED_LEN}-"
                          f"{INFO_FIXED_LEN + MAX_NAME})")
    v, cpm, fmax, fcont, lo, hi, b, m, rate = _INFO.unpack_from(payload)
    name = payload[INFO_FIXED_LEN:].decode("ascii", "replace")
    return Info(v, cpm, fmax, fcont, (lo, hi), b, m, rate, name)


def pack_state(s: State) -> bytes:
    return frame(T_STATE, _STATE.pack(s.seq & 0xFFFFFFFF, s.time_us & 0xFFFFFFFF, s.counts, s.force_uN,
                                      s.status, s.rx_errors & 0xFFFF))


def unpack_state(payload: bytes) -> State:
    """Decode a STATE payload; a wrong length is a :class:`DeviceError`."""
    if len(payload) != STATE_LEN:
        raise DeviceError(f"hsp STATE: payload of {len(payload)} bytes (expected {STATE_LEN})")
    return State(*_STATE.unpack(payload))


def pack_position(seq: int, target_counts: int, force_limit_uN: int) -> bytes:
    """POSITION (probing frames): hold the handle at ``target_counts`` with the device's position servo, its force
    within ``force_limit_uN`` (0: the device's maximum)."""
    return frame(T_POSITION, _POSITION.pack(seq & 0xFFFFFFFF, target_counts, force_limit_uN))


def pack_probe_state(s: ProbeState) -> bytes:
    return frame(T_PROBE_STATE, _PROBE_STATE.pack(s.seq & 0xFFFFFFFF, s.time_us & 0xFFFFFFFF, s.counts,
                                                  s.actuator_uN, s.load_uN, s.status, s.rx_errors & 0xFFFF))


def unpack_probe_state(payload: bytes) -> ProbeState:
    """Decode a PROBE_STATE payload; a wrong length is a :class:`DeviceError`."""
    if len(payload) != PROBE_STATE_LEN:
        raise DeviceError(f"hsp PROBE_STATE: payload of {len(payload)} bytes (expected {PROBE_STATE_LEN})")
    return ProbeState(*_PROBE_STATE.unpack(payload))


def pack_axis_info(kind: int) -> bytes:
    """AXIS_INFO: the firmware's axis kind (:data:`AXIS_LINEAR` or :data:`AXIS_ROTARY`)."""
    return frame(T_AXIS_INFO, bytes([kind & 0xFF]))


def unpack_axis_info(payload: bytes) -> str:
    """The axis kind an AXIS_INFO payload states, ``linear`` or ``rotary``; a wrong length or an unknown
    kind is a :class:`DeviceError`."""
    if len(payload) != AXIS_INFO_LEN:
        raise DeviceError(f"hsp AXIS_INFO: payload of {len(payload)} bytes (expected {AXIS_INFO_LEN})")
    if payload[0] not in AXIS_KINDS:
        raise DeviceError(f"hsp AXIS_INFO: axis kind {payload[0]} (known: 0 linear, 1 rotary)")
    return AXIS_KINDS[payload[0]]

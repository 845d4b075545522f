"""The serial adapter's compiled tick (hsp v1): :func:`serial_sense` and :func:`serial_actuate`.

Non-blocking ``read(2)`` and ``write(2)`` on the port's file descriptor, called from numba through libc
(``types.ExternalFunction``; the symbols are checked with ctypes when this module is imported), the frame
parser of :mod:`hapticam.devices.hsp_frames`, and the adapter's state arrays (their layouts, status codes and
counters). :mod:`hapticam.devices.serial_device` opens the port and hands the loop these two functions;
its module docstring describes the tick and its faults.
"""

from __future__ import annotations

import ctypes
import errno
import math

import numpy as np
from numba import carray, njit, types

from hapticam.devices import hsp_frames as hf
from hapticam.devices.base import IO_AUX0, IO_AUX1, IO_FORCE, IO_HAS_V, IO_SEQ, IO_T, IO_V, IO_X
from hapticam.errors import DeviceError

_LIBC_SYMBOLS = ("read", "write", "__errno_location")


def _check_libc() -> None:
    """Every libc symbol the compiled tick calls must resolve before anything is compiled."""
    libc = ctypes.CDLL(None)
    for name in _LIBC_SYMBOLS:
        if not hasattr(libc, name):
            raise DeviceError(f"serial device: the C library lacks {name!r}; this platform is not supported")


_check_libc()
c_read = types.ExternalFunction("read", types.int64(types.int32, types.int64, types.uint64))
c_write = types.ExternalFunction("write", types.int64(types.int32, types.int64, types.uint64))
c_errno_location = types.ExternalFunction("__errno_location", types.CPointer(types.int32)())

# status codes (> 0 recoverable, < 0 fatal; hapticam.devices.base)
ERR_FRAME = 1
ERR_TX = 2
ERR_DEVICE = 3
ERR_WATCHDOG = 4
FAULT_GONE = -1
FAULT_SILENT = -2
FAULT_DEVICE = -3
STATUS_TEXT = {ERR_FRAME: "a frame with a bad CRC or length was dropped",
               ERR_TX: "the port did not take a FORCE frame (force not sent this tick)",
               ERR_DEVICE: "the device answered with an ERROR frame",
               ERR_WATCHDOG: "the device's watchdog zeroed the force (no FORCE within watchdog_ms)",
               FAULT_GONE: "device lost (hang-up: cable out or firmware reset)",
               FAULT_SILENT: "device silent longer than silence_ms", FAULT_DEVICE: "device disabled or faulty"}
#: the codes of an ERROR frame (serial_protocol.md)
ERROR_FRAME_TEXT = {1: "wrong payload length", 2: "unknown frame type", 3: "FORCE before ENABLE",
                    4: "CONFIG out of range", 5: "protocol version not supported"}

# int64 state
I_FD, I_RX_N, I_SEQ, I_LAST_TUS, I_FRESH, I_GONE, I_SILENT, I_SILENCE_LIMIT, I_STATUS, I_ECHO = range(10)
I_N_STATE, I_N_BAD, I_N_STALE, I_N_OLD, I_N_ERROR, I_N_WATCHDOG, I_N_TX_FAIL, I_DEV_RX_ERR = range(10, 18)
I_N_OTHER, I_ERRNO, I_WD_PENDING = 18, 19, 20
I_SIZE = 21
COUNTERS = {"states": I_N_STATE, "bad_frames": I_N_BAD, "stale_ticks": I_N_STALE, "old_states": I_N_OLD,
            "error_frames": I_N_ERROR, "watchdog_reports": I_N_WATCHDOG, "tx_failures": I_N_TX_FAIL,
            "device_rx_errors": I_DEV_RX_ERR, "other_frames": I_N_OTHER}
# float64 state
F_M_PER_COUNT, F_X, F_T, F_APPLIED_N, F_FMAX_N, F_SILENCE_S, F_LIMIT_DT_S = range(7)
F_SIZE = 7
RX_CAP = 1024
TX_CAP = 64
#: the largest force a FORCE frame carries (N): i32 uN (serial_protocol.md)
MAX_WIRE_FORCE_N = (2**31 - 1) * 1e-6
MAX_READS = 16            # read/parse rounds per tick (bounds the tick's time after a burst)


@njit(cache=True, nogil=True)
def errno_now():
    """The calling thread's ``errno`` (glibc ``__errno_location``)."""
    return carray(c_errno_location(), (1,))[0]


@njit(cache=True, nogil=True)
def _take_state(ist, fst, rx, p):
    """Consume one STATE payload at ``rx[p:]``; returns 1 if it is a fresh sample, else 0."""
    tus = hf.get_u32(rx, p + 4)
    d = (tus - ist[I_LAST_TUS]) & 0xFFFFFFFF               # device time advance (us, modulo 2^32)
    ist[I_N_STATE] += 1
    if d == 0 or d >= 0x80000000:
        ist[I_N_OLD] += 1                                    # not newer than the last sample: discarded
        return 0
    fst[F_T] += d * 1e-6                                     # t = t_prev + dt_us * 1e-6 (unwrapped)
    ist[I_LAST_TUS] = tus
    ist[I_FRESH] += 1
    ist[I_ECHO] = hf.get_u32(rx, p)
    fst[F_X] = hf.get_i32(rx, p + 8) * fst[F_M_PER_COUNT]  # x = counts / cpm
    fst[F_APPLIED_N] = hf.get_i32(rx, p + 12) * 1e-6        # applied force on the handle (uN -> N)
    ist[I_STATUS] = hf.get_u16(rx, p + 16)
    ist[I_DEV_RX_ERR] = hf.get_u16(rx, p + 18)
    if ist[I_STATUS] & hf.ST_WATCHDOG:                     # latched by the firmware until this STATE
        ist[I_N_WATCHDOG] += 1
        ist[I_WD_PENDING] = 1
    return 1


@njit(cache=True, nogil=True)
def _parse(ist, fst, rx):
    """Parse every complete frame in ``rx[:n]``, keep the incomplete tail; returns (fresh, status)."""
    n = ist[I_RX_N]
    pos, fresh, status = 0, 0, 0
    while True:
        res, start, nxt = hf.find_frame(rx, pos, n)
        if res == hf.FRAME_NONE:
            break
        if res == hf.FRAME_BAD:
            ist[I_N_BAD] += 1
            status = ERR_FRAME
        else:
            ftype = rx[start + 2]
            plen = rx[start + 3]
            if ftype == hf.T_STATE and plen == hf.STATE_LEN:
                fresh += _take_state(ist, fst, rx, start + hf.HEADER)
            elif ftype == hf.T_ERROR:
                ist[I_N_ERROR] += 1
                status = ERR_DEVICE
            else:
                ist[I_N_OTHER] += 1
        pos = nxt
    for i in range(n - start):                              # keep the tail from `start`
        rx[i] = rx[start + i]
    ist[I_RX_N] = n - start
    return fresh, status


@njit(cache=True, nogil=True)
def serial_sense(state, io):
    """The binding's ``sense``: read what the port holds, parse it, fill the I/O block (module docstring)."""
    ist, fst, rx = state[0], state[1], state[2]
    fresh, status, base = 0, 0, rx.ctypes.data
    for _ in range(MAX_READS):
        n = ist[I_RX_N]
        r = c_read(np.int32(ist[I_FD]), base + n, rx.size - n)
        if r == 0:
            ist[I_GONE] = 1                                  # VMIN = 1: 0 bytes is a hang-up
        elif r < 0:
            e = errno_now()
            if e != errno.EAGAIN and e != errno.EINTR:
                ist[I_GONE] = 1
                ist[I_ERRNO] = e
        if r <= 0:
            break
        ist[I_RX_N] = n + r
        f, s = _parse(ist, fst, rx)
        fresh += f
        if s != 0:
            status = s
    if fresh > 0:
        ist[I_SILENT] = 0
        st = ist[I_STATUS]
        if ist[I_WD_PENDING] != 0:
            ist[I_WD_PENDING] = 0
            status = ERR_WATCHDOG
        if (st & hf.ST_ENABLED) == 0 or (st & hf.ST_FAULT) != 0:
            status = FAULT_DEVICE
    elif ist[I_ECHO] != ist[I_SEQ]:                          # a FORCE is waiting for its STATE
        ist[I_SILENT] += 1
        ist[I_N_STALE] += 1
    io[IO_X] = fst[F_X]
    io[IO_V] = 0.0
    io[IO_HAS_V] = 0.0
    io[IO_SEQ] = ist[I_FRESH]
    io[IO_T] = fst[F_T]
    io[IO_AUX0] = -fst[F_APPLIED_N]                         # applied force in the model's convention (N)
    io[IO_AUX1] = ist[I_SEQ] - ist[I_ECHO]                  # age of the sample in FORCE frames
    if ist[I_GONE] != 0:
        return FAULT_GONE
    if ist[I_SILENT] >= ist[I_SILENCE_LIMIT]:
        return FAULT_SILENT
    return status


@njit(cache=True, nogil=True)
def silence_limit_ticks(silence_s, dt_s):
    """Ticks of period ``dt_s`` (s) that make ``silence_s`` (s) of silence, at least one."""
    return max(1, int(math.ceil(silence_s / dt_s - 1e-9)))


@njit(cache=True, nogil=True)
def serial_actuate(state, io, dt_s):
    """The binding's ``actuate``: send FORCE(seq, uN) with ``-io[IO_FORCE]`` (the handle's force along +x),
    clamped to the device maximum; non-blocking, one ``write(2)``."""
    ist, fst, tx = state[0], state[1], state[3]
    if ist[I_GONE] != 0:
        return FAULT_GONE
    # the silence limit in ticks of the loop's own period (known here, not at binding), set when it changes
    if dt_s > 0.0 and dt_s != fst[F_LIMIT_DT_S]:
        ist[I_SILENCE_LIMIT] = silence_limit_ticks(fst[F_SILENCE_S], dt_s)
        fst[F_LIMIT_DT_S] = dt_s
    f = -io[IO_FORCE]
    fmax = fst[F_FMAX_N]                                  # at most MAX_WIRE_FORCE_N (set at open)
    f = min(max(f, -fmax), fmax) if f == f else 0.0
    seq = ist[I_SEQ] + 1
    ist[I_SEQ] = seq
    hf.put_u32(tx, hf.HEADER, seq)
    hf.put_u32(tx, hf.HEADER + 4, np.int64(round(f * 1e6)))  # uN, two's complement
    end = hf.put_frame(tx, 0, hf.T_FORCE, hf.FORCE_LEN)
    r = c_write(np.int32(ist[I_FD]), tx.ctypes.data, end)
    if r == end:
        return 0
    if r < 0:
        e = errno_now()
        if e != errno.EAGAIN and e != errno.EINTR:
            ist[I_GONE] = 1
            ist[I_ERRNO] = e
            return FAULT_GONE
    ist[I_N_TX_FAIL] += 1                                  # not sent, or sent in part (the device resyncs)
    return ERR_TX

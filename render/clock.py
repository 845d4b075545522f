"""Monotonic clock and absolute sleeps callable from numba ``nopython``/``nogil`` code.

The servo loop reads ``CLOCK_MONOTONIC`` with ``clock_gettime(2)`` and sleeps with
``clock_nanosleep(2)`` (``TIMER_ABSTIME``), both called straight from compiled code. The two libc
functions are declared as numba external functions: the symbols resolve against the libc already
loaded in the Python process, exactly as a ctypes function pointer would, but the compiled loop stays
cacheable (a ctypes pointer is a "dynamic global" that disables numba's on-disk cache).

Also here: :func:`request_realtime`, which asks for ``SCHED_FIFO`` for the calling thread (as CHAI3D's
haptic thread does) and reports what applied.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
from numba import njit, types

CLOCK_MONOTONIC = 1
TIMER_ABSTIME = 1
NS_PER_S = 1_000_000_000

# int clock_gettime(clockid_t clk, struct timespec *tp)  (POSIX.1-2008)
_clock_gettime = types.ExternalFunction("clock_gettime", types.int32(types.int32, types.voidptr))
# int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req, struct timespec *rem)
_clock_nanosleep = types.ExternalFunction(
    "clock_nanosleep", types.int32(types.int32, types.int32, types.voidptr, types.voidptr))


@njit(cache=True, nogil=True)
def now_ns(ts: np.ndarray) -> int:
    """``CLOCK_MONOTONIC`` in integer nanoseconds; ``ts`` is a 2-element int64 scratch ``timespec``."""
    _clock_gettime(CLOCK_MONOTONIC, ts.ctypes.data)
    return ts[0] * NS_PER_S + ts[1]


@njit(cache=True, nogil=True)
def sleep_until_ns(ts: np.ndarray, deadline_ns: int) -> int:
    """Sleep until ``CLOCK_MONOTONIC`` reaches ``deadline_ns`` (absolute); return the libc status
    (0, or EINTR if a signal woke the thread early: the caller's spin then covers the rest)."""
    ts[0] = deadline_ns // NS_PER_S
    ts[1] = deadline_ns % NS_PER_S
    return _clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ts.ctypes.data, ts.ctypes.data)


@njit(cache=True, nogil=True)
def wait_until_ns(ts: np.ndarray, deadline_ns: int, spin_ns: int) -> int:
    """Sleep to ``spin_ns`` before ``deadline_ns``, then spin on the clock until it passes.

    Returns the time (ns) at which the wait ended (>= ``deadline_ns``).
    """
    t = now_ns(ts)
    if deadline_ns - t > spin_ns:
        sleep_until_ns(ts, deadline_ns - spin_ns)
    t = now_ns(ts)
    while t < deadline_ns:
        t = now_ns(ts)
    return t


def request_realtime(priority: int = 80) -> str:
    """Ask for ``SCHED_FIFO`` at ``priority`` for the calling thread.

    Returns ``"SCHED_FIFO"`` when granted, otherwise ``"SCHED_OTHER"`` and a reason after a colon
    (not root and no ``CAP_SYS_NICE``, or no such scheduler on this platform). The loop runs either
    way; callers print the returned string as the scheduling that applied.
    """
    if not hasattr(os, "sched_setscheduler") or not sys.platform.startswith("linux"):
        return "SCHED_OTHER: real-time scheduling is not available on this platform"
    tid = threading.get_native_id()
    try:
        top = os.sched_get_priority_max(os.SCHED_FIFO)
        os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(min(priority, top)))
    except (PermissionError, OSError) as exc:
        return f"SCHED_OTHER: SCHED_FIFO refused ({exc.strerror or exc}); needs root or CAP_SYS_NICE"
    return "SCHED_FIFO"


def drop_realtime() -> None:
    """Return the calling thread to ``SCHED_OTHER`` (no-op where unsupported)."""
    if hasattr(os, "sched_setscheduler"):
        try:
            os.sched_setscheduler(threading.get_native_id(), os.SCHED_OTHER, os.sched_param(0))
        except OSError:
            pass

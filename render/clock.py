"""Monotonic clock and absolute sleeps callable from numba ``nopython``/``nogil`` code.

The servo loop reads ``CLOCK_MONOTONIC`` with ``clock_gettime(2)`` and sleeps with
``clock_nanosleep(2)`` (``TIMER_ABSTIME``), both called straight from compiled code. The two libc
functions are declared as numba external functions: the symbols resolve against the libc already
loaded in the Python process, exactly as a ctypes function pointer would, but the compiled loop stays
cacheable (a ctypes pointer is a "dynamic global" that disables numba's on-disk cache).

Also here: :func:`request_realtime`, which asks for ``SCHED_FIFO`` for the calling thread (as CHAI3D's
haptic thread does) and, when enabled (:func:`enable_hygiene`), the rest of a real-time thread's
hygiene, and reports what applied:

- ``mlockall(MCL_CURRENT)``: every page the process has mapped when the loop starts (its arrays, the
  compiled code, the stacks) resident and locked, so no tick waits for a page to be read back (needs
  CAP_IPC_LOCK or a large enough ``RLIMIT_MEMLOCK``). Not ``MCL_FUTURE``: the servo thread allocates
  nothing once running, and locking every later allocation of the interpreter's threads made each of
  them fault and lock pages at once (slower, and no help to the loop);
- stack prefault: the servo thread writes ``STACK_PREFAULT_BYTES`` below its stack pointer once, so its
  first deep calls do not page-fault (the loop's arrays are written through when allocated);
- affinity: the servo thread on one core of its own, every other thread of the process on the others
  (on a machine with more than one core), so the interpreter's threads do not preempt it.

:func:`release_hygiene` undoes the process-wide parts (memory lock, the other threads' affinity). The
environment variable ``HAPTICAM_RT_HYGIENE`` (a comma list of ``mlock``, ``prefault``, ``affinity``, or
``none``) selects parts, to measure what each buys (``hapticam bench render``).

Missed-deadline bound (:func:`spend_deadlines`, both real-time drivers; the simulated clock has no
deadlines): a tick that ends past the next deadline, and every whole period skipped after it, is a missed
deadline. The loop stops with zero force and the fault ``missed-deadlines`` once, over some stretch of its
run, the deadlines it missed exceed ``MISSED_DEADLINE_SHARE`` (5 %) of that stretch's periods by more than
the same share of one ``MISSED_DEADLINE_WINDOW_S`` (10 s) window's periods (500 at 1 kHz). Kept as a credit
(a leaky bucket): each period earns 1, up to one window's periods ``W``; each miss costs ``1 / share``
(20); the loop stops when the credit is spent. So a loop that misses at most 5 % of the periods of every
10 s window never stops, one that misses more than 10 % of a window's always does (sooner if it misses
more), and one that misses every deadline stops after ``W / (1 / share - 1)`` periods (526 ms at 1 kHz).
The window is long so that a stall of tens of milliseconds (a fork of the process, a page-in) does not
end a render: the watchdog below zeroes the force through it.
A device whose force is held through missed ticks is not being servoed: a model whose simulation cannot keep
the rate, or a machine too busy for it, should not keep a hand on it. The watchdog of
:mod:`hapticam.render.safety` (``overrun_ticks`` consecutive overruns zero the force until they stop) acts
first, on short bursts.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from hapticam.render.layout import C_MISS_WEIGHT, C_MISS_WINDOW, K_MISS_CREDIT

CLOCK_MONOTONIC = 1
TIMER_ABSTIME = 1
NS_PER_S = 1_000_000_000
MCL_CURRENT = 1          # <sys/mman.h> (Linux)
STACK_PREFAULT_BYTES = 512 * 1024
HYGIENE_PARTS = ("mlock", "prefault", "affinity")
#: what applies unless ``HAPTICAM_RT_HYGIENE`` says otherwise: pinning is on request only. Every process
#: pins its servo thread to the same (last) core, so two real-time programs on one machine (two renders, a
#: render and a vendor's scheduler) end up sharing that core at equal SCHED_FIFO priority while the others
#: sit idle; on this project's 2-core CI machine, runs with affinity had the only 0.25-0.28 s stalls and
#: 1,000+ missed ticks (hapticam bench render, five configurations run twice each), runs without none.
DEFAULT_HYGIENE = ("mlock", "prefault")
HYGIENE_ENV = "HAPTICAM_RT_HYGIENE"
#: the missed-deadline bound (module docstring): the share of periods that may miss, over windows this long (s)
MISSED_DEADLINE_SHARE = 0.05
MISSED_DEADLINE_WINDOW_S = 10.0

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


def deadline_bound(rate_hz: float, share: float = MISSED_DEADLINE_SHARE) -> tuple[int, int]:
    """``(window, weight)`` of the missed-deadline bound at ``rate_hz`` (Hz) for the loop's ``cfg``: the most
    credit held, in periods (one window's), and the periods of credit a missed deadline costs, ``1 / share``."""
    return max(1, round(MISSED_DEADLINE_WINDOW_S * rate_hz)), max(1, round(1.0 / share))


@njit(cache=True, nogil=True)
def start_deadlines(cfg, ctl):
    """A real-time run starts with the whole credit (one window's periods)."""
    ctl[K_MISS_CREDIT] = int(cfg[C_MISS_WINDOW])


@njit(cache=True, nogil=True)
def spend_deadlines(cfg, ctl, periods, missed):
    """Account ``periods`` periods (a tick's, and those skipped after it) of which ``missed`` missed their
    deadline; True when the missed-deadline bound is exceeded (module docstring). No bound when
    ``cfg[C_MISS_WINDOW]`` is 0."""
    window = int(cfg[C_MISS_WINDOW])
    if window <= 0:
        return False
    credit = min(ctl[K_MISS_CREDIT] + periods, window) - int(cfg[C_MISS_WEIGHT]) * missed
    ctl[K_MISS_CREDIT] = credit
    return credit < 0


def request_realtime(priority: int = 80) -> str:
    """Ask for ``SCHED_FIFO`` at ``priority`` for the calling thread, and apply the enabled hygiene.

    Returns ``"SCHED_FIFO"`` when granted, otherwise ``"SCHED_OTHER"`` and a reason after a colon
    (not root and no ``CAP_SYS_NICE``, or no such scheduler on this platform); when hygiene is enabled,
    what of it applied follows after ``"; "`` (:func:`hygiene_report`). The loop runs either way;
    callers print the returned string as the scheduling that applied.
    """
    hygiene = _apply_hygiene() if _HYGIENE["parts"] is not None else ""
    suffix = f"; {hygiene}" if hygiene else ""
    if not hasattr(os, "sched_setscheduler") or not sys.platform.startswith("linux"):
        return "SCHED_OTHER: real-time scheduling is not available on this platform" + suffix
    tid = threading.get_native_id()
    try:
        top = os.sched_get_priority_max(os.SCHED_FIFO)
        os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(min(priority, top)))
    except (PermissionError, OSError) as exc:
        return f"SCHED_OTHER: SCHED_FIFO refused ({exc.strerror or exc}); needs root or CAP_SYS_NICE" + suffix
    return "SCHED_FIFO" + suffix


# -- real-time hygiene ------------------------------------------------------------------------------------
_HYGIENE: dict = {"parts": None, "applied": {}, "others_cpus": None, "locked": False}


def enable_hygiene(parts: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Apply ``parts`` (default: ``HAPTICAM_RT_HYGIENE`` or :data:`DEFAULT_HYGIENE`) in the next
    :func:`request_realtime` calls; returns the parts enabled."""
    if parts is None:
        env = os.environ.get(HYGIENE_ENV)
        parts = DEFAULT_HYGIENE if env is None else tuple(p.strip() for p in env.split(",") if p.strip())
    parts = tuple(p for p in parts if p in HYGIENE_PARTS)
    _HYGIENE["parts"] = parts
    return parts


def hygiene_report() -> dict[str, str]:
    """What the last :func:`request_realtime` applied, by part (``{}`` when hygiene is off)."""
    return dict(_HYGIENE["applied"])


def _apply_hygiene() -> str:
    parts = _HYGIENE["parts"] or ()
    done = {part: "off" for part in HYGIENE_PARTS}
    if "mlock" in parts:
        done["mlock"] = _mlockall()
    if "prefault" in parts:
        done["prefault"] = f"{prefault_stack(STACK_PREFAULT_BYTES) // 1024} KiB of stack"
    if "affinity" in parts:
        done["affinity"] = _pin_servo_thread()
    _HYGIENE["applied"] = done
    return ", ".join(f"{k} {v}" for k, v in done.items())


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _mlockall() -> str:
    if not sys.platform.startswith("linux"):
        return "unavailable on this platform"
    if _libc().mlockall(MCL_CURRENT) != 0:
        err = ctypes.get_errno()
        return f"refused ({os.strerror(err)}; needs CAP_IPC_LOCK or a larger memlock limit)"
    _HYGIENE["locked"] = True
    return "applied"


def _pin_servo_thread() -> str:
    """The calling thread on the last allowed core, every other thread of the process on the rest."""
    if not hasattr(os, "sched_setaffinity"):
        return "unavailable on this platform"
    if _HYGIENE["others_cpus"] is None:                  # the process's cores before any pinning
        _HYGIENE["others_cpus"] = set(os.sched_getaffinity(0))
    allowed = sorted(_HYGIENE["others_cpus"])
    if len(allowed) < 2:
        return "one core only: not pinned"
    me, servo_cpu, others = threading.get_native_id(), allowed[-1], set(allowed[:-1])
    os.sched_setaffinity(me, {servo_cpu})
    moved = 0
    for tid in _process_threads():
        if tid != me:
            try:
                os.sched_setaffinity(tid, others)
                moved += 1
            except OSError:
                pass
    return f"servo on CPU {servo_cpu}, {moved} other thread(s) on CPU {','.join(map(str, sorted(others)))}"


def _process_threads() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return []


def release_hygiene() -> dict[str, str]:
    """Unlock memory, give the process's threads their cores back, disable hygiene; returns what had
    applied (:func:`hygiene_report`)."""
    report = hygiene_report()
    if _HYGIENE["locked"] and sys.platform.startswith("linux"):
        _libc().munlockall()
    if _HYGIENE["others_cpus"] is not None:
        for tid in _process_threads():
            try:
                os.sched_setaffinity(tid, _HYGIENE["others_cpus"])
            except OSError:
                pass
    _HYGIENE.update(parts=None, applied={}, others_cpus=None, locked=False)
    return report


@intrinsic
def _touch_stack(typingctx, nbytes):
    """Write ``nbytes`` of zeros into a stack buffer (``alloca``) with a volatile memset, so the pages
    below the stack pointer are mapped once, here, and not by a later deep call inside the loop."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        buf = builder.alloca(ir.IntType(8), size=args[0])
        i8p, i64, i1 = ir.IntType(8).as_pointer(), ir.IntType(64), ir.IntType(1)
        memset = builder.module.declare_intrinsic("llvm.memset", [i8p, i64])
        builder.call(memset, [buf, ir.Constant(ir.IntType(8), 0), args[0], ir.Constant(i1, 1)])
        return args[0]
    return sig, codegen


@njit(cache=True, nogil=True)
def prefault_stack(nbytes: int) -> int:
    """Touch ``nbytes`` of the calling thread's stack (see :func:`_touch_stack`); returns ``nbytes``."""
    return _touch_stack(nbytes)


def drop_realtime() -> None:
    """Return the calling thread to ``SCHED_OTHER`` (no-op where unsupported)."""
    if hasattr(os, "sched_setscheduler"):
        try:
            os.sched_setscheduler(threading.get_native_id(), os.SCHED_OTHER, os.sched_param(0))
        except OSError:
            pass

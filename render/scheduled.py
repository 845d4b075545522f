"""Drive mode for an externally clocked device: the device's own scheduler calls the servo tick.

A haptic arm driven through its vendor's library (OpenHaptics' ``hdScheduleAsynchronous``: a 1 kHz
servo thread of the library's own, synchronised to the device's communication) is not polled by a
thread of ours: the vendor's thread calls a C callback once per servo period. For such a device
(``device.external_clock`` is true) :class:`~hapticam.render.loop.ServoLoop` runs :func:`run_scheduled`
on its loop thread instead of the timed loop:

1. :func:`scheduled_callback` compiles the tick as a numba ``cfunc`` with the C signature of
   ``HDSchedulerCallback`` (``unsigned int cb(void *data)``): it calls the device's compiled ``sense``,
   the loop's ``step`` and the device's ``actuate`` in that order, so position, model, safety layer and
   force all run inside the vendor's frame, in nopython code that never takes the GIL;
2. ``data`` is :func:`callback_table`: the addresses and sizes of the loop's arrays and of the device's
   state, which must be ``(float64 1-D array, int64 1-D array)`` for an externally clocked device;
3. the device registers it (``device.schedule_servo(address, data, rate_hz)``) and this thread watches:
   the run ends when the callback returns ``HD_CALLBACK_DONE`` (stop requested, duration reached, or a
   fatal device status), or when the device stops calling it for ``device.servo_silence_s`` (the loop
   then records the fault ``device-fault`` with value :data:`SILENT_FAULT` and zero force, and turns the
   device's force output off if it can: ``device.disable_output()``), and the device unschedules it
   (``device.unschedule_servo()``).

Timing: the vendor's thread sets the deadlines, so a tick's lateness is its start's delay past one
period after the previous tick's start, ``late = max(gap - T, 0)`` (histogram and ring as in the timed
loop); a gap longer than 1.5 periods counts the periods it lost as missed (and skipped). Missed deadlines
beyond the loop's bound (:mod:`hapticam.render.clock`) stop the run as the timed loop's do: that tick writes
zero force with the stop event (fault ``missed-deadlines``) and returns ``HD_CALLBACK_DONE``.

Stopping: the tick that sees the stop flag (or the end of the duration) still opens the device's frame
(``sense``), writes zero force with the loop's stop event and closes the frame (``actuate`` with
``dt = 0``), then returns ``HD_CALLBACK_DONE``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numba import carray, cfunc, njit, types

from hapticam.devices.base import IO_FORCE
from hapticam.errors import RenderError
from hapticam.render.clock import now_ns, spend_deadlines, start_deadlines
from hapticam.render.layout import (C_DT, C_MAX_TICKS, C_PERIOD_NS, EV_DEADLINES, EV_DEVICE_FAULT, EV_STOP,
                                    HIST_BIN_NS, HIST_BINS, K_COUNT0, K_FAULT, K_LATE_MAX_NS, K_LATE_SUM_NS, K_MISSES,
                                    K_RUNNING, K_SKIPPED, K_STOP, K_T_FIRST_NS, K_T_LAST_NS, K_TICK, RING_COLS,
                                    SBUF_ROWS)
from hapticam.render.safety import device_write_status, log_event
from hapticam.render.servo import HD_CALLBACK_CONTINUE, HD_CALLBACK_DONE, _as_f64_ptr, _as_i64_ptr
from hapticam.render.specialize import specialize

#: Order of the addresses and sizes in the callback's data table.
(T_IO, T_CFG, T_CTL, T_SRV, T_PBUF, T_SBUF, T_RING, T_EVENTS, T_HIST, T_TIM, T_DEVF, T_DEVI,
 T_PCAP, T_SCAP, T_RING_N, T_EV_N, T_IO_N, T_CFG_N, T_CTL_N, T_SRV_N, T_HIST_N, T_DEVF_N, T_DEVI_N) = range(23)
TABLE_SIZE = 23
TIM_SIZE = 4              # int64 scratch: a timespec (2), the previous tick's start (ns), done flag
TIM_PREV = 2
TIM_DONE = 3              # set by the call that returns HD_CALLBACK_DONE
#: ``device-fault`` value when the device's scheduler stopped calling the tick
SILENT_FAULT = -1
WATCH_POLL_S = 0.005


@njit(cache=True, nogil=True)
def _finish(k, io, ctl, events):
    """The loop's last act: zero force, the stop event with the fault code, not running."""
    io[IO_FORCE] = 0.0
    log_event(ctl, events, k, EV_STOP, ctl[K_FAULT])
    ctl[K_RUNNING] = 0


@njit(cache=True, nogil=True)
def _account_timing(t_start, cfg, ctl, hist, tim):
    """Lateness of this tick's start against one period after the last one (ns); counts lost periods and
    sets the stop flag (fault ``missed-deadlines``) beyond the missed-deadline bound."""
    period = int(cfg[C_PERIOD_NS])
    if ctl[K_RUNNING] == 0:                       # the first call: the reference for the next
        ctl[K_RUNNING] = 1
        ctl[K_T_FIRST_NS] = t_start
        tim[TIM_PREV] = t_start - period
        start_deadlines(cfg, ctl)
    gap = t_start - tim[TIM_PREV]
    tim[TIM_PREV] = t_start
    late = max(gap - period, 0)                   # late = max(gap - T, 0)
    hist[min(late // HIST_BIN_NS, HIST_BINS)] += 1
    ctl[K_LATE_SUM_NS] += late
    if late > ctl[K_LATE_MAX_NS]:
        ctl[K_LATE_MAX_NS] = late
    ctl[K_T_LAST_NS] = t_start
    lost = 0
    if 2 * gap > 3 * period:                      # gap > 1.5 T: the periods it spans, less one, were lost
        lost = (gap + period // 2) // period - 1
        ctl[K_MISSES] += lost
        ctl[K_SKIPPED] += lost
    if spend_deadlines(cfg, ctl, 1 + lost, lost) and ctl[K_FAULT] == 0:
        ctl[K_FAULT] = EV_DEADLINES
        ctl[K_STOP] = 1
    return late


# Global names the tick template calls; :func:`scheduled_callback` binds them to a servo's kernels.
step = sense_fn = actuate_fn = None


@njit(nogil=True)
def _servo_tick(table):
    """Template of the scheduler's tick (module docstring); compiled per kernel set, never itself."""
    tab = carray(table, (TABLE_SIZE,))
    io = carray(_as_f64_ptr(tab[T_IO]), (tab[T_IO_N],))
    cfg = carray(_as_f64_ptr(tab[T_CFG]), (tab[T_CFG_N],))
    ctl = carray(_as_i64_ptr(tab[T_CTL]), (tab[T_CTL_N],))
    srv = carray(_as_f64_ptr(tab[T_SRV]), (tab[T_SRV_N],))
    pbuf = carray(_as_f64_ptr(tab[T_PBUF]), (2, tab[T_PCAP]))
    sbuf = carray(_as_f64_ptr(tab[T_SBUF]), (SBUF_ROWS, tab[T_SCAP]))
    ring = carray(_as_f64_ptr(tab[T_RING]), (tab[T_RING_N], RING_COLS))
    events = carray(_as_f64_ptr(tab[T_EVENTS]), (tab[T_EV_N], 3))
    hist = carray(_as_i64_ptr(tab[T_HIST]), (tab[T_HIST_N],))
    tim = carray(_as_i64_ptr(tab[T_TIM]), (TIM_SIZE,))
    dstate = (carray(_as_f64_ptr(tab[T_DEVF]), (tab[T_DEVF_N],)), carray(_as_i64_ptr(tab[T_DEVI]), (tab[T_DEVI_N],)))
    k = ctl[K_TICK]
    max_ticks = int(cfg[C_MAX_TICKS])
    if ctl[K_STOP] != 0 or (0 <= max_ticks <= k):
        sense_fn(dstate, io)                  # open the device's frame for the last command
        _finish(k, io, ctl, events)           # zero force, stop event
        actuate_fn(dstate, io, 0.0)
        tim[TIM_DONE] = 1
        return HD_CALLBACK_DONE
    t_start = now_ns(tim)
    late = _account_timing(t_start, cfg, ctl, hist, tim)
    if ctl[K_STOP] != 0:                      # beyond the missed-deadline bound: this tick is the last
        sense_fn(dstate, io)
        _finish(k, io, ctl, events)
        actuate_fn(dstate, io, 0.0)
        tim[TIM_DONE] = 1
        return HD_CALLBACK_DONE
    status = sense_fn(dstate, io)
    step(k, late * 1e-3, status, io, cfg, ctl, srv, pbuf, sbuf, ring, events)
    device_write_status(k, actuate_fn(dstate, io, cfg[C_DT]), ctl, events)
    return HD_CALLBACK_CONTINUE


def _compile_tick(py_func: Any, cache: bool) -> Any:
    return cfunc(types.uint32(types.CPointer(types.int64)), nopython=True, nogil=True, cache=cache)(py_func)


def scheduled_callback(kernels: Any) -> Any:
    """The tick of ``kernels`` (:class:`~hapticam.render.servo.ServoKernels`) as a C callback
    ``unsigned int cb(int64_t *table)`` for a device's scheduler (module docstring); compiled once per
    kernels, and cached by numba under the kernels' ``cache_tag``."""
    cached = _CALLBACKS.get(id(kernels))
    if cached is not None and cached[0] is kernels:
        return cached[1]
    bindings = {"step": kernels.step, "sense_fn": kernels.sense_fn, "actuate_fn": kernels.actuate_fn}
    servo_tick = specialize(_servo_tick, bindings, kernels.cache_tag, _compile_tick)
    _CALLBACKS[id(kernels)] = (kernels, servo_tick)
    return servo_tick


_CALLBACKS: dict[int, tuple[Any, Any]] = {}


def callback_table(loop: Any, dstate: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The int64 table :func:`scheduled_callback` takes (addresses and sizes) and the timing scratch array
    it points to; both must outlive the callback's registration."""
    if (len(dstate) != 2 or dstate[0].dtype != np.float64 or dstate[1].dtype != np.int64
            or dstate[0].ndim != 1 or dstate[1].ndim != 1):
        raise RenderError(f"{loop.device.spec.name}: an externally clocked device keeps its tick state in "
                          "(float64 array, int64 array)")
    tim = np.zeros(TIM_SIZE, dtype=np.int64)
    arrays = ((T_IO, loop.io), (T_CFG, loop.cfg), (T_CTL, loop.ctl), (T_SRV, loop.srv), (T_PBUF, loop.pbuf),
              (T_SBUF, loop.sbuf), (T_RING, loop.ring), (T_EVENTS, loop.events), (T_HIST, loop.hist),
              (T_TIM, tim), (T_DEVF, dstate[0]), (T_DEVI, dstate[1]))
    tab = np.zeros(TABLE_SIZE, dtype=np.int64)
    for idx, arr in arrays:
        if not arr.flags.c_contiguous:
            raise RenderError("loop and device arrays must be C-contiguous for the scheduled callback")
        tab[idx] = arr.ctypes.data
    tab[T_PCAP], tab[T_SCAP] = loop.pbuf.shape[1], loop.sbuf.shape[1]
    tab[T_RING_N], tab[T_EV_N] = loop.ring.shape[0], loop.events.shape[0]
    tab[T_IO_N], tab[T_CFG_N], tab[T_CTL_N], tab[T_SRV_N] = loop.io.size, loop.cfg.size, loop.ctl.size, loop.srv.size
    tab[T_HIST_N], tab[T_DEVF_N], tab[T_DEVI_N] = loop.hist.size, dstate[0].size, dstate[1].size
    return tab, tim


def run_scheduled(loop: Any) -> None:
    """Register the compiled tick with the loop's device and watch it until the run ends (module docstring).

    Runs on the loop's thread (:meth:`ServoLoop.start`); returns when the callback has been unscheduled."""
    device = loop.device
    callback = scheduled_callback(loop.kernels)
    table, tim = callback_table(loop, device.servo_binding().state)   # alive until unscheduled below
    silence_s = float(getattr(device, "servo_silence_s", 0.2))
    device.schedule_servo(callback.address, int(table.ctypes.data), loop.rate_hz)
    try:
        last_tick, last_change = -1, time.monotonic()
        while True:
            tick = int(loop.ctl[K_TICK])
            now = time.monotonic()
            if tick != last_tick:
                last_tick, last_change = tick, now
            if tim[TIM_DONE]:                     # the callback returned HD_CALLBACK_DONE
                break
            if now - last_change > silence_s:     # the device's scheduler stopped calling the tick
                loop.ctl[K_STOP] = 1
                device.unschedule_servo()
                if hasattr(device, "disable_output"):
                    device.disable_output()       # no tick will write zero force: the device's output off
                _silent_fault(loop)
                break
            time.sleep(WATCH_POLL_S)
    finally:
        device.unschedule_servo()


def _silent_fault(loop: Any) -> None:
    """Record a scheduler that stopped calling (the tick is unscheduled, so nothing else writes the arrays)."""
    k = int(loop.ctl[K_TICK])
    loop.ctl[K_COUNT0 + EV_DEVICE_FAULT] += 1
    log_event(loop.ctl, loop.events, k, EV_DEVICE_FAULT, float(SILENT_FAULT))
    loop.ctl[K_FAULT] = EV_DEVICE_FAULT
    _finish(k, loop.io, loop.ctl, loop.events)

"""The compiled servo step and the two ways to drive it.

:func:`build_servo` compiles, for one pair of model kernels ``force_fn(params, state, x, v, a, dt)`` and
``flags_fn(params, state)`` (by default :func:`hapticam.models.kernels.model_force` and
:func:`~hapticam.models.kernels.model_flags`, with ``diag_fn(params, state, which)`` for the two model
diagnostics recorded per tick) and one device's ``sense(state, io)``/``actuate(state, io, dt)`` pair
(:class:`hapticam.devices.base.ServoBinding`), three entry points that share one tick:

- ``run_timed``: our own timed loop on a dedicated (nogil) thread for polled devices: sleep until
  ``spin_ns`` before each deadline with ``clock_nanosleep``, spin on ``clock_gettime`` to the deadline,
  sense, tick, actuate; count every overrun and keep a lateness histogram; stop with zero force (fault
  ``missed-deadlines``) when the misses exceed their bound (:mod:`hapticam.render.clock`).
- ``run_sim``: the same on a simulated clock (no waiting), for devices whose clock is the loop's (the
  simulator): tests, verification and the demo.
- ``make_callback()``: the tick as a numba ``cfunc`` with the C signature ``int cb(void *data)`` of
  OpenHaptics' ``HDSchedulerCallback``, for a device whose own scheduler calls us each tick and exchanges
  position and force through the I/O block around the call; it returns 1 (``HD_CALLBACK_CONTINUE``) until
  the stop flag is set, then 0 (``HD_CALLBACK_DONE``).

One tick: the device senses (``sense``), then ``step`` picks up a pending model swap, reads the I/O
block, estimates velocity if the device does not measure it, evaluates the model (at the handle, with the
inertia proxy's acceleration below, or through the display stage's coupling when the model is stiffer than
the device displays passively: :mod:`hapticam.render.display_stage`), adds the transients of the impacts
the model reports, applies the safety layer (a device fault zeroes the force), writes the
force and appends the tick to the ring; then the device actuates (``actuate``).

Velocity estimate (when the device gives none): backward difference through a first-order low-pass,
``v(n) = v(n-1) + beta ((x(n) - x(n-1)) / T - v(n-1))``, ``beta = 1 - exp(-2 pi f_c T)``, with cut-off
``f_c`` (default 200 Hz, about 0.8 ms group delay); the rate-independent cut-off keeps behaviour the
same at 100 Hz-10 kHz.

Mass terms (virtual coupling; Colgate, Stanley & Brown 1995; Adams & Hannaford 1999): the model's
inertia is never rendered by differentiating the measured position twice. When the model has inertia
``m`` the loop simulates a free proxy of that mass, coupled to the handle by a spring-damper
``(k_c, b_c)``, and hands the kernel the proxy's acceleration::

    F_c = k_c (x - x_p) + b_c (v - v_p)        coupling force on the proxy
    m a_p = F_c                                proxy dynamics, semi-implicit Euler, n_sub sub-steps
    F = F_model(x, v, a_p)                     the kernel at the handle, with a = a_p

so the inertial part ``m(x) a_p`` is a virtual-coupling force (exactly ``F_c`` where ``m(x) = m``)
and the position- and velocity-dependent parts are rendered at the handle itself, without the
coupling's compliance in series with the model's stiffness. Below the coupling mode
``sqrt(k_c / m)`` the proxy follows the handle and ``a_p`` is its acceleration. Stability limits: the
coupling is itself a virtual spring-damper on the device, so ``k_c`` must satisfy Colgate & Schenkel's
``b > k_c T / 2 + b_c`` (the loop uses ``k_c`` = a quarter of the device's passive bound ``2 b / T``
and ``b_c = min(b - k_c T / 2, 2 sqrt(k_c m))``, critical damping when the device allows it); the
proxy's explicit sub-steps need ``h sqrt(k_c / m) < 2`` (the loop picks ``n_sub`` for a margin of 4);
the model's own stiffness is bounded by ``2 b / T`` as for any model. The proxy mass is the model's
inertia at the rest position; a position-dependent ``m(x)`` scales the coupling force by ``m(x) / m``.
By default an inertia below a quarter of the device's own apparent mass is not rendered (the handle's
own mass masks it; see ``LoopConfig``).
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

from numba import carray, cfunc, njit, types
from numba.extending import intrinsic

from hapticam.devices.base import (IO_AUX0, IO_AUX1, IO_FORCE, IO_FORCE_CMD, IO_HAS_V, IO_SEQ, IO_V,
                                   IO_X, ServoBinding)
from hapticam.models.kernels import model_diag, model_flags, model_force, model_impact
from hapticam.render.clock import now_ns, spend_deadlines, start_deadlines, wait_until_ns
from hapticam.render.layout import (C_DF_MAX, C_DISP_K, C_DT, C_F_MAX, C_MAX_TICKS, C_PERIOD_NS, C_PROXY_B,
                                    C_PROXY_K, C_PROXY_M, C_PROXY_SUB, C_SPIN_NS, C_STALE_TICKS, C_VEL_BETA,
                                    EV_DEADLINES, EV_SET_PARAM, EV_STOP, EV_SWAP, EV_TRANSIENT, HIST_BINS,
                                    HIST_BIN_NS, K_COUNT0,
                                    K_FAULT, K_LATE_MAX_NS, K_LATE_SUM_NS, K_MISSES, K_MISS_RUN, K_NEXT_DEADLINE,
                                    K_RUNNING, K_SKIPPED, K_SLEN0, K_SLOT, K_STALE_RUN, K_STOP, K_SWAP, K_TICK,
                                    K_T_FIRST_NS, K_T_LAST_NS, RING_COLS, R_AUX0, R_AUX1, R_DIAG0, R_DIAG1, R_F,
                                    R_FCMD, R_FLAGS, R_LATE, R_T, R_V, R_X, SAFETY_FLAG_SHIFT, SBUF_ROWS,
                                    SCRATCH_ROW, SWAP_PARAMS, S_HAVE_PREV, S_LAST_SEQ, S_V, S_VP, S_XP, S_X_PREV)
from hapticam.render.display_stage import (COUPLING_FORCE_SHARE, _display_force, _transient_force, _try_model,
                                           start_display)
from hapticam.render.safety import device_write_status, log_event, safety_filter, start_ramp
from hapticam.render.specialize import kernel_tag, specialize

HD_CALLBACK_DONE = 0
HD_CALLBACK_CONTINUE = 1

#: Order of the array addresses in the callback's data table (see ``callback_table``).
CB_IO, CB_CFG, CB_CTL, CB_SRV, CB_PBUF, CB_SBUF, CB_RING, CB_EVENTS = range(8)
CB_PCAP, CB_SCAP, CB_RING_N, CB_EV_N, CB_IO_N, CB_CFG_N, CB_CTL_N, CB_SRV_N = range(8, 16)
CB_TABLE_SIZE = 16


@intrinsic
def _as_f64_ptr(typingctx, addr):
    """Reinterpret an int64 address as ``double *`` (for ``carray`` in the callback)."""
    sig = types.CPointer(types.float64)(types.int64)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.float64)))
    return sig, codegen


@intrinsic
def _as_i64_ptr(typingctx, addr):
    """Reinterpret an int64 address as ``int64_t *``."""
    sig = types.CPointer(types.int64)(types.int64)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.int64)))
    return sig, codegen


@njit(cache=True, nogil=True)
def no_diag(params, state, which):
    """Model diagnostics for kernels that have none: 0.0."""
    return 0.0


@njit(cache=True, nogil=True)
def no_impact(params, state):
    """Impacts for kernels that detect none: ``(0, 0.0)``."""
    return 0, 0.0


# Global names the templates below call; :func:`build_servo` binds them to one set of kernels
# (:func:`hapticam.render.specialize.specialize`). The templates themselves are never compiled.
force_fn = flags_fn = diag_fn = impact_fn = sense_fn = actuate_fn = step = display_force = transient_force = None


@njit(nogil=True)
def _step(k, late_us, dev_status, io, cfg, ctl, srv, pbuf, sbuf, ring, events):
    """One tick (module docstring) of tick number ``k``, ``late_us`` (us) past its deadline."""
    dt = cfg[C_DT]
    t = k * dt
    # model swap at the tick boundary (the control thread filled the inactive slot)
    sw = ctl[K_SWAP]
    if sw != 0:
        old = ctl[K_SLOT]
        new = 1 - old
        if sw == SWAP_PARAMS:
            for i in range(ctl[K_SLEN0 + old]):
                sbuf[new, i] = sbuf[old, i]
            log_event(ctl, events, k, EV_SET_PARAM, t)
            if cfg[C_PROXY_M + old] <= 0.0 and cfg[C_PROXY_M + new] > 0.0:
                srv[S_XP] = io[IO_X]                   # a proxy switched on starts at the handle
                srv[S_VP] = srv[S_V]
            if cfg[C_DISP_K + old] <= 0.0 and cfg[C_DISP_K + new] > 0.0:
                start_display(srv, io[IO_X])
        else:
            log_event(ctl, events, k, EV_SWAP, t)
            start_ramp(k, t, ctl, srv, events)
            srv[S_XP] = io[IO_X]                       # a new proxy starts at the handle
            srv[S_VP] = srv[S_V]
            start_display(srv, io[IO_X])
        ctl[K_SLOT] = new
        ctl[K_SWAP] = 0
    slot = ctl[K_SLOT]
    p = pbuf[slot]
    s = sbuf[slot]
    # device read: staleness and velocity
    x = io[IO_X]
    seq = io[IO_SEQ]
    if srv[S_HAVE_PREV] > 0.0 and seq == srv[S_LAST_SEQ]:
        ctl[K_STALE_RUN] += 1
    else:
        ctl[K_STALE_RUN] = 0
    srv[S_LAST_SEQ] = seq
    stale = ctl[K_STALE_RUN] >= cfg[C_STALE_TICKS]
    x_ok = math.isfinite(x)
    dx = x - srv[S_X_PREV] if srv[S_HAVE_PREV] > 0.0 and x_ok else 0.0
    if io[IO_HAS_V] > 0.0:
        v = io[IO_V]
    elif srv[S_HAVE_PREV] > 0.0:
        v_raw = (x - srv[S_X_PREV]) / dt
        v = srv[S_V] + cfg[C_VEL_BETA] * (v_raw - srv[S_V])  # v(n) = v(n-1) + beta (dx/T - v(n-1))
    else:
        v = 0.0
        if x_ok:
            srv[S_XP] = x
            srv[S_VP] = 0.0
            start_display(srv, x)
    sensed_ok = x_ok and math.isfinite(v)
    if sensed_ok:           # a non-finite reading is not kept: the next tick differences from the last good one
        srv[S_V] = v
        srv[S_X_PREV] = x
        srv[S_HAVE_PREV] = 1.0
    # model force: the inertia proxy's acceleration, the display stage, the transients
    m = cfg[C_PROXY_M + slot]
    a_model = 0.0
    if sensed_ok and m > 0.0:
        kc = cfg[C_PROXY_K + slot]
        bc = cfg[C_PROXY_B + slot]
        n_sub = int(cfg[C_PROXY_SUB + slot])
        h = dt / n_sub
        xp = srv[S_XP]
        vp = srv[S_VP]
        for _ in range(n_sub):
            a_model = (kc * (x - xp) + bc * (v - vp)) / m  # m a_p = F_c = k_c (x - x_p) + b_c (v - v_p)
            vp += a_model * h                              # semi-implicit Euler
            xp += vp * h
        srv[S_XP] = xp
        srv[S_VP] = vp
    k_display = cfg[C_DISP_K + slot]
    if not sensed_ok:
        f_cmd = math.nan            # the model does not see a non-finite reading (its state kept); zeroed below
    elif k_display > 0.0:
        f_cmd = display_force(p, s, sbuf[SCRATCH_ROW], ctl[K_SLEN0 + slot], x, a_model, dt, k_display,
                              COUPLING_FORCE_SHARE * cfg[C_F_MAX], srv)
    else:
        f_cmd = force_fn(p, s, x, v, a_model, dt)          # F = F_model(x, v, a_p), a_p of the last sub-step
    if sensed_ok and math.isfinite(f_cmd):
        pulse, started = transient_force(p, s, cfg, slot, dt, f_cmd, cfg[C_F_MAX], cfg[C_DF_MAX], srv)
        f_cmd += pulse
        if started > 0.0:
            ctl[K_COUNT0 + EV_TRANSIENT] += 1
            log_event(ctl, events, k, EV_TRANSIENT, started)
    flags = flags_fn(p, s)
    f, mask = safety_filter(k, t, x, dx, v, f_cmd, stale, dev_status, cfg, ctl, srv, events)
    io[IO_FORCE] = f
    io[IO_FORCE_CMD] = f_cmd
    row = k % ring.shape[0]
    ring[row, R_T] = t
    ring[row, R_X] = x
    ring[row, R_V] = v
    ring[row, R_FCMD] = f_cmd
    ring[row, R_F] = f
    ring[row, R_FLAGS] = flags | (mask << SAFETY_FLAG_SHIFT)
    ring[row, R_LATE] = late_us
    ring[row, R_AUX0] = io[IO_AUX0]
    ring[row, R_AUX1] = io[IO_AUX1]
    ring[row, R_DIAG0] = diag_fn(p, s, 0)
    ring[row, R_DIAG1] = diag_fn(p, s, 1)
    ctl[K_TICK] = k + 1


@njit(cache=True, nogil=True)
def finish(k, io, ctl, events):
    """End the run at tick ``k``: zero force, the stop event, the running flag cleared."""
    io[IO_FORCE] = 0.0
    log_event(ctl, events, k, EV_STOP, ctl[K_FAULT])
    ctl[K_RUNNING] = 0


@njit(nogil=True)
def _run_sim(n_ticks, io, cfg, ctl, srv, pbuf, sbuf, ring, events, dstate):
    """Run up to ``n_ticks`` ticks on the simulated clock; return the ticks run."""
    dt = cfg[C_DT]
    k = ctl[K_TICK]
    end = k + n_ticks
    ctl[K_RUNNING] = 1
    while k < end and ctl[K_STOP] == 0:
        status = sense_fn(dstate, io)
        step(k, 0.0, status, io, cfg, ctl, srv, pbuf, sbuf, ring, events)
        device_write_status(k, actuate_fn(dstate, io, dt), ctl, events)
        k += 1
    if ctl[K_STOP] != 0:
        finish(k, io, ctl, events)
        actuate_fn(dstate, io, 0.0)
    else:
        ctl[K_RUNNING] = 0
    return n_ticks - (end - k)


@njit(nogil=True)
def _run_timed(io, cfg, ctl, srv, pbuf, sbuf, ring, events, hist, dstate, ts):
    """Run in real time until ``ctl[K_STOP]`` is set or ``cfg[C_MAX_TICKS]`` ticks have run."""
    dt = cfg[C_DT]
    period = int(cfg[C_PERIOD_NS])
    spin = int(cfg[C_SPIN_NS])
    max_ticks = int(cfg[C_MAX_TICKS])
    k = ctl[K_TICK]
    ctl[K_RUNNING] = 1
    start_deadlines(cfg, ctl)
    deadline = now_ns(ts) + period
    ctl[K_T_FIRST_NS] = deadline
    while ctl[K_STOP] == 0 and (max_ticks < 0 or k < max_ticks):
        ctl[K_NEXT_DEADLINE] = deadline
        t_start = wait_until_ns(ts, deadline, spin)
        late = t_start - deadline
        b = late // HIST_BIN_NS
        hist[min(b, HIST_BINS)] += 1
        ctl[K_LATE_SUM_NS] += late
        if late > ctl[K_LATE_MAX_NS]:
            ctl[K_LATE_MAX_NS] = late
        ctl[K_T_LAST_NS] = t_start
        status = sense_fn(dstate, io)
        step(k, late * 1e-3, status, io, cfg, ctl, srv, pbuf, sbuf, ring, events)
        device_write_status(k, actuate_fn(dstate, io, dt), ctl, events)
        k += 1
        deadline += period
        t_end = now_ns(ts)
        lost = 0
        missed = 0
        if t_end > deadline:                    # the tick ran past its period: a missed deadline
            ctl[K_MISSES] += 1
            ctl[K_MISS_RUN] += 1
            lost = (t_end - deadline) // period  # whole periods already gone are skipped
            missed = 1 + lost
            if lost > 0:
                ctl[K_MISSES] += lost
                ctl[K_SKIPPED] += lost
                deadline += lost * period
        else:
            ctl[K_MISS_RUN] = 0
        if spend_deadlines(cfg, ctl, 1 + lost, missed) and ctl[K_FAULT] == 0:
            ctl[K_FAULT] = EV_DEADLINES         # beyond the missed-deadline bound: stop, zero force below
            ctl[K_STOP] = 1
    finish(k, io, ctl, events)                  # zero force: the device's last command
    actuate_fn(dstate, io, 0.0)
    return k


@njit(nogil=True)
def _servo_callback(table):
    """The tick as a C callback ``int cb(int64_t *table)`` (see ``callback_table``)."""
    tab = carray(table, (CB_TABLE_SIZE,))
    io = carray(_as_f64_ptr(tab[CB_IO]), (tab[CB_IO_N],))
    cfg = carray(_as_f64_ptr(tab[CB_CFG]), (tab[CB_CFG_N],))
    ctl = carray(_as_i64_ptr(tab[CB_CTL]), (tab[CB_CTL_N],))
    srv = carray(_as_f64_ptr(tab[CB_SRV]), (tab[CB_SRV_N],))
    pbuf = carray(_as_f64_ptr(tab[CB_PBUF]), (2, tab[CB_PCAP]))
    sbuf = carray(_as_f64_ptr(tab[CB_SBUF]), (SBUF_ROWS, tab[CB_SCAP]))
    ring = carray(_as_f64_ptr(tab[CB_RING]), (tab[CB_RING_N], RING_COLS))
    events = carray(_as_f64_ptr(tab[CB_EVENTS]), (tab[CB_EV_N], 3))
    if ctl[K_STOP] != 0:
        if ctl[K_RUNNING] != 0:
            finish(ctl[K_TICK], io, ctl, events)
        return HD_CALLBACK_DONE
    ctl[K_RUNNING] = 1
    step(ctl[K_TICK], 0.0, 0, io, cfg, ctl, srv, pbuf, sbuf, ring, events)
    if ctl[K_STOP] != 0:
        finish(ctl[K_TICK], io, ctl, events)
        return HD_CALLBACK_DONE
    return HD_CALLBACK_CONTINUE



class ServoKernels(NamedTuple):
    """The compiled entry points for one pair of model kernels and one device binding (module docstring).

    ``cache_tag`` names the kernel set in numba's cache (:func:`hapticam.render.specialize.kernel_tag`;
    None: compiled without the cache)."""

    force_fn: Callable
    flags_fn: Callable
    sense_fn: Callable
    actuate_fn: Callable
    step: Callable
    run_sim: Callable
    run_timed: Callable
    make_callback: Callable
    cache_tag: str | None = None


def _jit(py_func: Callable, cache: bool) -> Callable:
    return njit(cache=cache, nogil=True)(py_func)


def _callback(py_func: Callable, cache: bool) -> Callable:
    return cfunc(types.int32(types.CPointer(types.int64)), nopython=True, nogil=True, cache=cache)(py_func)


def build_servo(force_fn: Callable, flags_fn: Callable, sense_fn: Callable, actuate_fn: Callable,
                diag_fn: Callable = no_diag, impact_fn: Callable = no_impact) -> ServoKernels:
    """Compile the servo step and its drivers around the model kernels ``force_fn``/``flags_fn``/``diag_fn``/
    ``impact_fn`` (the signatures of :func:`hapticam.models.kernels.model_force`, ``model_flags``,
    ``model_diag`` and ``model_impact``)
    and a device's ``sense_fn``/``actuate_fn`` (:class:`hapticam.devices.base.ServoBinding`). Kernels
    defined at module level give a servo that numba caches across runs (:mod:`hapticam.render.specialize`)."""
    kernels = {"force_fn": force_fn, "flags_fn": flags_fn, "diag_fn": diag_fn, "impact_fn": impact_fn,
               "sense_fn": sense_fn, "actuate_fn": actuate_fn}
    tag = kernel_tag(kernels)
    try_model = specialize(_try_model, kernels, tag, _jit)
    stage = {"display_force": specialize(_display_force, {**kernels, "try_model": try_model}, tag, _jit),
             "transient_force": specialize(_transient_force, kernels, tag, _jit)}
    step = specialize(_step, {**kernels, **stage}, tag, _jit)
    bound = {**kernels, "step": step}
    run_sim = specialize(_run_sim, bound, tag, _jit)
    run_timed = specialize(_run_timed, bound, tag, _jit)

    def make_callback():
        """Compile the tick as a C callback ``int cb(int64_t *table)`` (see ``callback_table``)."""
        return specialize(_servo_callback, bound, tag, _callback)

    return ServoKernels(force_fn, flags_fn, sense_fn, actuate_fn, step, run_sim, run_timed, make_callback, tag)


def velocity_beta(cutoff_hz: float, dt_s: float) -> float:
    """Gain of the velocity low-pass: ``beta = 1 - exp(-2 pi f_c T)``."""
    return 1.0 - math.exp(-2.0 * math.pi * cutoff_hz * dt_s)


_SERVOS: dict[tuple[Callable, Callable], ServoKernels] = {}


def servo_for(binding: ServoBinding) -> ServoKernels:
    """The servo compiled around :mod:`hapticam.models.kernels` for a device binding (built once per
    process and device type)."""
    key = (binding.sense, binding.actuate)
    if key not in _SERVOS:
        _SERVOS[key] = build_servo(model_force, model_flags, binding.sense, binding.actuate, model_diag,
                                   model_impact)
    return _SERVOS[key]

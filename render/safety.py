"""The safety layer: always on, compiled into every servo tick.

Applied in this order to the model force ``F_cmd`` each tick (:func:`safety_filter`):

1. NaN/inf guard: a non-finite force (or position/velocity) zeroes the output and stops the loop.
2. Workspace limit: outside the device workspace the force is zeroed.
3. Watchdog: stale device data (no fresh sample for ``stale_ticks``) or ``overrun_ticks`` consecutive
   overrunning ticks zero the force; when the condition clears, forces ramp in again. A device that
   reports a fault for its reading zeroes the force too (recoverable: this tick, logged and counted;
   fatal: the loop stops).
4. Passivity observer/controller (optional, applied after step 6's saturation; Hannaford & Ryu
   2002): the observer integrates the energy that flowed into the rendered object. The device
   holds each force for a period (zero-order hold), so the work of the last output over the last interval is exact from the sensed positions,
   ``W(n) = W(n-1) + F_out(n-1) (x(n) - x(n-1))``, which needs no velocity estimate (H&R's
   ``F(n) v(n) T`` with the filtered velocity lags a stiff contact that lasts a few ticks). When the
   predicted ``W(n) + F(n) v T`` is negative, the object would generate energy and the controller adds
   damping ``alpha = -(W(n) + F(n) v T) / (T v^2)`` (bounded by ``alpha_max``), with ``v`` the raw
   difference ``(x(n) - x(n-1)) / T``, so ``F <- F + alpha v`` dissipates the deficit. The observer's
   credit is bounded: ``W(n) <= E_cap``, the most energy the model (and its display coupling) can store
   and give back (:func:`hapticam.render.display.returnable_energy_J`; no bound where it is 0), so energy
   dissipated earlier in a press cannot stand as credit against energy generated later. This is
   reference-energy following in its simplest, state-independent form (Ryu, Preusche, Hannaford &
   Hirzinger 2005, "Time domain passivity control with reference energy following", IEEE TCST 13(5)):
   the stored energy a passive object can return is the only credit it is owed.
5. Ramp-in: ``F <- r F`` with ``r = min(1, (t - t_0) / ramp_s)`` after start, a model swap or a watchdog
   recovery (as OpenHaptics' force ramping and CHAI3D's force rise).
6. Saturation ``|F| <= F_max``, then the passivity controller on the saturated force (so saturation
   cannot undo its correction), saturation again, then the rate limit ``|F(n) - F(n-1)| <= R T``.
   Zeroing by steps 1-3 bypasses the rate limit: a fault cuts the force at once.

Every tick an intervention acts is counted (``ctl[K_COUNT0 + code]``); the tick at which each episode
of an intervention starts is logged to the event ring with a value (the model force, or the position).
Ticks inside a ramp-in carry the ramp bit in the per-tick flags too (a recording marks them, so a
comparison can leave them out), but the ramp is not an intervention and is not counted.
Because of the PO's sum, energy stored in a model before a swap carries over as credit (within the new
model's bound). The energy the device put into the hand is kept beside it (``srv[S_EOUT]``;
``LoopStats.energy_out_J``): the held force's work on the handle less what the device's own damping ``b``
dissipates, ``-sum (F_out(n-1) dx(n) + b dx(n)^2 / T)``, ``dx(n) = x(n) - x(n-1)``. The motor's work alone
is not it: a held force lags the motion by half a period, so on a fast release the motor does work that the
device's damping absorbs before the hand (the ``K T / 2`` of Colgate & Schenkel's condition).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from hapticam.devices.base import DeviceSpec
from hapticam.errors import UsageError
from hapticam.render.layout import (C_ALPHA_MAX, C_DEV_B, C_DF_MAX, C_DT, C_F_MAX, C_OVERRUN_TICKS, C_PASSIVITY,
                                    C_PO_CAP, C_PO_VMIN, C_RAMP_S, C_STOP_ON_NAN, C_WS_HI, C_WS_LO,
                                    EV_DEVICE_ERROR, EV_DEVICE_FAULT, EV_NAN, EV_OVERRUN, EV_PASSIVITY, EV_RAMP,
                                    EV_RATE, EV_SATURATION, EV_STALE, EV_WORKSPACE, K_ACTIVE, K_COUNT0, K_EV_HEAD,
                                    K_FAULT, K_MISS_RUN, K_SLOT, K_STOP, N_EVENTS, S_ALPHA, S_ENERGY, S_EOUT,
                                    S_F_PREV, S_RAMP_T0, S_ZEROED)


@dataclass(frozen=True)
class SafetyConfig:
    """Safety-layer settings; ``None`` fields take the device specification's value.

    ``alpha_max_N_s_per_m`` bounds the passivity controller's damping: a sampled damper ``B`` is itself
    passive only while ``b > K T / 2 + |B|`` (Colgate & Schenkel), so the default allows a few times
    the device damping, which with the handle's and the user's own damping is still well inside what
    a 1 kHz loop renders.
    """

    max_force_N: float | None = None
    max_force_rate_N_per_s: float | None = None
    ramp_s: float = 0.1
    workspace_m: tuple[float, float] | None = None
    stale_ticks: int = 3
    overrun_ticks: int = 5
    passivity: bool = False
    alpha_max_N_s_per_m: float | None = None
    po_vmin_mps: float = 1e-4
    stop_on_nan: bool = True

    def __post_init__(self) -> None:
        """Every number finite and in range: a NaN limit would silently switch its check off."""
        for name in ("max_force_N", "max_force_rate_N_per_s", "alpha_max_N_s_per_m"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise UsageError(f"safety {name}: must be a positive finite number, got {value!r}")
        if not (math.isfinite(self.ramp_s) and self.ramp_s >= 0):
            raise UsageError(f"safety ramp_s: must be a finite number >= 0, got {self.ramp_s!r}")
        if not (math.isfinite(self.po_vmin_mps) and self.po_vmin_mps >= 0):
            raise UsageError(f"safety po_vmin_mps: must be a finite number >= 0, got {self.po_vmin_mps!r}")
        for name in ("stale_ticks", "overrun_ticks"):
            if not (isinstance(getattr(self, name), int) and getattr(self, name) >= 1):
                raise UsageError(f"safety {name}: must be a whole number >= 1, got {getattr(self, name)!r}")
        if self.workspace_m is not None:
            lo, hi = self.workspace_m
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise UsageError(f"safety workspace_m: must be finite with low < high, got {self.workspace_m!r}")

    def resolved(self, spec: DeviceSpec, rate_hz: float | None = None) -> dict[str, float]:
        """Numbers for the loop's ``cfg`` array, with device defaults filled in and bounded by the spec;
        at ``rate_hz`` the passivity controller's damping is also bounded by :func:`alpha_limit`. A spec with
        ``passivity_required`` (a remote device) turns the passivity controller on whatever ``passivity`` says."""
        fmax = spec.max_force_N if self.max_force_N is None else min(self.max_force_N, spec.max_force_N)
        rate = (spec.max_force_rate_N_per_s if self.max_force_rate_N_per_s is None
                else min(self.max_force_rate_N_per_s, spec.max_force_rate_N_per_s))
        lo, hi = spec.workspace_m if self.workspace_m is None else self.workspace_m
        lo, hi = max(lo, spec.workspace_m[0]), min(hi, spec.workspace_m[1])
        amax = (5.0 * spec.damping_N_s_per_m if self.alpha_max_N_s_per_m is None
                else self.alpha_max_N_s_per_m)
        if rate_hz is not None:
            amax = min(amax, alpha_limit(spec, rate_hz))
        return {"max_force_N": fmax, "max_force_rate_N_per_s": rate, "ramp_s": self.ramp_s,
                "workspace_lo_m": lo, "workspace_hi_m": hi, "stale_ticks": float(self.stale_ticks),
                "overrun_ticks": float(self.overrun_ticks),
                "passivity": 1.0 if (self.passivity or spec.passivity_required) else 0.0,
                "alpha_max_N_s_per_m": amax, "po_vmin_mps": self.po_vmin_mps,
                "stop_on_nan": 1.0 if self.stop_on_nan else 0.0}


#: the passivity controller's damping per tick, alpha T / m, stays below this (a sampled damper on the
#: handle's mass rings for alpha T / m > 1 and is unstable beyond 2: v(n+1) = (1 - alpha T / m) v(n))
PC_ALPHA_T_OVER_M = 0.5
#: the controller can only tame a wall whose sampled mode it resolves: sqrt(K / m) T at most this
PC_MAX_OMEGA_T = 2.0


def alpha_limit(spec: DeviceSpec, rate_hz: float) -> float:
    """Largest passivity-controller damping (N s/m) at ``rate_hz`` on ``spec``'s handle:
    ``alpha <= PC_ALPHA_T_OVER_M m / T``. Hannaford & Ryu (2002) bound alpha only by the actuator; at
    100 Hz their unbounded alpha (or 5 b = 10 N s/m on a 0.05 kg handle: alpha T / m = 2) is itself an
    unstable explicit damper, which is why a controller without this bound made a stiff wall worse there."""
    return PC_ALPHA_T_OVER_M * spec.apparent_mass_kg * rate_hz       # alpha T / m <= 0.5


def passivity_stiffness_limit(spec: DeviceSpec, rate_hz: float) -> float:
    """Stiffest wall (N/m) the passivity controller is allowed to render at ``rate_hz``:
    ``K <= m (PC_MAX_OMEGA_T / T)^2``, i.e. the wall's mode on the handle ``sqrt(K / m)`` below 2 / T."""
    return spec.apparent_mass_kg * (PC_MAX_OMEGA_T * rate_hz) ** 2   # K = m (omega_max / T)^2 ... omega T = 2


def rendered_stiffness_Npm(model: Any, spec: DeviceSpec, points: int = 2001, speed_mps: float = 0.01) -> float:
    """The steepest slope ``|dF/dx|`` (N/m) of ``model``'s force over the device workspace as the device can
    render it (forces saturated at ``max_force_N``), along a slow press and release (state carried).

    A parameter named ``k_Npm`` is not always a stiffness (a Hunt-Crossley ``k`` is in N/m^n): this is
    the stiffness the handle actually meets."""
    lo, hi = spec.workspace_m
    x = np.linspace(lo, hi, points)
    dt = (x[1] - x[0]) / speed_mps
    state = model.compile().reset_state()
    worst = 0.0
    for xs, v in ((x, speed_mps), (x[::-1], -speed_mps)):
        f = np.array([model.force(xi, v, 0.0, dt, state) for xi in xs])
        f = np.clip(np.nan_to_num(f), -spec.max_force_N, spec.max_force_N)
        worst = max(worst, float(np.max(np.abs(np.diff(f) / np.diff(xs)))))   # |dF/dx| by differences
    return worst


def check_passivity_controller(stiffness_Npm: float, spec: DeviceSpec, rate_hz: float) -> None:
    """Refuse the passivity controller where it cannot help (:func:`passivity_stiffness_limit`)."""
    limit = passivity_stiffness_limit(spec, rate_hz)
    if stiffness_Npm > limit:
        raise UsageError(f"the passivity controller cannot tame a {stiffness_Npm:.4g} N/m wall at {rate_hz:g} Hz "
                         f"on a {spec.apparent_mass_kg:g} kg handle (its mode sqrt(K/m) T = "
                         f"{math.sqrt(stiffness_Npm / spec.apparent_mass_kg) / rate_hz:.2f} > {PC_MAX_OMEGA_T:g}; "
                         f"limit {limit:.4g} N/m): raise the rate or soften the model")


@njit(cache=True, nogil=True)
def log_event(ctl, events, tick, code, value):
    """Append ``(tick, code, value)`` to the event ring (oldest entries overwritten when full)."""
    i = ctl[K_EV_HEAD]
    row = i % events.shape[0]
    events[row, 0] = tick
    events[row, 1] = code
    events[row, 2] = value
    ctl[K_EV_HEAD] = i + 1


@njit(cache=True, nogil=True)
def start_ramp(tick, t, ctl, srv, events):
    """Restart the ramp-in at time ``t`` and log it."""
    srv[S_RAMP_T0] = t
    log_event(ctl, events, tick, EV_RAMP, t)


@njit(cache=True, nogil=True)
def safety_filter(tick, t, x, dx, v, f_cmd, stale, dev_status, cfg, ctl, srv, events):
    """Return ``(force_out, mask)``: the model force ``f_cmd`` (N) after the safety layer, and the bit
    mask ``1 << code`` of the interventions that acted this tick; ``dx`` is the sensed displacement since
    the last tick (m; always finite: the servo differences from the last finite reading, 0 for a bad one),
    ``v`` the velocity used by the model (m/s), ``dev_status`` the device's status for this tick's reading
    (0 ok, > 0 recoverable fault, < 0 fatal; :mod:`hapticam.devices.base`). See the module docstring."""
    dt = cfg[C_DT]
    srv[S_EOUT] -= srv[S_F_PREV] * dx + cfg[C_DEV_B] * dx * dx / dt   # held force's work, less the device's losses
    srv[S_ENERGY] += srv[S_F_PREV] * dx                  # W(n) = W(n-1) + F_out(n-1) (x(n) - x(n-1))
    cap = cfg[C_PO_CAP + ctl[K_SLOT]]
    if cap > 0.0 and srv[S_ENERGY] > cap:                # credit bounded by what the model can give back
        srv[S_ENERGY] = cap
    mask = 0
    f = f_cmd
    zero = False
    if not (math.isfinite(f) and math.isfinite(x) and math.isfinite(v)):
        mask |= 1 << EV_NAN
        zero = True
        if cfg[C_STOP_ON_NAN] > 0.0:
            ctl[K_FAULT] = EV_NAN
            ctl[K_STOP] = 1
    if not (x >= cfg[C_WS_LO] and x <= cfg[C_WS_HI]):
        mask |= 1 << EV_WORKSPACE
        zero = True
    if stale:
        mask |= 1 << EV_STALE
        zero = True
    if ctl[K_MISS_RUN] >= cfg[C_OVERRUN_TICKS]:
        mask |= 1 << EV_OVERRUN
        zero = True
    if dev_status != 0:
        zero = True
        if dev_status > 0:
            mask |= 1 << EV_DEVICE_ERROR
        else:
            mask |= 1 << EV_DEVICE_FAULT
            ctl[K_FAULT] = EV_DEVICE_FAULT
            ctl[K_STOP] = 1
    if zero:
        f = 0.0
        srv[S_ZEROED] = 1.0
    else:
        if srv[S_ZEROED] > 0.0:
            srv[S_ZEROED] = 0.0
            start_ramp(tick, t, ctl, srv, events)
        ramp_s = cfg[C_RAMP_S]
        if ramp_s > 0.0:
            r = (t - srv[S_RAMP_T0]) / ramp_s            # r = min(1, (t - t0) / T_ramp)
            if r < 1.0:
                f *= max(r, 0.0)
                mask |= 1 << EV_RAMP                     # marked per tick (not counted: logged at its start)
        fmax = cfg[C_F_MAX]
        if abs(f) > fmax:
            f = math.copysign(fmax, f)
            mask |= 1 << EV_SATURATION
        if cfg[C_PASSIVITY] > 0.0:
            vr = dx / dt                                 # raw velocity over the last interval
            w = srv[S_ENERGY] + f * vr * dt              # predicted W with F(n) held (Hannaford & Ryu 2002)
            alpha = 0.0
            if w < 0.0 and abs(vr) > cfg[C_PO_VMIN]:
                alpha = min(-w / (dt * vr * vr), cfg[C_ALPHA_MAX])  # alpha(n) = -W(n) / (T v(n)^2)
                f += alpha * vr                          # f(n) <- f(n) + alpha(n) v(n)
                mask |= 1 << EV_PASSIVITY
                if abs(f) > fmax:
                    f = math.copysign(fmax, f)
            srv[S_ALPHA] = alpha
        lim = cfg[C_DF_MAX] * dt                         # |F(n) - F(n-1)| <= R T
        df = f - srv[S_F_PREV]
        if df > lim:
            f = srv[S_F_PREV] + lim
            mask |= 1 << EV_RATE
        elif df < -lim:
            f = srv[S_F_PREV] - lim
            mask |= 1 << EV_RATE
    srv[S_F_PREV] = f
    prev = ctl[K_ACTIVE]
    for code in range(1, N_EVENTS):
        bit = 1 << code
        if code != EV_RAMP and mask & bit:
            ctl[K_COUNT0 + code] += 1
            if not (prev & bit):
                value = f_cmd
                if code == EV_WORKSPACE:
                    value = x
                elif code == EV_DEVICE_ERROR or code == EV_DEVICE_FAULT:
                    value = dev_status
                log_event(ctl, events, tick, code, value)
    ctl[K_ACTIVE] = mask
    return f, mask


@njit(cache=True, nogil=True)
def device_write_status(tick, status, ctl, events):
    """Account for the status of a device write (``actuate``): a recoverable fault is logged and counted,
    a fatal one also stops the loop (its last act writes zero force)."""
    if status == 0:
        return
    code = EV_DEVICE_ERROR if status > 0 else EV_DEVICE_FAULT
    ctl[K_COUNT0 + code] += 1
    log_event(ctl, events, tick, code, status)
    if status < 0:
        ctl[K_FAULT] = EV_DEVICE_FAULT
        ctl[K_STOP] = 1

"""A Phantom / Touch as a probe: ``hapticam probe --device phantom``.

As the haptic probe of Patoglu & Gillespie, "The Haptic Probe: Mechanized Haptic Exploration and Automated
Modeling" (no year printed; seed 000), presses a key from force and motion measured on its own side: the
arm presses the object along its axis under host-side position control, and the force on the object is
estimated from the force the arm commanded. Each frame of the
device's scheduler (``HD_UPDATE_RATE``, usually 1 kHz) runs one tick (a callback registered with
``hdScheduleAsynchronous``; :class:`~hapticam.devices.phantom.PhantomDevice` opens the device, places the
axis and holds the handle on it with its rail):

    F_k = clip(k_p (x_target - x_k) - k_d (x_k - x_{k-1}) / T, +-F_limit)    (N along +x, pressing)
    f_object = L[F_{k-1}] - m a - b v,   v = d L[x] / dt,   a = d v / dt      (N on the object along +x)

``F_{k-1}`` is the force that acted over the last period; ``m`` and ``b`` are the handle's apparent mass
and damping from the device's specification. ``L`` is one low-pass filter (two first-order stages at
``filter_hz``) applied alike to the force and to the encoder's position, so the handle's equation of
motion ``m x'' = F - f_object - b x'`` holds between the filtered signals and the estimate is the
object's force filtered by ``L``, free of the encoder's quantisation noise that differencing twice would
amplify. The capture's position is ``L[x]`` (the same delay as the force: about ``1 / (pi filter_hz)``
s). ``k_p`` is ``stiffness_fraction`` of the device's passive bound (``HD_NOMINAL_MAX_STIFFNESS``) and
``k_d`` damps it critically with the handle's mass.

Faults end the stroke with zero force (:class:`~hapticam.devices.probe_device.ProbeFault`): a fatal HDAPI
error in a frame (the tick then commands zero and stops), or no frame for ``silence_ms`` (the scheduler
stopped; force output is then disabled from the host).
"""

from __future__ import annotations

import collections
import ctypes
import math
import threading
import time
from typing import Any

import numpy as np

from hapticam.devices import phantom_hd as hd
from hapticam.devices.base import IO_AUX1, IO_FORCE, IO_SIZE, IO_X
from hapticam.devices.phantom import _SYNC_CALLBACK, PhantomDevice
from hapticam.devices.probe_device import ProbeFault, ProbeOnDevice, ProbeSample
from hapticam.errors import DeviceError

HD_CALLBACK_DONE, HD_CALLBACK_CONTINUE = 0, 1
#: frames kept for the probing loop (s of them at 1 kHz): a host further behind loses the oldest
MAX_QUEUED = 2000


class PhantomProbe(ProbeOnDevice, PhantomDevice):
    """A Phantom pressing an object under host-side position control (module docstring). Its device's
    scheduler paces the probing loop (``paces_itself``)."""

    paces_itself = True

    def __init__(self, library: str | None = None, *, stiffness_fraction: float = 0.5, filter_hz: float = 30.0,
                 requested_rate_hz: float | None = None, **options: Any) -> None:
        super().__init__(library, **options)
        self.requested_rate_hz = requested_rate_hz
        self.stiffness_fraction, self.filter_hz = float(stiffness_fraction), float(filter_hz)
        self.io = np.zeros(IO_SIZE)
        self._cond = threading.Condition()
        self._target = 0.0
        self._limit = 0.0
        self._samples: collections.deque[ProbeSample] = collections.deque(maxlen=MAX_QUEUED)
        self._fault: str | None = None
        self._callback: Any = None
        self._plan = np.zeros(0)
        self._plan_k = 0

    @property
    def rate_hz(self) -> float:
        return self.update_rate_hz

    def begin(self) -> ProbeSample:
        """Open the device, place the axis and start the probing tick holding the handle where it is."""
        if not self.is_open:
            self.open()
        wanted = self.requested_rate_hz or self.update_rate_hz
        if abs(wanted - self.update_rate_hz) > 0.005 * self.update_rate_hz:
            raise DeviceError(f"{self.name}: the device's servo runs at {self.update_rate_hz:g} Hz (HD_UPDATE_RATE): "
                              f"probe with --rate {self.update_rate_hz:g}")
        self._gains()
        x0 = float(1e-3 * self.axis @ (self._position_mm() - self.fst[hd.F_ORIGIN:hd.F_ORIGIN + 3]))
        self._target, self._limit = x0, 0.0
        self._filter = {"x": x0, "x1": x0, "x2": x0, "f1": 0.0, "f2": 0.0, "v": 0.0, "f_prev": 0.0, "k": 0}
        warm = _SYNC_CALLBACK(lambda data: (self._tick(data), HD_CALLBACK_DONE)[1])
        self._lib.hdScheduleSynchronous(ctypes.cast(warm, ctypes.c_void_p), None, hd.HD_MAX_SCHEDULER_PRIORITY)
        self._samples.clear()                 # one frame run outside the servo's deadline: its code is ready
        self._callback = _SYNC_CALLBACK(self._tick)
        handle = self._lib.hdScheduleAsynchronous(ctypes.cast(self._callback, ctypes.c_void_p), None,
                                                  hd.HD_MAX_SCHEDULER_PRIORITY)
        self._raise_errors("hdScheduleAsynchronous")
        self._scheduled = int(handle)
        return ProbeSample(0.0, x0, 0.0, 0.0, -1, 0)

    def plan(self, path_m: np.ndarray) -> None:
        """The positions (m) the tick follows from its next frame on, one a frame, then holds the last: the
        trajectory runs on the device's clock whatever the host's load. Samples of earlier frames are dropped,
        so the ``k``-th :meth:`step` after this returns the frame that followed ``path_m[k]``."""
        with self._cond:
            self._plan, self._plan_k = np.array(path_m, dtype=float), 0
            self._samples.clear()

    def _gains(self) -> None:
        """Servo gains and the estimator's constants from the device's specification."""
        period = 1.0 / self.update_rate_hz
        self.kp = self.stiffness_fraction * self._kmax
        self.kd = 2.0 * math.sqrt(self.kp * self.spec.apparent_mass_kg)          # critical damping
        self.alpha = 1.0 - math.exp(-2.0 * math.pi * self.filter_hz * period)  # first-order low-pass per frame

    def _tick(self, _data: Any) -> int:
        """One scheduler frame: sense, estimate the object's force, command the servo force, publish."""
        state, io, f = (self.fst, self.ist), self.io, self._filter
        status = hd.phantom_sense(state, io)
        period = self.fst[hd.F_PERIOD_S]
        x = io[IO_X]
        c = self.alpha
        x1 = f["x1"] + c * (x - f["x1"])
        x2 = f["x2"] + c * (x1 - f["x2"])                          # L[x]
        f1 = f["f1"] + c * (f["f_prev"] - f["f1"])
        f2 = f["f2"] + c * (f1 - f["f2"])                          # L[F], the force that acted
        v = (x2 - f["x2"]) / period
        a = (v - f["v"]) / period
        on_object = f2 - self.spec.apparent_mass_kg * a - self.spec.damping_N_s_per_m * v
        if self._plan_k < self._plan.size:
            self._target = float(self._plan[self._plan_k])
            self._plan_k += 1
        force = self.kp * (self._target - x) - self.kd * (x - f["x"]) / period
        force = max(-self._limit, min(self._limit, force))
        if status < 0:
            force = 0.0
        io[IO_FORCE] = -force                                   # the adapter's convention: the handle feels -F
        status_end = hd.phantom_actuate(state, io, period if status >= 0 else 0.0)
        f.update(x=x, x1=x1, x2=x2, f1=f1, f2=f2, v=v, f_prev=force, k=f["k"] + 1)
        with self._cond:
            self._samples.append(ProbeSample(f["k"] * period, x2, on_object, force, -1, int(io[IO_AUX1])))
            if status < 0 or status_end < 0:
                code = -min(status, status_end)
                self._fault = f"{self.name}: the device reported {hd.error_text(code)} [HDAPI error {code:#06x}]"
            self._cond.notify_all()
        return HD_CALLBACK_DONE if self._fault else HD_CALLBACK_CONTINUE

    def step(self, x_cmd_m: float, actuator_limit_N: float) -> ProbeSample:
        """The oldest frame not yet returned (every frame in order: a host running late catches up), under the
        force bound ``actuator_limit_N`` (N). The target is :meth:`plan`'s; without a plan, ``x_cmd_m`` (m)."""
        deadline = time.monotonic() + self.servo_silence_s
        with self._cond:
            self._limit = float(actuator_limit_N)
            if self._plan_k >= self._plan.size:
                self._target = float(x_cmd_m)
            while self._fault is None and not self._samples:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ProbeFault(f"{self.name}: the device's scheduler called no frame for "
                                     f"{1e3 * self.servo_silence_s:g} ms")
                self._cond.wait(left)
            if self._fault is not None:
                raise ProbeFault(self._fault)
            return self._samples.popleft()

    def end(self) -> list[str]:
        """Unschedule the tick, force output off, close the device; the notes of the link."""
        try:
            self.unschedule_servo()
            if self._lib is not None and self._handle is not None:
                self._lib.hdDisable(hd.HD_FORCE_OUTPUT)
            self.close()
        except (DeviceError, OSError) as exc:
            self.notes.append(f"phantom: closing: {exc}")
        return list(self.notes)


def open_probe(address: str, rate_hz: float) -> PhantomProbe:
    """``--device phantom[:axis=X,Y,Z:origin=X,Y,Z:lib=PATH:rail=N_PER_M]``: the probe (opened by the probing
    loop's ``begin``); ``rate_hz`` must be the device's own (checked there)."""
    base = PhantomDevice.from_options(address)
    return PhantomProbe(base.library, axis=base.axis, origin_mm=base.origin_mm, rail_stiffness_N_per_m=base.rail_request,
                        requested_rate_hz=rate_hz)

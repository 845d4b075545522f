"""A probe over the serial protocol (hsp v1 and its probing frames): ``hapticam probe --device serial:PORT``.

The device holds the probe where the host says with its own position servo at the firmware's rate
(POSITION, ``devices/serial_protocol.md``) and answers each command with PROBE_STATE: position (counts),
the actuator's force, the load cell's reading (the push on the object along +x) and the switch's
electrical contact. The port, the handshake (HELLO -> INFO, CONFIG, ENABLE) and the closing (FORCE 0,
DISABLE) are :class:`~hapticam.devices.serial_device.SerialDevice`'s. A first POSITION holding the probe
where it is tells whether the firmware probes: one without the probing frames answers ERROR 2 (unknown
type), reported in one line before any capture is written. A firmware stating a rotary axis (a knob's: rad and
N m where a probe reads m and N) is refused in one line at the handshake, before it is enabled.

Lockstep, one command per period from the probing loop (:mod:`hapticam.devices.probe_device`). Faults
end the stroke (:class:`~hapticam.devices.probe_device.ProbeFault`): no PROBE_STATE within
``silence_ms``, a hang-up, an ERROR frame, the device reporting itself faulty or disabled, or its
watchdog having zeroed the force.
"""

from __future__ import annotations

import os
import select
import time
from typing import Any

from hapticam.devices import hsp_frames as hf
from hapticam.devices.probe_device import ProbeFault, ProbeOnDevice, ProbeSample
from hapticam.devices.serial_device import SerialDevice
from hapticam.devices.serial_tick import ERROR_FRAME_TEXT, F_M_PER_COUNT, F_T, F_X, I_GONE, I_RX_N
from hapticam.errors import DeviceError


class SerialProbe(ProbeOnDevice, SerialDevice):
    """A probe on ``port`` (module docstring); ``rate_hz`` is the command rate (Hz),
    ``silence_ms`` how long a command may wait for its PROBE_STATE, ``watchdog_ms`` the firmware's watchdog
    (force off when no command arrives for that long)."""

    def __init__(self, port: str, *, rate_hz: float = 1000.0, silence_ms: float = 250.0, watchdog_ms: int = 250,
                 **options: Any) -> None:
        super().__init__(port, rate_hz=rate_hz, silence_ms=silence_ms, watchdog_ms=watchdog_ms, **options)
        self.seq = 0
        self._last_us = 0
        self._wrapped_s = 0.0
        #: the code of the last ERROR frame the device answered a command with
        self.refused: int | None = None

    def begin(self) -> ProbeSample:
        """Open the port, enable the device and hold the probe where it is: the first sample."""
        if not self.is_open:
            self.open()
        self._pending = bytes(self.rx[:int(self.ist[I_RX_N])])
        self._last_us = int(round(self.fst[F_T] * 1e6))
        try:
            return self.step(float(self.fst[F_X]), min(1.0, self.max_force_N))   # hold where it is
        except ProbeFault as exc:
            if self.refused == hf.E_TYPE:
                raise DeviceError(f"{self.name}: the firmware does not take POSITION: it has no probing frames "
                                  "(devices/serial_protocol.md, section Probing)") from None
            raise DeviceError(str(exc)) from None

    def _check_axis(self, axis: str) -> None:
        """A probe strokes a linear axis (positions in m, forces in N): a firmware stating a rotary one (angles
        in rad, torques in N m in the same fields) is refused at the handshake, before it is enabled."""
        if axis != "linear":
            raise DeviceError(f"{self.spec.name}: the firmware states a {axis} axis (angles in rad, torques in N m); "
                              "a probe strokes a linear axis (m, N) only")

    def step(self, x_cmd_m: float, actuator_limit_N: float) -> ProbeSample:
        """Command the position ``x_cmd_m`` (m) with the servo's force within ``actuator_limit_N`` (N) and
        return the device's answer to it."""
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        m_per_count = float(self.fst[F_M_PER_COUNT])
        frame = hf.pack_position(self.seq, int(round(x_cmd_m / m_per_count)), int(round(actuator_limit_N * 1e6)))
        deadline = time.monotonic() + self.silence_ms * 1e-3
        try:
            sent = self._write_by(frame, deadline)
        except OSError as exc:
            raise self._gone(exc) from exc
        if not sent:
            raise ProbeFault(f"{self.name}: the port took no command within {self.silence_ms:g} ms")
        state = self._await_probe_state(deadline)
        return self._sample(state, m_per_count)

    def end(self) -> list[str]:
        """Force off (FORCE 0, DISABLE) and release the port; the notes of the link."""
        try:
            self.close()
        except (DeviceError, OSError) as exc:
            self.notes.append(f"{self.port}: closing: {exc}")
        return list(self.notes)

    def _gone(self, exc: BaseException | None = None) -> ProbeFault:
        self.ist[I_GONE] = 1                       # closing sends nothing to a port that hung up
        why = f" ({exc})" if exc else ""
        return ProbeFault(f"{self.name}: the port hung up{why}: is the device unplugged or reset?")

    def _await_probe_state(self, deadline: float) -> hf.ProbeState:
        """Read frames until the PROBE_STATE answering this command, by ``deadline`` (``time.monotonic()`` s)."""
        fd = self._serial.fileno()
        while True:
            frames, _, self._pending = hf.parse_frames(self._pending)
            for i, (ftype, payload) in enumerate(frames):
                if ftype == hf.T_ERROR and len(payload) == 2:
                    cause = ERROR_FRAME_TEXT.get(payload[1], "unknown cause")
                    self.refused = payload[1]
                    raise ProbeFault(f"{self.name}: the device refused a command: {cause} [ERROR code {payload[1]}]")
                if ftype == hf.T_PROBE_STATE:
                    state = hf.unpack_probe_state(payload)
                    if state.seq == self.seq:
                        self._pending = b"".join(hf.frame(t, p) for t, p in frames[i + 1:]) + self._pending
                        return state
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProbeFault(f"{self.name}: no answer to a POSITION within {self.silence_ms:g} ms")
            if select.select([fd], [], [], left)[0]:
                try:
                    chunk = os.read(fd, 4096)
                except BlockingIOError:
                    continue
                except OSError as exc:
                    raise self._gone(exc) from exc
                if not chunk:
                    raise self._gone()
                self._pending += chunk

    def _sample(self, s: hf.ProbeState, m_per_count: float) -> ProbeSample:
        """A PROBE_STATE in SI, device time unwrapped; a fault, a disabled device or a watchdog trip raise."""
        if s.status & hf.ST_FAULT or not s.status & hf.ST_ENABLED:
            raise ProbeFault(f"{self.name}: the device reports {'a fault' if s.status & hf.ST_FAULT else 'itself disabled'}"
                             " (force off)")
        if s.status & hf.ST_WATCHDOG:
            raise ProbeFault(f"{self.name}: the firmware's watchdog zeroed the force (commands came too late)")
        if s.time_us < self._last_us:
            self._wrapped_s += 2.0 ** 32 * 1e-6
        self._last_us = s.time_us
        return ProbeSample(t_s=self._wrapped_s + s.time_us * 1e-6, x_m=s.counts * m_per_count,
                           force_N=s.load_uN * 1e-6, actuator_N=s.actuator_uN * 1e-6,
                           contact=1 if s.status & hf.ST_CONTACT else 0, status=s.status)


def open_probe(address: str, rate_hz: float) -> SerialProbe:
    """``--device serial:PORT``: the probe on ``PORT`` (opened by the probing loop's ``begin``)."""
    if not address:
        raise DeviceError("serial: name the port, e.g. --device serial:/dev/ttyACM0")
    return SerialProbe(address, rate_hz=rate_hz)

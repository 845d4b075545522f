"""Single-axis haptic devices over USB serial (hsp v1): ``--device serial:PORT``, extra ``serial`` (pyserial).

Hapkit-style paddles, haptic knobs and motorised keys that implement the small binary protocol of
``devices/serial_protocol.md`` (reference firmware: ``devices/emulators/hsp_emu.c``).

Before the loop (Python, pyserial): open the port exclusively, ask for low-latency mode (FTDI's 1 ms
latency timer; the outcome is kept in :attr:`SerialDevice.notes` for the session log), then
HELLO -> INFO (the :class:`~hapticam.devices.base.DeviceSpec`), AXIS -> AXIS_INFO (the axis kind: a knob's
firmware states rotary, and INFO's figures are then rad, N m, N m s/rad, kg m^2 and counts per radian; a
firmware from before the frame answers ERROR 2 and is linear), CONFIG (firmware watchdog, stream
rate) -> ACK, ENABLE -> ACK + STATE (the handle's position before the first FORCE).

Each tick (compiled, :func:`serial_sense` / :func:`serial_actuate` of :mod:`hapticam.devices.serial_tick`):
non-blocking ``read(2)`` and ``write(2)`` on the port's file descriptor, called from numba through libc
(``types.ExternalFunction``; the symbols are checked with ctypes when that module is imported), and the
frame parser of
:mod:`hapticam.devices.hsp_frames`. Lockstep: tick ``k`` consumes the STATE answering FORCE ``k`` (sent
by tick ``k-1``) and sends FORCE ``k+1``. The device samples its encoder when a FORCE arrives, so the
position a tick uses is one period old: the I/O adds one tick of delay (and the quantisation of 1/cpm
metres and 1 uN).

Faults, as the servo loop sees them (status codes of :mod:`hapticam.devices.base`):

- no fresh STATE this tick (dropped, late): the sample counter does not advance, so the loop's stale
  watchdog zeroes the force after ``stale_ticks`` (event ``stale-device``, logged and counted); the
  adapter counts the tick in ``stale_ticks``. A STATE that is not newer than the last one is discarded.
- a frame with a bad CRC or length: dropped and counted (``bad_frames``); the tick returns
  ``ERR_FRAME`` (force zeroed this tick, ``device-error`` logged and counted).
- a FORCE the port would not take: ``ERR_TX``; an ERROR frame: ``ERR_DEVICE``; a STATE reporting the
  firmware watchdog: ``ERR_WATCHDOG``.
- fatal (zero force, the loop stops): silence for ``silence_ms`` (``FAULT_SILENT``); a hang-up, ``read``
  returning 0 or EIO (``FAULT_GONE``: cable out); the device disabled or faulty (``FAULT_DEVICE``). The
  adapter never reconnects inside a run: a lost device refuses a new binding; a port in use refuses a
  second open.

After the loop (Python, close): the FORCE frames still queued in the port are dropped, FORCE 0 and DISABLE
sent and DISABLE's ACK awaited, all within ``timeout_s``; a firmware too slow or busy to take or answer them
in that time is noted (:attr:`SerialDevice.notes`), not raised, and its watchdog zeroes the force.
"""

from __future__ import annotations

import math
import os
import select
import termios
import time
from typing import Any

import numpy as np
import serial  # pyserial: pip install 'hapticam[serial]'

from hapticam.devices import hsp_frames as hf
from hapticam.devices.base import (IO_FORCE, IO_SIZE, Device, DeviceSpec, DeviceState, ServoBinding,
                                   UnopenedDeviceSpec)
from hapticam.devices.serial_tick import (  # noqa: F401  (ERR_*, FAULT_*: the status codes, read by tests)
    COUNTERS, ERR_DEVICE, ERR_FRAME, ERR_TX, ERR_WATCHDOG, ERROR_FRAME_TEXT, FAULT_DEVICE, FAULT_GONE,
    FAULT_SILENT, F_APPLIED_N, F_FMAX_N, F_LIMIT_DT_S, F_M_PER_COUNT, F_SILENCE_S, F_SIZE, F_T, F_X, I_ECHO,
    I_ERRNO, I_FD, I_FRESH, I_GONE, I_LAST_TUS, I_RX_N, I_SEQ, I_SILENCE_LIMIT, I_SIZE, I_STATUS,
    MAX_WIRE_FORCE_N, RX_CAP, STATUS_TEXT, TX_CAP, serial_actuate, serial_sense, silence_limit_ticks)
from hapticam.errors import DeviceError, UsageError

def _f32(v: float) -> float:
    return float(f"{v:.7g}")  # a float32 field as the decimal the firmware's author wrote (7 digits)


class SerialDevice(Device):
    """A single-axis device speaking hsp v1 on a serial port (module docstring).

    Parameters
    ----------
    port : str
        Serial port (``/dev/ttyACM0``, ``/dev/ttyUSB0``, a pseudo-terminal).
    baud : int
        Line rate (ignored by USB CDC devices and pseudo-terminals).
    watchdog_ms : int
        Firmware watchdog: the device zeroes the force when no FORCE arrives for this long (2-10000 ms).
    stream_hz : int
        0 (lockstep, default): one STATE per FORCE; else the device streams STATE at this rate.
    silence_ms : float
        The host stops the loop (``FAULT_SILENT``) after this long without a fresh STATE.
    timeout_s : float
        Handshake reply timeout (s).
    rate_hz : float
        Servo rate assumed before the first tick (Hz); from then on ``silence_ms`` is counted in ticks of the
        period the loop drives the adapter at.
    """

    status_causes = STATUS_TEXT
    #: the axis kind (linear or rotary) is the firmware's answer to AXIS at open, not the address's
    #: (:func:`hapticam.devices.registry.device_axis` is None: render checks the model file's axis once it is open)
    axis_stated_at_open = True

    def __init__(self, port: str, *, baud: int = 1_000_000, watchdog_ms: int = 50, stream_hz: int = 0,
                 silence_ms: float = 500.0, timeout_s: float = 1.0, rate_hz: float = 1000.0,
                 low_latency: bool = True, set_zero: bool = False) -> None:
        super().__init__()
        if not isinstance(port, str) or not port:
            raise UsageError("device serial needs a port: --device serial:/dev/ttyACM0")
        if not (isinstance(watchdog_ms, int) and 2 <= watchdog_ms <= 10000):
            raise UsageError(f"serial watchdog_ms: a whole number of ms in 2-10000, got {watchdog_ms!r}")
        if not (isinstance(stream_hz, int) and 0 <= stream_hz <= 10000):
            raise UsageError(f"serial stream_hz: 0 (lockstep) or a rate up to 10000 Hz, got {stream_hz!r}")
        for name, v in (("silence_ms", silence_ms), ("timeout_s", timeout_s), ("rate_hz", rate_hz)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise UsageError(f"serial {name}: a positive number, got {v!r}")
        self.port, self.baud, self.watchdog_ms, self.stream_hz = port, int(baud), watchdog_ms, stream_hz
        self.silence_ms, self.timeout_s, self.rate_hz = float(silence_ms), float(timeout_s), float(rate_hz)
        self.low_latency, self.set_zero = bool(low_latency), bool(set_zero)
        self.info: hf.Info | None = None
        self.notes: list[str] = []
        self.spec = UnopenedDeviceSpec.named(f"serial:{port}")   # renders nothing until INFO says what it is
        self.ist = np.zeros(I_SIZE, dtype=np.int64)
        self.fst = np.zeros(F_SIZE)
        self.rx = np.zeros(RX_CAP, dtype=np.uint8)
        self.tx = np.zeros(TX_CAP, dtype=np.uint8)
        self._io = np.zeros(IO_SIZE)
        self._serial: Any = None
        self._pending = b""

    @classmethod
    def from_options(cls, address: str, **options: Any) -> "SerialDevice":
        """``--device serial:PORT`` (render options other than the serial ones are ignored)."""
        keys = ("baud", "watchdog_ms", "stream_hz", "silence_ms", "timeout_s", "rate_hz", "low_latency", "set_zero")
        return cls(address, **{k: v for k, v in options.items() if k in keys})

    # -- state ------------------------------------------------------------------------------------------
    @property
    def lost(self) -> bool:
        """True once the port hung up (the device was unplugged or reset)."""
        return bool(self.ist[I_GONE])

    def counters(self) -> dict[str, int]:
        """The adapter's fault counters (module docstring) and the device's own count of bad frames."""
        return {name: int(self.ist[i]) for name, i in COUNTERS.items()}

    def session_notes(self) -> dict[str, Any]:
        """What the session log records about the link: port, device, low-latency outcome, counters."""
        return {"port": self.port, "device": self.info.name if self.info else None, "notes": list(self.notes),
                "watchdog_ms": self.watchdog_ms, "counters": self.counters()}

    def servo_binding(self) -> ServoBinding:
        """Compiled sense/actuate over ``(ist, fst, rx, tx)``; real time only. A lost device refuses."""
        self._require_open()
        if self.lost:
            raise DeviceError(f"{self.spec.name}: the device was lost ({os.strerror(int(self.ist[I_ERRNO])) if self.ist[I_ERRNO] else 'hang-up'}); "
                              "hapticam does not reconnect inside a run: close it, check the cable and open it again")
        self.fst[F_SILENCE_S] = self.silence_ms * 1e-3
        self.fst[F_LIMIT_DT_S] = 0.0
        self.ist[I_SILENCE_LIMIT] = silence_limit_ticks(self.silence_ms * 1e-3, 1.0 / self.rate_hz)
        return ServoBinding(serial_sense, serial_actuate, (self.ist, self.fst, self.rx, self.tx), False)

    # -- handshake (Python, before the loop) ------------------------------------------------------------
    def _send(self, data: bytes) -> None:
        try:
            self._serial.write(data)
        except (serial.SerialException, OSError) as exc:
            raise DeviceError(f"{self.spec.name}: write failed: {exc}") from exc

    def _write_by(self, data: bytes, deadline: float) -> bool:
        """Write ``data`` to the port by ``deadline`` (``time.monotonic()`` s); False if it would not take it
        all in time (the port's own settings untouched)."""
        fd = self._serial.fileno()
        while data:
            try:
                written = os.write(fd, data)
            except BlockingIOError:
                written = 0
            data = data[written:]
            left = deadline - time.monotonic()
            if data and (left <= 0 or not select.select([], [fd], [], left)[1]):
                return False
        return True

    def _await(self, want: int, what: str, deadline: float | None = None, unknown_ok: int | None = None
               ) -> tuple[bytes, list[tuple[int, bytes]]]:
        """Read frames until one of type ``want`` (until ``deadline``, ``time.monotonic()`` s; default
        ``timeout_s`` from now); returns its payload and the frames after it. ``unknown_ok``: an ERROR 2
        (unknown type) naming that request type is an answer, an empty payload, not a refusal."""
        fd = self._serial.fileno()
        deadline = time.monotonic() + self.timeout_s if deadline is None else deadline
        while True:
            frames, _, self._pending = hf.parse_frames(self._pending)
            for i, (ftype, payload) in enumerate(frames):
                if ftype == hf.T_ERROR and len(payload) == 2 and unknown_ok is not None \
                        and (payload[0], payload[1]) == (unknown_ok, hf.E_TYPE):
                    self._pending = b"".join(hf.frame(t, p) for t, p in frames[i + 1:]) + self._pending
                    return b"", frames[i + 1:]
                if ftype == hf.T_ERROR and len(payload) == 2:
                    cause = ERROR_FRAME_TEXT.get(payload[1], "unknown cause")
                    raise DeviceError(f"{self.spec.name}: the device refused {what}: {cause} [ERROR code {payload[1]}]")
                if ftype == want:
                    self._pending = b"".join(hf.frame(t, p) for t, p in frames[i + 1:]) + self._pending
                    return payload, frames[i + 1:]
            left = deadline - time.monotonic()
            if left <= 0:
                raise DeviceError(f"{self.spec.name}: no reply to {what} within {self.timeout_s:g} s (is the "
                                  f"firmware speaking hsp v{hf.PROTOCOL_VERSION} on {self.port}?)")
            if select.select([fd], [], [], left)[0]:
                try:
                    chunk = os.read(fd, 4096)
                except BlockingIOError:
                    continue
                except OSError as exc:
                    raise DeviceError(f"{self.spec.name}: read failed during {what}: {exc}") from exc
                if not chunk:
                    raise DeviceError(f"{self.spec.name}: the port hung up during {what}")
                self._pending += chunk

    def _handshake(self) -> None:
        hf.parse_frames(b"")              # the frame parser compiles on first use: not within a reply's timeout
        self._send(hf.pack_hello())
        info = hf.unpack_info(self._await(hf.T_INFO, "HELLO")[0])
        if info.version != hf.PROTOCOL_VERSION:
            raise DeviceError(f"{self.spec.name}: device speaks hsp v{info.version}, hapticam v{hf.PROTOCOL_VERSION}")
        axis = self._ask_axis()
        self._check_axis(axis)
        self.spec = self._spec_from(info, axis)
        self.info = info
        force, length = ("torque", "rad") if axis == "rotary" else ("force", "m")
        unit = "N m" if axis == "rotary" else "N"
        self.notes.append(f"{info.name}: {axis} axis, continuous {force} {_f32(info.continuous_force_N):g} {unit}, "
                          f"peak {_f32(info.max_force_N):g} {unit}, {_f32(info.counts_per_m):g} counts/{length}")
        self._send(hf.pack_config(self.watchdog_ms, self.stream_hz))
        self._await(hf.T_ACK, "CONFIG")
        if self.set_zero:
            self._send(hf.frame(hf.T_SET_ZERO))
            self._await(hf.T_ACK, "SET_ZERO")
        self._send(hf.frame(hf.T_ENABLE))
        self._await(hf.T_ACK, "ENABLE")
        first = hf.unpack_state(self._await(hf.T_STATE, "ENABLE (its first STATE)")[0])
        self.ist[:], self.fst[:] = 0, 0.0
        self.ist[[I_FD, I_LAST_TUS, I_FRESH, I_STATUS]] = (self._serial.fileno(), first.time_us, 1, first.status)
        self.fst[F_M_PER_COUNT] = 1.0 / _f32(info.counts_per_m)
        self.fst[[F_X, F_T, F_FMAX_N]] = (first.counts * self.fst[F_M_PER_COUNT], first.time_us * 1e-6,
                                          min(self.spec.max_force_N, MAX_WIRE_FORCE_N))  # f32 may round past it
        pending = np.frombuffer(self._pending, dtype=np.uint8)[:RX_CAP]
        self.rx[:pending.size] = pending
        self.ist[I_RX_N] = pending.size
        self._pending = b""

    def _ask_axis(self) -> str:
        """AXIS -> AXIS_INFO: ``linear`` or ``rotary``, the axis kind the firmware states; a firmware from before
        the frame answers ERROR 2 (unknown type) and is linear (m, N)."""
        self._send(hf.frame(hf.T_AXIS))
        payload = self._await(hf.T_AXIS_INFO, "AXIS", unknown_ok=hf.T_AXIS)[0]
        return hf.unpack_axis_info(payload) if payload else "linear"

    def _check_axis(self, axis: str) -> None:
        """Refuse, with a :class:`DeviceError` before CONFIG and ENABLE, a firmware whose axis kind (``linear``
        or ``rotary``) this link cannot drive; rendering drives either."""

    def _spec_from(self, info: hf.Info, axis: str = "linear") -> DeviceSpec:
        """The spec an INFO states on ``axis`` (rotary: the same fields in rad, N m, N m s/rad, kg m^2): what
        only hsp has checked here (counts per metre, continuous force and mass finite and > 0, a peak force a
        FORCE frame's i32 uN carries), the rest by :class:`DeviceSpec`."""
        name = f"serial:{info.name}@{self.port}"
        label = name if name.isprintable() else repr(name)
        for field, v in (("counts_per_m", info.counts_per_m), ("continuous_force_N", info.continuous_force_N),
                         ("mass_kg", info.mass_kg)):
            if not (math.isfinite(v) and v > 0):
                raise DeviceError(f"{label}: the device's INFO is not physical: {field} = {v!r} (a finite number > 0)")
        b = _f32(info.damping_N_s_per_m)
        spec = DeviceSpec(name=name, max_force_N=_f32(info.max_force_N),
                          max_force_rate_N_per_s=_f32(info.max_force_rate_N_per_s),
                          max_stiffness_N_per_m=2.0 * b / 1e-3,  # K < 2 b / T at T = 1 ms (Colgate & Schenkel)
                          workspace_m=(_f32(info.workspace_m[0]), _f32(info.workspace_m[1])),
                          resolution_m=1.0 / _f32(info.counts_per_m), damping_N_s_per_m=b,
                          provides_velocity=False, apparent_mass_kg=_f32(info.mass_kg), axis=axis)
        if info.max_force_N > MAX_WIRE_FORCE_N:
            raise DeviceError(f"{label}: the device's INFO is not physical for hsp: max_force_N = {info.max_force_N!r} "
                              f"(at most {MAX_WIRE_FORCE_N:.6g} N, the largest force a FORCE frame's i32 uN carries)")
        return spec

    def _line_setup(self) -> None:
        """Low-latency mode where the driver has it (FTDI); VMIN = 1, so a non-blocking read of 0 bytes is a hang-up."""
        if self.low_latency:
            try:
                self._serial.set_low_latency_mode(True)
                self.notes.append(f"{self.port}: low-latency mode on (ASYNC_LOW_LATENCY, FTDI latency timer 1 ms)")
            except (AttributeError, NotImplementedError, ValueError, OSError, serial.SerialException) as exc:
                self.notes.append(f"{self.port}: low-latency mode not available ({exc})")
        fd = self._serial.fileno()
        attrs = termios.tcgetattr(fd)
        attrs[6][termios.VMIN] = 1
        attrs[6][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, attrs)

    # -- Device hooks -------------------------------------------------------------------------------------
    def _open(self) -> None:
        try:
            self._serial = serial.Serial(self.port, self.baud, timeout=0, write_timeout=0.2, exclusive=True)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise DeviceError(f"{self.spec.name}: cannot open {self.port}: {_open_failure_reason(self.port, exc)}"
                              ) from exc
        try:
            self._line_setup()
            self._serial.reset_input_buffer()
            self._handshake()
        except BaseException:
            self._serial.close()
            self._serial = None
            raise

    def _close(self) -> None:
        """Stop the device within ``timeout_s`` and release the port; a device that does not keep up is noted
        in :attr:`notes`, never raised (the run's statistics come first). The FORCE frames the port still
        holds are dropped (a slow firmware would go on applying them after the loop stopped), then FORCE 0
        and DISABLE are sent and DISABLE's ACK awaited, all by ``timeout_s`` from now. What does not happen
        in time is left to the firmware's watchdog: force off ``watchdog_ms`` after the last FORCE it handles."""
        if self._serial is None:
            return
        try:
            if not self.lost:
                self._disable_by(time.monotonic() + self.timeout_s)
        finally:
            self._serial.close()
            self._serial = None

    def _disable_by(self, deadline: float) -> None:
        """Drop the pending output, send FORCE 0 and DISABLE, await the ACK, all by ``deadline``
        (``time.monotonic()`` s)."""
        watchdog = f"the firmware's watchdog zeroes the force {self.watchdog_ms} ms after the last FORCE it handles"
        try:
            self._serial.reset_output_buffer()                       # FORCE frames of a loop that has stopped
            self._write(0.0)                                         # non-blocking, as the loop's own
            sent = self._write_by(hf.frame(hf.T_DISABLE), deadline)
        except (DeviceError, serial.SerialException, termios.error, OSError) as exc:
            self.notes.append(f"{self.port}: DISABLE not sent ({exc}); {watchdog}")
            return
        if not sent:
            self.notes.append(f"{self.port}: the port took no DISABLE within {self.timeout_s:g} s; {watchdog}")
            return
        try:
            self._await(hf.T_ACK, "DISABLE", deadline)
        except DeviceError:
            self.notes.append(f"{self.port}: no ACK to DISABLE within {self.timeout_s:g} s (a slow or busy "
                              f"firmware); {watchdog}")

    def _read(self) -> DeviceState:
        """Python-level read (setup, tests): a FORCE with the last force, then wait for a fresh STATE."""
        serial_actuate((self.ist, self.fst, self.rx, self.tx), self._io, 0.0)
        deadline = time.monotonic() + self.timeout_s
        while self.ist[I_ECHO] != self.ist[I_SEQ]:         # until the STATE answering this FORCE
            status = serial_sense((self.ist, self.fst, self.rx, self.tx), self._io)
            if status < 0 and status != FAULT_SILENT:
                raise DeviceError(f"{self.spec.name}: {STATUS_TEXT.get(status, status)}")
            if time.monotonic() > deadline:
                raise DeviceError(f"{self.spec.name}: no STATE within {self.timeout_s:g} s")
            select.select([self._serial.fileno()], [], [], 0.01)
        return DeviceState(t_s=float(self.fst[F_T]), x_m=float(self.fst[F_X]), v_mps=None)

    def _write(self, force_N: float) -> None:
        """Python-level write: one FORCE frame (``force_N`` in the model's convention); nothing to a lost device."""
        if self.lost:
            return
        self._io[IO_FORCE] = force_N
        status = serial_actuate((self.ist, self.fst, self.rx, self.tx), self._io, 0.0)
        if status == FAULT_GONE:
            raise DeviceError(f"{self.spec.name}: {STATUS_TEXT[FAULT_GONE]}")


def _open_failure_reason(port: str, exc: BaseException) -> str:
    """Why a serial port would not open, read from the file system rather than the driver's wording."""
    if not os.path.exists(port):
        return ("no such port (is the device plugged in? the serial ports present are listed by "
                "'python -m serial.tools.list_ports')")
    if not os.access(port, os.R_OK | os.W_OK):
        return ("permission denied (on Linux, add your user to the group that owns the port, usually "
                "'dialout', and log in again)")
    return f"{exc} (in use by another program or run? hapticam opens a port exclusively)"


"""The device interface every adapter implements (simulator now, hardware adapters later).

Shaped after python-can's ``BusABC``: the base class owns the shared logic (open/close bookkeeping,
idempotent ``close()``, context manager, force clamping to the specification, error wrapping) and an
adapter overrides the small ``_open``/``_close``/``_read``/``_write`` methods.

Two ways a device feeds the servo loop (see :mod:`hapticam.render.loop`):

- *polled*: the loop's own timed thread reads and writes the device each tick from compiled code.
  The simulator does this with numba functions over its state arrays (``servo_binding()``); a serial
  device would expose numba-callable read/write the same way.
- *callback*: the device's own scheduler calls a C callback each tick (OpenHaptics'
  ``hdScheduleAsynchronous``); the loop supplies the step as a numba ``cfunc``
  (:func:`hapticam.render.servo.ServoKernels.make_callback`) and the adapter exchanges position and force
  with it through the loop's I/O block.

Python-level ``read()``/``write()`` are for setup, diagnostics and tests, never for the 1 kHz path.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from hapticam.errors import DeviceError

# The I/O block: a float64 array the servo step and a device exchange each tick (compiled code on both
# sides). The device writes position, velocity (if measured), a sample counter that advances with each
# fresh reading (the watchdog's staleness test) and its timestamp; the step writes the force.
IO_X = 0          # sensed position (m)
IO_V = 1          # measured velocity (m/s), valid when IO_HAS_V is 1
IO_HAS_V = 2      # 1.0 if the device measures velocity, else 0.0 (the loop estimates it)
IO_SEQ = 3        # sample counter; unchanged between ticks means stale data
IO_T = 4          # device time stamp of the sample (s)
IO_FORCE = 5      # force to render after the safety layer (N, model force along +x)
IO_FORCE_CMD = 6  # model force before the safety layer (N), for the record
IO_AUX0 = 7       # device-specific diagnostics recorded with each tick (simulator: true position, m)
IO_AUX1 = 8       # (simulator: force the user applies to the handle, N)
IO_SIZE = 9


@dataclass(frozen=True)
class DeviceSpec:
    """What a device can render, in SI units.

    ``max_stiffness_N_per_m`` is the largest virtual wall stiffness the device renders passively at
    1 kHz: Colgate & Schenkel's condition ``b > K T / 2 + |B|`` gives ``K < 2 b / T`` for a wall
    without virtual damping, with ``b`` the device's physical damping and ``T`` the servo period.
    ``apparent_mass_kg`` is the inertia the user feels at the handle with zero force.
    """

    name: str
    max_force_N: float
    max_force_rate_N_per_s: float
    max_stiffness_N_per_m: float
    workspace_m: tuple[float, float]
    resolution_m: float
    damping_N_s_per_m: float
    provides_velocity: bool = False
    apparent_mass_kg: float = 0.0

    def max_stable_stiffness(self, rate_hz: float) -> float:
        """Largest passive wall stiffness (N/m) at servo rate ``rate_hz``: ``K < 2 b / T``
        (Colgate & Schenkel 1997), scaled from the 1 kHz figure as ``K(rate) = K_1kHz * rate / 1000``."""
        return self.max_stiffness_N_per_m * rate_hz / 1000.0

    def to_dict(self) -> dict[str, Any]:
        """Plain-type copy for reports and telemetry status replies."""
        d = asdict(self)
        d["workspace_m"] = list(self.workspace_m)
        return d


@dataclass(frozen=True)
class DeviceState:
    """One reading: time (s, device clock), position (m), velocity (m/s, ``None`` if not measured)."""

    t_s: float
    x_m: float
    v_mps: float | None = None


class Device:
    """Base class of device adapters: open/close (idempotent), context manager, read, write.

    Subclasses set ``spec`` and implement ``_open``, ``_close``, ``_read`` and ``_write``; driver
    exceptions are re-raised as :class:`~hapticam.errors.DeviceError` ``from`` the original.
    """

    spec: DeviceSpec

    def __init__(self) -> None:
        self._open_flag = False

    # -- lifecycle --------------------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        """True between ``open()`` and ``close()``."""
        return self._open_flag

    def open(self) -> "Device":
        """Open the device; a second call does nothing. Returns ``self``."""
        if self._open_flag:
            return self
        try:
            self._open()
        except DeviceError:
            raise
        except Exception as exc:  # driver errors of any type
            raise DeviceError(f"{self.spec.name}: cannot open device: {exc}") from exc
        self._open_flag = True
        return self

    def close(self) -> None:
        """Command zero force and release the device; safe to call any number of times."""
        if not self._open_flag:
            return
        try:
            try:
                self._write(0.0)
            finally:
                self._close()
        except DeviceError:
            raise
        except Exception as exc:
            raise DeviceError(f"{self.spec.name}: error while closing: {exc}") from exc
        finally:
            self._open_flag = False

    def __enter__(self) -> "Device":
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- I/O ----------------------------------------------------------------------------------------
    def read(self) -> DeviceState:
        """Read the current state (position in m, velocity if the device measures it)."""
        self._require_open()
        try:
            return self._read()
        except DeviceError:
            raise
        except Exception as exc:
            raise DeviceError(f"{self.spec.name}: read failed: {exc}") from exc

    def write(self, force_N: float) -> float:
        """Command ``force_N`` (the model force along +x; the handle feels ``-force_N``), clamped to
        ``spec.max_force_N``. Returns the force actually commanded."""
        self._require_open()
        f = float(force_N)
        if f != f:  # NaN never reaches a motor
            f = 0.0
        lim = self.spec.max_force_N
        f = min(max(f, -lim), lim)
        try:
            self._write(f)
        except DeviceError:
            raise
        except Exception as exc:
            raise DeviceError(f"{self.spec.name}: write failed: {exc}") from exc
        return f

    def _require_open(self) -> None:
        if not self._open_flag:
            raise DeviceError(f"{self.spec.name}: device is not open")

    # -- adapter hooks ------------------------------------------------------------------------------
    def _open(self) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError

    def _read(self) -> DeviceState:
        raise NotImplementedError

    def _write(self, force_N: float) -> None:
        raise NotImplementedError

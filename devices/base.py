"""The device interface every adapter implements: the simulator, hardware adapters, remote devices.

Shaped after python-can's ``BusABC``: the base class owns the shared logic (open/close bookkeeping,
idempotent ``close()``, context manager, force clamping to the specification, error wrapping) and an
adapter overrides the small ``_open``/``_close``/``_read``/``_write`` methods.

What a device hands the servo loop
----------------------------------
:meth:`Device.servo_binding` returns a :class:`ServoBinding`: two numba-compiled functions and the
arrays they work on. The loop (:mod:`hapticam.render.servo`) compiles them into its tick the way it
compiles the model's force kernel, so nothing of Python runs per tick:

- ``sense(state, io) -> status``: read the device and fill the I/O block: ``io[IO_X]`` position (m),
  ``io[IO_V]``/``io[IO_HAS_V]`` velocity if measured, ``io[IO_SEQ]`` a counter that advances with each
  fresh sample (unchanged means stale: the watchdog zeroes force), ``io[IO_T]`` the sample time (s), and
  ``io[IO_AUX0]``/``io[IO_AUX1]`` two device diagnostics recorded with every tick.
- ``actuate(state, io, dt_s) -> status``: command ``io[IO_FORCE]`` (N, model force along +x; the handle
  feels ``-io[IO_FORCE]``). A simulated device also advances its physics by ``dt_s``; ``dt_s = 0`` is the
  loop's last call (with zero force) when it stops.

What a device may do per tick: arithmetic, non-blocking I/O on descriptors it opened before the loop
started, calls into a C library; never allocate, block, raise, or touch a Python object.

How it reports a fault: the status both functions return. ``STATUS_OK`` (0) is a good tick; a positive
code is a recoverable fault (this tick's force is zeroed, the event ``device-error`` is logged with the
code and counted, the loop goes on); a negative code is fatal (zero force, the loop stops with the
fault ``device-fault`` and the code in its event log).

``ServoBinding.simulated`` says whether the device's clock is the loop's (it advances by ``dt_s`` in
``actuate``), so the loop may run it faster than real time (``--simulated-clock``); hardware runs only
in real time.

Python-level ``read()``/``write()`` are for setup, diagnostics and tests, never for the 1 kHz path.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, NamedTuple

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

STATUS_OK = 0  # sense/actuate: a good tick (> 0 recoverable fault code, < 0 fatal fault code)


class ServoBinding(NamedTuple):
    """What a device hands the servo loop (see the module docstring).

    ``sense(state, io) -> int`` and ``actuate(state, io, dt_s) -> int`` are numba ``njit(nogil=True)``
    functions; ``state`` is the tuple of arrays they receive; ``simulated`` is True when the device's
    clock is the loop's (it may run faster than real time)."""

    sense: Callable
    actuate: Callable
    state: tuple
    simulated: bool


@dataclass(frozen=True)
class DeviceSpec:
    """What a device can render, in SI units.

    ``max_stiffness_N_per_m`` is the largest virtual wall stiffness the device renders passively at
    1 kHz: Colgate & Schenkel's condition ``b > K T / 2 + |B|`` gives ``K < 2 b / T`` for a wall
    without virtual damping, with ``b`` the device's physical damping and ``T`` the servo period.
    ``apparent_mass_kg`` is the inertia the user feels at the handle with zero force.
    ``passivity_required`` is set by a device whose own I/O delays the loop (a remote device: network delay
    erodes passivity), so the safety layer keeps the passivity observer and controller on for it.
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
    passivity_required: bool = False

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

    @classmethod
    def from_options(cls, address: str, **options: Any) -> "Device":
        """Create the adapter from the command line's ``--device NAME[:ADDRESS]`` and the render options
        (``user``: the simulated user, ``seed``: simulator noise seed; adapters ignore what they do not
        use). The default takes no address."""
        if address:
            raise DeviceError(f"device {cls.__name__} takes no address (got {address!r})")
        return cls()

    def session_notes(self) -> dict[str, Any]:
        """What a session's log and recording header keep about this device's link (port, low-latency
        mode, counters, round trip); empty for a device without a link."""
        return {}

    def servo_binding(self) -> ServoBinding:
        """The compiled functions and arrays the servo loop drives this device with (see module docstring).

        Adapters that can run in the servo loop override this; the default refuses clearly."""
        raise DeviceError(f"{self.spec.name}: this device cannot be driven by the servo loop")

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

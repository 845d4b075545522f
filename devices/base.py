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
  loop's last call (with zero force) when it stops, on a fault too: the device's last command is then
  exactly zero, with nothing an adapter adds of its own (the Phantom's rail).

What a device may do per tick: arithmetic, non-blocking I/O on descriptors it opened before the loop
started, calls into a C library; never allocate, block, raise, or touch a Python object.

How it reports a fault: the status both functions return. ``STATUS_OK`` (0) is a good tick; a positive
code is a recoverable fault (this tick's force is zeroed, the event ``device-error`` is logged with the
code and counted, the loop goes on); a negative code is fatal (zero force, the loop stops with the
fault ``device-fault`` and the code in its event log). :meth:`Device.status_text` tells a code's cause in
words (each adapter's :attr:`Device.status_causes`).

``ServoBinding.simulated`` says whether the device's clock is the loop's (it advances by ``dt_s`` in
``actuate``), so the loop may run it faster than real time (``--simulated-clock``); hardware runs only
in real time.

Python-level ``read()``/``write()`` are for setup, diagnostics and tests, never for the 1 kHz path.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any, Callable, ClassVar, NamedTuple

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

# Bounds no real haptic device reaches. A specification beyond them comes from a faulty firmware, driver or
# network peer, and is refused before it sizes a force (the safety layer clamps to the spec's own figures).
#: peak force (N): force-feedback arms peak at tens of newtons, industrial ones near 1 kN; 10 kN crushes a hand
MAX_FORCE_N = 1e4
#: force rate (N/s): MAX_FORCE_N within 0.1 ms, a 10 kHz current loop, faster than any haptic amplifier
MAX_FORCE_RATE_N_PER_S = MAX_FORCE_N / 1e-4
#: physical damping (N s/m): a handle moved at 1 m/s, a slow hand movement, would resist with MAX_FORCE_N
MAX_DAMPING_N_S_PER_M = MAX_FORCE_N / 1.0
#: passive stiffness at 1 kHz (N/m): Colgate & Schenkel's K < 2 b / T with b = MAX_DAMPING_N_S_PER_M, T = 1 ms
MAX_STIFFNESS_N_PER_M = 2.0 * MAX_DAMPING_N_S_PER_M / 1e-3
#: workspace bound from the origin, in the device's own unit: m for a linear device (a hand-held handle travels
#: centimetres, a room-sized cable robot metres) or rad for a rotary one (a knob turns a few revolutions; an
#: endless encoder is given the range its session may turn, here at most 100 turns)
MAX_WORKSPACE_M = 200.0 * math.pi
#: apparent mass at the handle (kg): more than a person moves by hand as a haptic display
MAX_APPARENT_MASS_KG = 100.0
#: longest device name (characters): it is printed in one-line messages and session logs
MAX_NAME_CHARS = 200
#: the axis kinds a device's handle moves on: linear (m, N) or rotary (rad, N m), as in captures and model files
DEVICE_AXES = ("linear", "rotary")


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
    ``axis`` is the kind of axis the handle moves on (:data:`DEVICE_AXES`): ``linear`` (m, N) or ``rotary``
    (a knob: rad, N m); on a rotary device the fields keep their linear names and hold the rotary units, as
    captures and model files do: ``max_force_N`` N m, ``max_force_rate_N_per_s`` N m/s,
    ``max_stiffness_N_per_m`` N m/rad, ``workspace_m`` and ``resolution_m`` rad, ``damping_N_s_per_m``
    N m s/rad, ``apparent_mass_kg`` kg m^2. A device renders only models on its own axis kind.

    A spec checks itself when it is made (:func:`spec_problem`): whatever an adapter learnt from its device,
    firmware or network peer, a spec that exists is physical, or a :class:`~hapticam.errors.DeviceError`
    names the device, the field and the value. An adapter not yet opened states
    :class:`UnopenedDeviceSpec` instead.
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
    axis: str = "linear"

    def __post_init__(self) -> None:
        if isinstance(self.workspace_m, list):             # a spec read back from to_dict() or the network
            object.__setattr__(self, "workspace_m", tuple(self.workspace_m))
        problem = spec_problem(self)
        if problem is not None:
            raise DeviceError(f"{_label(self.name)}: the device's specification is not physical: {problem}")

    def max_stable_stiffness(self, rate_hz: float) -> float:
        """Largest passive wall stiffness (N/m) at servo rate ``rate_hz``: ``K < 2 b / T``
        (Colgate & Schenkel 1997), scaled from the 1 kHz figure as ``K(rate) = K_1kHz * rate / 1000``."""
        return self.max_stiffness_N_per_m * rate_hz / 1000.0

    def to_dict(self) -> dict[str, Any]:
        """Plain-type copy for reports and telemetry status replies."""
        d = asdict(self)
        d["workspace_m"] = list(self.workspace_m)
        return d


#: the workspace an adapter states before it has opened its device (unknown: the empty interval)
UNKNOWN_WORKSPACE_M = (0.0, 0.0)


@dataclass(frozen=True)
class UnopenedDeviceSpec(DeviceSpec):
    """The spec of an adapter before it has opened its device and learnt its figures: it renders nothing
    (every limit 0) and its workspace is unknown (:data:`UNKNOWN_WORKSPACE_M`). Only an adapter states it,
    never a device or a peer (a spec received is always a :class:`DeviceSpec`); :meth:`Device.open` refuses
    to leave an adapter with it."""

    def __post_init__(self) -> None:
        problem = _name_problem(self.name)
        limits = (self.max_force_N, self.max_force_rate_N_per_s, self.max_stiffness_N_per_m, self.damping_N_s_per_m)
        if problem is None and (any(v != 0.0 for v in limits) or tuple(self.workspace_m) != UNKNOWN_WORKSPACE_M):
            problem = "an unopened device's spec renders nothing: every limit 0 and the workspace unknown (0, 0)"
        if problem is not None:
            raise DeviceError(f"{_label(self.name)}: {problem}")

    @classmethod
    def named(cls, name: str) -> "UnopenedDeviceSpec":
        """The placeholder spec of the adapter ``name`` (e.g. ``"serial:/dev/ttyACM0"``)."""
        return cls(name=name, max_force_N=0.0, max_force_rate_N_per_s=0.0, max_stiffness_N_per_m=0.0,
                   workspace_m=UNKNOWN_WORKSPACE_M, resolution_m=0.0, damping_N_s_per_m=0.0)


#: the spec's numbers: (field, lowest value, whether the lowest itself is allowed, highest value, unit)
#: (damping before the stiffness adapters derive from it, so a bad damping is named as itself)
_SPEC_NUMBERS = (("max_force_N", 0.0, False, MAX_FORCE_N, "N"),
                 ("max_force_rate_N_per_s", 0.0, False, MAX_FORCE_RATE_N_PER_S, "N/s"),
                 ("damping_N_s_per_m", 0.0, True, MAX_DAMPING_N_S_PER_M, "N s/m"),
                 ("max_stiffness_N_per_m", 0.0, True, MAX_STIFFNESS_N_PER_M, "N/m"),
                 ("resolution_m", 0.0, True, MAX_WORKSPACE_M, "m"),
                 ("apparent_mass_kg", 0.0, True, MAX_APPARENT_MASS_KG, "kg"))


def _is_finite(value: Any) -> bool:
    """A real number (not a flag) that is finite as a float."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:                                  # an integer beyond any float
        return False


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _name_problem(name: Any) -> str | None:
    if not (isinstance(name, str) and 0 < len(name) <= MAX_NAME_CHARS and name.isprintable()):
        return f"name = {_shown(name)} (a printable name of 1-{MAX_NAME_CHARS} characters)"
    return None


def _label(name: Any) -> str:
    """The spec's name as a message's prefix (its repr when it is not a printable name)."""
    return name if _name_problem(name) is None else f"device {_shown(name)}"


def spec_problem(spec: DeviceSpec) -> str | None:
    """What makes ``spec`` unphysical, as ``field = value (requirement)``, or None: a printable name; every
    number finite; ``max_force_N`` and ``max_force_rate_N_per_s`` > 0; stiffness, resolution, damping and
    apparent mass >= 0 (0: a frictionless device renders no passive wall, a mass not stated); each at most its
    bound (``MAX_*`` of this module); a workspace ``lo < hi`` within ``MAX_WORKSPACE_M`` and wider than the
    resolution; a positive apparent mass where the passivity controller is required (its bounds scale with
    it); flags that are booleans; an axis of :data:`DEVICE_AXES`."""
    problem = _name_problem(spec.name)
    if problem is not None:
        return problem
    for flag in ("provides_velocity", "passivity_required"):
        if not isinstance(getattr(spec, flag), bool):
            return f"{flag} = {_shown(getattr(spec, flag))} (true or false)"
    if not (isinstance(spec.axis, str) and spec.axis in DEVICE_AXES):
        return f"axis = {_shown(spec.axis)} (one of {', '.join(DEVICE_AXES)})"
    for field, lo, lo_allowed, hi, unit in _SPEC_NUMBERS:
        v = getattr(spec, field)
        if not (_is_finite(v) and (v >= lo if lo_allowed else v > lo) and v <= hi):
            return f"{field} = {_shown(v)} (finite, {'>=' if lo_allowed else '>'} {lo:g} and at most {hi:g} {unit})"
    ws = spec.workspace_m
    if not (isinstance(ws, tuple) and len(ws) == 2 and all(_is_finite(v) for v in ws)
            and -MAX_WORKSPACE_M <= ws[0] < ws[1] <= MAX_WORKSPACE_M):
        return f"workspace_m = {_shown(ws)} (two finite numbers lo < hi within +-{MAX_WORKSPACE_M:.0f} m or rad)"
    if spec.resolution_m > ws[1] - ws[0]:
        return f"resolution_m = {_shown(spec.resolution_m)} (at most the workspace's width, {ws[1] - ws[0]:g} m)"
    if spec.passivity_required and not spec.apparent_mass_kg > 0.0:
        return (f"apparent_mass_kg = {_shown(spec.apparent_mass_kg)} (> 0 kg on a device that requires the "
                "passivity controller: its damping and stiffness bounds scale with the mass)")
    return None


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
    #: the cause of each status code this adapter's binding returns (> 0 recoverable, < 0 fatal), in words
    status_causes: dict[int, str] = {}
    #: True for a device whose own servo thread calls the tick (the Phantom's HDAPI scheduler): the loop then
    #: registers its step with the device (:mod:`hapticam.render.scheduled`) instead of pacing it on the wall
    #: clock, and the loop's own real-time scheduling does not matter. False: the loop paces the device.
    external_clock: ClassVar[bool] = False
    #: on an external clock, how long (s) the device's scheduler may go without calling the tick before the
    #: loop stops with the fault ``device-fault``; an adapter may set it per device (the Phantom's ``silence_ms``)
    servo_silence_s: float = 0.2
    #: True for a device that moves in 3-D and renders along an axis of its own frame (the Phantom): it takes
    #: render's ``--axis`` and ``--origin`` (``axis`` and ``origin_mm`` of :meth:`from_options`)
    renders_along_axis: ClassVar[bool] = False

    @classmethod
    def axis_for(cls, address: str) -> str:
        """The axis kind (:data:`DEVICE_AXES`) the adapter at ``address`` (``--device NAME:ADDRESS``) renders,
        known before it is made or opened: render loads the model in that axis's units. Linear by default;
        an adapter that can be rotary overrides it (``--device sim:rotary``)."""
        return "linear"

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
        if isinstance(self.spec, UnopenedDeviceSpec):
            try:
                self._close()
            finally:
                raise DeviceError(f"{self.spec.name}: the adapter opened without stating the device's specification")
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

    @classmethod
    def driver_status(cls) -> tuple[bool, str, str]:
        """``(present, what was found or is missing, how to install it)`` for ``hapticam devices``. The default,
        for an adapter whose module imported and that needs nothing more: ``(True, "", "")`` (the listing
        then says whether it is built in or comes from an extra or a plugin). An adapter with a driver of
        its own (a vendor library) overrides it to look for the driver without opening a device."""
        return True, "", ""

    def status_text(self, code: int) -> str:
        """What the status ``code`` of this device's ``sense``/``actuate`` means, in words, with the code in
        brackets (``[device code -0x002]``); the code alone when the adapter does not know it
        (:attr:`status_causes`)."""
        cause = self.status_causes.get(int(code))
        return f"{cause} [device code {int(code):#06x}]" if cause else f"device code {int(code):#06x}"

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

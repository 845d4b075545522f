"""Phantom / Touch haptic arms through OpenHaptics (HDAPI): ``--device phantom``, extra ``phantom``.

The vendor's library runs its own 1 kHz servo thread (the scheduler) and calls registered callbacks from
it. hapticam registers its compiled servo tick there (:mod:`hapticam.render.scheduled`: the loop's
``step`` between this adapter's ``sense`` and ``actuate``, a numba ``cfunc`` at
``HD_MAX_SCHEDULER_PRIORITY``), so each tick runs inside the device's frame without the GIL:
``hdBeginFrame``, ``hdGetDoublev(HD_CURRENT_POSITION)``, model and safety layer,
``hdSetDoublev(HD_CURRENT_FORCE)``, ``hdEndFrame``, ``hdGetError`` (:mod:`hapticam.devices.phantom_hd`).

pyOpenHaptics (``pip install 'hapticam[phantom]'``) is used to find and load the library (after
hapticam has loaded the one asked for, its ``dlopen("libHD.so")`` gets the same object) and for the
device's model and vendor strings. Its own servo path is not used: it wraps a Python callback (so every
tick takes the GIL), misses a failed ``hdInitDevice``, raises ``KeyError`` for unlisted error codes and
stops the servo loop for good, without ``hdEndFrame``, when the Python callback raises.

Opening: the library (argument ``library``, else ``HAPTICAM_LIBHD``, else ``libHD.so``), ``hdInitDevice``
(a failure is a :class:`~hapticam.errors.DeviceError` with the HDAPI code), the specification from the
device (``HD_NOMINAL_MAX_FORCE``, ``..._CONTINUOUS_FORCE``, ``..._STIFFNESS``,
``HD_USABLE_WORKSPACE_DIMENSIONS``, ``HD_SOFTWARE_FORCE_IMPULSE_LIMIT``, ``HD_UPDATE_RATE``, model, vendor
and serial number), the device's own safety on (force clamping, software force and velocity limits,
impulse limit, force ramping) as well as hapticam's safety layer, force output on, the scheduler started,
and the origin read (the handle's position at open unless ``origin_mm`` is given).

Closing (idempotent): the callback unscheduled, force output disabled, the scheduler stopped, the device
disabled, in that order.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import math
from typing import Any

import numpy as np

from hapticam.devices import phantom_hd as hd
from hapticam.devices.base import IO_SIZE, Device, DeviceSpec, DeviceState, ServoBinding, UnopenedDeviceSpec
from hapticam.errors import DependencyMissingError, DeviceError, UsageError

#: nominal position resolution of a Touch (3D Systems datasheet: > 450 dpi, about 0.055 mm); HDAPI has no query
DEFAULT_RESOLUTION_M = 0.055e-3
#: apparent mass at the tip of a Touch (3D Systems datasheet: < 45 g); HDAPI has no query
DEFAULT_APPARENT_MASS_KG = 0.045
#: the rail's default stiffness as a fraction of the device's passive bound HD_NOMINAL_MAX_STIFFNESS
RAIL_FRACTION = 0.5
_SYNC_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_void_p)
#: the ``device-fault`` code the servo loop logs when the device's scheduler stops calling the tick
SCHEDULER_SILENT = -1


def _vector(name: str, value: Any, unit: bool) -> np.ndarray:
    try:
        v = np.asarray([float(c) for c in value], dtype=float)
    except (TypeError, ValueError):
        raise UsageError(f"phantom {name}: three numbers, got {value!r}") from None
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise UsageError(f"phantom {name}: three finite numbers, got {value!r}")
    if unit:
        n = float(np.linalg.norm(v))
        if n < 1e-9:
            raise UsageError(f"phantom {name}: must not be zero")
        v = v / n
    return v


def axis_interval_m(axis: np.ndarray, origin_mm: np.ndarray, box_mm: np.ndarray) -> tuple[float, float]:
    """The part of the line ``o + t a`` inside the workspace box (min xyz, max xyz; mm), as ``t`` in m
    (slab intersection)."""
    lo, hi = -math.inf, math.inf
    for i in range(3):
        b0, b1 = box_mm[i] - origin_mm[i], box_mm[i + 3] - origin_mm[i]
        if abs(axis[i]) < 1e-12:
            if not b0 <= 0.0 <= b1:
                return 0.0, 0.0
            continue
        t1, t2 = b0 / axis[i], b1 / axis[i]                     # t = (bound - o_i) / a_i
        lo, hi = max(lo, min(t1, t2)), min(hi, max(t1, t2))
    return (lo * 1e-3, hi * 1e-3) if lo < hi else (0.0, 0.0)


class PhantomDevice(Device):
    """A Phantom/Touch through OpenHaptics, driven by the device's own scheduler (module docstring).

    Parameters
    ----------
    library : str, optional
        Path or name of ``libHD.so`` (default ``$HAPTICAM_LIBHD``, else ``libHD.so``).
    axis : 3 numbers
        Rendering axis in the device's frame (normalised; default ``(0, -1, 0)``: a downward key press).
    origin_mm : 3 numbers, optional
        Origin of the axis in the device's frame (mm); default the handle's position at open.
    rail_stiffness_N_per_m : float, optional
        Stiffness holding the handle on the axis (default half of ``HD_NOMINAL_MAX_STIFFNESS``; at most all of it).
    config_name : str, optional
        The device's configuration name (``hdInitDevice``; default the default device).
    silence_ms : float
        The loop stops with a fault when the scheduler does not call the tick for this long.
    resolution_m, apparent_mass_kg : float
        Figures HDAPI cannot report (defaults: a Touch's datasheet).
    """

    external_clock = True
    renders_along_axis = True
    #: the device's HDAPI errors, and the loop's code (hapticam.render.scheduled.SILENT_FAULT) for a scheduler
    #: that stopped calling the tick
    status_causes = {**hd.status_causes(), SCHEDULER_SILENT: "the device's scheduler stopped calling the servo "
                     "tick (force output disabled)"}

    def __init__(self, library: str | None = None, *, axis: Any = (0.0, -1.0, 0.0), origin_mm: Any = None,
                 rail_stiffness_N_per_m: float | None = None, config_name: str | None = None,
                 silence_ms: float = 200.0, resolution_m: float = DEFAULT_RESOLUTION_M,
                 apparent_mass_kg: float = DEFAULT_APPARENT_MASS_KG) -> None:
        super().__init__()
        self.library = library
        self.axis = _vector("axis", axis, unit=True)
        self.origin_mm = None if origin_mm is None else _vector("origin", origin_mm, unit=False)
        for name, v in (("silence_ms", silence_ms), ("resolution_m", resolution_m),
                        ("apparent_mass_kg", apparent_mass_kg)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise UsageError(f"phantom {name}: a positive number, got {v!r}")
        if rail_stiffness_N_per_m is not None and not (math.isfinite(rail_stiffness_N_per_m) and rail_stiffness_N_per_m >= 0):
            raise UsageError(f"phantom rail stiffness: a finite number >= 0 N/m, got {rail_stiffness_N_per_m!r}")
        self.rail_request = rail_stiffness_N_per_m
        self.config_name = config_name
        self.servo_silence_s = float(silence_ms) * 1e-3
        self.resolution_m, self.apparent_mass_kg = float(resolution_m), float(apparent_mass_kg)
        self.spec = UnopenedDeviceSpec.named("phantom")      # until the device reports its figures
        self._figures: dict[str, Any] = {}                   # the spec's figures but the workspace, once read
        self.fst = np.zeros(hd.F_SIZE)
        self.ist = np.zeros(hd.I_SIZE, dtype=np.int64)
        self.info: dict[str, Any] = {}
        self.notes: list[str] = []
        self.update_rate_hz = 0.0
        self._lib: Any = None
        self._handle: int | None = None
        self._scheduled: int | None = None
        self._io = np.zeros(IO_SIZE)

    @classmethod
    def from_options(cls, address: str, **options: Any) -> "PhantomDevice":
        """``--device phantom`` or ``phantom:axis=X,Y,Z:origin=X,Y,Z:lib=PATH:rail=N_PER_M`` (render
        options ``axis``, ``origin_mm`` and ``library`` are taken too; others are ignored)."""
        kw: dict[str, Any] = {k: options[k] for k in ("axis", "origin_mm", "library") if options.get(k) is not None}
        for part in filter(None, address.split(":")):
            key, sep, value = part.partition("=")
            if not sep:
                raise UsageError(f"--device phantom:{address}: expected key=value parts (axis, origin, lib, rail)")
            if key in ("axis", "origin"):
                kw["axis" if key == "axis" else "origin_mm"] = value.split(",")
            elif key == "lib":
                kw["library"] = value
            elif key == "rail":
                try:
                    kw["rail_stiffness_N_per_m"] = float(value)
                except ValueError:
                    raise UsageError(f"--device phantom: rail={value!r} is not a number (N/m)") from None
            else:
                raise UsageError(f"--device phantom: unknown part {key!r} (axis, origin, lib, rail)")
        return cls(**kw)

    @classmethod
    def driver_status(cls, library: str | None = None) -> tuple[bool, str, str]:
        """``(present, what was found or is missing, how to install it)`` for ``hapticam devices``: the
        pyOpenHaptics package and OpenHaptics' libHD (loaded to check it, nothing initialised)."""
        name = hd.library_name(library)
        if importlib.util.find_spec("pyOpenHaptics") is None:
            return False, "pyOpenHaptics is not installed", "pip install 'hapticam[phantom]'"
        try:
            lib = ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            return False, f"pyOpenHaptics installed; OpenHaptics' {name} not found ({exc})", hd.INSTALL_HINT
        missing = [s for s in hd.SYMBOLS if not hasattr(lib, s)]
        if missing:
            return False, f"{name} lacks {', '.join(missing)}", hd.INSTALL_HINT
        return True, f"pyOpenHaptics installed; {name} loads with every HDAPI symbol", ""

    # -- state ------------------------------------------------------------------------------------------
    def counters(self) -> dict[str, int]:
        """Frames run and HDAPI errors seen by the compiled tick, by kind."""
        return {name: int(self.ist[i]) for name, i in hd.COUNTERS.items()}

    @property
    def faulted(self) -> bool:
        """True once the tick saw a fatal HDAPI error (device, communication, scheduler)."""
        return bool(self.ist[hd.I_N_FATAL])

    def session_notes(self) -> dict[str, Any]:
        """What the session log records: library, device strings, rate, axis, rail, counters."""
        return {"library": hd.library_name(self.library), **self.info, "update_rate_hz": self.update_rate_hz,
                "axis": self.axis.tolist(), "origin_mm": self.fst[hd.F_ORIGIN:hd.F_ORIGIN + 3].tolist(),
                "rail_stiffness_N_per_m": float(self.fst[hd.F_RAIL_K]), "notes": list(self.notes),
                "counters": self.counters()}

    def servo_binding(self) -> ServoBinding:
        """Compiled sense/actuate over ``(fst, ist)``, for the device's scheduler (real time only)."""
        self._require_open()
        if self.faulted:
            code = int(self.ist[hd.I_FATAL_CODE])
            raise DeviceError(f"{self.spec.name}: the device reported {hd.error_text(code)} "
                              f"[HDAPI error {code:#06x}]; close it and open it again")
        return ServoBinding(hd.phantom_sense, hd.phantom_actuate, (self.fst, self.ist), False)

    # -- the device's scheduler (hapticam.render.scheduled) ---------------------------------------------------
    def schedule_servo(self, callback_address: int, data_address: int, rate_hz: float) -> None:
        """Register the compiled tick with ``hdScheduleAsynchronous`` at the highest priority, after checking
        the loop's rate against ``HD_UPDATE_RATE``."""
        self._require_open()
        if abs(rate_hz - self.update_rate_hz) > 0.005 * self.update_rate_hz:
            raise DeviceError(f"{self.spec.name}: the device's servo runs at {self.update_rate_hz:g} Hz "
                              f"(HD_UPDATE_RATE), the loop at {rate_hz:g} Hz: render with --rate {self.update_rate_hz:g}")
        self.unschedule_servo()
        handle = self._lib.hdScheduleAsynchronous(callback_address, data_address, hd.HD_MAX_SCHEDULER_PRIORITY)
        self._raise_errors("hdScheduleAsynchronous")
        self._scheduled = int(handle)

    def unschedule_servo(self) -> None:
        """Remove the tick from the scheduler (returns after a running frame ends); idempotent."""
        if self._scheduled is not None and self._lib is not None:
            self._lib.hdUnschedule(self._scheduled)
            self._scheduled = None

    def disable_output(self) -> None:
        """Turn the device's force output off (``hdDisable(HD_FORCE_OUTPUT)``): the loop's answer to a
        scheduler that stopped calling the tick, which therefore cannot write zero force itself."""
        if self._lib is not None and self._handle is not None:
            self._lib.hdDisable(hd.HD_FORCE_OUTPUT)
            self.notes.append("force output disabled: the device's scheduler stopped calling the servo tick")

    # -- opening ------------------------------------------------------------------------------------------
    def _raise_errors(self, what: str) -> None:
        codes = []
        for _ in range(hd.MAX_ERRORS_PER_CALL):
            code = hd.error_code(self._lib.hdGetError())
            if code == hd.HD_SUCCESS:
                break
            codes.append(code)
        if codes:
            raise DeviceError(f"{self.spec.name}: {what} failed: "
                              + "; ".join(f"{hd.error_text(c)} [HDAPI error {c:#06x}]" for c in codes))

    def _get(self, what: int, n: int = 1) -> np.ndarray:
        buf = (ctypes.c_double * 6)()
        self._lib.hdGetDoublev(what, buf)
        self._raise_errors(f"hdGetDoublev({what:#06x})")
        return np.array(buf[:n])

    def _load(self) -> Any:
        if importlib.util.find_spec("pyOpenHaptics") is None:
            raise DependencyMissingError("device 'phantom' needs pyOpenHaptics (pip install 'hapticam[phantom]')")
        self._lib = hd.load_libhd(self.library)
        try:
            return importlib.import_module("pyOpenHaptics.hd")
        except OSError as exc:   # pyOpenHaptics loads libHD.so when imported
            raise DeviceError(f"phantom: pyOpenHaptics cannot load libHD.so ({exc}); {hd.INSTALL_HINT}") from exc

    def _read_spec(self, pyhd: Any) -> None:
        lib = self._lib
        self.info = {"model": pyhd.get_model(), "vendor": pyhd.get_vendor(),
                     "serial": (lib.hdGetString(hd.HD_DEVICE_SERIAL_NUMBER) or b"").decode(errors="replace")}
        fmax, fcont = float(self._get(hd.HD_NOMINAL_MAX_FORCE)[0]), float(self._get(hd.HD_NOMINAL_MAX_CONTINUOUS_FORCE)[0])
        kmax = float(self._get(hd.HD_NOMINAL_MAX_STIFFNESS)[0]) * 1e3              # N/mm -> N/m
        impulse = float(self._get(hd.HD_SOFTWARE_FORCE_IMPULSE_LIMIT)[0])          # N per servo tick
        box = self._get(hd.HD_USABLE_WORKSPACE_DIMENSIONS, 6)
        rate = ctypes.c_int(0)
        lib.hdGetIntegerv(hd.HD_UPDATE_RATE, ctypes.byref(rate))
        self._raise_errors("hdGetIntegerv(HD_UPDATE_RATE)")
        values = (fmax, fcont, kmax, impulse, rate.value)
        if not (all(math.isfinite(v) and v > 0 for v in values) and np.all(np.isfinite(box)) and np.all(box[3:] > box[:3])):
            raise DeviceError(f"phantom: the device reports unphysical figures (max force {fmax}, continuous {fcont}, "
                              f"stiffness {kmax} N/m, impulse {impulse}, rate {rate.value} Hz, workspace {box.tolist()})")
        self.update_rate_hz = float(rate.value)
        self._box, self._kmax = box, kmax
        # the workspace along the axis is known once the axis is placed (_place_axis), which makes the spec
        self.spec = UnopenedDeviceSpec.named(f"phantom:{self.info['model']}")
        self._figures = dict(
            name=self.spec.name, max_force_N=fmax,
            max_force_rate_N_per_s=impulse * self.update_rate_hz,     # N per tick x ticks per s
            max_stiffness_N_per_m=kmax * 1000.0 / self.update_rate_hz,  # the vendor's figure, scaled to 1 kHz
            resolution_m=self.resolution_m,
            damping_N_s_per_m=kmax / (2.0 * self.update_rate_hz),     # b = K T / 2 from K < 2 b / T
            provides_velocity=False, apparent_mass_kg=self.apparent_mass_kg)
        self.notes.append(f"{self.info['vendor']} {self.info['model']} (serial {self.info['serial']}): peak "
                          f"{fmax:g} N, continuous {fcont:g} N, stiffness {kmax / 1e3:g} N/mm, {rate.value} Hz")

    def _enable(self) -> None:
        lib = self._lib
        lib.hdEnable(hd.HD_FORCE_OUTPUT)
        for name, cap in hd.SAFETY_CAPABILITIES.items():
            lib.hdEnable(cap)
            self._raise_errors(f"hdEnable({name})")
            if not lib.hdIsEnabled(cap):
                raise DeviceError(f"{self.spec.name}: the device refused to enable {name}")
        self.notes.append("device safety on: " + ", ".join(hd.SAFETY_CAPABILITIES))
        lib.hdStartScheduler()
        self._raise_errors("hdStartScheduler")

    def _place_axis(self) -> None:
        origin = self.origin_mm if self.origin_mm is not None else self._position_mm()
        lo, hi = axis_interval_m(self.axis, origin, self._box)
        if not lo < 0.0 < hi:
            raise DeviceError(f"{self.spec.name}: the origin {origin.tolist()} mm is outside the usable workspace")
        rail = RAIL_FRACTION * self._kmax if self.rail_request is None else float(self.rail_request)
        if rail > self._kmax:
            raise DeviceError(f"phantom rail stiffness {rail:g} N/m is beyond the device's passive bound "
                             f"{self._kmax:g} N/m (HD_NOMINAL_MAX_STIFFNESS)")
        self.spec = DeviceSpec(**self._figures, workspace_m=(lo, hi))
        self.fst[:] = 0.0
        self.ist[:] = 0
        self.fst[hd.F_AXIS:hd.F_AXIS + 3] = self.axis
        self.fst[hd.F_ORIGIN:hd.F_ORIGIN + 3] = origin
        self.fst[hd.F_RAIL_K] = rail
        self.fst[hd.F_PERIOD_S] = 1.0 / self.update_rate_hz
        self.ist[hd.I_HANDLE] = self._handle
        self.ist[hd.I_ORIGIN_SET] = 1

    def _open(self) -> None:
        pyhd = self._load()
        lib = self._lib
        handle = lib.hdInitDevice(self.config_name.encode() if self.config_name else None)
        if handle == hd.HD_INVALID_HANDLE:
            code = hd.error_code(lib.hdGetError())
            raise DeviceError(f"phantom: hdInitDevice failed (HDAPI error {code:#06x}): {hd.error_text(code)}; is the "
                              "device connected, powered and configured (Touch_Setup)?")
        self._handle = int(handle)
        try:
            lib.hdMakeCurrentDevice(handle)
            self._read_spec(pyhd)
            self._enable()
            self._place_axis()
        except BaseException:
            self._shutdown()
            raise

    # -- closing ------------------------------------------------------------------------------------------
    def _shutdown(self) -> None:
        """Unschedule the tick, disable force output, stop the scheduler, disable the device (in that order)."""
        lib, steps = self._lib, []
        if lib is None or self._handle is None:
            return
        self.unschedule_servo()
        steps.append("callback unscheduled")
        lib.hdDisable(hd.HD_FORCE_OUTPUT)
        steps.append("force output disabled")
        lib.hdStopScheduler()
        steps.append("scheduler stopped")
        lib.hdDisableDevice(self._handle)
        steps.append("device disabled")
        self._handle = None
        while hd.error_code(lib.hdGetError()) != hd.HD_SUCCESS:
            pass
        self.notes.append("closed: " + ", ".join(steps))

    def _close(self) -> None:
        self._shutdown()

    # -- Python-level I/O (setup, tests) ------------------------------------------------------------------
    def _position_mm(self) -> np.ndarray:
        """One frame on the scheduler (``hdScheduleSynchronous``) reading ``HD_CURRENT_POSITION`` (mm)."""
        buf = (ctypes.c_double * 3)()
        lib, handle = self._lib, self._handle

        def frame(_data: Any) -> int:
            lib.hdBeginFrame(handle)
            lib.hdGetDoublev(hd.HD_CURRENT_POSITION, buf)
            lib.hdEndFrame(handle)
            return 0                                   # HD_CALLBACK_DONE
        callback = _SYNC_CALLBACK(frame)
        lib.hdScheduleSynchronous(ctypes.cast(callback, ctypes.c_void_p), None, hd.HD_MAX_SCHEDULER_PRIORITY)
        self._raise_errors("reading the position")
        return np.array(buf[:])

    def _read(self) -> DeviceState:
        p = self._position_mm() - self.fst[hd.F_ORIGIN:hd.F_ORIGIN + 3]
        return DeviceState(t_s=float(self.ist[hd.I_SEQ] * self.fst[hd.F_PERIOD_S]), x_m=float(1e-3 * self.axis @ p))

    def _write(self, force_N: float) -> None:
        """Forces reach the handle only from the servo tick (inside the device's frame); zero is what the
        device holds without it, so writing zero succeeds and anything else is refused."""
        if force_N != 0.0:
            raise DeviceError(f"{self.spec.name}: forces are commanded by the servo loop only (render)")

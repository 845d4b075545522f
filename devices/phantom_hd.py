"""OpenHaptics' device library (HDAPI, ``libHD.so``) for the Phantom/Touch adapter: constants, loading,
and the compiled servo functions that call it.

Loading (:func:`load_libhd`): the library named by an explicit argument, else ``HAPTICAM_LIBHD``, else
``libHD.so`` (found by the dynamic linker: OpenHaptics installs it in ``/usr/lib``), opened with
``RTLD_GLOBAL`` so that pyOpenHaptics' own ``dlopen("libHD.so")`` finds the same object by its soname;
every symbol the adapter calls is checked with ``dlsym`` and then made visible to numba's JIT with
``llvmlite.binding.load_library_permanently``, and looked up there too, before anything that calls it is
compiled. A missing library or symbol is a :class:`~hapticam.errors.DeviceError`, never a call through
address 0.

Compiled functions (:func:`phantom_sense`, :func:`phantom_actuate`) call ``hdBeginFrame``,
``hdGetDoublev(HD_CURRENT_POSITION)``, ``hdSetDoublev(HD_CURRENT_FORCE)``, ``hdEndFrame`` and
``hdGetError`` as numba ``types.ExternalFunction``s. ``hdGetError`` returns the 12-byte struct
``HDErrorInfo {HDerror errorCode; int internalErrorCode; HHD hHD}`` by value; on the System V x86-64 and
AArch64 Linux ABIs a struct of two eightbytes of integer class comes back in two registers, the first
holding ``errorCode`` (low 32 bits) and ``internalErrorCode`` (high 32 bits), so it is declared as returning
a ``uint64`` and the low 32 bits are the code (:func:`check_platform` refuses other platforms).

Geometry (units of OpenHaptics: positions in mm, forces in N): one rendering axis ``a`` (unit vector in
the device's frame; default ``(0, -1, 0)``, a key pressed downwards on a Touch whose y axis points up)
through an origin ``o`` (mm; default the handle's position at the first tick). Each tick::

    d = p - o                       handle displacement (mm)
    x = 1e-3 (a . d)                position along the axis (m), what the model sees
    r = 1e-3 (d - (a . d) a)        off-axis displacement (m)
    F = -F_model a - k_rail r       force on the handle (N): the model's along the axis, a rail across it

``k_rail`` stays within the device's passive bound ``K < 2 b / T`` (here the vendor's
``HD_NOMINAL_MAX_STIFFNESS``), so the rail is a passive spring (Colgate & Schenkel 1997).

Errors (``hdGetError`` after ``hdBeginFrame`` and after ``hdEndFrame``, drained each time): force errors
(``0x02xx``) return the code as a recoverable status (the loop zeroes the force, logs ``device-error`` and
counts it); device, communication and scheduler errors (``0x03xx``, ``0x05xx``) return ``-code``: fatal,
the loop writes zero force and stops; other codes (function and frame errors) are recoverable.
"""

from __future__ import annotations

import ctypes
import math
import os
import platform
import sys

import numpy as np
from numba import njit, types

from hapticam.devices.base import IO_AUX0, IO_AUX1, IO_FORCE, IO_HAS_V, IO_SEQ, IO_T, IO_V, IO_X
from hapticam.errors import DeviceError

# -- hdDefines.h (OpenHaptics 3.x) -------------------------------------------------------------------------
HD_SUCCESS = 0x0000
HD_CURRENT_POSITION = 0x2050
HD_DEVICE_MODEL_TYPE = 0x2501
HD_DEVICE_VENDOR = 0x2503
HD_DEVICE_SERIAL_NUMBER = 0x2504
HD_USABLE_WORKSPACE_DIMENSIONS = 0x2551
HD_UPDATE_RATE = 0x2600
HD_NOMINAL_MAX_STIFFNESS = 0x2602
HD_NOMINAL_MAX_FORCE = 0x2603
HD_NOMINAL_MAX_CONTINUOUS_FORCE = 0x2604
HD_SOFTWARE_VELOCITY_LIMIT = 0x2606
HD_SOFTWARE_FORCE_IMPULSE_LIMIT = 0x2607
HD_CURRENT_FORCE = 0x2700
HD_FORCE_OUTPUT = 0x4000
HD_MAX_FORCE_CLAMPING = 0x4001
HD_FORCE_RAMPING = 0x4002
HD_SOFTWARE_FORCE_LIMIT = 0x4003
HD_MAX_SCHEDULER_PRIORITY = 0xFFFF
HD_INVALID_HANDLE = 0xFFFFFFFF
#: HDAPI's error codes (hdDefines.h), in words
ERROR_TEXT = {0x0100: "invalid enumerant (HD_INVALID_ENUM)", 0x0101: "invalid value (HD_INVALID_VALUE)",
              0x0102: "invalid operation (HD_INVALID_OPERATION)", 0x0103: "invalid input type (HD_INVALID_INPUT_TYPE)",
              0x0104: "bad device handle (HD_BAD_HANDLE)",
              0x0200: "motors too warm, force reduced (HD_WARM_MOTORS)",
              0x0201: "force beyond the device's maximum (HD_EXCEEDED_MAX_FORCE)",
              0x0202: "force changed faster than the impulse limit (HD_EXCEEDED_MAX_FORCE_IMPULSE)",
              0x0203: "handle faster than the velocity limit (HD_EXCEEDED_MAX_VELOCITY)",
              0x0204: "force error (HD_FORCE_ERROR)",
              0x0300: "device fault (HD_DEVICE_FAULT)",
              0x0301: "device already initialised (HD_DEVICE_ALREADY_INITIATED)",
              0x0302: "communication with the device lost (HD_COMM_ERROR)",
              0x0303: "communication misconfigured (HD_COMM_CONFIG_ERROR)",
              0x0304: "the device's servo timer failed (HD_TIMER_ERROR)",
              0x0400: "a frame begun inside a frame (HD_ILLEGAL_BEGIN)",
              0x0401: "a frame ended outside a frame (HD_ILLEGAL_END)", 0x0402: "frame error (HD_FRAME_ERROR)",
              0x0500: "invalid scheduler priority (HD_INVALID_PRIORITY)", 0x0501: "scheduler full (HD_SCHEDULER_FULL)",
              0x0600: "no valid OpenHaptics licence (HD_INVALID_LICENSE)"}
#: capabilities the adapter turns on besides force output (the device's own safety, beside hapticam's)
SAFETY_CAPABILITIES = {"max force clamping": HD_MAX_FORCE_CLAMPING, "software force limit": HD_SOFTWARE_FORCE_LIMIT,
                       "software velocity limit": HD_SOFTWARE_VELOCITY_LIMIT,
                       "force impulse limit": HD_SOFTWARE_FORCE_IMPULSE_LIMIT, "force ramping": HD_FORCE_RAMPING}

LIB_ENV = "HAPTICAM_LIBHD"
DEFAULT_LIB = "libHD.so"
INSTALL_HINT = ("install OpenHaptics for Linux and the Touch device driver from 3D Systems (libHD.so in /usr/lib), "
                f"or point {LIB_ENV} at libHD.so")
#: every HDAPI function the adapter calls (compiled or from Python)
SYMBOLS = ("hdInitDevice", "hdDisableDevice", "hdMakeCurrentDevice", "hdBeginFrame", "hdEndFrame", "hdGetDoublev",
           "hdGetIntegerv", "hdSetDoublev", "hdGetString", "hdGetError", "hdEnable", "hdDisable", "hdIsEnabled",
           "hdStartScheduler", "hdStopScheduler", "hdScheduleAsynchronous", "hdScheduleSynchronous", "hdUnschedule")

# -- compiled access ---------------------------------------------------------------------------------------------
hd_begin_frame = types.ExternalFunction("hdBeginFrame", types.void(types.uint32))
hd_end_frame = types.ExternalFunction("hdEndFrame", types.void(types.uint32))
hd_get_doublev = types.ExternalFunction("hdGetDoublev", types.void(types.uint32, types.intp))
hd_set_doublev = types.ExternalFunction("hdSetDoublev", types.void(types.uint32, types.intp))
hd_get_error = types.ExternalFunction("hdGetError", types.uint64())   # HDErrorInfo in registers (docstring)

# float64 state: axis, origin (mm), position and force buffers, rail stiffness, last off-axis distance
F_AXIS, F_ORIGIN, F_POS, F_FORCE = 0, 3, 6, 9
F_RAIL_K, F_OFF_M, F_PERIOD_S, F_X = 12, 13, 14, 15
F_OFFV = 16               # off-axis displacement vector (m), 3 entries
F_SIZE = 19
# int64 state
I_HANDLE, I_ORIGIN_SET, I_SEQ, I_IN_FRAME, I_LAST_ERR = range(5)
I_N_FORCE_ERR, I_N_FATAL, I_N_OTHER_ERR, I_FATAL_CODE = range(5, 9)
I_SIZE = 9
COUNTERS = {"frames": I_SEQ, "force_errors": I_N_FORCE_ERR, "fatal_errors": I_N_FATAL, "other_errors": I_N_OTHER_ERR}
MAX_ERRORS_PER_CALL = 8


def check_platform() -> None:
    """The compiled ``hdGetError`` relies on the Linux x86-64/AArch64 struct-return convention."""
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64", "aarch64", "arm64"):
        raise DeviceError(f"phantom: the compiled servo tick supports Linux on x86-64 and AArch64, not "
                          f"{sys.platform} on {platform.machine()}")


def library_name(path: str | os.PathLike[str] | None = None) -> str:
    """The library to load: ``path``, else ``$HAPTICAM_LIBHD``, else ``libHD.so``."""
    return str(path or os.environ.get(LIB_ENV) or DEFAULT_LIB)


def load_libhd(path: str | os.PathLike[str] | None = None) -> ctypes.CDLL:
    """Load libHD globally, check every symbol, and make them visible to numba (module docstring)."""
    check_platform()
    name = library_name(path)
    if os.sep in name and not os.path.exists(name):
        raise DeviceError(f"phantom: OpenHaptics' device library {name} does not exist; {INSTALL_HINT}")
    try:
        lib = ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        raise DeviceError(f"phantom: cannot load OpenHaptics' device library {name} ({exc}); {INSTALL_HINT}") from exc
    missing = [s for s in SYMBOLS if not hasattr(lib, s)]
    if missing:
        raise DeviceError(f"phantom: {name} lacks {', '.join(missing)}: not OpenHaptics' HDAPI library; {INSTALL_HINT}")
    from llvmlite import binding as llvm

    try:
        llvm.load_library_permanently(name)
    except RuntimeError as exc:
        raise DeviceError(f"phantom: the JIT cannot load {name}: {exc}") from exc
    unresolved = [s for s in SYMBOLS if not llvm.address_of_symbol(s)]
    if unresolved:
        raise DeviceError(f"phantom: the JIT does not resolve {', '.join(unresolved)} in {name}")
    _declare(lib)
    return lib


def _declare(lib: ctypes.CDLL) -> None:
    """ctypes signatures of the calls made from Python (setup, strings, scheduling)."""
    u, d = ctypes.c_uint, ctypes.POINTER(ctypes.c_double)
    sig = {"hdInitDevice": (u, [ctypes.c_char_p]), "hdDisableDevice": (None, [u]), "hdMakeCurrentDevice": (None, [u]),
           "hdGetDoublev": (None, [u, d]), "hdGetIntegerv": (None, [u, ctypes.POINTER(ctypes.c_int)]),
           "hdGetString": (ctypes.c_char_p, [u]), "hdEnable": (None, [u]), "hdDisable": (None, [u]),
           "hdIsEnabled": (ctypes.c_ubyte, [u]), "hdStartScheduler": (None, []), "hdStopScheduler": (None, []),
           "hdScheduleAsynchronous": (ctypes.c_ulong, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ushort]),
           "hdScheduleSynchronous": (None, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ushort]),
           "hdUnschedule": (None, [ctypes.c_ulong]), "hdGetError": (ctypes.c_uint64, [])}
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


def error_text(code: int) -> str:
    """An HDAPI error code's cause in words (:data:`ERROR_TEXT`)."""
    return ERROR_TEXT.get(int(code), "an HDAPI error hdDefines.h does not list")


def status_causes() -> dict[int, str]:
    """The cause of each status the compiled functions return: ``+code`` or ``-code`` as :func:`classify`
    signs each HDAPI error."""
    return {(-code if (code >> 8) in (0x03, 0x05) else code): text for code, text in ERROR_TEXT.items()}


def error_code(raw: int) -> int:
    """``errorCode`` from ``hdGetError``'s value as returned in a register (low 32 bits)."""
    return int(raw) & 0xFFFFFFFF


# -- the servo functions (nopython, nogil; run on the device's scheduler thread) -----------------------------------
@njit(cache=True, nogil=True)
def classify(code):
    """Status of an HDAPI error code: 0x02xx force error -> +code (recoverable), 0x03xx device/communication
    and 0x05xx scheduler errors -> -code (fatal), others -> +code (recoverable), success -> 0."""
    if code == HD_SUCCESS:
        return 0
    group = code >> 8
    if group == 0x03 or group == 0x05:
        return -code
    return code


@njit(cache=True, nogil=True)
def drain_errors(ist):
    """Pop the error stack; count each error; return the most severe status (fatal before recoverable)."""
    status = 0
    for _ in range(MAX_ERRORS_PER_CALL):
        code = np.int64(hd_get_error() & 0xFFFFFFFF)
        if code == HD_SUCCESS:
            break
        ist[I_LAST_ERR] = code
        s = classify(code)
        if s < 0:
            ist[I_N_FATAL] += 1
            ist[I_FATAL_CODE] = code
        elif (code >> 8) == 0x02:
            ist[I_N_FORCE_ERR] += 1
        else:
            ist[I_N_OTHER_ERR] += 1
        if (s < 0 and status >= 0) or status == 0:
            status = s
    return status


@njit(cache=True, nogil=True)
def phantom_sense(state, io):
    """The binding's ``sense``: open the frame, read the position (mm), project it on the axis (module
    docstring); the origin is the first position read unless one was given. Returns the error status."""
    fst, ist = state[0], state[1]
    hd_begin_frame(np.uint32(ist[I_HANDLE]))
    ist[I_IN_FRAME] = 1
    hd_get_doublev(np.uint32(HD_CURRENT_POSITION), fst.ctypes.data + 8 * F_POS)
    status = drain_errors(ist)
    if ist[I_ORIGIN_SET] == 0:
        for i in range(3):
            fst[F_ORIGIN + i] = fst[F_POS + i]
        ist[I_ORIGIN_SET] = 1
    along = 0.0
    for i in range(3):
        along += fst[F_AXIS + i] * (fst[F_POS + i] - fst[F_ORIGIN + i])      # a . d (mm)
    off2 = 0.0
    for i in range(3):
        r = 1e-3 * (fst[F_POS + i] - fst[F_ORIGIN + i] - along * fst[F_AXIS + i])  # r = 1e-3 (d - (a.d) a)
        fst[F_OFFV + i] = r
        off2 += r * r
    fst[F_OFF_M] = math.sqrt(off2)
    x = 1e-3 * along                                                          # x = 1e-3 (a . d)
    fst[F_X] = x
    ist[I_SEQ] += 1
    io[IO_X] = x
    io[IO_V] = 0.0
    io[IO_HAS_V] = 0.0
    io[IO_SEQ] = ist[I_SEQ]
    io[IO_T] = ist[I_SEQ] * fst[F_PERIOD_S]
    io[IO_AUX0] = fst[F_OFF_M]                 # distance from the rail (m)
    io[IO_AUX1] = ist[I_LAST_ERR]              # last HDAPI error code seen
    return status


@njit(cache=True, nogil=True)
def phantom_actuate(state, io, dt_s):
    """The binding's ``actuate``: ``F = -F_model a - k_rail r`` (N) through ``hdSetDoublev``, close the
    frame, return the error status. The loop's last call (``dt_s = 0``) commands exactly zero, the rail
    released too. Outside a frame (nothing opened it) it does nothing."""
    fst, ist = state[0], state[1]
    if ist[I_IN_FRAME] == 0:
        return 0
    f = io[IO_FORCE]
    k = fst[F_RAIL_K]
    if not (f == f) or math.isinf(f) or dt_s == 0.0:
        f = 0.0
    if dt_s == 0.0:
        k = 0.0
    for i in range(3):
        fst[F_FORCE + i] = -f * fst[F_AXIS + i] - k * fst[F_OFFV + i]       # F = -F_model a - k_rail r
    hd_set_doublev(np.uint32(HD_CURRENT_FORCE), fst.ctypes.data + 8 * F_FORCE)
    hd_end_frame(np.uint32(ist[I_HANDLE]))
    ist[I_IN_FRAME] = 0
    return drain_errors(ist)

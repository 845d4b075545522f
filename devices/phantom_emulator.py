"""Build and drive the HDAPI emulator (``devices/emulators/hd_emu.c``): a ``libHD.so`` standing in for
OpenHaptics' device library in tests and ``hapticam bench render --device phantom``.

:func:`build_hd_emulator` compiles the C source with the system compiler into a folder of its own as
``libHD.so`` (soname ``libHD.so``), once per source version. :class:`HdEmulator` loads it (globally, so
the Phantom adapter and pyOpenHaptics use the same object) and sets the plant from the simulated
device's parameters (:class:`~hapticam.world.sim.SimParams`) and scripted user
(:class:`~hapticam.world.users.User`), so a rendering on the emulator compares with the simulator;
it injects faults and reads the emulator's per-frame log and counters. One emulator per process (it is
a shared library): :meth:`HdEmulator.configure` resets it between runs.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.world.sim import SimParams
from hapticam.world.users import User
from hapticam.errors import DeviceError

EMULATOR_SOURCE = Path(__file__).resolve().parent / "emulators" / "hd_emu.c"
COMM_ERROR, EXCEED_FORCE, FAIL_INIT, STOP_RESPONDING = 1, 2, 3, 4
#: columns of the emulator's frame log
LOG_COLUMNS = ("t_begin_ns", "t_end_ns", "x_true_m", "x_sensed_m", "fx_N", "fy_N", "fz_N", "frame", "t_s")
COUNTER_NAMES = ("frames", "callback_calls", "errors", "clamped", "zeroed", "stalled", "enabled_mask")
#: hdEnable capability bits in ``enabled_mask``
CAPABILITY_BITS = {"force output": 1, "max force clamping": 2, "force ramping": 4, "software force limit": 8,
                   "software velocity limit": 32, "force impulse limit": 64}


_LOADED: dict[str, Path] = {}


def build_hd_emulator(out_dir: str | os.PathLike[str] | None = None, cc: str | None = None) -> Path:
    """Compile ``hd_emu.c`` into ``out_dir/hd_emu-HASH/libHD.so`` (default: the temporary directory) and
    return the library's path."""
    compiler = cc or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise DeviceError("building the HDAPI emulator needs a C compiler (cc or gcc)")
    src = EMULATOR_SOURCE.read_bytes()
    folder = Path(out_dir or tempfile.gettempdir()) / f"hd_emu-{hashlib.sha256(src).hexdigest()[:12]}"
    out = folder / "libHD.so"
    if not out.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"libHD.so.{os.getpid()}"
        res = subprocess.run([compiler, "-O2", "-std=c11", "-shared", "-fPIC", "-Wl,-soname,libHD.so", "-o", str(tmp),
                              str(EMULATOR_SOURCE), "-lm", "-lpthread"], capture_output=True, text=True)
        if res.returncode != 0:
            raise DeviceError(f"cannot build the HDAPI emulator: {res.stderr.strip()[:400]}")
        os.replace(tmp, out)
    return out


class HdEmulator:
    """The emulator library, loaded, with its control functions (module docstring)."""

    def __init__(self, library: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(library) if library else build_hd_emulator()
        first = _LOADED.setdefault("path", self.path.resolve())
        if first != self.path.resolve():       # a second libHD.so would not be the one the JIT calls
            raise DeviceError(f"HDAPI emulator: {first} is already loaded in this process (one per process)")
        self.lib = ctypes.CDLL(str(self.path), mode=ctypes.RTLD_GLOBAL)
        lib, d = self.lib, ctypes.POINTER(ctypes.c_double)
        lib.hdemu_set_param.argtypes, lib.hdemu_set_param.restype = [ctypes.c_char_p, ctypes.c_double], ctypes.c_int
        lib.hdemu_set_user.argtypes = [d, ctypes.c_long, ctypes.c_int] + [ctypes.c_double] * 6
        lib.hdemu_set_user.restype = ctypes.c_int
        lib.hdemu_inject.argtypes, lib.hdemu_inject.restype = [ctypes.c_int, ctypes.c_long, ctypes.c_long], None
        lib.hdemu_set_log.argtypes, lib.hdemu_set_log.restype = [ctypes.c_long], ctypes.c_int
        lib.hdemu_read_log.argtypes, lib.hdemu_read_log.restype = [d, ctypes.c_long], ctypes.c_long
        lib.hdemu_counters.argtypes, lib.hdemu_counters.restype = [ctypes.POINTER(ctypes.c_long)], None
        lib.hdemu_reset.argtypes, lib.hdemu_reset.restype = [], None

    def set(self, **params: float) -> None:
        """Set emulator parameters by name (``mass_kg``, ``axis_y``, ``offaxis_x_m``, ``rate_hz``, ...)."""
        for name, value in params.items():
            if self.lib.hdemu_set_param(name.encode(), float(value)) != 0:
                raise DeviceError(f"HDAPI emulator: unknown parameter {name!r}")

    def configure(self, params: SimParams | None = None, user: User | None = None, *, axis: Any = (0.0, -1.0, 0.0),
                  offaxis_m: Any = (0.0, 0.0, 0.0), log_frames: int = 1 << 16, continuous_force_N: float | None = None,
                  **extra: float) -> "HdEmulator":
        """Reset the emulator and set its plant from ``params`` and ``user`` (the simulator's: same mass,
        damping, motor, encoder, force limit, workspace along the axis), the axis, a constant off-axis
        displacement of the handle (m), and any other parameter by name."""
        p = params or SimParams()
        self.lib.hdemu_reset()
        a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
        lo, hi = p.workspace_m
        box_lo = np.where(a >= 0, lo, hi) * a * 1e3 - 80.0 * (np.abs(a) < 1e-12)
        box_hi = np.where(a >= 0, hi, lo) * a * 1e3 + 80.0 * (np.abs(a) < 1e-12)
        self.set(mass_kg=p.handle_mass_kg, damping_N_s_per_m=p.damping_N_s_per_m, max_force_N=p.max_force_N,
                 continuous_force_N=continuous_force_N or 0.5 * p.max_force_N, bandwidth_hz=p.motor_bandwidth_hz,
                 substep_s=p.substep_s, resolution_m=p.resolution_m,
                 max_stiffness_N_per_mm=2.0 * p.damping_N_s_per_m / 1e-3 / 1e3,   # K < 2 b / T at 1 kHz, in N/mm
                 impulse_limit_N=p.max_force_rate_N_per_s * 1e-3,                  # N per 1 ms tick
                 axis_x=a[0], axis_y=a[1], axis_z=a[2], offaxis_x_m=offaxis_m[0], offaxis_y_m=offaxis_m[1],
                 offaxis_z_m=offaxis_m[2], ws_min_x_mm=box_lo[0], ws_min_y_mm=box_lo[1], ws_min_z_mm=box_lo[2],
                 ws_max_x_mm=box_hi[0], ws_max_y_mm=box_hi[1], ws_max_z_mm=box_hi[2], **extra)
        if user is not None:
            tab = np.ascontiguousarray(user.table(), dtype=np.float64)
            ptr = tab.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
            if self.lib.hdemu_set_user(ptr, tab.shape[0], int(user.mode), user.stiffness_N_per_m, user.damping_N_s_per_m,
                                       user.t0_s, user.dt_s, user.period_s, user.x0_m) != 0:
                raise DeviceError("HDAPI emulator: cannot set the user")
        self.lib.hdemu_set_log(int(log_frames))
        return self

    def inject(self, kind: int, at_frame: int = 0, count: int = 1) -> None:
        """Inject a fault: ``COMM_ERROR``, ``EXCEED_FORCE`` (``count`` frames), ``FAIL_INIT`` (count 1 on, 0
        off) or ``STOP_RESPONDING``, from frame ``at_frame``."""
        self.lib.hdemu_inject(int(kind), int(at_frame), int(count))

    def frames(self, max_rows: int = 1 << 16) -> dict[str, np.ndarray]:
        """The frame log by column (:data:`LOG_COLUMNS`), oldest first."""
        out = np.zeros((max_rows, len(LOG_COLUMNS)))
        n = self.lib.hdemu_read_log(out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), max_rows)
        return {name: out[:n, i].copy() for i, name in enumerate(LOG_COLUMNS)}

    def counters(self) -> dict[str, int]:
        """Frames, callback calls, errors pushed, forces clamped and zeroed, stalled frames, enabled mask."""
        buf = (ctypes.c_long * len(COUNTER_NAMES))()
        self.lib.hdemu_counters(buf)
        return dict(zip(COUNTER_NAMES, (int(v) for v in buf)))

    def enabled(self) -> set[str]:
        """The capabilities enabled on the emulated device (``hdEnable``)."""
        mask = self.counters()["enabled_mask"]
        return {name for name, bit in CAPABILITY_BITS.items() if mask & bit}

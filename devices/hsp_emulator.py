"""Run the hsp reference firmware (``devices/emulators/hsp_emu.c``) on a pseudo-terminal.

:func:`build_emulator` compiles the C source with the system compiler; :class:`HspEmulator` starts it as a
subprocess on the master side of a fresh pseudo-terminal (raw mode) and hands out the slave's path, the
"serial port" :class:`~hapticam.devices.serial_device.SerialDevice` opens. The plant takes the simulated
device's parameters (:class:`~hapticam.world.sim.SimParams`) and scripted user
(:class:`~hapticam.world.users.User`), so a rendering on the emulator compares with the simulator.
Faults are the emulator's command-line flags (``drop_every``, ``corrupt_every``, ``late_every`` with
``late_us``, ``silence_at_ms`` with ``silence_ms``, ``unplug_at_ms``, ``slow_us``: every frame after ENABLE
takes that many us to handle); ``reported`` makes the firmware state
other figures than the plant's in its INFO (a firmware with a bad calibration: infinite, NaN or negative).
The firmware's axis kind is the plant's (``SimParams.axis``: a rotary plant is a knob, its figures in rad,
N m, N m s/rad, kg m^2 and counts per radian, and it answers AXIS with rotary); ``axis_frame=False`` makes
a firmware from before the AXIS frame (it answers ERROR 2 and is linear).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import tty
from pathlib import Path
from typing import Any

import numpy as np

from hapticam.world.sim import SimParams
from hapticam.world.users import User
from hapticam.errors import DeviceError

EMULATOR_SOURCE = Path(__file__).resolve().parent / "emulators" / "hsp_emu.c"
FAULT_FLAGS = ("drop_every", "corrupt_every", "late_every", "late_us", "silence_at_ms", "silence_ms", "unplug_at_ms",
               "slow_us")
#: INFO figures ``reported`` may set, and the firmware's flag for each (the plant uses the same figure)
INFO_FLAGS = {"max_force_N": "--fmax", "continuous_force_N": "--fcont", "max_force_rate_N_per_s": "--rate",
              "damping_N_s_per_m": "--damping", "counts_per_m": "--cpm", "workspace_lo_m": "--ws-lo",
              "workspace_hi_m": "--ws-hi"}


def build_emulator(out_dir: str | os.PathLike[str] | None = None, cc: str | None = None) -> Path:
    """Compile ``hsp_emu.c`` (once per source version) into ``out_dir`` (default: the temporary
    directory) and return the executable's path."""
    compiler = cc or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise DeviceError("building the hsp emulator needs a C compiler (cc or gcc)")
    src = EMULATOR_SOURCE.read_bytes()
    out = Path(out_dir or tempfile.gettempdir()) / f"hsp_emu-{hashlib.sha256(src).hexdigest()[:12]}"
    if not out.exists():
        tmp = out.with_name(out.name + f".{os.getpid()}")
        res = subprocess.run([compiler, "-O2", "-std=c11", "-o", str(tmp), str(EMULATOR_SOURCE), "-lm"],
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise DeviceError(f"cannot build the hsp emulator: {res.stderr.strip()[:400]}")
        os.replace(tmp, out)
    return out


class HspEmulator:
    """The emulator on a pseudo-terminal; ``with HspEmulator(...) as port:`` yields the port's path.

    ``plant_clock="frames"`` advances the plant by ``frame_dt_s`` per FORCE (deterministic, the
    simulator's clock); ``"wall"`` by real time. ``reported`` maps INFO figures (:data:`INFO_FLAGS`, SI
    units) to the values the firmware states instead of the plant's (any float: ``inf``, ``nan``, negative).
    After :meth:`stop`, :attr:`summary` holds the emulator's counters (``crc_errors``, ``watchdog_trips``,
    ``dropped``, ``disables``: DISABLE frames handled, ...) and :attr:`log` its stderr.
    """

    def __init__(self, params: SimParams | None = None, user: User | None = None, *, plant_clock: str = "frames",
                 frame_dt_s: float = 1e-3, continuous_force_N: float | None = None, name: str = "hsp-emu",
                 executable: str | os.PathLike[str] | None = None, reported: dict[str, float] | None = None,
                 axis_frame: bool = True, **faults: float) -> None:
        unknown = set(faults) - set(FAULT_FLAGS)
        if unknown:
            raise DeviceError(f"hsp emulator: unknown fault {sorted(unknown)} (known: {', '.join(FAULT_FLAGS)})")
        unknown = set(reported or {}) - set(INFO_FLAGS)
        if unknown:
            raise DeviceError(f"hsp emulator: unknown INFO figure {sorted(unknown)} (known: {', '.join(INFO_FLAGS)})")
        self.reported = {k: float(v) for k, v in (reported or {}).items()}
        if plant_clock not in ("frames", "wall"):
            raise DeviceError(f"hsp emulator: plant_clock is 'frames' or 'wall', got {plant_clock!r}")
        self.params = params or SimParams()
        if not axis_frame and self.params.axis != "linear":
            raise DeviceError("hsp emulator: a firmware without the AXIS frame is linear; a rotary plant needs it")
        self.axis_frame = bool(axis_frame)
        self.user = user
        self.plant_clock = plant_clock
        self.frame_dt_s = float(frame_dt_s)
        self.continuous_force_N = continuous_force_N or 0.5 * self.params.max_force_N
        self.name = name
        self.faults = faults
        self.executable = Path(executable) if executable else None
        self.port: str | None = None
        self.summary: dict[str, Any] = {}
        self.log = ""
        self._proc: subprocess.Popen[str] | None = None
        self._slave: int | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    def _args(self, exe: Path, master: int) -> list[str]:
        p = self.params
        args = [str(exe), "--fd", str(master), "--mass", repr(p.handle_mass_kg), "--damping", repr(p.damping_N_s_per_m),
                "--fmax", repr(p.max_force_N), "--fcont", repr(self.continuous_force_N),
                "--rate", repr(p.max_force_rate_N_per_s), "--bandwidth-hz", repr(p.motor_bandwidth_hz),
                "--cpm", repr(1.0 / p.resolution_m), "--ws-lo", repr(p.workspace_m[0]), "--ws-hi", repr(p.workspace_m[1]),
                "--substep", repr(p.substep_s), "--plant-clock", self.plant_clock,
                "--frame-dt-us", repr(self.frame_dt_s * 1e6), "--name", self.name,
                "--axis", p.axis if self.axis_frame else "none"]
        u = self.user
        if u is not None:
            assert self._tmp is not None
            table = Path(self._tmp.name) / "user.f64"
            np.ascontiguousarray(u.table(), dtype="<f8").tofile(table)
            args += ["--user", str(table), "--user-mode", str(u.mode), "--user-k", repr(u.stiffness_N_per_m),
                     "--user-b", repr(u.damping_N_s_per_m), "--user-t0", repr(u.t0_s), "--user-dt", repr(u.dt_s),
                     "--user-period", repr(u.period_s), "--x0", repr(u.x0_m)]
        for key, value in self.faults.items():
            args += ["--" + key.replace("_", "-"), str(int(value)) if float(value).is_integer() else repr(value)]
        for key, value in self.reported.items():
            args[args.index(INFO_FLAGS[key]) + 1] = repr(value)     # the firmware reads it with atof
        return args

    def start(self) -> str:
        """Start the emulator; returns the serial port path (the pseudo-terminal's slave)."""
        exe = self.executable or build_emulator()
        master, slave = os.openpty()
        tty.setraw(slave)
        self._tmp = tempfile.TemporaryDirectory(prefix="hsp_emu_")
        try:
            self._proc = subprocess.Popen(self._args(exe, master), pass_fds=(master,), stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, text=True)
        finally:
            os.close(master)
        self._slave = slave  # held until stop(): the line stays up between the host's opens
        self.port = os.ttyname(slave)
        return self.port

    def stop(self, timeout_s: float = 5.0) -> dict[str, Any]:
        """Stop the emulator (SIGTERM) and return its summary counters."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
            try:
                _, self.log = self._proc.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                _, self.log = self._proc.communicate()
            self._proc = None
            m = re.search(r"hsp_emu: summary (.*)", self.log or "")
            if m:
                self.summary = {k: (int(v) if v.lstrip("-").isdigit() else v)
                                for k, v in (kv.split("=", 1) for kv in m.group(1).split())}
        if self._slave is not None:
            os.close(self._slave)
            self._slave = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        return self.summary

    @property
    def alive(self) -> bool:
        """True while the emulator process runs."""
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

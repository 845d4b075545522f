"""The hardware adapters opened on their emulators, with a simulated user at the handle.

``with Emulated(name, user) as device:`` opens the adapter ``name`` on its emulator, whose plant is the
simulated device's (:class:`hapticam.world.sim.SimParams`, its defaults unless ``params`` is given) held
by ``user`` (:class:`hapticam.world.users.User`):

- ``phantom``: the Phantom adapter on the HDAPI emulator ``libHD.so`` (built with the system's C compiler;
  needs pyOpenHaptics);
- ``serial``: the serial adapter on the hsp firmware emulator on a pseudo-terminal (built with the system's
  C compiler; needs pyserial);
- ``zmq``: the remote adapter on the simulator served on loopback.

Each emulator steps its plant by the nominal period per tick from the loop's first tick, so a real-time
run compares tick for tick with the simulator (:mod:`hapticam.render.loop`). The emulated devices run at
``EMULATOR_RATE_HZ``. :func:`emulator_problem` says what a machine lacks to run one.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from typing import Any

from hapticam.devices.registry import device_class, open_device
from hapticam.errors import UsageError

EMULATED_DEVICES = ("phantom", "serial", "zmq")
#: the emulators' servo rate (Hz): the HDAPI emulator's scheduler and the hsp emulator's plant step
EMULATOR_RATE_HZ = 1000.0
#: how long the remote adapter's handshake waits for the served simulator (s): its first tick compiles the
#: simulator's kernels when their cache is cold, which takes seconds
SERVED_HANDSHAKE_S = 30.0


def _compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def emulator_problem(name: str) -> str | None:
    """What this machine lacks to open ``name`` on its emulator (one sentence), or None."""
    needs = {"phantom": ("pyOpenHaptics", "phantom", "the HDAPI emulator"),
             "serial": ("serial", "serial", "the hsp firmware emulator")}
    if name not in needs:
        return None
    module, extra, emulator = needs[name]
    if importlib.util.find_spec(module) is None:
        package = "pyserial" if module == "serial" else module
        return f"{package} is not installed (pip install 'hapticam[{extra}]')"
    if _compiler() is None:
        return f"building {emulator} needs a C compiler (cc or gcc), and none was found (set CC or install one)"
    return None


class Emulated:
    """``with Emulated(name, user) as device:`` the adapter ``name`` opened on its emulator (module notes).

    ``params``: the emulated plant (:class:`~hapticam.world.sim.SimParams`; None: its defaults);
    ``options``: keyword arguments of the adapter's constructor (e.g. ``origin_mm``, ``resolution_m`` and
    ``apparent_mass_kg`` of the Phantom adapter, which HDAPI cannot report). After the block, ``emu`` is
    the emulator (phantom: its frame log)."""

    def __init__(self, name: str, user: Any, params: Any = None, **options: Any) -> None:
        if name not in EMULATED_DEVICES:
            raise UsageError(f"emulated device: one of {', '.join(EMULATED_DEVICES)}, got {name!r}")
        self.name, self.user, self.params, self.options = name, user, params, options
        self.emu: Any = None
        self.server: Any = None
        self.device: Any = None

    def __enter__(self) -> Any:
        if self.name == "phantom":
            from hapticam.devices.phantom_emulator import HdEmulator

            self.emu = HdEmulator().configure(self.params, self.user)
            self.device = device_class("phantom")(str(self.emu.path), **self.options)
        elif self.name == "serial":
            from hapticam.devices.hsp_emulator import HspEmulator

            self.emu = HspEmulator(self.params, self.user)
            self.device = device_class("serial")(self.emu.start(), **{"timeout_s": 5.0, **self.options})
        else:
            from hapticam.devices.remote_server import DeviceServer

            sim_options = {} if self.params is None else {"params": self.params}
            self.server = DeviceServer(open_device("sim", user=self.user, **sim_options))
            options = {"timeout_s": SERVED_HANDSHAKE_S, **self.options}
            self.device = device_class("zmq")(self.server.start(), **options)
        try:
            return self.device.open()
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *exc: object) -> None:
        if self.device is not None:
            self.device.close()
        if self.name == "serial" and self.emu is not None:
            self.emu.stop()
        if self.server is not None:
            self.server.stop()

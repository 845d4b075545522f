"""Adapter registry: device names to adapter classes, imported lazily.

An adapter module is imported only when its device is opened, so an optional driver dependency that is
not installed costs nothing until it is asked for, and then fails with a clear
:class:`~hapticam.errors.DependencyMissingError` (as python-can's interface registry does).

The built-in adapters are declared in :data:`ADAPTERS`; another distribution adds one through the entry
point group ``hapticam.devices`` (:mod:`hapticam.plugins`), ``NAME = "module:Class"``, without editing
hapticam. What an adapter, built in or not, provides is the :class:`~hapticam.devices.base.Device`
interface: a spec, ``_open``/``_close``/``_read``/``_write``, :meth:`~hapticam.devices.base.Device.servo_binding`
(its compiled ``sense``/``actuate``, which the servo loop compiles into its tick as it does a built-in
adapter's), :meth:`~hapticam.devices.base.Device.from_options` for ``--device NAME[:ADDRESS]``, and the
declarations the render reads from the class: ``external_clock``, ``servo_silence_s``,
``renders_along_axis``, ``status_causes``, ``driver_status()``. A plugin's name may not hold ``:`` (the
address follows it) and cannot replace a built-in name.
"""

from __future__ import annotations

import importlib
from typing import Any

from hapticam.devices.base import Device
from hapticam.errors import DependencyMissingError, DeviceError
from hapticam.plugins import DEVICE_GROUP, load_class, plugins

#: device name -> ("module:Class", pip extra that provides its driver or "")
ADAPTERS: dict[str, tuple[str, str]] = {
    "sim": ("hapticam.world.sim:SimulatedDevice", ""),
    "serial": ("hapticam.devices.serial_device:SerialDevice", "serial"),
    "zmq": ("hapticam.devices.remote:RemoteDevice", ""),
    "phantom": ("hapticam.devices.phantom:PhantomDevice", "phantom"),
}
#: the built-in adapters that have an emulator in this package (:mod:`hapticam.render.emulated` opens each on
#: it, a simulated user at the handle): what ``bench render --device`` times beside the simulator
EMULATED_ADAPTERS: tuple[str, ...] = ("phantom", "serial", "zmq")


def plugin_adapters() -> dict[str, str]:
    """The adapters other distributions declare (entry point group ``hapticam.devices``), as name ->
    ``module:Class``, built-in names left out; nothing of them is imported."""
    return {name: entry.value for name, entry in plugins(DEVICE_GROUP).items() if name not in ADAPTERS}


def available_devices() -> list[str]:
    """Names accepted by :func:`open_device` (``--device``): the built-in adapters and the plugins'."""
    return sorted({*ADAPTERS, *plugin_adapters()})


def device_class(name: str) -> type[Device]:
    """Import and return the adapter class registered under ``name`` (built in, else a plugin's)."""
    if name not in ADAPTERS:
        entry = plugins(DEVICE_GROUP).get(name)
        if entry is None:
            raise DeviceError(f"unknown device {name!r} (known: {', '.join(available_devices())})")
        return load_class(entry, "device", Device, DeviceError)
    target, extra = ADAPTERS[name]
    module_name, _, cls_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = f" (pip install 'hapticam[{extra}]')" if extra else ""
        raise DependencyMissingError(f"device {name!r} needs {exc.name or 'a missing module'}{hint}") from exc
    return getattr(module, cls_name)


def open_device(name: str, **kwargs: Any) -> Device:
    """Create the named adapter with ``kwargs`` and open it."""
    return device_class(name)(**kwargs).open()


def device_axis(spec: str) -> str | None:
    """The axis kind (``linear``: m, N; ``rotary``: rad, N m) the adapter a ``--device`` value ``NAME[:ADDRESS]``
    names renders, before it is made (:meth:`Device.axis_for`): the units render reads the model in. None for
    an adapter whose device states its axis kind when it opens (``axis_stated_at_open``: a serial device's
    firmware): its ``spec.axis`` once open."""
    name, _, address = str(spec).partition(":")
    cls = device_class(name)
    return None if getattr(cls, "axis_stated_at_open", False) else cls.axis_for(address)


def device_from_spec(spec: str, **options: Any) -> Device:
    """Create (not open) the adapter for a ``--device`` value ``NAME[:ADDRESS]`` (e.g. ``sim``,
    ``serial:/dev/ttyACM0``) with the render options (see :meth:`Device.from_options`)."""
    name, _, address = str(spec).partition(":")
    return device_class(name).from_options(address, **options)

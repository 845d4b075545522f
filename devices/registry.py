"""Adapter registry: device names to adapter classes, imported lazily.

An adapter module is imported only when its device is opened, so an optional driver dependency that is
not installed costs nothing until it is asked for, and then fails with a clear
:class:`~hapticam.errors.DependencyMissingError` (as python-can's interface registry does).
"""

from __future__ import annotations

import importlib
from typing import Any

from hapticam.devices.base import Device
from hapticam.errors import DependencyMissingError, DeviceError

#: device name -> ("module:Class", pip extra that provides its driver or "")
ADAPTERS: dict[str, tuple[str, str]] = {
    "sim": ("hapticam.devices.sim:SimulatedDevice", ""),
    "serial": ("hapticam.devices.serial_device:SerialDevice", "serial"),
    "zmq": ("hapticam.devices.remote:RemoteDevice", ""),
    "phantom": ("hapticam.devices.phantom:PhantomDevice", "phantom"),
}


def available_devices() -> list[str]:
    """Names accepted by :func:`open_device` (``--device``)."""
    return sorted(ADAPTERS)


def device_class(name: str) -> type[Device]:
    """Import and return the adapter class registered under ``name``."""
    try:
        target, extra = ADAPTERS[name]
    except KeyError:
        raise DeviceError(f"unknown device {name!r} (known: {', '.join(available_devices())})") from None
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


def device_from_spec(spec: str, **options: Any) -> Device:
    """Create (not open) the adapter for a ``--device`` value ``NAME[:ADDRESS]`` (e.g. ``sim``,
    ``serial:/dev/ttyACM0``) with the render options (see :meth:`Device.from_options`)."""
    name, _, address = str(spec).partition(":")
    return device_class(name).from_options(address, **options)

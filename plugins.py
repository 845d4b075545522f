"""Plugins: device adapters, model kinds and estimators another distribution adds, found through its entry points.

A distribution adds an adapter, a kind or an estimator by declaring it in its ``pyproject.toml``, as
python-can's interfaces are declared (``can.interface``)::

    [project.entry-points."hapticam.devices"]
    light-sim = "my_package.devices:LightSimulatedDevice"    # --device light-sim
    [project.entry-points."hapticam.models"]
    tactile-bump = "my_package.models:TactileBump"            # kind: tactile-bump in a model file
    [project.entry-points."hapticam.estimators"]
    "contact.ols" = "my_package.estimators:ols"               # identify contact --estimator ols

The entry point's name is what a user types (``--device NAME``, a model file's ``kind:``); its value names
the class. What each class must provide is said by the registry of its group:
:mod:`hapticam.devices.registry` (a :class:`~hapticam.devices.base.Device` subclass),
:mod:`hapticam.models.registry` (a model kind rendered through the built-in kernels) and
:mod:`hapticam.identify.estimators` (a function of an estimator family's signature).

Nothing of a plugin is imported until its name is asked for: listing the names reads only the
distributions' metadata. A built-in name always wins (a plugin cannot replace a built-in adapter or kind),
and where two distributions declare one name, the first on ``sys.path`` does. A plugin that cannot be
imported, or whose object is not what its group takes, is refused with one message that names the
entry point, its distribution and its target, never with the plugin's traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hapticam.errors import DependencyMissingError, HapticError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

#: entry-point group of device adapters (``--device NAME``)
DEVICE_GROUP = "hapticam.devices"
#: entry-point group of model kinds (``kind:`` of a model file)
MODEL_GROUP = "hapticam.models"
#: entry-point group of estimators, each named ``FAMILY.NAME`` (:mod:`hapticam.identify.estimators`)
ESTIMATOR_GROUP = "hapticam.estimators"
#: characters of a plugin's own error message a refusal quotes at most
MAX_CAUSE_CHARS = 200


def plugins(group: str) -> dict[str, "EntryPoint"]:
    """The entry points of ``group`` by name (the first declared on ``sys.path`` where names repeat),
    read from the installed distributions' metadata without importing any of them."""
    from importlib.metadata import entry_points

    found: dict[str, EntryPoint] = {}
    for entry in entry_points(group=group):
        found.setdefault(entry.name, entry)
    return found


def origin(entry: "EntryPoint") -> str:
    """Where a plugin comes from, for messages: ``distribution VERSION (module:attribute)``."""
    dist = getattr(entry, "dist", None)
    name = f"{dist.name} {dist.version}" if dist is not None else "an unnamed distribution"
    return f"{name} ({entry.value})"


def _cause(exc: BaseException) -> str:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= MAX_CAUSE_CHARS else text[:MAX_CAUSE_CHARS] + "..."


def load_class(entry: "EntryPoint", what: str, base: type, error: type[HapticError]) -> Any:
    """Import the class ``entry`` names and check that it is a subclass of ``base``.

    ``what`` names the entry point's role in messages (``device``, ``model kind``). A plugin that fails to
    import raises :class:`~hapticam.errors.DependencyMissingError` if what is missing is a module, else
    ``error``; so does an object that is not a ``base`` subclass. Each message names the plugin."""
    label = f"{what} {entry.name!r} is a plugin from {origin(entry)}"
    obj = _load(entry, label, error)
    if not (isinstance(obj, type) and issubclass(obj, base)):
        shown = obj.__name__ if isinstance(obj, type) else type(obj).__name__
        raise error(f"{label} that names {shown}, not a {base.__name__} subclass")
    return obj


def load_function(entry: "EntryPoint", what: str, error: type[HapticError]) -> Any:
    """Import the function ``entry`` names (an estimator) and check that it can be called; refused as
    :func:`load_class` refuses, with one message that names the plugin."""
    label = f"{what} {entry.name!r} is a plugin from {origin(entry)}"
    obj = _load(entry, label, error)
    if isinstance(obj, type) or not callable(obj):
        raise error(f"{label} that names {getattr(obj, '__name__', type(obj).__name__)}, not a function")
    return obj


def _load(entry: "EntryPoint", label: str, error: type[HapticError]) -> Any:
    """The object ``entry`` names, imported; a failure said in one message that starts with ``label``."""
    try:
        return entry.load()
    except ImportError as exc:
        raise DependencyMissingError(f"{label} that cannot be imported: {_cause(exc)}") from exc
    except Exception as exc:                      # whatever the plugin's own code raises while it is imported
        raise error(f"{label} that fails while it is imported: {_cause(exc)}") from exc

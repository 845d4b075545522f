"""Model-kind registry: the ``kind:`` of a model file to its :class:`~hapticam.models.base.Model` class.

The built-in kinds are declared in :data:`BUILTIN_KINDS` (each module is imported when its kind is first
asked for); another distribution adds a kind through the entry point group ``hapticam.models``
(:mod:`hapticam.plugins`), ``KIND = "module:Class"``, without editing hapticam. A plugin is imported only
when a model of its kind is read, and one that cannot be imported, or is not what this module takes, is
refused with one :class:`~hapticam.errors.ModelValidationError` (or
:class:`~hapticam.errors.DependencyMissingError`) that names it. A built-in name always means the
built-in kind. A kind defined in the running process (a :class:`Model` subclass with a ``kind``) is known
from its definition on (:data:`~hapticam.models.base.MODEL_KINDS`).

What a kind from outside provides
---------------------------------
The servo loop evaluates a model through one compiled kernel, :func:`hapticam.models.kernels.model_force`,
which sums the model's leaf components by their ``kind_code`` (:data:`~hapticam.models.base.KERNEL_CODES`)
and is compiled into the tick with the device's binding, its cache entry named by the kernels' sources
(:mod:`hapticam.render.specialize`). A kernel from outside would have to enter that dispatch, so every
compiled servo and its cache, and a model swapped in while rendering would need a servo compiled for it.
So a kind from outside brings no kernel: it is a :class:`ComposedKind`, rendered as the sum of built-in
kinds, which it builds from its own parameters in :meth:`ComposedKind.parts`:

- its class: a :class:`ComposedKind` subclass whose ``kind`` is the entry point's name, ``kind_code`` 0;
- ``to_dict()``/``from_dict()`` of its own parameters (SI units; a model file keeps these), validated in
  ``__init__`` with a :class:`~hapticam.errors.ModelValidationError` naming the field, and ``RANGES``, the
  physical range of each numeric parameter (:mod:`hapticam.models.ranges`);
- :meth:`ComposedKind.parts`: the built-in models it renders as (at most
  :data:`~hapticam.models.composite.MAX_COMPONENTS` leaves). Any force-position law goes through
  :func:`~hapticam.models.impedance.position_table` (a tabulated, linearly interpolated
  ``F(x)`` per direction); walls through :class:`~hapticam.models.contact.Contact` or
  :class:`~hapticam.models.composite.EndStops`; friction through :class:`~hapticam.models.friction.Friction`.

What render's gate, ``model validate`` and ``verify`` ask of a kind then follows from its parts: its
passivity (:meth:`Model.passivity`), the stiffnesses at the handle and the impacts its kernels report.
A kind may override :meth:`Model.passivity` with an analysis of its own parameters; its parts' ranges are
checked as well as its own. A composite that holds such a model keeps the parts, so a file written from it
names only built-in kinds.
"""

from __future__ import annotations

import importlib
from typing import Any

from hapticam.errors import ModelValidationError
from hapticam.models.base import KERNEL_CODES, MODEL_KINDS, Model
from hapticam.models.composite import Composite
from hapticam.models.passivity import PassivityReport
from hapticam.models.validation import excerpt
from hapticam.plugins import MODEL_GROUP, load_class, origin, plugins

#: built-in kind name -> "module:Class"
BUILTIN_KINDS: dict[str, str] = {
    "segmented-impedance": "hapticam.models.impedance:SegmentedImpedance",
    "contact": "hapticam.models.contact:Contact",
    "friction": "hapticam.models.friction:Friction",
    "hybrid-key": "hapticam.models.hybrid_key.model:HybridKey",
    "end-stops": "hapticam.models.composite:EndStops",
    "composite": "hapticam.models.composite:Composite",
}


class ComposedKind(Model):
    """A model kind rendered as the sum of built-in kinds (module docstring): a subclass sets ``kind`` and
    ``RANGES``, implements ``to_dict``, ``from_dict`` and :meth:`parts`."""

    kind_code = 0

    def parts(self) -> list[Model]:
        """The built-in models (leaves or composites of them) whose forces sum to this model's (N)."""
        raise NotImplementedError(f"kind {self.kind}: parts() says which built-in models it renders as")

    def _composite(self) -> Composite:
        try:
            return Composite(self.parts())
        except ModelValidationError as exc:
            raise ModelValidationError(f"kind {self.kind}: its parts: {exc}") from None

    def components(self) -> list[Model]:
        """The built-in leaves of :meth:`parts`; a leaf without a built-in kernel is refused."""
        leaves = self._composite().components()
        for i, leaf in enumerate(leaves):
            if leaf.kind_code not in KERNEL_CODES:
                raise ModelValidationError(f"kind {self.kind}: part {i} is of kind {leaf.kind or type(leaf).__name__}, "
                                           "which has no built-in kernel; a kind from outside renders as built-in kinds")
        return leaves

    def check_ranges(self) -> None:
        """Its own parameters against :attr:`RANGES`, then each part against its kind's ranges."""
        super().check_ranges()
        try:
            Composite(self.components()).check_ranges()
        except ModelValidationError as exc:
            raise ModelValidationError(f"kind {self.kind}: its parts: {exc}") from None

    def passivity(self) -> PassivityReport:
        """Its parts' analyses (:meth:`Composite.passivity`): not passive if any part could generate energy."""
        return Composite(self.components()).passivity()

    def handle_stiffnesses(self, at_force_N: float | None = None) -> list[tuple[str, float]]:
        """Its parts' stiffnesses at the handle (N/m), each path under ``components[i].parameters``."""
        return Composite(self.components()).handle_stiffnesses(at_force_N)

    def params_block(self) -> Any:
        raise TypeError("a composed kind has no parameter block of its own; compile() lays out its parts")

    def initial_state(self) -> Any:
        raise TypeError("a composed kind has no state block of its own; compile() lays out its parts")


def plugin_kinds() -> dict[str, str]:
    """The kinds other distributions declare (entry point group ``hapticam.models``), as name ->
    ``module:Class``, built-in names left out; nothing of them is imported."""
    return {name: entry.value for name, entry in plugins(MODEL_GROUP).items() if name not in BUILTIN_KINDS}


def available_kinds() -> list[str]:
    """Every kind name a model file may give: built in, defined in this process, or a plugin's."""
    return sorted({*BUILTIN_KINDS, *MODEL_KINDS, *plugin_kinds()})


def kind_class(name: str) -> type[Model]:
    """The class of the model kind ``name``: built in (its module imported on first use), defined in this
    process, else a plugin's (imported now and checked). Raises :class:`ModelValidationError` for an
    unknown kind or a plugin that is not a :class:`ComposedKind` of that name."""
    if isinstance(name, str) and name in BUILTIN_KINDS:
        return _builtin(name)
    if isinstance(name, str) and name in MODEL_KINDS:
        return MODEL_KINDS[name]
    entry = plugins(MODEL_GROUP).get(name) if isinstance(name, str) else None
    if entry is None:
        raise ModelValidationError(f"kind: unknown model kind {excerpt(name)} (known: {', '.join(available_kinds())})")
    cls = load_class(entry, "model kind", ComposedKind, ModelValidationError)
    if cls.kind != name or cls.kind_code != 0:
        if MODEL_KINDS.get(cls.kind) is cls:              # its definition registered it under another name
            del MODEL_KINDS[cls.kind]
            if cls.kind in BUILTIN_KINDS:
                MODEL_KINDS[cls.kind] = _builtin(cls.kind)
        raise ModelValidationError(f"model kind {name!r} is a plugin from {origin(entry)} whose class declares kind "
                                   f"{excerpt(cls.kind)} and kind_code {cls.kind_code!r}; it must declare kind "
                                   f"{name!r} and no kernel code (0)")
    return cls


def _builtin(name: str) -> type[Model]:
    module, _, cls_name = BUILTIN_KINDS[name].partition(":")
    return getattr(importlib.import_module(module), cls_name)

"""The model base class and the flat encoding the compiled kernels read.

Every model type is a :class:`Model` subclass with validated parameters, ``to_dict()``/``from_dict()``
(SI parameters only; provenance lives in the model file, see :mod:`hapticam.models.files`), and a
numba force kernel ``kernel(p, s, x, v, a, dt) -> force`` over its own parameter block ``p`` and
state block ``s`` (float64 arrays). The kernel writes the next state into ``s`` in place.

A model compiles to two flat float64 arrays (:class:`CompiledModel`) that the render loop passes to
:func:`hapticam.models.kernels.model_force`, so no Python object is touched per tick::

    params[0]                       number of components C
    params[1 + 5 i : 6 + 5 i]       component i: kind code, param offset, param length,
                                    state offset, state length
    params[...]                     the components' parameter blocks
    state                           the components' state blocks, concatenated

Sign convention (docs/architecture.md, section Conventions; seed 001 eq. 1): the force is the force the
probe must apply to the object along +x; a device renders ``-F`` on the user's handle.

A new model kind
----------------
What reads models (the model files, ``model validate`` and render's gate in
:mod:`hapticam.models.acceptance` and :mod:`hapticam.render.gate`, ``verify``) asks the model itself, so a
kind is added in these places:

1. its module: a :class:`Model` subclass with ``kind``, ``kind_code``, ``RANGES`` and the four abstract
   methods, and :meth:`Model.passivity` (without it the kind is not passive and render refuses it);
   where they differ from the defaults also :meth:`Model.handle_stiffnesses` (a ``_Npm`` parameter that is
   not N/m at the handle), :meth:`Model.passivity_of_sum` (parts of the kind that make up for one
   another when summed) and ``impact_events`` (the impacts its kernel reports);
2. here: its ``KIND_...`` code, in :data:`KERNEL_CODES`;
3. :mod:`hapticam.models.kernels`: its numba kernel ``f(p, s, x, v, a, dt)`` in ``model_force``'s dispatch
   (and in ``model_flags``, ``model_diag`` or ``model_impact`` if it reports flags, diagnostics or impacts);
4. :mod:`hapticam.models.registry`: its name and class in ``BUILTIN_KINDS``, so that the model files know it.

A kind from another distribution brings no kernel: it is declared through the entry point group
``hapticam.models`` and renders as a sum of built-in kinds (:mod:`hapticam.models.registry` states what
it provides).
"""

from __future__ import annotations

import importlib

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import numpy as np

from hapticam.errors import ModelValidationError
from hapticam.models.passivity import PassivityReport, combined
from hapticam.models.ranges import Range

HEADER_FIELDS = 5

# Kind codes of the compiled encoding (models/kernels.py dispatches on them).
KIND_IMPEDANCE = 1
KIND_CONTACT = 2
KIND_FRICTION = 3
KIND_HYBRID_KEY = 4
KIND_END_STOPS = 5
#: the codes :func:`hapticam.models.kernels.model_force` dispatches on (it returns NaN for any other): a kind
#: from outside renders as leaves that have one of them (:mod:`hapticam.models.registry`)
KERNEL_CODES = frozenset({KIND_IMPEDANCE, KIND_CONTACT, KIND_FRICTION, KIND_HYBRID_KEY, KIND_END_STOPS})

#: the compiled force kernel ``model_force``, registered by :mod:`hapticam.models.kernels` at import
FORCE_KERNEL: list[Callable[..., float]] = []
#: kind name -> Model subclass; filled by ``Model.__init_subclass__``.
MODEL_KINDS: dict[str, type["Model"]] = {}


@dataclass
class CompiledModel:
    """Flat arrays for the numba kernels: ``params`` (read-only per tick) and ``state`` (in place).

    ``state`` is the initial state; copy it (``reset_state()``) before each independent run.
    """

    params: np.ndarray
    state0: np.ndarray
    kinds: tuple[str, ...] = field(default_factory=tuple)

    def reset_state(self) -> np.ndarray:
        """Return a fresh copy of the initial state array."""
        return self.state0.copy()

    def component_blocks(self, index: int, state: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Views of component ``index``'s parameter block in ``params`` and its state block in ``state`` (default
        ``state0``), as :func:`hapticam.models.kernels.model_force` slices them: header ``1 + HEADER_FIELDS i``
        holds (kind code, parameter offset, length, state offset, length)."""
        state = self.state0 if state is None else state
        h = 1 + HEADER_FIELDS * index
        po, pl, so, sl = (int(v) for v in self.params[h + 1:h + 5])
        return self.params[po:po + pl], state[so:so + sl]


class Model(ABC):
    """Base of every model type.

    Subclasses set ``kind`` (the name used in model files) and ``kind_code`` (the compiled encoding's
    code), validate in ``__init__`` (raising :class:`~hapticam.errors.ModelValidationError` naming the
    field), declare the physical range of every numeric parameter in ``RANGES`` (by its name in
    ``to_dict()``, nested names joined with ``.``; :mod:`hapticam.models.ranges`), implement the four
    abstract methods, and state their passivity analysis (:meth:`passivity`); the module docstring lists
    what else a new kind may declare.
    """

    kind: ClassVar[str] = ""
    kind_code: ClassVar[int] = 0
    #: parameter name (or dotted path) -> its physical range; checked by :meth:`check_ranges`
    RANGES: ClassVar[dict[str, Range]] = {}
    #: marked active: may hold negative mass or damping (``active: true`` in its parameters)
    active: bool = False
    #: event-based transients (:class:`hapticam.models.transients.Transient`) its model file carries; none by default
    transients: tuple = ()
    #: the impacts its compiled kernel reports (names such as ``"landing"``): what a rendering of it can
    #: show as an impact; none by default
    impact_events: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.kind:
            MODEL_KINDS[cls.kind] = cls

    # -- parameters -------------------------------------------------------------------------------
    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """Return the SI parameters as plain Python types (lists, floats, strings)."""

    @classmethod
    @abstractmethod
    def from_dict(cls, data: dict[str, Any]) -> "Model":
        """Build and validate a model from ``to_dict()`` output; unknown or missing fields raise."""

    # -- physical ranges ------------------------------------------------------------------------------
    def parameter_values(self) -> list[tuple[str, Any]]:
        """Every numeric parameter as ``(path, value)``: a float, or an array for a list of numbers (paths
        join nested names with ``.``, as :attr:`RANGES` keys them)."""
        found: list[tuple[str, Any]] = []

        def walk(node: Any, path: str) -> None:
            if isinstance(node, dict):
                for key, value in node.items():
                    walk(value, f"{path}.{key}" if path else str(key))
            elif isinstance(node, (list, tuple)) and node and all(_is_number(v) for v in node):
                found.append((path, np.asarray(node, dtype=np.float64)))
            elif _is_number(node):
                found.append((path, float(node)))

        walk(self.to_dict(), "")
        return found

    def range_of(self, path: str) -> Range | None:
        """The declared range of the parameter at ``path``: by its whole path, else by its own name."""
        return self.RANGES.get(path) or self.RANGES.get(path.rsplit(".", 1)[-1])

    def check_ranges(self) -> None:
        """Raise :class:`~hapticam.errors.ModelValidationError` naming the first parameter outside its
        physical range (or with no declared range): the one definition the model files, ``model
        validate`` and render's gate apply (:mod:`hapticam.models.acceptance`)."""
        for path, value in self.parameter_values():
            declared = self.range_of(path)
            if declared is None:
                raise ModelValidationError(f"{path}: the {self.kind} kind declares no physical range for it")
            declared.check(path, value, active=self.active)

    # -- what render's gate, ``model validate`` and ``verify`` ask of a kind --------------------------
    def passivity(self) -> PassivityReport:
        """Where this model could generate energy (:class:`~hapticam.models.passivity.PassivityReport`:
        issues and notes in text, x ranges in m, cycle energy in J).

        A kind overrides it with its own analysis. This default analyses nothing, so it reports the model
        not passive: not known to be passive is not passive (render refuses it without ``--allow-active``)."""
        name = self.kind or type(self).__name__
        return PassivityReport(passive=False, issues=[f"kind {name} declares no passivity analysis, so it is "
                                                      "not known to be passive"])

    @classmethod
    def passivity_of_sum(cls, parts: list["Model"]) -> PassivityReport:
        """Where ``parts`` (models of this kind, rendered summed in one composite) could generate energy.

        By default each part's own :meth:`passivity`, the reports combined (passive if every part is); a
        kind whose parts can make up for one another when summed overrides it (the impedance tables, whose
        static forces add)."""
        return combined([part.passivity() for part in parts])

    def handle_stiffnesses(self, at_force_N: float | None = None) -> list[tuple[str, float]]:
        """Every stiffness (N/m) a display of this model presents at its handle, with the parameter's path
        (names joined with ``.`` as in ``to_dict()``, a list's entries as ``path[i]``): what render's gate
        compares with the stiffness a device renders stably. ``at_force_N`` is the device's peak force (N),
        for a stiffness that depends on the force reached (a Hunt-Crossley law's); None: as written.

        By default every parameter named ``..._Npm``; a kind overrides it where such a parameter is not N/m
        on the handle, or where the handle feels a stiffness by another name."""
        found: list[tuple[str, float]] = []

        def walk(node: Any, path: str) -> None:
            if isinstance(node, dict):
                for key, value in node.items():
                    walk(value, f"{path}.{key}" if path else str(key))
            elif isinstance(node, list):
                if path.endswith("_Npm") and all(_is_number(v) for v in node):
                    found.extend((f"{path}[{i}]", float(v)) for i, v in enumerate(node))
                else:
                    for i, value in enumerate(node):
                        walk(value, f"{path}[{i}]")
            elif path.endswith("_Npm") and _is_number(node):
                found.append((path, float(node)))

        walk(self.to_dict(), "")
        return found

    # -- compiled encoding --------------------------------------------------------------------------
    @abstractmethod
    def params_block(self) -> np.ndarray:
        """Return this component's flat float64 parameter block for its kernel."""

    @abstractmethod
    def initial_state(self) -> np.ndarray:
        """Return this component's initial float64 state block (may be empty)."""

    def components(self) -> list["Model"]:
        """Return the leaf components (a composite returns its parts; a leaf returns itself)."""
        return [self]

    def compile(self) -> CompiledModel:
        """Encode the model (all components) into the flat arrays the kernels read."""
        parts = self.components()
        blocks = [np.asarray(m.params_block(), dtype=np.float64) for m in parts]
        states = [np.asarray(m.initial_state(), dtype=np.float64) for m in parts]
        n = len(parts)
        header = np.zeros(1 + HEADER_FIELDS * n)
        header[0] = n
        offset = header.size
        s_offset = 0
        for i, (m, blk, st) in enumerate(zip(parts, blocks, states)):
            h = 1 + HEADER_FIELDS * i
            header[h:h + HEADER_FIELDS] = (m.kind_code, offset, blk.size, s_offset, st.size)
            offset += blk.size
            s_offset += st.size
        params = np.concatenate([header, *blocks]) if blocks else header
        state0 = np.concatenate(states) if states else np.zeros(0)
        return CompiledModel(params=params, state0=state0, kinds=tuple(m.kind for m in parts))

    # -- convenience --------------------------------------------------------------------------------
    def force(self, x_m: float, v_mps: float = 0.0, a_mps2: float = 0.0, dt_s: float = 1e-3,
              state: np.ndarray | None = None) -> float:
        """Evaluate the compiled kernel once (N). Pass ``state`` to carry internal state between calls.

        The kernel is :func:`hapticam.models.kernels.model_force`, which registers itself here when its module
        is imported (so this module needs no import of the kernels at load); the first call imports it."""
        if not FORCE_KERNEL:
            importlib.import_module("hapticam.models.kernels")
        compiled = self.compile()
        s = compiled.reset_state() if state is None else state
        return float(FORCE_KERNEL[0](compiled.params, s, float(x_m), float(v_mps), float(a_mps2), float(dt_s)))

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and _plain_equal(self.to_dict(), other.to_dict())  # type: ignore[union-attr]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _plain_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_plain_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_plain_equal(x, y) for x, y in zip(a, b))
    return a == b


def model_from_dict(kind: str, parameters: dict[str, Any]) -> Model:
    """Build a model of the named ``kind`` from its parameter mapping: a built-in kind, one defined in this
    process or a plugin's (:func:`hapticam.models.registry.kind_class`, which imports this module: it is
    loaded on first use, as the kernels are). The physical ranges (:meth:`Model.check_ranges`) are the model
    files' and render's gate's to check."""
    registry = importlib.import_module("hapticam.models.registry")
    return registry.kind_class(kind).from_dict(parameters)

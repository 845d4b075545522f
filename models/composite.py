"""Sums of models, and workspace end stops.

:class:`Composite` adds the forces of its components (a keyswitch = impedance table + friction +
bottom-out contact + end stops). It has no kernel of its own: :meth:`Model.compile` lays out its leaf
components and :func:`hapticam.models.kernels.model_force` sums them.

:class:`EndStops` is a pair of one-sided spring-damper walls at both ends of the workspace
(seed 004 eq. 2.1 at each wall), never pulling (no tensile force, as for :class:`~hapticam.models.contact.Contact`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from hapticam.errors import ModelValidationError
from hapticam.models.base import KIND_END_STOPS, Model, model_from_dict
from hapticam.models.passivity import PassivityReport, combined
from hapticam.models.ranges import damping, length, stiffness
from hapticam.models.validation import as_float, check_keys

#: components of one composite at most, nested composites' counted as well as the composites themselves. A key
#: is a handful (an impedance table, friction, a contact, end stops); the servo loop sums every component at
#: every tick and render judges the passivity of their sum: 64 impedance tables cost about 3 us a tick (a 10 kHz
#: tick is 100 us) and 0.1 s to judge, where 5,000 took over 200 us a tick and 40 s
MAX_COMPONENTS = 64


class EndStops(Model):
    """Walls below ``x_min_m`` and above ``x_max_m`` (m) with stiffness ``k_Npm`` and damping ``b_Nspm``.

    Above ``x_max``: ``F = max(0, k (x - x_max) + b v)``; below ``x_min``: ``F = -max(0, k (x_min - x) - b v)``
    (seed 004 eq. 2.1, clamped so a wall never pulls). Passive for ``k, b >= 0`` (see contact.py).
    """

    kind = "end-stops"
    kind_code = KIND_END_STOPS
    #: physical ranges (:mod:`hapticam.models.ranges`)
    RANGES = {"x_min_m": length(), "x_max_m": length(), "k_Npm": stiffness(), "b_Nspm": damping()}

    def __init__(self, x_min_m: float, x_max_m: float, k_Npm: float, b_Nspm: float = 0.0) -> None:
        self.x_min_m = as_float("x_min_m", x_min_m)
        self.x_max_m = as_float("x_max_m", x_max_m)
        if self.x_max_m <= self.x_min_m:
            raise ModelValidationError(f"x_max_m: must be > x_min_m ({self.x_min_m:g}), got {self.x_max_m:g}")
        self.k_Npm = as_float("k_Npm", k_Npm, min_value=0.0)
        self.b_Nspm = as_float("b_Nspm", b_Nspm, min_value=0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"x_min_m": self.x_min_m, "x_max_m": self.x_max_m, "k_Npm": self.k_Npm, "b_Nspm": self.b_Nspm}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "EndStops":
        check_keys("end-stops", data, {"x_min_m", "x_max_m", "k_Npm"}, {"b_Nspm"})
        return cls(**data)

    def passivity(self) -> PassivityReport:
        """Passive by construction: ``k, b >= 0`` (validated) and never tensile (as a contact)."""
        return PassivityReport(passive=True, notes=["end stops: passive by construction (k, b >= 0, never tensile)"])

    def params_block(self) -> np.ndarray:
        return np.array([self.x_min_m, self.x_max_m, self.k_Npm, self.b_Nspm])

    def initial_state(self) -> np.ndarray:
        return np.zeros(0)


@njit(cache=True, nogil=True)
def end_stops_force(p, s, x, v, a, dt):
    """Force (N) the probe applies along +x against an :class:`EndStops` block ``p``; stateless."""
    if x > p[1]:
        f = p[2] * (x - p[1]) + p[3] * v  # F = k d + b d_dot  (seed 004 eq. 2.1), d = x - x_max
        return f if f > 0.0 else 0.0  # never tensile
    if x < p[0]:
        f = p[2] * (p[0] - x) - p[3] * v  # d = x_min - x, d_dot = -v
        return -f if f > 0.0 else 0.0
    return 0.0


class Composite(Model):
    """The sum of ``components`` (any models; nested composites are flattened; at least one)."""

    kind = "composite"

    def __init__(self, components: list[Model]) -> None:
        if isinstance(components, Model) or not isinstance(components, (list, tuple)):
            raise ModelValidationError("components: expected a list of models")
        leaves: list[Model] = []
        for i, comp in enumerate(components):
            if not isinstance(comp, Model):
                raise ModelValidationError(f"components[{i}]: expected a model, got {type(comp).__name__}")
            leaves.extend(comp.components())
            if len(leaves) > MAX_COMPONENTS:
                raise ModelValidationError(f"components: more than {MAX_COMPONENTS} components, the most a "
                                           "composite holds")
        if not leaves:
            raise ModelValidationError("components: a composite needs at least one component")
        self._leaves = leaves

    def components(self) -> list[Model]:
        """The leaf components, flattened (a copy of the list)."""
        return list(self._leaves)

    def check_ranges(self) -> None:
        """Each component against its own kind's ranges; the message names ``components[i]``."""
        for i, leaf in enumerate(self._leaves):
            try:
                leaf.check_ranges()
            except ModelValidationError as exc:
                raise ModelValidationError(f"components[{i}].{exc}") from None

    def passivity(self) -> PassivityReport:
        """The components' analyses together: the components of one kind judged summed
        (:meth:`~hapticam.models.base.Model.passivity_of_sum`), the kinds' reports combined; not passive if
        any component could generate energy or declares no analysis."""
        by_kind: dict[type[Model], list[Model]] = {}
        for leaf in self._leaves:
            by_kind.setdefault(type(leaf), []).append(leaf)
        return combined([kind.passivity_of_sum(parts) for kind, parts in by_kind.items()])

    def handle_stiffnesses(self, at_force_N: float | None = None) -> list[tuple[str, float]]:
        """Each component's stiffnesses at the handle (N/m), its paths under ``components[i].parameters``."""
        return [(f"components[{i}].parameters.{path}", stiffness_Npm) for i, leaf in enumerate(self._leaves)
                for path, stiffness_Npm in leaf.handle_stiffnesses(at_force_N)]

    def to_dict(self) -> dict[str, Any]:
        return {"components": [{"kind": m.kind, "parameters": m.to_dict()} for m in self._leaves]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Composite":
        check_keys("composite", data, {"components"})
        items = data["components"]
        if not isinstance(items, list):
            raise ModelValidationError("components: expected a list")
        count_components(items)
        models: list[Model] = []
        for i, item in enumerate(items):
            check_keys(f"components[{i}]", item, {"kind", "parameters"})
            if not isinstance(item["kind"], str):
                raise ModelValidationError(f"components[{i}].kind: expected a string")
            try:
                models.append(model_from_dict(item["kind"], item["parameters"]))
            except ModelValidationError as exc:
                raise ModelValidationError(f"components[{i}].{exc}") from None
        return cls(models)

    def params_block(self) -> np.ndarray:
        raise TypeError("a composite has no parameter block of its own; compile() lays out its components")

    def initial_state(self) -> np.ndarray:
        raise TypeError("a composite has no state block of its own; compile() lays out its components")


def count_components(items: list[Any], limit: int = MAX_COMPONENTS) -> int:
    """The number of component mappings in a composite's ``components`` list as a file holds it, nested
    composites' components counted too: read from the mappings alone, before any model is built. Raises
    :class:`ModelValidationError` as soon as the count passes ``limit``."""
    count = 0
    pending = [items]
    while pending:
        for item in pending.pop():
            count += 1
            if count > limit:
                raise ModelValidationError(f"components: more than {limit} components (nested composites' "
                                           "counted), the most a composite holds")
            if not (isinstance(item, dict) and item.get("kind") == Composite.kind):
                continue
            nested = item.get("parameters")
            if isinstance(nested, dict) and isinstance(nested.get("components"), list):
                pending.append(nested["components"])
    return count

"""``kind: tactile-bump``: a key whose force rises linearly from a preload, with a Gaussian tactile bump,
and a bottom-out wall at the end of its travel.

Over the travel ``0 <= x <= travel_m`` (m) the force (N) is::

    F(x) = preload_N + k_Npm x + bump_N exp(-(x - bump_at_m)^2 / (2 bump_width_m^2))

and beyond it a wall of stiffness ``bottom_k_Npm`` adds ``bottom_k_Npm (x - travel_m)``. It is rendered as
built-in kinds: ``F(x)`` tabulated at :data:`SAMPLES` points (a position table, linear between them) and
end stops at ``-travel_m`` and ``travel_m``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hapticam.errors import ModelValidationError
from hapticam.models.composite import EndStops
from hapticam.models.impedance import position_table
from hapticam.models.ranges import force, length, stiffness
from hapticam.models.registry import ComposedKind
from hapticam.models.validation import as_float, check_keys

#: points of the tabulated curve: at 4 mm of travel, 10 um apart (linear interpolation of a 0.25 mm wide
#: bump then errs by under 1e-4 N: h^2 / 8 max|F''|)
SAMPLES = 401
_FIELDS = ("preload_N", "k_Npm", "bump_N", "bump_at_m", "bump_width_m", "travel_m", "bottom_k_Npm")


class TactileBump(ComposedKind):
    """The tactile key of the module docstring (SI parameters)."""

    kind = "tactile-bump"
    RANGES = {"preload_N": force(), "k_Npm": stiffness(), "bump_N": force(), "bump_at_m": length(),
              "bump_width_m": length(), "travel_m": length(), "bottom_k_Npm": stiffness()}

    def __init__(self, preload_N: float, k_Npm: float, bump_N: float, bump_at_m: float, bump_width_m: float,
                 travel_m: float, bottom_k_Npm: float) -> None:
        self.preload_N = as_float("preload_N", preload_N, min_value=0.0)
        self.k_Npm = as_float("k_Npm", k_Npm, min_value=0.0)
        self.bump_N = as_float("bump_N", bump_N, min_value=0.0)
        self.travel_m = as_float("travel_m", travel_m, min_value=0.0, strict_min=True)
        self.bump_at_m = as_float("bump_at_m", bump_at_m, min_value=0.0, max_value=self.travel_m)
        self.bump_width_m = as_float("bump_width_m", bump_width_m, min_value=0.0, strict_min=True)
        self.bottom_k_Npm = as_float("bottom_k_Npm", bottom_k_Npm, min_value=0.0)
        if self.travel_m / self.bump_width_m > SAMPLES / 4:
            raise ModelValidationError(f"bump_width_m: at least travel_m / {SAMPLES // 4} "
                                       f"({self.travel_m / (SAMPLES // 4):.3g} m), so the table resolves it")

    def curve_N(self, x_m: Any) -> np.ndarray:
        """``F(x)`` over the travel (N), the module docstring's formula at ``x_m`` (m)."""
        x = np.asarray(x_m, dtype=float)
        return (self.preload_N + self.k_Npm * x
                + self.bump_N * np.exp(-0.5 * ((x - self.bump_at_m) / self.bump_width_m) ** 2))

    def parts(self) -> list:
        xs = np.linspace(0.0, self.travel_m, SAMPLES)
        return [position_table(xs, self.curve_N(xs)),
                EndStops(-self.travel_m, self.travel_m, self.bottom_k_Npm)]

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TactileBump":
        check_keys("tactile-bump", data, set(_FIELDS))
        return cls(**data)

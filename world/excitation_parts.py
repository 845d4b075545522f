"""What excitations share: the raised cosine they ramp with, and position, velocity and acceleration read off
one ``_parts(t)`` computation."""

from __future__ import annotations

from typing import Any

import numpy as np


def raised_cosine(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """w(u) = (1 - cos(pi u)) / 2 on [0, 1] (0 before, 1 after) and its first two u-derivatives."""
    uc = np.clip(u, 0.0, 1.0)
    inside = (u > 0.0) & (u < 1.0)
    w = 0.5 * (1.0 - np.cos(np.pi * uc))
    dw = np.where(inside, 0.5 * np.pi * np.sin(np.pi * uc), 0.0)
    ddw = np.where(inside, 0.5 * np.pi * np.pi * np.cos(np.pi * uc), 0.0)
    return w, dw, ddw


class FromParts:
    """Commanded position (m), velocity (m/s) and acceleration (m/s^2) of an excitation whose ``_parts(t)``
    gives all three at the times ``t`` (s)."""

    def position(self, t_s: Any) -> np.ndarray:
        """Commanded position (m)."""
        return self._parts(np.asarray(t_s, dtype=np.float64))[0]

    def velocity(self, t_s: Any) -> np.ndarray:
        """Commanded velocity (m/s)."""
        return self._parts(np.asarray(t_s, dtype=np.float64))[1]

    def acceleration(self, t_s: Any) -> np.ndarray:
        """Commanded acceleration (m/s^2)."""
        return self._parts(np.asarray(t_s, dtype=np.float64))[2]

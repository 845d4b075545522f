"""What the device adapter tests share: a spring-damper key as the loop's model, and the scripted users.

The model is ``F = b v + k x`` (b = 0.5 N s/m, k = 400 N/m) as compiled kernels, so an adapter's forces can
be compared with the simulator's through the same servo loop; the users press, oscillate and hold as a
finger does."""

from __future__ import annotations

import numpy as np
from numba import njit

from hapticam.world.sim import SimParams
from hapticam.world.users import finger, press, sine
from hapticam.models.base import CompiledModel


@njit(cache=True, nogil=True)
def spring_force(p, s, x, v, a, dt):
    """F = b v + k x (a spring-damper key)."""
    return p[1] * v + p[2] * x


@njit(cache=True, nogil=True)
def no_flags(p, s):
    return 0


MODEL = CompiledModel(params=np.array([0.0, 0.5, 400.0]), state0=np.zeros(1))
PARAMS = SimParams(noise_m=0.0)
DUR = 0.6
USERS = {"press": press(0.004, DUR, hold_s=0.1), "sine": sine(0.002, 3.0, DUR),
         "finger": finger(0.006, DUR, press_s=0.15, release_s=0.45)}

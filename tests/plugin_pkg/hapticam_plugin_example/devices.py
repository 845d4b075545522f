"""``--device light-sim``: the simulated device with a weaker motor (2 N peak) and a lighter handle.

It reuses the simulator's compiled ``sense``/``actuate`` pair, so the servo loop compiled for ``sim`` serves
it too; what differs is the plant and the specification the safety layer clamps to.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hapticam.world.sim import SimParams, SimulatedDevice
from hapticam.errors import DeviceError

#: the plant: a 20 g handle, 1 N s/m of damping (K < 2 b / T = 2000 N/m at 1 kHz) and a 2 N motor
LIGHT_PARAMS = SimParams(handle_mass_kg=0.02, damping_N_s_per_m=1.0, max_force_N=2.0, max_force_rate_N_per_s=4000.0)


class LightSimulatedDevice(SimulatedDevice):
    """The simulator with :data:`LIGHT_PARAMS`, named ``light-sim`` in its specification."""

    def __init__(self, user: Any = None, seed: int = 0) -> None:
        super().__init__(LIGHT_PARAMS, user=user, seed=seed)
        self.spec = dataclasses.replace(self.spec, name="light-sim")

    @classmethod
    def from_options(cls, address: str, **options: Any) -> "LightSimulatedDevice":
        """``--device light-sim`` with the render's scripted user and noise seed (no address)."""
        if address:
            raise DeviceError(f"device light-sim takes no address (got {address!r})")
        return cls(user=options.get("user"), seed=int(options.get("seed", 0)))

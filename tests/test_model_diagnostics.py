"""The loop's public diagnostics read-out: the ring's model_diag columns and ServoLoop.snapshot()."""

from __future__ import annotations

import numpy as np

from hapticam.world.sim import SimulatedDevice
from hapticam.world.users import press
from hapticam.models.files import load_model_only
from hapticam.models.hybrid_key.model import HybridKey
from hapticam.models.hybrid_key.geometry import drive_at
from hapticam.models.hybrid_key.layout import S_XK
from hapticam.models.kernels import model_force
from hapticam.render.loop import LoopConfig, ServoLoop, run_simulated


def test_hybrid_key_diagnostics_are_the_hammer_height_and_drive_point_of_an_offline_run():
    model = load_model_only("example:piano-key")
    result = run_simulated(model, user=press(0.012, 0.6), duration_s=0.6, config=LoopConfig(proxy="off", display="off"))
    key = next(c for c in model.components() if isinstance(c, HybridKey))
    compiled = model.compile()
    state = compiled.reset_state()
    ys, xks, states = [], [], []
    for i in range(result.t_s.size):                      # the kernel offline on the sensed positions
        model_force(compiled.params, state, result.x_m[i], result.v_mps[i], 0.0, 1e-3)
        so = int(compiled.params[1 + 3])
        ys.append(state[so])                              # hammer height (the layout's S_Y = 0)
        xks.append(state[so + S_XK])                      # the simulated key under the handle
        states.append(state[so:].copy())                  # (a held closing check reads the handle there)
    np.testing.assert_allclose(result.model_diag[:, 0], ys, atol=1e-12)
    assert np.ptp(result.model_diag[:, 0]) > 1e-3         # the hammer moved
    p = key.params_block()
    escaped = (result.model_flags & 4) != 0
    expected = [drive_at(p, st, x, 1.0 if e else 0.0) for x, e, st in zip(xks, escaped, states)]  # the key's drive
    np.testing.assert_allclose(result.model_diag[:, 1], expected, atol=1e-12)


def test_snapshot_names_the_last_tick_and_impedance_models_report_zero_diagnostics():
    loop = ServoLoop(load_model_only("example:cherry-mx-red"), SimulatedDevice(user=press(0.003, 0.2)),
                     LoopConfig(realtime=False))
    assert loop.snapshot() is None
    result = loop.run_simulated(n_ticks=150)
    snap = loop.snapshot()
    assert snap.tick == 149 and snap.t_s == result.t_s[-1] and snap.force_N == result.force_N[-1]
    assert snap.x_m == result.x_m[-1] and snap.diag0 == 0.0 and snap.diag1 == 0.0

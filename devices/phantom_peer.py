"""The anchor a Python user has today: a pyOpenHaptics servo callback (a Python function wrapped with
``CFUNCTYPE`` by ``pyOpenHaptics.hd_callback``, so every tick takes the GIL) doing the work of hapticam's
compiled tick on the same device: read the handle's position (``get_transform``), project it on the
axis, evaluate a spring-damper key ``F = k x + b v`` (velocity by the loop's filtered difference) and
command ``-F`` along the axis (``set_force``). Used by ``hapticam bench render --device phantom`` and
the tests, on the HDAPI emulator.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import math
import time
from typing import Any

import numpy as np

from hapticam.errors import DeviceError


def run_pyopenhaptics_callback(seconds: float, *, stiffness_N_per_m: float = 400.0, damping_N_s_per_m: float = 0.5,
                               axis: Any = (0.0, -1.0, 0.0), rate_hz: float = 1000.0,
                               velocity_cutoff_hz: float = 200.0) -> dict[str, Any]:
    """Run the pyOpenHaptics callback for ``seconds`` on the loaded libHD (the default device); returns
    the callback's own counters (calls, and the ones that raised: pyOpenHaptics then stops the loop)."""
    try:
        hdm = importlib.import_module("pyOpenHaptics.hd")
        cbm = importlib.import_module("pyOpenHaptics.hd_callback")
        devm = importlib.import_module("pyOpenHaptics.hd_device")
    except (ImportError, OSError) as exc:
        raise DeviceError(f"pyOpenHaptics is not usable here ({exc})") from exc
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    dt = 1.0 / rate_hz
    beta = 1.0 - math.exp(-2.0 * math.pi * velocity_cutoff_hz * dt)   # v(n) = v(n-1) + beta (dx/T - v(n-1))
    st = {"calls": 0, "x_prev": None, "v": 0.0, "origin": None}

    def tick() -> None:
        m = hdm.get_transform()
        p = np.array([m[3][0], m[3][1], m[3][2]])
        if st["origin"] is None:
            st["origin"] = p
        x = 1e-3 * float(a @ (p - st["origin"]))                         # x = 1e-3 a . (p - o)
        if st["x_prev"] is not None:
            st["v"] += beta * ((x - st["x_prev"]) / dt - st["v"])
        st["x_prev"] = x
        f = stiffness_N_per_m * x + damping_N_s_per_m * st["v"]          # F = k x + b v
        hdm.set_force((-f * a).tolist())                                 # -F along the axis on the handle
        st["calls"] += 1

    callback = cbm.hd_callback(tick)
    chatter = io.StringIO()                      # pyOpenHaptics prints its progress on stdout
    with contextlib.redirect_stdout(chatter):
        device = devm.HapticDevice(callback)     # init, force on, scheduler, the callback at max priority
        try:
            time.sleep(seconds)
        finally:
            device.close()
    return {"calls": st["calls"], "messages": chatter.getvalue().strip().splitlines()}

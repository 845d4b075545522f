"""The bundled piano key pressed through the display stage renders the force trace of its reference: the servo
step fed a fixed press (no device in the loop, so nothing but the step decides the force), against the trace the
same press gave with the hybrid key's kernels compiled with numba's reference counting (``data/hybrid_key/``).

The press is ``hapticam bench render``'s display row: 1 Hz to 11.5 mm, past let-off (the hammer flies free and
lands in the backcheck), onto the keybed (where the display stage's coupling holds the handle) and
back past the repetition point, with a transient at each landing. The kernels' arithmetic is unchanged, so the
trace agrees to rounding: 1e-9 of its peak force (N) and of the hammer's travel (m)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

from hapticam.devices.base import IO_FORCE_CMD, IO_SEQ, IO_X
from hapticam.devices.registry import open_device
from hapticam.models.files import load_model_only
from hapticam.models.hybrid_key.layout import FLAG_IMPACT, FLAG_KEYBED, FLAG_LETOFF, FLAG_LIFTOFF
from hapticam.models.kernels import model_diag, model_flags
from hapticam.models.transients import Transient
from hapticam.render.layout import C_DISP_K, K_SLOT
from hapticam.render.loop import LoopConfig, ServoLoop

REFERENCE = Path(__file__).resolve().parent / "data" / "hybrid_key" / "piano_press_display.npz"
TICKS = 1000
RATE_HZ = 1000.0
RELATIVE_TOLERANCE = 1e-9


def press_positions_m() -> np.ndarray:
    """The handle's position (m) at each tick of the press."""
    t = np.arange(TICKS) / RATE_HZ
    return 0.012 * 0.5 * (1.0 - np.cos(2.0 * np.pi * t)) - 0.0005


def render_press() -> dict[str, np.ndarray]:
    """The press through the display stage: per tick the commanded force (N), the hammer height (m) and the
    model's flags."""
    model = copy.copy(load_model_only("example:piano-key"))
    model.transients = (Transient(event="landing", gain_N_per_mps=2.0, frequency_hz=300.0, decay_s=0.003),)
    xs = press_positions_m()
    out = {"force_N": np.zeros(TICKS), "hammer_m": np.zeros(TICKS), "flags": np.zeros(TICKS, dtype=np.int64)}
    with open_device("sim") as device:
        loop = ServoLoop(model, device, LoopConfig(rate_hz=RATE_HZ, display="auto", ring_capacity=1 << 11))
        assert loop.cfg[C_DISP_K + loop.ctl[K_SLOT]] > 0.0          # the keybed is shown through the coupling
        for k, x in enumerate(xs):
            loop.io[IO_X] = x
            loop.io[IO_SEQ] = k + 1
            loop.kernels.step(k, 0.0, 0, loop.io, loop.cfg, loop.ctl, loop.srv, loop.pbuf, loop.sbuf, loop.ring,
                              loop.events)
            p, s = loop.pbuf[loop.ctl[K_SLOT]], loop.sbuf[loop.ctl[K_SLOT]]
            out["force_N"][k] = loop.io[IO_FORCE_CMD]
            out["hammer_m"][k] = model_diag(p, s, 0)
            out["flags"][k] = model_flags(p, s)
    return out


def test_a_piano_key_press_through_the_display_stage_renders_its_reference_trace():
    got = render_press()
    ref = np.load(REFERENCE)
    for flag in (FLAG_LETOFF, FLAG_LIFTOFF, FLAG_IMPACT, FLAG_KEYBED):  # the press covers what the kernel does
        assert np.any(got["flags"] & flag)
    assert np.array_equal(got["flags"], ref["flags"])
    for name in ("force_N", "hammer_m"):
        scale = float(np.max(np.abs(ref[name])))
        assert np.max(np.abs(got[name] - ref[name])) <= RELATIVE_TOLERANCE * scale, name

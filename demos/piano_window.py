"""Piano window: the hammer of the hybrid key flies to the string and lands back (seed 000's juggle).

Seed 000 section 1: "A key-press accelerates the hammer toward the string and the appropriately placed
keybed causes a launch (release, or transition into free-flight) of the hammer before hammer/string
impact begins. After hammer/string interaction, the hammer lands back on the key." The window renders
:class:`~hapticam.models.hybrid_key.model.HybridKey` (default ``example:piano-key``) through the servo loop on
the simulated device, pressed by a firm finger (users.py's scripted-probe spring) that follows the mouse
(hold the left button) or a scripted keystroke (space bar). It draws the key lever, the jack or
backcheck (the drive point), the hammer at its height from the kernel's state, the string, the mode
lamps from the model flags (contact, flight, escaped, string hit, keybed), and a trace of hammer height
against time.

The loop is stepped one tick at a time, so the trace has every tick's hammer height; a frame is still
1/60 s of simulated time (16 or 17 ticks). Keys: space keystroke, ``r`` reset, ``q``/Esc quit::

    python -m hapticam.demos.piano_window [MODEL]
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hapticam.demos._window import (BG, DIM, FPS, GRID, PANEL, TEXT, FingerRig, Script, ScriptPlayer,
                                    draw_axes, frame_ticks, require_pygame, run_loop, text, window_main)
from hapticam.world.users import PROBE_DAMPING_N_S_PER_M, PROBE_STIFFNESS_N_PER_M
from hapticam.errors import UsageError
from hapticam.models.files import load_model
from hapticam.models.hybrid_key.model import FLAG_CONTACT, FLAG_ESCAPED, FLAG_FLIGHT, FLAG_STRING, HybridKey

SIZE = (960, 600)
TRACE_S = 2.0
FLAG_KEYBED = 32                 # bit 5 of the hybrid key flags
STRIKE_LAMP_S = 0.15             # the string lamp stays lit this long after a hit
#: Scripted keystroke (space): raised-cosine press to ``KEYSTROKE_OVERPRESS_M`` past the keybed (the keybed
#: itself; pressing past it makes the 1e5 N/m keybed, far above what the device renders, chatter) in
#: ``KEYSTROKE_DOWN_S``, hold ``KEYSTROKE_HOLD_S``, raised-cosine return in ``KEYSTROKE_UP_S``.
KEYSTROKE_DOWN_S = 0.04
KEYSTROKE_HOLD_S = 0.35
KEYSTROKE_UP_S = 0.08
KEYSTROKE_OVERPRESS_M = 0.0

# Colours the tests look for.
KEY = (235, 225, 200)
JACK = (80, 200, 120)
HAMMER = (230, 70, 70)
STRING = (240, 240, 240)
FINGER = (240, 170, 60)
LAMP_OFF = (44, 48, 60)
LAMPS = (("contact", FLAG_CONTACT, (80, 200, 120)), ("flight", FLAG_FLIGHT, (245, 150, 50)),
         ("escaped", FLAG_ESCAPED, (90, 140, 250)), ("string", FLAG_STRING, (250, 230, 70)),
         ("keybed", FLAG_KEYBED, (190, 120, 220)))


@dataclass(frozen=True)
class PianoLayout:
    """Pixel geometry (the tests read it).

    Action panel: the key front end is drawn ``key_px_per_m`` per metre of key travel below
    ``key_y0``; in the hammer column, a height ``y`` (m) is row ``hammer_y0 - y * hammer_px_per_m``: the
    hammer's bottom edge sits at its height ``y``, the jack's top at the drive point ``s``, the string
    line ``hammer_h`` pixels above the string height (so the hammer's top touches it at ``y = y_s``).
    Trace: ``trace`` rectangle, heights over ``trace_y_range_m``, the last ``TRACE_S`` seconds; its
    axes (:meth:`trace_scales`) give the height in mm and the time in s before now.
    Lamps: ``lamp_rects`` in the order of ``LAMPS``.
    """

    panel: tuple[int, int, int, int] = (20, 50, 420, 490)
    key_front_x: int = 50
    key_pivot_x: int = 200
    key_back_x: int = 300
    key_y0: int = 420
    key_px_per_m: float = 6000.0
    hammer_cx: int = 360
    hammer_w: int = 64
    hammer_h: int = 26
    hammer_y0: int = 440
    hammer_px_per_m: float = 7500.0
    trace: tuple[int, int, int, int] = (500, 70, 440, 330)
    trace_y_range_m: tuple[float, float] = (-0.005, 0.05)
    lamp_rects: tuple[tuple[int, int, int, int], ...] = tuple((470 + 94 * i, 452, 86, 30) for i in range(5))

    def hammer_row(self, y_m: float) -> float:
        """Row of a height ``y_m`` in the hammer column."""
        return self.hammer_y0 - y_m * self.hammer_px_per_m

    def key_row(self, x_m: float) -> float:
        """Row of the key's front end for key position ``x_m``."""
        return self.key_y0 + x_m * self.key_px_per_m

    def depth_at(self, row: float) -> float:
        """Finger target (m) for a mouse at ``row`` over the key front."""
        return (row - self.key_y0) / self.key_px_per_m

    def trace_scales(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """The trace's axes: time (s, 0 = now) from left to right edge, height (mm) from bottom to top."""
        lo, hi = self.trace_y_range_m
        return (-TRACE_S, 0.0), (lo * 1e3, hi * 1e3)

    def trace_xy(self, age_s: np.ndarray, y_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Trace pixels for samples ``age_s`` seconds old (0: now, at the right edge) at height ``y_m``."""
        left, top, w, h = self.trace
        lo, hi = self.trace_y_range_m
        return left + w * (1.0 - np.asarray(age_s) / TRACE_S), top + h - (np.asarray(y_m) - lo) / (hi - lo) * h


@dataclass
class PianoRun:
    """What a :func:`run` did: per-tick records since the last reset, lamps of the last frame."""

    layout: PianoLayout
    frames: int
    t_s: np.ndarray
    x_m: np.ndarray          # sensed key position the kernel saw (m)
    v_mps: np.ndarray        # velocity the kernel saw (m/s)
    x_true_m: np.ndarray     # true handle position (m)
    force_N: np.ndarray      # rendered force (N)
    flags: np.ndarray        # model flags per tick
    hammer_y_m: np.ndarray   # hammer height after each tick (m)
    drive_m: np.ndarray      # drive point (jack or backcheck) after each tick (m)
    lamps: dict[str, bool] = field(default_factory=dict)
    screenshot: Path | None = None


def keystroke_target(t_s: float, depth_m: float) -> float | None:
    """Finger target ``t_s`` seconds into a scripted keystroke (None once it is over)."""
    down, hold, up = KEYSTROKE_DOWN_S, KEYSTROKE_HOLD_S, KEYSTROKE_UP_S
    if t_s < 0 or t_s > down + hold + up:
        return None
    if t_s < down:
        return depth_m * 0.5 * (1 - math.cos(math.pi * t_s / down))  # raised cosine (1 - cos(pi u)) / 2
    if t_s < down + hold:
        return depth_m
    return depth_m * 0.5 * (1 + math.cos(math.pi * (t_s - down - hold) / up))


class PianoWindow:
    """The window's model: the rig rendering the key, per-tick records, keystroke and lamp state."""

    def __init__(self, source: str = "example:piano-key") -> None:
        model = load_model(source)[0]
        parts = model.components()
        hits = [i for i, p in enumerate(parts) if isinstance(p, HybridKey)]
        if not hits:
            raise UsageError(f"{source}: the piano window needs a hybrid-key model, got {model.kind!r}")
        self.source, self.model = source, model
        self.key: HybridKey = parts[hits[0]]  # type: ignore[assignment]
        if self.key.keybed_m is not None:
            self.max_target_m = self.key.keybed_m + KEYSTROKE_OVERPRESS_M
        else:
            self.max_target_m = 1.2 * (self.key.let_off_m or 0.01)
        self.layout = PianoLayout()
        self.reset()

    def reset(self) -> None:
        """Start again from rest."""
        self.rig = FingerRig(self.model, PROBE_STIFFNESS_N_PER_M, PROBE_DAMPING_N_S_PER_M)
        self.records: list[np.ndarray] = []
        self.keystroke_t0: float | None = None
        self.target: float | None = None
        self.last_strike_t = -np.inf
        self.lamps: dict[str, bool] = {name: False for name, _, _ in LAMPS}

    def handle_key(self, key: str) -> bool:
        """Act on a key name (pygame's); return False to quit."""
        if key in ("q", "escape"):
            return False
        if key == "space":
            self.keystroke_t0 = self.rig.t_s
        elif key == "r":
            self.reset()
        return True

    def step_frame(self, frame: int, mouse_target_m: float | None) -> None:
        """Run the frame's ticks one at a time, recording the hammer after each."""
        rows = []
        flags_or = 0
        for _ in range(frame_ticks(frame)):
            target = mouse_target_m
            if target is None and self.keystroke_t0 is not None:
                target = keystroke_target(self.rig.t_s - self.keystroke_t0, self.max_target_m)
                if target is None:
                    self.keystroke_t0 = None
            self.target = None if target is None else float(np.clip(target, 0.0, self.max_target_m))
            self.rig.set_target(self.target)
            res = self.rig.step(1)
            flags = int(res.model_flags[-1])
            flags_or |= flags
            hammer_y, drive = res.model_diag[-1]          # hapticam.models.kernels.DIAGNOSTICS["hybrid-key"]
            rows.append((res.t_s[-1], res.x_m[-1], res.x_true_m[-1], res.force_N[-1], flags, hammer_y, drive,
                         res.v_mps[-1]))
            if flags & FLAG_STRING:
                self.last_strike_t = float(res.t_s[-1])
        block = np.array(rows)
        self.records.append(block)
        f = block[:, 4].astype(np.int64)
        in_contact = int(np.count_nonzero(f & FLAG_CONTACT))
        self.lamps = {"contact": in_contact * 2 > len(f), "flight": in_contact * 2 <= len(f),
                      "escaped": bool(f[-1] & FLAG_ESCAPED),
                      "string": self.rig.t_s - self.last_strike_t <= STRIKE_LAMP_S,
                      "keybed": bool(f[-1] & FLAG_KEYBED)}

    def recorded(self) -> np.ndarray:
        return np.concatenate(self.records) if self.records else np.zeros((0, 8))

    # -- drawing --------------------------------------------------------------------------------------
    def draw(self, pg: Any, surface: Any, font: Any) -> None:
        lay, key = self.layout, self.key
        rec = self.recorded()
        t, x, _, force, _, y, drive, _ = rec[-1]
        surface.fill(BG)
        pg.draw.rect(surface, PANEL, lay.panel)
        pg.draw.rect(surface, PANEL, lay.trace)
        draw_axes(pg, surface, font, lay.trace, *lay.trace_scales(), "time t (s, 0 = now)", "height (mm)")
        # keybed under the key front, rest line
        if key.keybed_m is not None:
            row = round(lay.key_row(key.keybed_m)) + 6
            pg.draw.line(surface, DIM, (lay.key_front_x - 10, row), (lay.key_front_x + 60, row), 3)
        pg.draw.polygon(surface, DIM, [(lay.key_pivot_x, lay.key_y0 + 7), (lay.key_pivot_x - 9, lay.key_y0 + 24),
                                       (lay.key_pivot_x + 9, lay.key_y0 + 24)])
        # key lever: the front goes down x, the back rises in proportion about the balance point
        front = lay.key_row(x)
        arm = (lay.key_back_x - lay.key_pivot_x) / (lay.key_pivot_x - lay.key_front_x)
        back = lay.key_y0 - (front - lay.key_y0) * arm
        pg.draw.line(surface, KEY, (lay.key_front_x, round(front)), (lay.key_back_x, round(back)), 10)
        if self.target is not None:
            row = round(lay.key_row(self.target)) - 5
            pg.draw.polygon(surface, FINGER, [(lay.key_front_x, row), (lay.key_front_x - 8, row - 14),
                                              (lay.key_front_x + 8, row - 14)])
        # string, jack/backcheck (drive point) and hammer
        cx, hw = lay.hammer_cx, lay.hammer_w
        if key.string_height_m is not None:
            row = round(lay.hammer_row(key.string_height_m)) - lay.hammer_h
            pg.draw.line(surface, STRING, (cx - 60, row - 1), (cx + 60, row - 1), 3)
            text(surface, font, "string", (cx + 64, row - 8), DIM)
        jack_top = round(lay.hammer_row(drive))
        pg.draw.line(surface, GRID, (lay.key_back_x, round(back)), (cx, jack_top + 6), 3)
        pg.draw.rect(surface, JACK, (cx - 16, jack_top, 32, 6))
        bottom = round(lay.hammer_row(y))
        pg.draw.rect(surface, HAMMER, (cx - hw // 2, bottom - lay.hammer_h, hw, lay.hammer_h))
        # trace of hammer height and drive point over the last TRACE_S seconds
        keep = rec[:, 0] >= t - TRACE_S
        surface.set_clip(lay.trace)
        if key.string_height_m is not None:
            _, row = lay.trace_xy(np.zeros(1), np.array([key.string_height_m]))
            pg.draw.line(surface, STRING, (lay.trace[0], round(float(row[0]))),
                         (lay.trace[0] + lay.trace[2], round(float(row[0]))), 1)
        if np.count_nonzero(keep) >= 2:
            for col, colour, width in ((6, JACK, 1), (5, HAMMER, 2)):
                px, py = lay.trace_xy(t - rec[keep, 0], rec[keep, col])
                pg.draw.lines(surface, colour, False, np.column_stack([px, py]).tolist(), width)
        surface.set_clip(None)
        text(surface, font, f"hammer height (red), drive point (green), string (white): last {TRACE_S:g} s",
             (lay.trace[0], lay.trace[1] - 16), DIM)
        # mode lamps from the model flags
        for (name, _, colour), rect in zip(LAMPS, lay.lamp_rects):
            on = self.lamps.get(name, False)
            pg.draw.rect(surface, colour if on else LAMP_OFF, rect)
            text(surface, font, name, (rect[0] + 10, rect[1] + 9), BG if on else DIM)
        # readouts
        text(surface, font, f"{self.source}    [space] keystroke  [mouse] press the key  [r] reset  [q] quit",
             (20, 14), TEXT)
        strikes = rec[:, 4].astype(np.int64) & FLAG_STRING
        text(surface, font, f"key {x * 1e3:6.2f} mm   force {force:6.2f} N   hammer {y * 1e3:6.1f} mm   "
             f"strikes {int(np.count_nonzero(strikes))}   t {t:6.2f} s", (470, 508), TEXT)

    def result(self, frames: int, screenshot: Path | None) -> PianoRun:
        rec = self.recorded()
        return PianoRun(layout=self.layout, frames=frames, t_s=rec[:, 0], x_m=rec[:, 1], v_mps=rec[:, 7],
                        x_true_m=rec[:, 2],
                        force_N=rec[:, 3], flags=rec[:, 4].astype(np.int64), hammer_y_m=rec[:, 5],
                        drive_m=rec[:, 6], lamps=dict(self.lamps), screenshot=screenshot)


def run(frames: int | None = None, script: Script | None = None, screenshot: str | os.PathLike[str] | None = None,
        model: str = "example:piano-key") -> PianoRun:
    """Run the piano window.

    Parameters
    ----------
    frames : int, optional
        Stop after this many frames (1/60 s of simulated time each). Default: until quit, or with a
        script, one second after its last event.
    script : sequence of ScriptEvent or (t_s, action, value), optional
        Scripted inputs replacing the mouse and keyboard (``("key", "space")`` is a keystroke); frames
        then run back to back without waiting for wall time.
    screenshot : path, optional
        Save the last frame as a PNG there.
    model : str
        A hybrid-key model file or ``example:NAME``.
    """
    require_pygame()                 # a clear error before any work when pygame is missing
    player = ScriptPlayer(script) if script is not None else None
    if frames is None and player is not None:
        frames = int(np.ceil((player.end_s + 1.0) * FPS))
    window = PianoWindow(model)
    frame, path = run_loop(window, "hapticam: piano key", SIZE, frames, player, screenshot)
    return window.result(frame, path)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hapticam.demos.piano_window [MODEL]``."""
    return window_main(argv, "piano_window", "A piano key's hammer flying to the string, rendered by the servo "
                       "loop.", "a hybrid-key model file", run, one_model="example:piano-key")


if __name__ == "__main__":
    sys.exit(main())

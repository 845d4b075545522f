"""Interactive key window: the mouse is a finger on a virtual key rendered by the real servo loop.

Hold the left mouse button over the key panel: the mouse's height sets the finger's target depth and
the finger, a spring-damper (users.py's fingertip, 500 N/m and 2 N s/m), pulls the simulated device's
handle toward it; the model is rendered by :class:`~hapticam.render.loop.ServoLoop` on the simulated
clock, advanced by each frame's share of 1 kHz ticks. With the button up the finger rests on the key
top (target 0). The window shows the key cap at the handle position, the rendered force as a bar, and
the live force-displacement trace over the model's own press and release curves (a quasi-static sweep
of its kernel).

A hybrid (piano) key is pressed by a firm finger (users.py's scripted-probe spring, 20 kN/m and
40 N s/m): the hammer's landings, reflected through the lever, would kick a softly held 50 g handle into
a sustained juggle at 1 kHz.

Keys: ``1``/``2``/``3`` the bundled linear, tactile and piano keys; ``o`` the next model file given on
the command line; ``r`` reset; ``q``/Esc quit::

    python -m hapticam.demos.key_window [MODEL ...]

:func:`run` also plays a script of inputs for a fixed number of frames without waiting for wall time
(headless with ``SDL_VIDEODRIVER=dummy``) and saves a screenshot.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hapticam.demos._window import (BAR, DIM, GRID, PANEL, TEXT, TRACE, FingerRig, RigWindow, Script,
                                    model_bottom_m, nice_ceil, require_pygame, run_window, static_curves, text,
                                    window_main)
from hapticam.demos._window import BG, FPS  # noqa: F401  (the background colour and frame rate, public here too)
from hapticam.world.users import (FINGER_DAMPING_N_S_PER_M, FINGER_STIFFNESS_N_PER_M, PROBE_DAMPING_N_S_PER_M,
                                    PROBE_STIFFNESS_N_PER_M)
from hapticam.models.base import Model
from hapticam.models.files import load_model
from hapticam.models.hybrid_key.model import HybridKey

EXAMPLES = ("example:linear-key", "example:tactile-key", "example:piano-key")
SIZE = (960, 600)
TRACE_TICKS = 3000
FINGER_STEPS = 8              # steps of the finger's target within one frame (see KeyWindow.step_frame)
#: Finger overpress past the bottom: at most this fraction of the travel, and at most this force.
OVERPRESS_FRACTION = 0.15
OVERPRESS_FORCE_N = 2.0

# Colours the tests look for (keep them distinct from each other, from text and panels, and from the
# shared BAR, TRACE and MARKER).
KEYCAP = (90, 170, 250)
STEM = (70, 80, 100)
FINGER = (240, 170, 60)
PRESS = (90, 200, 120)
RELEASE = (200, 110, 210)


@dataclass(frozen=True)
class KeyLayout:
    """Pixel geometry of the window for one model (the tests read it to place their expectations).

    Key panel: the key cap's top edge is drawn at ``y_rest + x * px_per_m`` (x the handle position, m).
    Force bar: from column ``bar_x0`` by ``f * bar_px_per_N`` (clipped to the panel), rows ``bar_y``
    to ``bar_y + bar_h``. F-x plot: ``plot`` rectangle (left, top, width, height) over ``x_range_m`` by
    ``f_range_N``.
    """

    key_cx: int = 150
    cap_w: int = 120
    cap_h: int = 56
    panel: tuple[int, int, int, int] = (20, 50, 260, 430)
    y_rest: float = 0.0
    px_per_m: float = 1.0
    bar_x0: int = 48
    bar_y: int = 520
    bar_h: int = 22
    bar_max_px: int = 220
    bar_px_per_N: float = 1.0
    plot: tuple[int, int, int, int] = (320, 50, 620, 490)
    x_range_m: tuple[float, float] = (0.0, 1.0)
    f_range_N: tuple[float, float] = (0.0, 1.0)

    @classmethod
    def for_model(cls, bottom_m: float, f_full_N: float) -> "KeyLayout":
        base = cls()
        lo, hi = -0.15 * bottom_m, 1.25 * bottom_m
        travel_px = base.panel[3] - base.cap_h - 40
        px_per_m = travel_px / (hi - lo)
        return cls(y_rest=base.panel[1] + 20 - lo * px_per_m, px_per_m=px_per_m,
                   bar_px_per_N=base.bar_max_px / f_full_N, x_range_m=(lo, hi),
                   f_range_N=(-0.1 * f_full_N, 1.12 * f_full_N))   # headroom: the top label clears the status line

    def cap_top(self, x_m: float) -> float:
        """Row of the key cap's top edge for handle position ``x_m``."""
        return self.y_rest + x_m * self.px_per_m

    def depth_at(self, row: float) -> float:
        """Finger target depth (m) for a mouse at ``row``."""
        return (row - self.y_rest) / self.px_per_m

    def plot_xy(self, x_m: np.ndarray | float, f_N: np.ndarray | float) -> tuple[Any, Any]:
        """Pixel coordinates of F-x points (x to the right, force up)."""
        left, top, w, h = self.plot
        (x0, x1), (f0, f1) = self.x_range_m, self.f_range_N
        px = left + (np.asarray(x_m) - x0) / (x1 - x0) * w
        py = top + h - (np.asarray(f_N) - f0) / (f1 - f0) * h
        return px, py


@dataclass
class KeyRun:
    """What a :func:`run` did: per-tick and per-frame records, the layout in use, the screenshot."""

    model_name: str
    layout: KeyLayout
    frames: int
    t_s: np.ndarray = field(default_factory=lambda: np.zeros(0))          # per tick, since the last (re)load
    x_m: np.ndarray = field(default_factory=lambda: np.zeros(0))          # per tick, true handle position
    force_N: np.ndarray = field(default_factory=lambda: np.zeros(0))      # per tick, rendered force
    target_m: np.ndarray = field(default_factory=lambda: np.zeros(0))     # per frame, finger target (nan: none)
    screenshot: Path | None = None


class KeyWindow(RigWindow):
    """The window's model: models to cycle through, the rig rendering the current one, the live trace."""

    title = "hapticam: key window"
    size = SIZE
    trace_ticks = TRACE_TICKS
    target_steps = FINGER_STEPS
    message_colour = FINGER

    def __init__(self, sources: Sequence[str] = EXAMPLES, extra: Sequence[str] = ()) -> None:
        self.sources = list(sources) + list(extra)
        self.n_examples = len(sources)
        self.models = [load_model(s)[0] for s in self.sources]
        self.index = 0
        self.message = ""
        self.load(0)

    # -- models ---------------------------------------------------------------------------------------
    def load(self, index: int) -> None:
        """Render model ``index`` from rest (a fresh device and loop)."""
        self.index = index
        model: Model = self.models[index]
        if any(isinstance(p, HybridKey) for p in model.components()):
            k, b = PROBE_STIFFNESS_N_PER_M, PROBE_DAMPING_N_S_PER_M
        else:
            k, b = FINGER_STIFFNESS_N_PER_M, FINGER_DAMPING_N_S_PER_M
        self.finger_N_per_m = k
        self.rig = FingerRig(model, k, b)
        self.bottom_m = model_bottom_m(model)
        self.curve_x, self.curve_press, self.curve_release = static_curves(model, -0.15 * self.bottom_m,
                                                                           1.25 * self.bottom_m)
        inside = (self.curve_x >= 0) & (self.curve_x <= 0.98 * self.bottom_m)
        # full scale from the typical force over the travel (a percentile: impact spikes do not set it)
        f_typ = float(np.percentile(np.abs(self.curve_press[inside]), 90)) if np.any(inside) else 1.0
        self.layout = KeyLayout.for_model(self.bottom_m, nice_ceil(1.6 * f_typ))
        self.max_target_m = self.bottom_m + min(OVERPRESS_FRACTION * self.bottom_m, OVERPRESS_FORCE_N / k)
        self.start_trace()
        self.target: float | None = None

    @property
    def name(self) -> str:
        return self.sources[self.index]

    def select(self, key: str) -> None:
        """Keys ``1``/``2``/``3``: the examples; ``o``: the next model file."""
        if key in ("1", "2", "3") and int(key) <= self.n_examples:
            self.load(int(key) - 1)
        elif key == "o":
            if len(self.sources) > self.n_examples:
                nxt = self.index + 1 if self.index >= self.n_examples else self.n_examples
                self.load(nxt if nxt < len(self.sources) else self.n_examples)
                self.message = ""
            else:
                self.message = "no model files given: python -m hapticam.demos.key_window MODEL ..."

    # -- simulation -----------------------------------------------------------------------------------
    def step_frame(self, frame: int, target_m: float | None) -> None:
        """Set the finger target (clamped to the key's travel) and run the frame's servo ticks."""
        self.target = None if target_m is None else float(np.clip(target_m, 0.0, self.max_target_m))
        self.run_ticks(frame, self.rig.target_m, self.rig.rest_m if self.target is None else self.target)
        self.rig.set_target(self.target)

    def plot_limits_N(self) -> tuple[float, float]:
        """Forces the plotted curves are clipped to (N): a span of the plot's range beyond either end."""
        f0, f1 = self.layout.f_range_N
        return f0 - (f1 - f0), f1 + (f1 - f0)

    # -- drawing --------------------------------------------------------------------------------------
    def _background(self, pg: Any, font: Any) -> Any:
        lay = self.layout
        bg = self.panels(pg, lay.panel)
        # key housing: rest line and bottom-out floor
        left = lay.key_cx - lay.cap_w // 2 - 14
        right = lay.key_cx + lay.cap_w // 2 + 14
        pg.draw.line(bg, GRID, (left, round(lay.cap_top(0.0))), (right, round(lay.cap_top(0.0))))
        floor = round(lay.cap_top(self.bottom_m)) + lay.cap_h
        pg.draw.line(bg, DIM, (left, floor), (right, floor), 3)
        for mm in range(0, int(1.25 * self.bottom_m * 1e3) + 1):
            row = round(lay.cap_top(mm * 1e-3))
            pg.draw.line(bg, GRID, (right + 4, row), (right + 10, row))
            text(bg, font, f"{mm}", (right + 13, row - 6), DIM)
        # F-x plot axes and grid
        (_, x1), (_, f1) = lay.x_range_m, lay.f_range_N
        px0, _ = lay.plot_xy(0.0, 0.0)
        _, py0 = lay.plot_xy(0.0, 0.0)
        pl, pt, pw, ph = lay.plot
        pg.draw.line(bg, GRID, (pl, round(float(py0))), (pl + pw, round(float(py0))))
        pg.draw.line(bg, GRID, (round(float(px0)), pt), (round(float(px0)), pt + ph))
        # the model's own curves, then the tick labels over them
        bg.set_clip(lay.plot)
        for f, colour in ((self.curve_release, RELEASE), (self.curve_press, PRESS)):
            self.draw_curve(pg, bg, self.curve_x, f, colour, self.plot_limits_N())
        bg.set_clip(None)
        mm_step = max(1, int(nice_ceil(x1 * 1e3 / 8)))                  # at most about eight labels
        for mm in range(0, int(x1 * 1e3) + 1, mm_step):
            px, _ = lay.plot_xy(mm * 1e-3, 0.0)
            label = font.render(f"{mm} mm", True, DIM)
            if round(float(px)) - 10 + label.get_width() <= pl + pw:     # no label past the plot's edge
                bg.blit(label, (round(float(px)) - 10, pt + ph + 4))
        step = nice_ceil(lay.f_range_N[1] / 1.12 / 5)
        for k in range(1, int(f1 / step + 1e-9) + 1):
            _, py = lay.plot_xy(0.0, k * step)
            pg.draw.line(bg, GRID, (pl, round(float(py))), (pl + 6, round(float(py))))
            label = font.render(f"{k * step:g} N", True, DIM)
            bg.fill(PANEL, (pl + 7, round(float(py)) - 7, label.get_width() + 2, label.get_height()))
            bg.blit(label, (pl + 8, round(float(py)) - 6))
        text(bg, font, "model press", (pl + pw - 270, pt - 16), PRESS)
        text(bg, font, "model release", (pl + pw - 180, pt - 16), RELEASE)
        text(bg, font, "rendered", (pl + pw - 70, pt - 16), TRACE)
        text(bg, font, "force bar", (lay.panel[0], lay.bar_y - 16), DIM)
        text(bg, font, f"{1.0 / lay.bar_px_per_N * lay.bar_max_px:g} N", (lay.bar_x0 + lay.bar_max_px - 20,
                                                                      lay.bar_y + lay.bar_h + 2), DIM)
        text(bg, font, "0", (lay.bar_x0 - 3, lay.bar_y + lay.bar_h + 2), DIM)
        return bg

    def draw_frame(self, pg: Any, surface: Any, font: Any) -> None:
        """Draw the key cap, the finger, the force bar, the trace and the readouts over the background."""
        lay = self.layout
        x, f = self.last()
        # stem and key cap at the handle position
        top = round(lay.cap_top(x))
        floor = round(lay.cap_top(self.bottom_m)) + lay.cap_h
        pg.draw.rect(surface, STEM, (lay.key_cx - 12, top + lay.cap_h, 24, max(floor - top - lay.cap_h, 0)))
        pg.draw.rect(surface, KEYCAP, (lay.key_cx - lay.cap_w // 2, top, lay.cap_w, lay.cap_h))
        if self.target is not None:
            row = round(lay.cap_top(self.target))
            tip = lay.key_cx - lay.cap_w // 2 - 4
            pg.draw.polygon(surface, FINGER, [(tip, row), (tip - 14, row - 8), (tip - 14, row + 8)])
        # force bar (clipped to the panel; negative forces to the left of zero)
        length = int(round(f * lay.bar_px_per_N))
        length = max(min(length, lay.bar_max_px), -(lay.bar_x0 - lay.panel[0]))
        if length > 0:
            pg.draw.rect(surface, BAR, (lay.bar_x0, lay.bar_y, length, lay.bar_h))
        elif length < 0:
            pg.draw.rect(surface, BAR, (lay.bar_x0 + length, lay.bar_y, -length, lay.bar_h))
        pg.draw.line(surface, TEXT, (lay.bar_x0 - 1, lay.bar_y - 3), (lay.bar_x0 - 1, lay.bar_y + lay.bar_h + 2))
        # live F-x trace (oldest to newest) and the current point
        self.draw_trace(pg, surface, self.plot_limits_N(), lay.f_range_N)
        # readouts
        text(surface, font, f"{self.name}    [1/2/3] examples  [o] model files  [r] reset  [q] quit",
             (20, 14), TEXT)
        target = "lifted" if self.target is None else f"{self.target * 1e3:6.2f} mm"
        text(surface, font, f"x {x * 1e3:6.2f} mm   F {f:6.3f} N   finger {target}   t {self.rig.t_s:6.2f} s",
             (320, 34), TEXT)

    def record(self, frames: int, targets: list[float], screenshot: Path | None) -> KeyRun:
        t_s, x_m, force_N = self.tick_columns()
        return KeyRun(model_name=self.name, layout=self.layout, frames=frames, t_s=t_s, x_m=x_m, force_N=force_N,
                      target_m=np.asarray(targets, dtype=float), screenshot=screenshot)


def run(frames: int | None = None, script: Script | None = None, screenshot: str | os.PathLike[str] | None = None,
        models: Sequence[str] = (), examples: Sequence[str] = EXAMPLES) -> KeyRun:
    """Run the key window.

    Parameters
    ----------
    frames : int, optional
        Stop after this many frames (1/60 s of simulated time each). Default: until quit, or with a
        script, half a second after its last event.
    script : sequence of ScriptEvent or (t_s, action, value), optional
        Scripted inputs replacing the mouse and keyboard (see :class:`ScriptEvent`); frames then run
        back to back without waiting for wall time.
    screenshot : path, optional
        Save the last frame as a PNG there.
    models : sequence of str
        Extra model files (``o`` cycles through them).
    examples : sequence of str
        The models keys 1, 2, 3... select (default: the bundled linear, tactile and piano keys).

    Returns
    -------
    KeyRun
        The ticks rendered since the last model (re)load, the finger targets per frame, the layout.
    """
    require_pygame()                 # a clear error before any work when pygame is missing
    targets: list[float] = []
    window, frame, path = run_window(lambda: KeyWindow(examples, extra=models), frames, script, screenshot,
                                     lambda w: targets.append(np.nan if w.target is None else w.target))
    return window.record(frame, targets, path)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hapticam.demos.key_window [MODEL ...]``."""
    return window_main(argv, "key_window", "A virtual key under the mouse, rendered by the servo loop.",
                       "extra model files ('o' cycles through them)", run)


if __name__ == "__main__":
    sys.exit(main())

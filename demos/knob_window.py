"""Interactive knob window: the mouse turns a virtual knob rendered by the real servo loop.

A rotary model (``axis: rotary`` in its model file: rad, N m) is played on the simulated rotary device
(``sim:rotary``, :data:`~hapticam.world.sim.ROTARY_PARAMS`) by :class:`~hapticam.demos._window.FingerRig`:
the hand is the simulator's position user in rad, the grip of the scripted turning hand
(:data:`~hapticam.world.sim.HAND_GRIP_NM_PER_RAD` N m/rad, :data:`~hapticam.world.sim.HAND_GRIP_NMS_PER_RAD`
N m s/rad), and the loop runs each frame's share of 1 kHz ticks on the simulated clock. Hold the left mouse
button on the dial panel: the mouse's bearing from the dial's centre (clockwise from the top, rad) is the
hand's target angle, clamped to the model's angle range (its angle table's, else +-1 rad). With the button
up the hand keeps hold where it let go.

The window shows the dial with its pointer at the knob's angle, the torque felt as a bar (N m, signed),
and the live torque-angle trace over the model's own curves turning either way (a sweep of its kernel at
``CURVE_SPEED_RADPS``).
A linear model (m, N) is refused with one line.

Keys: ``1`` the built-in detent knob; ``o`` the next model (the files given on the command line, then the
built-in knob again); ``r`` reset; ``q``/Esc quit::

    python -m hapticam.demos.knob_window [MODEL ...]

:func:`run` also plays a script of inputs (``press``/``ramp`` values are angles, rad) for a fixed number of
frames without waiting for wall time (headless with ``SDL_VIDEODRIVER=dummy``) and saves a screenshot.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from hapticam.demos._window import (BAR, DIM, GRID, TEXT, TRACE, FingerRig, RigWindow, Script, draw_axes, nice_ceil,
                                    run_window, static_curves, text, window_main)
from hapticam.demos._window import BG, FPS  # noqa: F401  (the background colour and frame rate, public here too)
from hapticam.world.sim import HAND_GRIP_NM_PER_RAD, HAND_GRIP_NMS_PER_RAD, ROTARY_PARAMS
from hapticam.models.base import Model
from hapticam.models.composite import Composite
from hapticam.models.files import load_model_to_render
from hapticam.models.friction import Friction
from hapticam.models.impedance import SegmentedImpedance, position_table

SIZE = (960, 600)
TRACE_TICKS = 4000
HAND_STEPS = 8                # steps of the hand's target within one frame (as the key window's finger)
DEFAULT_RANGE_RAD = (-1.0, 1.0)   # angle range of a model without an angle table (rad)
CURVE_SPEED_RADPS = 0.5       # speed of the sweep that draws the model's own torque-angle curves (rad/s)
BUILT_IN = "detent knob (built in)"

# The built-in knob: detents A sin(N theta) plus Coulomb-viscous friction.
DETENT_NM = 0.004             # A (N m)
DETENTS_PER_REV = 12          # N
COULOMB_NM = 0.01             # Fc (N m)
VISCOUS_NMS = 5e-4            # b (N m s/rad)
SMOOTHING_RADPS = 0.05        # v_eps of the Coulomb term's tanh (rad/s)

# Colours the tests look for (distinct from each other, from text and panels, and from the shared BAR,
# TRACE and MARKER).
DIAL = (70, 90, 130)
POINTER = (255, 200, 60)
HAND = (240, 140, 60)
TURN_UP = (90, 200, 120)
TURN_DOWN = (200, 110, 210)


def detent_knob() -> Model:
    """The built-in knob: ``tau = A sin(N theta) + Fc tanh(omega / v_eps) + b omega`` (rad, rad/s, N m), the
    detents as an angle table over +-1 rad."""
    theta = np.linspace(-1.0, 1.0, 2001)
    detents = position_table(theta, DETENT_NM * np.sin(DETENTS_PER_REV * theta))
    friction = Friction("coulomb-viscous", Fc_N=COULOMB_NM, b_v_Nspm=VISCOUS_NMS, v_eps_mps=SMOOTHING_RADPS)
    return Composite([detents, friction])


def angle_range_rad(model: Model) -> tuple[float, float]:
    """The angles the hand may turn the knob through (rad): the span of the model's angle tables, else
    ``DEFAULT_RANGE_RAD``."""
    spans = [part.x_range() for part in model.components() if isinstance(part, SegmentedImpedance)]
    if not spans:
        return DEFAULT_RANGE_RAD
    return max(lo for lo, _ in spans), min(hi for _, hi in spans)


@dataclass(frozen=True)
class KnobLayout:
    """Pixel geometry of the window for one model (the tests read it to place their expectations).

    Dial: centre ``dial_c``, radius ``dial_r`` (px); an angle ``theta`` (rad) points clockwise from the top.
    Torque bar: from column ``bar_x0`` by ``tau * bar_px_per_Nm`` (negative to the left), rows ``bar_y`` to
    ``bar_y + bar_h``. Torque-angle plot: ``plot`` rectangle over ``theta_range_rad`` by ``tau_range_Nm``.
    """

    dial_c: tuple[int, int] = (170, 250)
    dial_r: int = 110
    panel: tuple[int, int, int, int] = (20, 50, 300, 430)
    bar_x0: int = 170
    bar_y: int = 520
    bar_h: int = 22
    bar_max_px: int = 140
    bar_px_per_Nm: float = 1.0
    plot: tuple[int, int, int, int] = (420, 60, 510, 450)
    theta_range_rad: tuple[float, float] = DEFAULT_RANGE_RAD
    tau_range_Nm: tuple[float, float] = (-1.0, 1.0)

    @classmethod
    def for_model(cls, theta_range_rad: tuple[float, float], tau_full_Nm: float) -> "KnobLayout":
        base = cls()
        return cls(bar_px_per_Nm=base.bar_max_px / tau_full_Nm, theta_range_rad=theta_range_rad,
                   tau_range_Nm=(-tau_full_Nm, tau_full_Nm))

    def pointer_xy(self, theta_rad: float, radius_px: float) -> tuple[float, float]:
        """Pixel at ``radius_px`` from the dial's centre along angle ``theta_rad`` (clockwise from the top)."""
        cx, cy = self.dial_c
        return cx + radius_px * math.sin(theta_rad), cy - radius_px * math.cos(theta_rad)

    def target_at(self, pos: tuple[float, float]) -> float:
        """The hand's target angle (rad) for a mouse at ``pos`` (column, row): its bearing from the centre."""
        cx, cy = self.dial_c
        return math.atan2(pos[0] - cx, cy - pos[1])

    def plot_xy(self, theta_rad: np.ndarray | float, tau_Nm: np.ndarray | float) -> tuple[Any, Any]:
        """Pixel coordinates of torque-angle points (angle to the right, torque up)."""
        left, top, w, h = self.plot
        (x0, x1), (f0, f1) = self.theta_range_rad, self.tau_range_Nm
        return (left + (np.asarray(theta_rad) - x0) / (x1 - x0) * w,
                top + h - (np.asarray(tau_Nm) - f0) / (f1 - f0) * h)


@dataclass
class KnobRun:
    """What a :func:`run` did: per-tick records since the last model (re)load, the layout, the screenshot.

    ``theta_rad``/``omega_radps`` are what the loop measured (encoder angle, its speed estimate),
    ``theta_true_rad`` the simulator's true angle, ``torque_cmd_Nm`` the torque the model asked for and
    ``torque_Nm`` the torque written to the device (after the safety layer's ramp-in)."""

    model_name: str
    layout: KnobLayout
    frames: int
    t_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    theta_rad: np.ndarray = field(default_factory=lambda: np.zeros(0))
    omega_radps: np.ndarray = field(default_factory=lambda: np.zeros(0))
    theta_true_rad: np.ndarray = field(default_factory=lambda: np.zeros(0))
    torque_cmd_Nm: np.ndarray = field(default_factory=lambda: np.zeros(0))
    torque_Nm: np.ndarray = field(default_factory=lambda: np.zeros(0))
    screenshot: Path | None = None


class KnobWindow(RigWindow):
    """The window's model: the knobs to cycle through, the rig rendering the current one, the live trace."""

    title = "hapticam: knob window"
    size = SIZE
    trace_ticks = TRACE_TICKS
    target_steps = HAND_STEPS
    tick_fields = ("t_s", "x_m", "v_mps", "x_true_m", "force_cmd_N", "force_N")
    message_colour = HAND

    def __init__(self, sources: Sequence[str] = ()) -> None:
        self.names = [BUILT_IN] + list(sources)
        self.models = [detent_knob()] + [load_model_to_render(s, axis="rotary") for s in sources]
        self.message = ""
        self.load(1 if sources else 0)

    def load(self, index: int) -> None:
        """Render knob ``index`` from rest (a fresh device and loop)."""
        self.index = index
        model = self.models[index]
        self.rig = FingerRig(model, HAND_GRIP_NM_PER_RAD, HAND_GRIP_NMS_PER_RAD, device=ROTARY_PARAMS)
        self.range_rad = angle_range_rad(model)
        self.curve_theta, self.curve_up, self.curve_down = static_curves(model, *self.range_rad,
                                                                                speed_mps=CURVE_SPEED_RADPS)
        tau_typ = float(np.percentile(np.abs(np.concatenate([self.curve_up, self.curve_down])), 95))
        self.layout = KnobLayout.for_model(self.range_rad, nice_ceil(max(1.5 * tau_typ, 1e-3)))
        self.start_trace()
        self.held = False

    @property
    def name(self) -> str:
        return self.names[self.index]

    def select(self, key: str) -> None:
        """Key ``1``: the built-in knob; ``o``: the next model."""
        if key == "1":
            self.load(0)
        elif key == "o":
            self.load((self.index + 1) % len(self.models))
            self.message = "" if len(self.models) > 1 else \
                "no model files given: python -m hapticam.demos.knob_window MODEL ..."

    def step_frame(self, frame: int, target_rad: float | None) -> None:
        """Move the hand's target (clamped to the knob's range; ``None``: kept where it is) in
        ``HAND_STEPS`` steps over the frame's servo ticks, and run them."""
        self.held = target_rad is not None
        start = self.rig.target_m
        self.run_ticks(frame, start, start if target_rad is None else float(np.clip(target_rad, *self.range_rad)))

    def plot_limits_Nm(self) -> tuple[float, float]:
        """Torques the plotted curves are clipped to (N m): twice the plot's range."""
        return -2 * self.layout.tau_range_Nm[1], 2 * self.layout.tau_range_Nm[1]

    def _background(self, pg: Any, font: Any) -> Any:
        lay = self.layout
        bg = self.panels(pg, lay.panel)
        pg.draw.circle(bg, DIAL, lay.dial_c, lay.dial_r)
        lo, hi = self.range_rad
        for k in range(math.ceil(lo / 0.25 - 1e-9), math.floor(hi / 0.25 + 1e-9) + 1):   # a mark every 0.25 rad
            inner = lay.dial_r + (4 if k % 2 else 2)
            a, b = lay.pointer_xy(k * 0.25, inner), lay.pointer_xy(k * 0.25, lay.dial_r + 12)
            pg.draw.line(bg, GRID if k % 2 else TEXT, a, b, 2)
            if k % 2 == 0:
                px, py = lay.pointer_xy(k * 0.25, lay.dial_r + 24)
                label = font.render(f"{k * 0.25:g}", True, DIM)
                bg.blit(label, (px - label.get_width() / 2, py - label.get_height() / 2))
        draw_axes(pg, bg, font, lay.plot, lay.theta_range_rad, lay.tau_range_Nm, "angle (rad)", "torque (N m)")
        bg.set_clip(lay.plot)
        for tau, colour in ((self.curve_down, TURN_DOWN), (self.curve_up, TURN_UP)):
            self.draw_curve(pg, bg, self.curve_theta, tau, colour, self.plot_limits_Nm())
        bg.set_clip(None)
        pl, pt, pw, _ = lay.plot
        text(bg, font, f"model turning +{CURVE_SPEED_RADPS:g} rad/s", (pl + pw - 330, pt - 16), TURN_UP)
        text(bg, font, f"-{CURVE_SPEED_RADPS:g} rad/s", (pl + pw - 160, pt - 16), TURN_DOWN)
        text(bg, font, "rendered", (pl + pw - 70, pt - 16), TRACE)
        text(bg, font, "torque felt", (lay.panel[0], lay.bar_y - 16), DIM)
        full = lay.bar_max_px / lay.bar_px_per_Nm
        text(bg, font, f"{full:g} N m", (lay.bar_x0 + lay.bar_max_px - 30, lay.bar_y + lay.bar_h + 2), DIM)
        text(bg, font, f"-{full:g}", (lay.bar_x0 - lay.bar_max_px, lay.bar_y + lay.bar_h + 2), DIM)
        return bg

    def draw_frame(self, pg: Any, surface: Any, font: Any) -> None:
        """Draw the pointer, the hand, the torque bar, the trace and the readouts over the background."""
        lay = self.layout
        theta, tau = self.last()
        pg.draw.line(surface, POINTER, lay.dial_c, lay.pointer_xy(theta, lay.dial_r - 6), 5)
        if self.held:
            tx, ty = lay.pointer_xy(self.rig.target_m, lay.dial_r + 4)
            pg.draw.circle(surface, HAND, (round(tx), round(ty)), 5)
        length = int(round(float(np.clip(tau * lay.bar_px_per_Nm, -lay.bar_max_px, lay.bar_max_px))))
        if length:
            pg.draw.rect(surface, BAR, (min(lay.bar_x0, lay.bar_x0 + length), lay.bar_y, abs(length), lay.bar_h))
        pg.draw.line(surface, TEXT, (lay.bar_x0, lay.bar_y - 3), (lay.bar_x0, lay.bar_y + lay.bar_h + 2))
        self.draw_trace(pg, surface, self.plot_limits_Nm(), lay.tau_range_Nm)
        text(surface, font, f"{self.name}    [1] built-in knob  [o] next model  [r] reset  [q] quit", (20, 14))
        text(surface, font, f"angle {theta:+7.3f} rad   torque {tau * 1e3:+7.2f} mN m   "
                            f"{'held' if self.held else 'let go'}   t {self.rig.t_s:6.2f} s", (20, 34))

    def record(self, frames: int, screenshot: Path | None) -> KnobRun:
        return KnobRun(self.name, self.layout, frames, *self.tick_columns(), screenshot=screenshot)


def run(frames: int | None = None, script: Script | None = None, screenshot: str | os.PathLike[str] | None = None,
        models: Sequence[str] = ()) -> KnobRun:
    """Run the knob window.

    Parameters
    ----------
    frames : int, optional
        Stop after this many frames (1/60 s of simulated time each). Default: until quit, or with a
        script, half a second after its last event.
    script : sequence of ScriptEvent or (t_s, action, value), optional
        Scripted inputs replacing the mouse and keyboard; ``press`` and ``ramp`` take angles (rad).
    screenshot : path, optional
        Save the last frame as a PNG there.
    models : sequence of str
        Rotary model files (the first is shown; ``o`` cycles); a linear one is refused
        (:class:`~hapticam.errors.ModelFileError`) before the window opens.
    """
    window, frame, path = run_window(lambda: KnobWindow(models), frames, script, screenshot)
    return window.record(frame, path)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hapticam.demos.knob_window [MODEL ...]``."""
    return window_main(argv, "knob_window", "A virtual knob under the mouse, rendered by the servo loop.",
                       "rotary model files ('o' cycles through them)", run)


if __name__ == "__main__":
    sys.exit(main())

"""Shared parts of the interactive windows: a finger on the simulated device, scripted input, layout.

The windows never integrate physics of their own: a :class:`FingerRig` is a
:class:`~hapticam.world.sim.SimulatedDevice` with a finger at its handle and a
:class:`~hapticam.render.loop.ServoLoop` on the simulated clock. Each frame advances the loop by the
frame's share of servo ticks (1000 Hz x 1/60 s: 16 or 17 ticks), so what the window shows is the real
render loop (compiled step, safety layer, device physics) at its own rate.

The finger is the simulator's position user, ``f_user = k_f (x_target - x) - b_f v`` (see
:mod:`hapticam.world.users`), whose reference table is two rows long: past the table's end the
simulator holds the last value with zero rate, so writing the target into the table in place moves the
finger's target from one tick to the next without rebuilding the user or resetting the device.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from hapticam.world.sim import SimParams, SimulatedDevice
from hapticam.world.users import GRID_DT_S, MODE_POSITION, User
from hapticam.errors import DependencyMissingError, HapticError, UsageError
from hapticam.models.base import Model
from hapticam.models.composite import EndStops
from hapticam.models.contact import Contact
from hapticam.models.hybrid_key.model import HybridKey
from hapticam.models.impedance import SegmentedImpedance
from hapticam.models.kernels import model_force
from hapticam.render.loop import LoopConfig, ServoLoop
from hapticam.render.result import RenderResult

RATE_HZ = 1000
FPS = 60
#: Speed of the quasi-static sweep that draws a model's own F-x curves (m/s): above the impedance
#: models' direction dead band (1 mm/s), slow enough that ``b v`` stays below a millinewton.
STATIC_SWEEP_MPS = 0.01
STATIC_SUBSTEPS = 16          # model steps per curve point of static_curves
STATIC_SETTLE_S = 1.0         # model time at rest before static_curves sweeps (s)
#: Travel shown for a model whose structure names no bottom (m).
DEFAULT_TRAVEL_M = 0.005

SCRIPT_ACTIONS = ("press", "ramp", "lift", "key")

# Colours (RGB) shared by both windows; the tests look for some of them by exact value.
BG = (18, 20, 26)
PANEL = (30, 33, 42)
GRID = (55, 60, 74)
TEXT = (215, 218, 226)
DIM = (120, 125, 140)
AXIS = (165, 170, 186)       # axis lines and tick marks
BAR = (250, 110, 90)         # the force (torque) bar
TRACE = (255, 235, 80)       # the live force-position trace
MARKER = (255, 255, 255)     # the trace's newest point
TICK_PX = 5                  # length of a tick mark (px)


def require_pygame() -> Any:
    """Import pygame (the ``demo`` extra) or raise :class:`DependencyMissingError`."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")     # the windows make no sound: never open ALSA
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("SDL_VIDEODRIVER")):
        raise UsageError("there is no display (DISPLAY is not set): the interactive windows need one "
                         "(for a headless run set SDL_VIDEODRIVER=dummy)")
    try:
        import pygame
    except ImportError as exc:
        raise DependencyMissingError("the interactive demos need pygame: pip install 'hapticam[demo]'") from exc
    return pygame


def frame_ticks(frame: int, rate_hz: int = RATE_HZ, fps: int = FPS) -> int:
    """Servo ticks in frame ``frame``: ``floor((k + 1) R / fps) - floor(k R / fps)`` (no drift)."""
    return (frame + 1) * rate_hz // fps - frame * rate_hz // fps


class FingerRig:
    """A model rendered by the servo loop on the simulated device, with a finger at the handle.

    Parameters
    ----------
    model : Model
        The model to render.
    stiffness_N_per_m, damping_N_s_per_m : float
        The finger's spring-damper to its target (N/m, N s/m).
    rest_m : float
        Finger target when no one presses (m): the finger rests on the key top.
    device : SimParams, optional
        Simulated device parameters (default :class:`SimParams`).
    """

    def __init__(self, model: Model, stiffness_N_per_m: float, damping_N_s_per_m: float, rest_m: float = 0.0,
                 device: SimParams | None = None) -> None:
        self.model = model
        self.rest_m = float(rest_m)
        user = User("finger", MODE_POSITION, 0.0, GRID_DT_S, np.full(2, self.rest_m), np.zeros(2),
                    float(stiffness_N_per_m), float(damping_N_s_per_m))
        self.device = SimulatedDevice(device, user=user)
        self.loop = ServoLoop(model, self.device, LoopConfig(rate_hz=float(RATE_HZ), ring_capacity=1 << 12,
                                                             realtime=False, display="off"))  # the model itself
        self.target_m = self.rest_m

    def set_target(self, x_m: float | None) -> None:
        """Move the finger's target to ``x_m`` (m); ``None`` returns it to the rest position."""
        self.target_m = self.rest_m if x_m is None else float(x_m)
        self.device.hold_user_at(self.target_m)

    def step(self, n_ticks: int) -> RenderResult:
        """Run ``n_ticks`` servo ticks on the simulated clock; return their rows."""
        return self.loop.run_simulated(n_ticks=int(n_ticks))

    @property
    def t_s(self) -> float:
        """Simulated time (s)."""
        return self.device.t_s


# -- model geometry -------------------------------------------------------------------------------------
def model_bottom_m(model: Model) -> float:
    """Where the key bottoms out (m): the nearest of a pressing-side contact wall, the upper end stop and
    the keybed; else the end of the impedance tables; else ``DEFAULT_TRAVEL_M``."""
    walls, ends = [], []
    for part in model.components():
        if isinstance(part, Contact) and part.side > 0:
            walls.append(part.x_c_m)
        elif isinstance(part, EndStops):
            walls.append(part.x_max_m)
        elif isinstance(part, HybridKey) and part.keybed_m is not None:
            walls.append(part.keybed_m)
        elif isinstance(part, SegmentedImpedance):
            ends.append(part.x_range()[1])
    if walls:
        return float(min(walls))
    return float(max(ends)) if ends else DEFAULT_TRAVEL_M


def static_curves(model: Model, x_lo_m: float, x_hi_m: float, n: int = 400, speed_mps: float = STATIC_SWEEP_MPS
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The model's own press and release curves ``(x_m, f_press_N, f_release_N)`` from its kernel.

    A quasi-static sweep at ``speed_mps`` (m/s; a knob's rad/s; default ``STATIC_SWEEP_MPS``): from rest at
    ``x_lo_m`` up to ``x_hi_m`` and back, state carried along (direction, friction, hammer), ``dt = dx / v``
    per step, ``a = 0``.
    """
    compiled = model.compile()
    params, state = compiled.params, compiled.reset_state()
    x = np.linspace(x_lo_m, x_hi_m, n)
    dt = float(x[1] - x[0]) / speed_mps / STATIC_SUBSTEPS
    for _ in range(int(STATIC_SETTLE_S / dt)):   # settle at the start (a hammer on its jack, a coupled key)
        model_force(params, state, float(x[0]), 0.0, 0.0, dt)

    def sweep(points: np.ndarray, v: float) -> np.ndarray:
        out = np.empty(points.size)
        for i, xi in enumerate(points):      # the mean over each step's substeps: a bouncing part's ringing averages out
            x0 = points[i - 1] if i else xi
            out[i] = np.mean([model_force(params, state, float(x0 + (xi - x0) * (j + 1) / STATIC_SUBSTEPS), v, 0.0, dt)
                              for j in range(STATIC_SUBSTEPS)])
        return out

    press = sweep(x, speed_mps)
    release = sweep(x[::-1], -speed_mps)
    return x, press, release[::-1]


def nice_ceil(value: float) -> float:
    """Smallest of 1, 2, 2.5, 5 times a power of ten that is at least ``value`` (> 0)."""
    if not (value > 0 and math.isfinite(value)):
        return 1.0
    p = 10.0 ** math.floor(math.log10(value))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if m * p >= value * (1 - 1e-12):
            return m * p
    return 10.0 * p


def nice_ticks(lo: float, hi: float, most: int = 7) -> list[float]:
    """At most ``most`` round values (steps of 1, 2, 2.5 or 5 times a power of ten) from ``lo`` to ``hi``."""
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        return []
    step = nice_ceil((hi - lo) / max(most - 1, 1))
    first = math.ceil(lo / step - 1e-9)
    ticks = []
    for k in range(first, first + most + 1):
        value = round(k * step, 12) + 0.0       # + 0.0: no "-0"
        if value <= hi + 1e-9 * step:
            ticks.append(value)
    return ticks


def draw_axes(pg: Any, surface: Any, font: Any, rect: tuple[int, int, int, int], x_scale: tuple[float, float],
              y_scale: tuple[float, float], x_label: str, y_label: str) -> tuple[list[float], list[float]]:
    """Axes along the left and bottom edges of the plot ``rect`` (left, top, width, height), just outside
    it (a trace clipped to ``rect`` never covers them): ``x_scale`` (left, right) and ``y_scale`` (bottom,
    top) are the values at the edges, in the units the labels name. Round values (:func:`nice_ticks`)
    get a tick mark, a label and a grid line across ``rect``. Returns the x and y tick values drawn."""
    left, top, w, h = rect
    (x0, x1), (y0, y1) = x_scale, y_scale
    x_ticks, y_ticks = nice_ticks(min(x0, x1), max(x0, x1)), nice_ticks(min(y0, y1), max(y0, y1))
    for value in y_ticks:
        row = round(top + h - (value - y0) / (y1 - y0) * h)
        pg.draw.line(surface, GRID, (left, row), (left + w - 1, row))
        pg.draw.line(surface, AXIS, (left - 1 - TICK_PX, row), (left - 1, row))
        label = font.render(f"{value:g}", True, TEXT)
        surface.blit(label, (left - TICK_PX - 4 - label.get_width(), row - label.get_height() // 2))
    for value in x_ticks:
        col = round(left + (value - x0) / (x1 - x0) * w)
        pg.draw.line(surface, GRID, (col, top), (col, top + h - 1))
        pg.draw.line(surface, AXIS, (col, top + h), (col, top + h + TICK_PX))
        label = font.render(f"{value:g}", True, TEXT)
        surface.blit(label, (col - label.get_width() // 2, top + h + TICK_PX + 3))
    pg.draw.line(surface, AXIS, (left - 1, top), (left - 1, top + h))
    pg.draw.line(surface, AXIS, (left - 1, top + h), (left + w, top + h))
    title = font.render(x_label, True, DIM)
    surface.blit(title, (left + (w - title.get_width()) // 2, top + h + TICK_PX + 20))
    title = pg.transform.rotate(font.render(y_label, True, DIM), 90)
    widest = max((font.size(f"{v:g}")[0] for v in y_ticks), default=0)
    surface.blit(title, (left - TICK_PX - 8 - widest - title.get_width(), top + (h - title.get_height()) // 2))
    return x_ticks, y_ticks


# -- scripted input ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScriptEvent:
    """One scripted input at simulated time ``t_s``.

    ``action``: ``"press"`` (``value``: finger target depth, m; the mouse held there), ``"ramp"``
    (``value``: ``(depth_m, duration_s)``, the target moves linearly to ``depth_m``), ``"lift"`` (the
    mouse button released) or ``"key"`` (``value``: a key name as the window's keyboard handler takes
    it, e.g. ``"2"``, ``"r"``, ``"space"``).
    """

    t_s: float
    action: str
    value: Any = None


Script = Sequence[ScriptEvent | tuple]


class ScriptPlayer:
    """Plays a script: the finger target over time and the key presses due."""

    def __init__(self, script: Script) -> None:
        events = [e if isinstance(e, ScriptEvent) else ScriptEvent(*e) for e in script]
        for e in events:
            if e.action not in SCRIPT_ACTIONS:
                raise UsageError(f"script: action must be one of {', '.join(SCRIPT_ACTIONS)}, got {e.action!r}")
            if not (isinstance(e.t_s, (int, float)) and math.isfinite(e.t_s) and e.t_s >= 0):
                raise UsageError(f"script: event time must be a finite number >= 0, got {e.t_s!r}")
            if e.action == "press" and not _finite(e.value):
                raise UsageError(f"script: press needs a depth in metres, got {e.value!r}")
            if e.action == "ramp" and not (isinstance(e.value, (tuple, list)) and len(e.value) == 2
                                           and _finite(e.value[0]) and _finite(e.value[1]) and e.value[1] > 0):
                raise UsageError(f"script: ramp needs (depth_m, duration_s > 0), got {e.value!r}")
        self.events = sorted(events, key=lambda e: e.t_s)
        self._next = 0
        self._target: float | None = None
        self._ramp: tuple[float, float, float, float] | None = None  # t0, x0, t1, x1

    @property
    def end_s(self) -> float:
        """Time of the last event, ramps included (s)."""
        ends = [e.t_s + (e.value[1] if e.action == "ramp" else 0.0) for e in self.events]
        return max(ends, default=0.0)

    def advance(self, t_s: float) -> list[str]:
        """Apply the events due by ``t_s``; return the key names pressed."""
        keys = []
        while self._next < len(self.events) and self.events[self._next].t_s <= t_s + 1e-12:
            e = self.events[self._next]
            self._next += 1
            if e.action == "press":
                self._target, self._ramp = float(e.value), None
            elif e.action == "lift":
                self._target, self._ramp = None, None
            elif e.action == "ramp":
                x0 = self.target(e.t_s)
                self._ramp = (e.t_s, 0.0 if x0 is None else x0, e.t_s + float(e.value[1]), float(e.value[0]))
                self._target = self._ramp[1]
            else:
                keys.append(str(e.value))
        return keys

    def target(self, t_s: float) -> float | None:
        """The finger target at ``t_s`` (m), or None when the finger is lifted."""
        if self._ramp is not None:
            t0, x0, t1, x1 = self._ramp
            w = min(max((t_s - t0) / (t1 - t0), 0.0), 1.0)
            return x0 + w * (x1 - x0)  # linear drag of the mouse from x0 to x1
        return self._target


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def text(surface: Any, font: Any, s: str, pos: tuple[int, int], colour: tuple[int, int, int] = TEXT) -> None:
    """Draw ``s`` with its top-left corner at ``pos``."""
    surface.blit(font.render(s, True, colour), pos)


def run_loop(window: Any, title: str, size: tuple[int, int], frames: int | None, player: "ScriptPlayer | None",
             screenshot: str | os.PathLike[str] | None,
             on_frame: Callable[[Any], None] = lambda window: None) -> tuple[int, Path | None]:
    """The pygame loop both windows run: input (mouse, keys, or a script), one frame of servo ticks,
    drawing, pacing to ``FPS`` in real time (scripted runs go back to back), an optional screenshot.

    ``window`` provides ``layout.depth_at(y)`` (or ``layout.target_at((x, y))``: the finger target from the
    whole mouse position, a knob's angle), ``handle_key(name) -> bool`` (False quits),
    ``step_frame(frame, target_m)`` and ``draw(pg, surface, font)``; ``on_frame(window)`` runs after each
    frame's ticks. Returns the frames run and the screenshot's path."""
    pg = require_pygame()
    pg.init()
    try:
        surface = pg.display.set_mode(size)
        pg.display.set_caption(title)
        font = pg.font.Font(None, 18)
        clock = pg.time.Clock()
        frame, running = 0, True
        while running and (frames is None or frame < frames):
            keys = []
            for event in pg.event.get():
                if event.type == pg.QUIT:
                    running = False
                elif event.type == pg.KEYDOWN and (player is None or pg.key.name(event.key) in ("q", "escape")):
                    keys.append(pg.key.name(event.key))
            if player is not None:
                keys += player.advance(frame / FPS)
                target = player.target(frame / FPS)
            elif pg.mouse.get_pressed()[0]:
                layout, pos = window.layout, pg.mouse.get_pos()
                target = layout.target_at(pos) if hasattr(layout, "target_at") else layout.depth_at(pos[1])
            else:
                target = None
            for key in keys:
                running = window.handle_key(key) and running
            if not running:
                break
            window.step_frame(frame, target)
            on_frame(window)
            window.draw(pg, surface, font)
            pg.display.flip()
            if player is None:
                clock.tick(FPS)
            frame += 1
        path = None
        if screenshot is not None:
            path = Path(screenshot)
            pg.image.save(surface, str(path))
        return frame, path
    finally:
        pg.quit()


class RigWindow:
    """What the key and knob windows share: a model rendered on a :class:`FingerRig` (``self.rig``), the
    ticks each frame ran, a ring of the last ``trace_ticks`` (true position, force) pairs drawn over the
    model's own curves in ``layout.plot``, keys ``q``/Esc (quit) and ``r`` (reset), a one-line message.

    A subclass sets ``title``, ``size``, ``trace_ticks``, ``target_steps``, ``tick_fields`` (the
    :class:`~hapticam.render.result.RenderResult` columns kept per tick) and ``message_colour``, and provides
    ``index``, ``layout`` (``plot`` rectangle and ``plot_xy(x, f)``), ``load(index)`` (which calls
    :meth:`start_trace`), ``select(key)`` for its other keys, ``_background(pg, font)`` and
    ``draw_frame(pg, surface, font)``. Positions are m and forces N; a rotary model's rad and N m.
    """

    title = "hapticam"
    size = (960, 600)
    trace_ticks = 3000
    target_steps = 8
    tick_fields: tuple[str, ...] = ("t_s", "x_true_m", "force_N")
    message_colour = TEXT
    message = ""

    def start_trace(self) -> None:
        """Forget the ticks and the trace and redraw the background (a model (re)loaded)."""
        self.trace = np.full((self.trace_ticks, 2), np.nan)
        self.trace_head = 0
        self.ticks: list[tuple[np.ndarray, ...]] = []
        self.background = None

    def handle_key(self, key: str) -> bool:
        """Act on a key name (pygame's); return False to quit."""
        if key in ("q", "escape"):
            return False
        if key == "r":
            self.load(self.index)
        else:
            self.select(key)
        return True

    def run_ticks(self, frame: int, start: float, goal: float) -> None:
        """Move the rig's target from ``start`` to ``goal`` in ``target_steps`` equal steps over frame
        ``frame``'s servo ticks (the mouse moves once a frame: no 60 Hz staircase of force impulses through
        a stiff grip), run them, and keep their rows."""
        edges = np.linspace(0, frame_ticks(frame), self.target_steps + 1).round().astype(int)
        for j in range(self.target_steps):
            if edges[j + 1] == edges[j]:
                continue
            self.rig.set_target(start + (j + 1) / self.target_steps * (goal - start))
            res = self.rig.step(int(edges[j + 1] - edges[j]))
            self.ticks.append(tuple(getattr(res, name) for name in self.tick_fields))
            idx = (self.trace_head + np.arange(res.t_s.size)) % self.trace_ticks
            self.trace[idx, 0], self.trace[idx, 1] = res.x_true_m, res.force_N
            self.trace_head = (self.trace_head + res.t_s.size) % self.trace_ticks

    def last(self) -> tuple[float, float]:
        """The true position (m; rad) and the force rendered (N; N m) at the last tick."""
        x, f = self.trace[(self.trace_head - 1) % self.trace_ticks]
        return float(x), float(f)

    def tick_columns(self) -> list[np.ndarray]:
        """The kept ticks since the last (re)load, one array a ``tick_fields`` column."""
        return [np.concatenate([p[i] for p in self.ticks]) if self.ticks else np.zeros(0)
                for i in range(len(self.tick_fields))]

    def panels(self, pg: Any, panel: tuple[int, int, int, int]) -> Any:
        """A background surface: ``BG`` with ``panel`` and the plot drawn as panels."""
        bg = pg.Surface(self.size)
        bg.fill(BG)
        pg.draw.rect(bg, PANEL, panel)
        pg.draw.rect(bg, PANEL, self.layout.plot)
        return bg

    def draw_curve(self, pg: Any, surface: Any, x: np.ndarray, f: np.ndarray, colour: tuple[int, int, int],
                   limits: tuple[float, float]) -> None:
        """A polyline of force ``f`` (clipped to ``limits``) over position ``x`` in the plot's pixels."""
        px, py = self.layout.plot_xy(x, np.clip(f, *limits))
        pg.draw.lines(surface, colour, False, np.column_stack([px, py]).tolist(), 2)

    def draw_trace(self, pg: Any, surface: Any, limits: tuple[float, float], f_range: tuple[float, float]) -> None:
        """The live trace, oldest to newest (forces clipped to ``limits``), and a marker at the last tick (its
        force clipped to ``f_range``), both clipped to the plot."""
        lay = self.layout
        pts = self.trace[(self.trace_head + np.arange(self.trace_ticks)) % self.trace_ticks]
        pts = pts[np.isfinite(pts[:, 0])]
        surface.set_clip(lay.plot)
        if len(pts) >= 2:
            self.draw_curve(pg, surface, pts[:, 0], pts[:, 1], TRACE, limits)
        x, f = self.last()
        px, py = lay.plot_xy(x, float(np.clip(f, *f_range)))
        pg.draw.circle(surface, MARKER, (round(float(px)), round(float(py))), 5, 1)
        surface.set_clip(None)

    def draw(self, pg: Any, surface: Any, font: Any) -> None:
        """Draw the current frame: the background (drawn once a model), the frame's parts, the message."""
        if self.background is None:
            self.background = self._background(pg, font)
        surface.blit(self.background, (0, 0))
        self.draw_frame(pg, surface, font)
        if self.message:
            text(surface, font, self.message, (20, self.size[1] - 18), self.message_colour)


def run_window(make_window: Callable[[], RigWindow], frames: int | None, script: "Script | None",
               screenshot: str | os.PathLike[str] | None, on_frame: Callable[[Any], None] = lambda window: None,
               tail_s: float = 0.5) -> tuple[Any, int, Path | None]:
    """Check the script, make the window, and run :func:`run_loop` on it: ``frames`` frames, or with a script
    and no frame count, until ``tail_s`` seconds after its last event. Returns the window, the frames run
    and the screenshot's path."""
    player = ScriptPlayer(script) if script is not None else None
    window = make_window()
    if frames is None and player is not None:
        frames = int(np.ceil((player.end_s + tail_s) * FPS))
    frame, path = run_loop(window, window.title, window.size, frames, player, screenshot, on_frame)
    return window, frame, path


def window_main(argv: Sequence[str] | None, name: str, description: str, models_help: str,
                run: Callable[..., Any], one_model: str | None = None) -> int:
    """``python -m hapticam.demos.NAME [MODEL ...] [--frames N] [--screenshot PNG]``: parse, call
    ``run(frames, None, screenshot, models)``; with ``one_model`` (its default), a window of one model:
    ``[MODEL]``, and ``run`` gets that one. A :class:`~hapticam.errors.HapticError` is one line on stderr
    and exit status 2."""
    parser = argparse.ArgumentParser(prog=f"python -m hapticam.demos.{name}", description=description)
    if one_model is None:
        parser.add_argument("models", nargs="*", metavar="MODEL", help=models_help)
    else:
        parser.add_argument("models", nargs="?", default=one_model, metavar="MODEL", help=models_help)
    parser.add_argument("--frames", type=int, default=None, help="stop after this many frames")
    parser.add_argument("--screenshot", default=None, help="save the last frame as a PNG")
    args = parser.parse_args(argv)
    try:
        run(args.frames, None, args.screenshot, args.models)
    except HapticError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    return 0

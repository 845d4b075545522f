"""The interactive windows, run headless (SDL dummy drivers) on scripted input, checked by screenshot.

Expectations come from outside the window code: the key's static equilibrium under the finger spring
from the model's own impedance table (closed form), the force curves from ``SegmentedImpedance.static_force``,
and the hammer trajectory from ``HybridKey.simulate`` on the key positions the loop saw. Each pixel
check is also run on a blank screenshot, which must fail it.
"""

from __future__ import annotations

import os

import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")    # headless, also for the module-scoped runs below
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
import pygame  # noqa: E402  (in the test extra)

from hapticam.demos import key_window, piano_window  # noqa: E402
from hapticam.demos._window import ScriptPlayer, frame_ticks  # noqa: E402
from hapticam.world.users import FINGER_STIFFNESS_N_PER_M  # noqa: E402
from hapticam.errors import DependencyMissingError, UsageError  # noqa: E402
from hapticam.models.files import load_model  # noqa: E402
from hapticam.models.hybrid_key.model import FLAG_CONTACT, FLAG_ESCAPED, FLAG_FLIGHT, FLAG_STRING  # noqa: E402
from hapticam.models.impedance import SegmentedImpedance  # noqa: E402

PRESS_DEPTH_M = 0.003
RAMP_S = 1.0


@pytest.fixture(autouse=True)
def _headless(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")


def load_rgb(path) -> np.ndarray:
    """Screenshot as an (H, W, 3) uint8 array."""
    return np.transpose(pygame.surfarray.array3d(pygame.image.load(str(path))), (1, 0, 2))


def is_colour(img: np.ndarray, colour) -> np.ndarray:
    return np.all(img == np.asarray(colour, dtype=np.uint8), axis=-1)


def blank_like(img: np.ndarray) -> np.ndarray:
    out = np.empty_like(img)
    out[...] = key_window.BG
    return out


# -- key window checks ---------------------------------------------------------------------------------
def key_cap_top(img: np.ndarray, lay: key_window.KeyLayout) -> int:
    """Topmost row of the key cap colour in the key's centre column."""
    rows = np.nonzero(is_colour(img[:, lay.key_cx], key_window.KEYCAP))[0]
    assert rows.size >= lay.cap_h - 2, "no key cap in the key panel"
    return int(rows.min())


def force_bar_length(img: np.ndarray, lay: key_window.KeyLayout) -> int:
    row = img[lay.bar_y + lay.bar_h // 2]
    cols = np.nonzero(is_colour(row, key_window.BAR))[0]
    assert cols.size > 0, "no force bar"
    assert cols.min() == lay.bar_x0 and np.all(np.diff(cols) == 1), "force bar not one bar from zero"
    return int(cols.size)


def trace_distances(img: np.ndarray, lay: key_window.KeyLayout, model) -> tuple[np.ndarray, np.ndarray]:
    """Distance (px) from each live-trace pixel to the nearest point of the model's press or release
    curve (from the impedance table, not the window's kernel sweep); and the trace pixels' x (m)."""
    left, top, w, h = lay.plot
    sub = is_colour(img[top:top + h, left:left + w], key_window.TRACE)
    rows, cols = np.nonzero(sub)
    assert rows.size > 50, "no live F-x trace"
    imp = next(p for p in model.components() if isinstance(p, SegmentedImpedance))
    xs = np.linspace(0.0, imp.x_range()[1] - 1e-6, 4000)
    ref = []
    for direction in (1, -1):
        px, py = lay.plot_xy(xs, imp.static_force(xs, direction))
        ref.append(np.column_stack([px - left, py - top]))
    ref = np.concatenate(ref)
    pts = np.column_stack([cols, rows]).astype(float)
    d = np.sqrt(((pts[:, None, :] - ref[None, ::4, :]) ** 2).sum(-1)).min(axis=1)
    x_m = lay.x_range_m[0] + cols / w * (lay.x_range_m[1] - lay.x_range_m[0])
    return d, x_m


# the window's mechanics are checked on hand-written keys whose equilibria have closed forms
HAND = Path(__file__).parent / "data" / "models"
HAND_LINEAR, HAND_TACTILE = str(HAND / "hand-linear-key.yaml"), str(HAND / "hand-tactile-key.yaml")
HAND_EXAMPLES = (HAND_LINEAR, HAND_TACTILE, "example:piano-key")


@pytest.fixture(scope="module")
def pressed(tmp_path_factory):
    """The linear key pressed by a slow drag to 3 mm and held until settled."""
    png = tmp_path_factory.mktemp("key") / "pressed.png"
    script = [(0.2, "ramp", (PRESS_DEPTH_M, RAMP_S))]
    run = key_window.run(frames=int(2.4 * key_window.FPS), script=script, screenshot=png, examples=HAND_EXAMPLES)
    return run, load_rgb(png)


@pytest.fixture(scope="module")
def at_rest(tmp_path_factory):
    png = tmp_path_factory.mktemp("key") / "rest.png"
    run = key_window.run(frames=20, script=[], screenshot=png, examples=HAND_EXAMPLES)
    return run, load_rgb(png)


def linear_key_equilibrium() -> tuple[float, float]:
    """Handle position and force where the finger spring k_f (D - x) meets the pressing line
    F = f0 + k x of the linear key's last segment: x = (k_f D - f0) / (k_f + k)."""
    model = load_model(HAND_LINEAR)[0]
    imp = next(p for p in model.components() if isinstance(p, SegmentedImpedance))
    f0, k = float(imp.press.f0_N[-1]), float(imp.press.k_Npm[-1])
    kf = FINGER_STIFFNESS_N_PER_M
    x = (kf * PRESS_DEPTH_M - f0) / (kf + k)
    assert imp.press.breakpoints_m[-2] < x < imp.press.breakpoints_m[-1]
    return x, f0 + k * x


def test_key_at_rest_is_drawn_at_the_rest_line(at_rest):
    run, img = at_rest
    assert run.model_name == HAND_LINEAR and run.frames == 20
    assert abs(run.x_m[-1]) < 5e-6
    assert abs(key_cap_top(img, run.layout) - run.layout.cap_top(0.0)) <= 1.0


def test_key_cap_moves_down_by_the_finger_equilibrium_depth(pressed, at_rest):
    run, img = pressed
    x_eq, _ = linear_key_equilibrium()
    assert run.x_m[-1] == pytest.approx(x_eq, abs=2e-5)           # the loop settled where the closed form says
    assert np.nanmax(run.target_m) == pytest.approx(PRESS_DEPTH_M)
    moved = key_cap_top(img, run.layout) - key_cap_top(at_rest[1], at_rest[0].layout)
    assert moved == pytest.approx(x_eq * run.layout.px_per_m, abs=1.5)
    assert moved > 100                                              # about 2 mm at ~60 px/mm


def test_force_bar_shows_the_rendered_force(pressed):
    run, img = pressed
    _, f_eq = linear_key_equilibrium()
    assert run.force_N[-1] == pytest.approx(f_eq, abs=5e-3)
    assert force_bar_length(img, run.layout) == pytest.approx(run.force_N[-1] * run.layout.bar_px_per_N, abs=1.0)


def test_live_trace_lies_on_the_model_curves(tmp_path):
    png = tmp_path / "trace.png"
    script = [(0.2, "ramp", (PRESS_DEPTH_M, RAMP_S)), (1.4, "ramp", (0.0, RAMP_S))]
    run = key_window.run(frames=int(2.6 * key_window.FPS), script=script, screenshot=png, examples=HAND_EXAMPLES)
    model = load_model(HAND_LINEAR)[0]
    d, x_m = trace_distances(load_rgb(png), run.layout, model)
    # 1 px is about 2.5 mN and 9 um; near x = 0.1 mm, where the key turns back onto the steep preload
    # ramp, the direction dead band mixes the two curves for a few ticks
    assert np.percentile(d, 95) <= 4.0 and d.max() <= 8.0
    assert np.percentile(d[x_m > 2e-4], 99) <= 3.0
    assert x_m.min() < 1e-4 and x_m.max() > 1.9e-3                # the trace covers the travel pressed
    assert run.x_m.max() == pytest.approx(linear_key_equilibrium()[0], abs=5e-5)


def test_blank_screenshot_fails_every_key_check(pressed):
    run, img = pressed
    blank = blank_like(img)
    model = load_model(HAND_LINEAR)[0]
    for check in (lambda: key_cap_top(blank, run.layout), lambda: force_bar_length(blank, run.layout),
                  lambda: trace_distances(blank, run.layout, model)):
        with pytest.raises(AssertionError):
            check()


def test_keys_switch_models_and_cycle_model_files(tmp_path):
    extra = str(tmp_path / "tactile.yaml")
    from hapticam.models.files import save_model
    save_model(extra, load_model("example:tactile-key")[0])
    run = key_window.run(frames=4, script=[(0.0, "key", "3")], models=[extra])
    assert run.model_name == "example:piano-key"
    run = key_window.run(frames=4, script=[(0.0, "key", "o")], models=[extra])
    assert run.model_name == extra
    run = key_window.run(frames=4, script=[(0.0, "key", "2"), (1 / 60, "key", "r")])
    assert run.model_name == "example:tactile-key" and run.t_s.size == sum(frame_ticks(k) for k in (1, 2, 3))


# -- piano window --------------------------------------------------------------------------------------
KEYSTROKE_AT_S = 0.2
SETTLED_FRAMES = 90


@pytest.fixture(scope="module")
def keystroke():
    """A scripted keystroke played for 1.5 s (the whole press, hold and release, and the hammer's last
    bounces on the jack as the simulated key comes back up under the handle)."""
    return piano_window.run(frames=SETTLED_FRAMES, script=[(KEYSTROKE_AT_S, "key", "space")])


def hammer_rows(img: np.ndarray, lay: piano_window.PianoLayout) -> tuple[int, int]:
    rows = np.nonzero(is_colour(img[:, lay.hammer_cx], piano_window.HAMMER))[0]
    assert rows.size == lay.hammer_h, "no hammer in the hammer column"
    return int(rows.min()), int(rows.max())


def jack_top(img: np.ndarray, lay: piano_window.PianoLayout) -> int:
    rows = np.nonzero(is_colour(img[:, lay.hammer_cx], piano_window.JACK))[0]
    assert rows.size > 0, "no jack in the hammer column"
    return int(rows.min())


def lamp_on(img: np.ndarray, lay: piano_window.PianoLayout, name: str) -> bool:
    i = [n for n, _, _ in piano_window.LAMPS].index(name)
    x, y, _, _ = lay.lamp_rects[i]
    pixel = img[y + 3, x + 3]
    if np.array_equal(pixel, piano_window.LAMPS[i][2]):
        return True
    assert np.array_equal(pixel, piano_window.LAMP_OFF), f"lamp {name!r} not drawn"
    return False


def test_hammer_is_the_kernels_hammer(keystroke):
    model = load_model("example:piano-key")[0]
    ref = model.simulate(keystroke.x_m, 1e-3, v_mps=keystroke.v_mps, a_mps2=np.zeros_like(keystroke.x_m))
    np.testing.assert_allclose(keystroke.hammer_y_m, ref.hammer_y_m, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(keystroke.flags, ref.flags)


def test_keystroke_strikes_the_string_and_the_hammer_lands_back(keystroke):
    r = keystroke
    key = load_model("example:piano-key")[0]
    hits = np.nonzero(r.flags & FLAG_STRING)[0]
    assert hits.size >= 1
    first = hits[0]
    assert r.t_s[first] > KEYSTROKE_AT_S and r.hammer_y_m[first] == pytest.approx(key.string_height_m, abs=1e-3)
    after = np.arange(r.t_s.size) > first
    landed = np.nonzero(after & (r.flags & FLAG_CONTACT > 0) & (r.flags & FLAG_ESCAPED > 0))[0]
    assert landed.size > 0                                            # back on the backcheck, escaped
    assert r.hammer_y_m[landed[0]] < key.string_height_m - 0.01
    assert not r.flags[-1] & FLAG_ESCAPED and r.hammer_y_m[-1] < 0.002   # released: the jack is back


def test_screenshot_shows_the_hammer_in_flight_after_the_strike(keystroke, tmp_path):
    hit = int(np.nonzero(keystroke.flags & FLAG_STRING)[0][0])
    ends = np.cumsum([frame_ticks(k) for k in range(SETTLED_FRAMES)])     # each frame's last tick + 1
    flight = (keystroke.flags & FLAG_FLIGHT) > 0
    above = keystroke.hammer_y_m - keystroke.drive_m > 20 / 6000.0            # 20 px at 6000 px/m

    def in_flight(k: int) -> bool:                                           # the lamp's rule: most ticks free
        lo = ends[k - 1] if k else 0
        return flight[lo:ends[k]].mean() >= 0.5 and flight[ends[k] - 1] and above[ends[k] - 1]
    frame = next(k for k in range(SETTLED_FRAMES) if ends[k] > hit and in_flight(k)) + 1
    png = tmp_path / "strike.png"
    r = piano_window.run(frames=frame, script=[(KEYSTROKE_AT_S, "key", "space")], screenshot=png)   # the hit's frame
    lay, img = r.layout, load_rgb(png)
    assert r.flags[-1] & FLAG_FLIGHT and r.t_s[-1] > r.t_s[hit]
    top, bottom = hammer_rows(img, lay)
    assert bottom + 1 == pytest.approx(lay.hammer_row(r.hammer_y_m[-1]), abs=1.0)
    assert jack_top(img, lay) == pytest.approx(lay.hammer_row(r.drive_m[-1]), abs=1.0)
    assert jack_top(img, lay) - bottom > 20                       # hammer well above the backcheck
    assert lamp_on(img, lay, "flight") and lamp_on(img, lay, "escaped") and lamp_on(img, lay, "string")
    assert not lamp_on(img, lay, "contact")
    # the trace of hammer height peaks at the highest tick sample, within 1 mm of the string line
    left, ttop, w, h = lay.trace
    rows = np.nonzero(is_colour(img[ttop:ttop + h, left:left + w], piano_window.HAMMER).any(axis=1))[0] + ttop
    _, peak_row = lay.trace_xy(np.zeros(1), np.array([r.hammer_y_m.max()]))
    _, string_row = lay.trace_xy(np.zeros(1), np.array([load_model("example:piano-key")[0].string_height_m]))
    assert rows.size > 10 and abs(rows.min() - peak_row[0]) <= 1.5
    assert 0 <= rows.min() - string_row[0] <= 0.001 * lay.trace[3] / np.ptp(lay.trace_y_range_m) + 1
    with pytest.raises(AssertionError):
        hammer_rows(blank_like(img), lay)
    with pytest.raises(AssertionError):
        lamp_on(blank_like(img), lay, "flight")


def test_screenshot_after_release_shows_the_hammer_back_on_the_jack(keystroke, tmp_path):
    png = tmp_path / "rest.png"
    r = piano_window.run(frames=SETTLED_FRAMES, script=[(KEYSTROKE_AT_S, "key", "space")], screenshot=png)
    np.testing.assert_array_equal(r.hammer_y_m, keystroke.hammer_y_m)   # deterministic
    lay, img = r.layout, load_rgb(png)
    _, bottom = hammer_rows(img, lay)
    assert bottom + 1 == pytest.approx(lay.hammer_row(r.hammer_y_m[-1]), abs=1.0)
    assert abs(bottom + 1 - lay.hammer_row(0.0)) <= 16               # within 2 mm of rest
    assert not lamp_on(img, lay, "escaped") and not lamp_on(img, lay, "string")


# -- inputs and dependency ---------------------------------------------------------------------------
def test_script_player_interpolates_ramps_and_rejects_bad_events():
    p = ScriptPlayer([(0.0, "press", 0.001), (1.0, "ramp", (0.003, 0.5)), (2.0, "lift"), (2.0, "key", "r")])
    assert p.advance(0.0) == [] and p.target(0.0) == 0.001
    p.advance(1.25)
    assert p.target(1.25) == pytest.approx(0.002)
    assert p.advance(2.0) == ["r"] and p.target(2.0) is None
    for bad in ([(0.0, "jump", 1.0)], [(-1.0, "press", 0.001)], [(0.0, "press", float("nan"))],
                [(0.0, "ramp", (0.001, 0.0))]):
        with pytest.raises(UsageError):
            ScriptPlayer(bad)


def test_missing_pygame_raises_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)
    for run in (key_window.run, piano_window.run):
        with pytest.raises(DependencyMissingError, match=r"pip install 'hapticam\[demo\]'"):
            run(frames=1)

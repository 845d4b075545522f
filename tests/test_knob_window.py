"""The knob window, run headless (SDL dummy drivers) on scripted turns of a knob model file.

The reference is the knob's closed form ``A sin(N theta) + Fc tanh(omega / v_eps) + b omega`` (N m), taken
along the angle and speed the loop measured and along the simulator's true angle (within the encoder's
quantisation); the screenshot is checked for the dial and its pointer at the knob's angle, and each pixel
check is also run on a blank screenshot, which must fail it.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
import pygame  # noqa: E402  (in the test extra)

from hapticam.demos import knob_window  # noqa: E402
from hapticam.world.sim import ROTARY_PARAMS  # noqa: E402
from hapticam.models.composite import Composite  # noqa: E402
from hapticam.models.files import save_model  # noqa: E402
from hapticam.models.friction import Friction  # noqa: E402
from hapticam.models.impedance import position_table  # noqa: E402

DETENT_NM = 0.006                 # A (N m): not the built-in knob's, so the window must play the file
DETENTS_PER_REV = 10              # N
COULOMB_NM = 0.008                # Fc (N m)
VISCOUS_NMS = 4e-4                # b (N m s/rad)
SMOOTHING_RADPS = 0.05            # v_eps (rad/s)
TURN_RAD = 0.9
SCRIPT = [(0.0, "ramp", (-TURN_RAD, 0.5)), (0.6, "ramp", (TURN_RAD, 2.0))]   # -0.9 rad, then to +0.9 rad in 2 s


def closed_form(theta: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """The knob's torque (N m) at angle ``theta`` (rad) and speed ``omega`` (rad/s)."""
    return (DETENT_NM * np.sin(DETENTS_PER_REV * theta) + COULOMB_NM * np.tanh(omega / SMOOTHING_RADPS)
            + VISCOUS_NMS * omega)


@pytest.fixture(autouse=True)
def _headless(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")


@pytest.fixture(scope="module")
def knob_file(tmp_path_factory):
    theta = np.linspace(-1.0, 1.0, 2001)
    detents = position_table(theta, DETENT_NM * np.sin(DETENTS_PER_REV * theta))
    friction = Friction("coulomb-viscous", Fc_N=COULOMB_NM, b_v_Nspm=VISCOUS_NMS, v_eps_mps=SMOOTHING_RADPS)
    path = tmp_path_factory.mktemp("knob") / "knob.yaml"
    save_model(path, Composite([detents, friction]), axis="rotary")
    return path


@pytest.fixture(scope="module")
def turned(knob_file, tmp_path_factory):
    shot = tmp_path_factory.mktemp("shot") / "knob.png"
    return knob_window.run(script=SCRIPT, screenshot=shot, models=[str(knob_file)])


def test_turns_through_detents_render_the_closed_form_torque(turned, knob_file):
    run = turned
    assert run.model_name == str(knob_file)
    period = 2 * math.pi / DETENTS_PER_REV
    assert run.theta_true_rad.max() - run.theta_true_rad.min() > 2.5 * period      # through several detents
    assert run.theta_true_rad.min() < -0.85 and run.theta_true_rad.max() > 0.85
    # what the model asked for, at the angle and speed the loop measured: table interpolation only
    np.testing.assert_allclose(run.torque_cmd_Nm, closed_form(run.theta_rad, run.omega_radps), atol=2e-6)
    # what the device felt, after the safety layer's ramp-in, along the true angle: within the encoder's step
    ramped = np.nonzero(run.torque_Nm != run.torque_cmd_Nm)[0]
    settled = slice((ramped.max() + 1) if ramped.size else 0, None)
    assert run.t_s[settled].size > 2000
    quantisation_Nm = DETENT_NM * DETENTS_PER_REV * ROTARY_PARAMS.resolution_m
    err = run.torque_Nm[settled] - closed_form(run.theta_true_rad[settled], run.omega_radps[settled])
    assert np.abs(err).max() <= quantisation_Nm + 2e-6
    # on the turn up, the detent torque changes sign once at each zero of sin(N theta) the knob passed
    up = (run.t_s > 0.7) & (run.t_s < 2.6)
    detent = run.torque_Nm[up] - COULOMB_NM - VISCOUS_NMS * run.omega_radps[up]
    lo, hi = run.theta_true_rad[up][[0, -1]] * DETENTS_PER_REV / math.pi
    assert np.count_nonzero(np.diff(np.sign(detent)) != 0) == math.floor(hi) - math.floor(lo) >= 5


def load_rgb(path) -> np.ndarray:
    """Screenshot as an (H, W, 3) uint8 array."""
    return np.transpose(pygame.surfarray.array3d(pygame.image.load(str(path))), (1, 0, 2))


def is_colour(img: np.ndarray, colour) -> np.ndarray:
    return np.all(img == np.asarray(colour, dtype=np.uint8), axis=-1)


def dial_shown(img: np.ndarray, lay: knob_window.KnobLayout, theta_rad: float) -> bool:
    """The dial's disc fills a ring around its centre, and the pointer runs along ``theta_rad``."""
    ring = [lay.pointer_xy(theta_rad + math.pi / 2 + k * 0.3, 0.6 * lay.dial_r) for k in range(10)]
    disc = all(is_colour(img[round(y), round(x)], knob_window.DIAL) for x, y in ring)
    along = [lay.pointer_xy(theta_rad, r) for r in np.linspace(0.2, 0.85, 12) * lay.dial_r]
    pointer = all(is_colour(img[round(y), round(x)], knob_window.POINTER) for x, y in along)
    return disc and pointer


def test_screenshot_shows_the_dial_at_the_knobs_angle(turned):
    run = turned
    img = load_rgb(run.screenshot)
    theta = float(run.theta_true_rad[-1])
    assert theta > 0.85
    assert dial_shown(img, run.layout, theta)
    assert not dial_shown(img, run.layout, theta - 0.5)             # the pointer is not drawn elsewhere
    left, top, w, h = run.layout.plot
    assert np.count_nonzero(is_colour(img[top:top + h, left:left + w], knob_window.TRACE)) > 200
    blank = np.empty_like(img)
    blank[...] = knob_window.BG
    assert not dial_shown(blank, run.layout, theta)


def test_the_mouse_bearing_is_the_hands_target_angle():
    lay = knob_window.KnobLayout()
    for theta in (-1.0, -0.3, 0.0, 0.7, 2.5):
        assert lay.target_at(lay.pointer_xy(theta, 80.0)) == pytest.approx(theta, abs=1e-12)


def test_a_linear_model_is_refused_with_one_line_and_exit_2(tmp_path, capsys):
    path = tmp_path / "key.yaml"
    save_model(path, Friction("coulomb-viscous", Fc_N=0.1, b_v_Nspm=0.5), axis="linear")
    assert knob_window.main([str(path), "--frames", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0]

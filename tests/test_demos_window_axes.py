"""The piano window's trace has axes: lines, tick marks on a round scale, tick labels, read from a screenshot.

The scale expected is fixed here (height every 10 mm from 0 to 50 mm, time every 0.5 s from 2 s ago to
now) and placed with the layout's ``trace_xy``, the mapping the traces themselves are drawn with (checked
against the kernel's hammer in ``test_demos_windows.py``). Labels are found by matching the font's own
rendering of each number pixel for pixel. Every check is also run on a blank screenshot, which must fail it.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
import pygame  # noqa: E402

from hapticam.demos import _window, piano_window  # noqa: E402

HEIGHT_TICKS_MM = (0, 10, 20, 30, 40, 50)
TIME_TICKS_S = (-2, -1.5, -1, -0.5, 0)


@pytest.fixture(autouse=True)
def _headless(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")


@pytest.fixture(scope="module")
def shot(tmp_path_factory):
    png = tmp_path_factory.mktemp("piano") / "axes.png"
    run = piano_window.run(frames=40, script=[(0.2, "key", "space")], screenshot=png)
    img = np.transpose(pygame.surfarray.array3d(pygame.image.load(str(png))), (1, 0, 2))
    return run.layout, img


def is_axis(pixels: np.ndarray) -> np.ndarray:
    return np.all(pixels == np.asarray(_window.AXIS, dtype=np.uint8), axis=-1)


def expected_rows(lay) -> list[int]:
    _, rows = lay.trace_xy(np.zeros(len(HEIGHT_TICKS_MM)), np.array(HEIGHT_TICKS_MM) * 1e-3)
    return [round(float(r)) for r in rows]


def expected_cols(lay) -> list[int]:
    cols, _ = lay.trace_xy(-np.array(TIME_TICKS_S, dtype=float), np.zeros(len(TIME_TICKS_S)))
    return [round(float(c)) for c in cols]


def check_axis_lines(img, lay) -> None:
    left, top, w, h = lay.trace
    assert is_axis(img[top:top + h + 1, left - 1]).all(), "no height axis along the trace's left edge"
    assert is_axis(img[top + h, left - 1:left + w + 1]).all(), "no time axis along the trace's bottom edge"


def check_tick_marks(img, lay) -> None:
    left, top, w, h = lay.trace
    rows = np.nonzero(is_axis(img[top - 2:top + h + 3, left - 3]))[0] + top - 2
    rows = rows[rows != top + h]                                     # the time axis itself
    assert list(rows) == sorted(expected_rows(lay)), "height ticks are not every 10 mm from 0 to 50 mm"
    cols = np.nonzero(is_axis(img[top + h + 3, left - 2:left + w + 3]))[0] + left - 2
    cols = cols[cols != left - 1]                                    # the height axis itself
    assert list(cols) == expected_cols(lay), "time ticks are not every 0.5 s over the last 2 s"


def find_label(img, text: str, box: tuple[int, int, int, int]) -> bool:
    """Whether the window font's rendering of ``text`` on the background lies within ``box``
    (left, top, right, bottom), pixel for pixel."""
    pygame.font.init()
    font = pygame.font.Font(None, 18)
    glyph = font.render(text, True, _window.TEXT)
    tile = pygame.Surface(glyph.get_size())
    tile.fill(_window.BG)
    tile.blit(glyph, (0, 0))
    want = np.transpose(pygame.surfarray.array3d(tile), (1, 0, 2))
    gh, gw = want.shape[:2]
    x0, y0, x1, y1 = box
    for y in range(max(y0, 0), min(y1, img.shape[0]) - gh + 1):
        for x in range(max(x0, 0), min(x1, img.shape[1]) - gw + 1):
            if np.array_equal(img[y:y + gh, x:x + gw], want):
                return True
    return False


def check_tick_labels(img, lay) -> None:
    left, top, w, h = lay.trace
    for value, row in zip(HEIGHT_TICKS_MM, expected_rows(lay)):
        assert find_label(img, f"{value:g}", (left - 40, row - 12, left - 1, row + 12)), f"no label {value} mm"
    for value, col in zip(TIME_TICKS_S, expected_cols(lay)):
        assert find_label(img, f"{value:g}", (col - 20, top + h + 2, col + 20, top + h + 24)), f"no label {value} s"


CHECKS = (check_axis_lines, check_tick_marks, check_tick_labels)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_piano_trace_has_axes_with_a_scale(shot, check):
    lay, img = shot
    check(img, lay)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_blank_screenshot_fails_the_axis_checks(shot, check):
    lay, img = shot
    blank = np.empty_like(img)
    blank[...] = _window.BG
    with pytest.raises(AssertionError):
        check(blank, lay)


def test_ticks_are_round_values_within_the_range():
    assert _window.nice_ticks(-5.0, 50.0) == [0, 10, 20, 30, 40, 50]
    assert _window.nice_ticks(-2.0, 0.0) == [-2, -1.5, -1, -0.5, 0]
    assert _window.nice_ticks(0.013, 0.061) == pytest.approx([0.02, 0.03, 0.04, 0.05, 0.06])
    assert _window.nice_ticks(1.0, 1.0) == []

"""Render, record, verify: a recording of a rendering verifies against the same model.

The model is rendered at the handle (``--display off``): what the display stage gives up is its own test's
(test_display_stage). The recording marks ramp-in and safety interventions per tick (its ``flags`` column); the capture loader
leaves those ticks out, so the comparison sees only the model's own force."""

from __future__ import annotations

import pytest

from hapticam.capture_io import load_capture
from hapticam.cli import main
from hapticam.models.files import load_model_only
from hapticam.render.verify import verify

EXAMPLES = ("cherry-mx-red", "gateron-brown", "kailh-box-jade", "linear-key", "tactile-key", "clicky-key", "piano-key")


@pytest.mark.parametrize("user", ["press", "sine", "sweep"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_a_recording_of_a_rendering_verifies_against_its_model(tmp_path, capsys, example, user):
    rec = tmp_path / "r.csv"
    assert main(["render", f"example:{example}", "--simulated-clock", "--user", user, "--duration", "4",
                 "--display", "off", "--record", str(rec)]) == 0
    capture = load_capture(rec)
    assert 0 < capture.excluded.size < capture.n                 # the ramp-in is marked and left out
    assert capture.excluded.max() < 0.2 * capture.n
    result = verify(load_model_only(f"example:{example}"), capture)
    assert result.fit_percent >= 99.0, (example, user, result.failures)
    assert result.passed and result.features.noticeable == [], result.failures


def test_without_the_flags_the_ramp_in_would_spoil_the_comparison(tmp_path, capsys):
    rec = tmp_path / "r.csv"
    assert main(["render", "example:cherry-mx-red", "--simulated-clock", "--user", "sine", "--duration", "4",
                 "--display", "off", "--record", str(rec)]) == 0
    capture = load_capture(rec)
    capture.excluded = capture.excluded[:0]                      # as if the recording did not mark it
    assert verify(load_model_only("example:cherry-mx-red"), capture).fit_percent < 99.0

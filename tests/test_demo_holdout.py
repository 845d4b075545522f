"""``hapticam demo`` on a real capture: verified on a held-out part (or called a training fit), ``-o``, a
refused capture leaves nothing behind, and the stages' notices go to a terminal's stderr only."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import SWITCH_DIR
from hapticam.capture import Capture
from hapticam.capture_io import load_capture, save_capture
from hapticam.cli import build_parser, main
from terminal import run_with_terminal_stderr

GATERON = SWITCH_DIR / "Gateron-Brown.csv"


def test_demo_takes_o_for_its_output_folder_like_every_command():
    assert build_parser().parse_args(["demo", "-o", "elsewhere"]).out == "elsewhere"
    assert build_parser().parse_args(["demo", "--out", "elsewhere"]).out == "elsewhere"


@pytest.mark.parametrize("force", ["zero", "constant"])
@pytest.mark.parametrize("folder_exists", [False, True])
def test_a_capture_whose_force_never_changes_leaves_nothing_behind(tmp_path, capsys, force, folder_exists):
    real = load_capture(GATERON)
    flat = np.zeros(real.n) if force == "zero" else np.full(real.n, 0.3)
    path = tmp_path / "flat.csv"
    save_capture(path, Capture.from_arrays(real.t_s, real.x_m, flat))
    out = tmp_path / "demo"
    if folder_exists:
        out.mkdir()
    code = main(["demo", "--capture", str(path), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "never changes" in err and len(err.strip().splitlines()) == 1
    assert (out.is_dir() and not any(out.iterdir())) if folder_exists else not out.exists()


def _two_cycles(capture: Capture) -> Capture:
    """The capture's stroke twice over, the second after the first."""
    span = capture.t_s[-1] - capture.t_s[0] + capture.dt_s
    return Capture.from_arrays(np.concatenate([capture.t_s, capture.t_s + span]),
                               np.concatenate([capture.x_m, capture.x_m]), np.concatenate([capture.f_N, capture.f_N]),
                               name="two strokes")


def test_a_capture_of_two_cycles_is_verified_on_its_last():
    from hapticam.demos.capture_split import split_capture

    one = load_capture(GATERON)
    split = split_capture(_two_cycles(one))
    assert split.how == "the last press/release cycle" and not split.is_training_fit
    assert one.n - 50 <= split.training.n <= one.n + 50          # the first stroke (its turn found by speed)
    held = split.held_out.valid
    assert held.sum() == 2 * one.n - split.training.n and held[split.training.n:].all()


def test_a_single_stroke_holds_out_every_fifth_sample_apart_from_identifys_own_check():
    from hapticam.demos.capture_split import split_capture

    capture = load_capture(GATERON)
    split = split_capture(capture)
    held = split.held_out.valid
    assert split.how == "every fifth sample of the stroke"
    assert np.array_equal(held, np.arange(capture.n) % 5 == 2)
    assert not (held & split.training.valid).any() and (held | split.training.valid).all()


def test_a_capture_too_short_to_split_is_a_training_fit():
    from hapticam.demos.capture_split import split_capture

    capture = load_capture(GATERON)
    short = Capture.from_arrays(*(a[::20] for a in (capture.t_s, capture.x_m, capture.f_N)), name="short")
    split = split_capture(short)
    assert split.is_training_fit and split.held_out is short and "fewer than" in split.reason


def test_demo_on_a_real_capture_verifies_on_the_held_out_part(tmp_path, capsys):
    code = main(["demo", "--capture", str(GATERON), "--out", str(tmp_path / "d"), "--json"])
    report = json.loads(capsys.readouterr().out)
    stage = report["stages"]["verify"]
    assert stage["against"] == "held-out" and stage["training_fit"] is False
    assert report["stages"]["probe"]["held_out"] == "every fifth sample of the stroke"
    compared = json.loads((tmp_path / "d" / "verify.json").read_text())["samples_compared"]
    n = load_capture(GATERON).n
    assert compared == pytest.approx(n / 5, abs=2)                  # only the held-out samples
    assert code == (0 if stage["passed"] else 1)


def test_demo_says_when_it_verifies_on_the_training_data(tmp_path, capsys, monkeypatch):
    import hapticam.demos.capture_split as capture_split

    monkeypatch.setattr(capture_split, "split_capture", lambda c: capture_split.unsplit(c, "no cycle to spare"))
    main(["demo", "--capture", str(GATERON), "-o", str(tmp_path / "d")])
    out = capsys.readouterr().out
    assert "a training fit: not split, no cycle to spare" in out
    assert "verdict: PASS on the training data only: a training fit, not a validation" in out
    main(["demo", "--capture", str(GATERON), "-o", str(tmp_path / "j"), "--json"])
    stage = json.loads(capsys.readouterr().out)["stages"]["verify"]
    assert stage["against"] == "training" and stage["training_fit"] is True
    assert json.loads((tmp_path / "j" / "verify.json").read_text())["samples_compared"] == load_capture(GATERON).n


def test_in_a_terminal_each_stage_is_announced_on_stderr_and_stdout_holds_only_the_json(tmp_path):
    code, out, err = run_with_terminal_stderr(
        [sys.executable, "-m", "hapticam", "demo", "--capture", str(GATERON), "--out", str(tmp_path / "d"), "--json"])
    assert code in (0, 1)
    report = json.loads(out)                                        # the whole of stdout parses
    assert report["stages"]["verify"]["against"] == "held-out"
    for notice in ("[2/4] identifying a segmented impedance model", "[3/4] rendering a scripted press",
                   "[4/4] verifying against the held-out part"):
        assert notice in err and notice not in out
    assert Path(report["out_dir"]) == tmp_path / "d"


def test_a_stage_that_fails_takes_the_files_it_wrote_with_it(tmp_path, capsys, monkeypatch):
    import hapticam.identify.impedance.fit as impedance_fit
    from hapticam.errors import IdentificationError

    def refuse(capture, **_options):
        raise IdentificationError("no feasible segmentation")

    monkeypatch.setattr(impedance_fit, "identify_impedance", refuse)
    keep = tmp_path / "kept" / "notes.txt"
    keep.parent.mkdir()
    keep.write_text("the user's")
    for out in (tmp_path / "new", keep.parent):
        assert main(["demo", "--sweep-seconds", "2", "--out", str(out)]) == 2
        assert "no feasible segmentation" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()                          # made by the demo: removed
    assert [p.name for p in keep.parent.iterdir()] == ["notes.txt"]  # the probe's capture is gone, the rest kept

"""``hapticam demo`` that fails leaves its output folder as it was: the files a previous run or the user
put there untouched (none removed, none overwritten), no partial files, and no folder made for the run;
a run that completes moves its files in and leaves no temporary folder."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import SWITCH_DIR
from hapticam.cli import main
from hapticam.errors import HapticError

GATERON = SWITCH_DIR / "Gateron-Brown.csv"


def _snapshot(folder):
    """Every entry under ``folder`` (hidden ones too) with its bytes (None for a folder)."""
    return {str(p.relative_to(folder)): None if p.is_dir() else p.read_bytes() for p in sorted(folder.rglob("*"))}


@pytest.fixture()
def disk_full(monkeypatch):
    """The verification figure, the run's last file, cannot be written (the disk is full)."""
    import hapticam.render.verify.report as report

    def refuse(path, _result):
        raise HapticError(f"{path}: cannot write (No space left on device)")

    monkeypatch.setattr(report, "write_figure", refuse)


@pytest.fixture()
def capture(tmp_path):
    path = tmp_path / "capture" / GATERON.name
    path.parent.mkdir()
    shutil.copy(GATERON, path)
    return path


def test_a_run_that_fails_at_its_last_file_leaves_a_previous_run_as_it_was(tmp_path, capture, capsys, disk_full):
    out = tmp_path / "demo"
    out.mkdir()
    (out / "model.yaml").write_text("a previous run's model\n")
    (out / "notes.txt").write_text("the user's\n")
    before = _snapshot(tmp_path)
    assert main(["demo", "--capture", str(capture), "--out", str(out)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert _snapshot(tmp_path) == before


def test_a_run_that_fails_removes_the_folders_made_for_its_output(tmp_path, capture, capsys, disk_full):
    before = _snapshot(tmp_path)
    assert main(["demo", "--capture", str(capture), "--out", str(tmp_path / "new" / "deeper" / "demo")]) == 2
    capsys.readouterr()
    assert _snapshot(tmp_path) == before


def test_a_file_name_taken_by_a_folder_is_one_message_and_nothing_is_replaced(tmp_path, capture, capsys):
    out = tmp_path / "demo"
    (out / "verify.png").mkdir(parents=True)
    (out / "model.yaml").write_text("a previous run's model\n")
    before = _snapshot(tmp_path)
    assert main(["demo", "--capture", str(capture), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "verify.png" in err and "Traceback" not in err
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("exists", [False, True])
def test_a_run_that_completes_moves_its_files_in_and_names_them_there(tmp_path, capture, capsys, exists):
    out = tmp_path / "demo"
    if exists:
        out.mkdir()
        (out / "model.yaml").write_text("a previous run's model\n")
        (out / "notes.txt").write_text("the user's\n")
    assert main(["demo", "--capture", str(capture), "--out", str(out), "--json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    written = {"model.yaml", "render.csv", "verify.json", "verify.png"}
    assert {p.name for p in out.iterdir()} == written | ({"notes.txt"} if exists else set())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["capture", "demo"]      # no temporary folder beside
    assert {str(p) for p in report["files"].values()} == {str(out / name) for name in written}
    assert json.loads((out / "verify.json").read_text())["model"] == str(out / "model.yaml")
    assert (out / "model.yaml").read_text() != "a previous run's model\n"

"""``library build``: the first capture is built in this process, saying so, before the workers start."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import hapticam.library.build as build
from conftest import SWITCH_FILES
from terminal import Terminal


def _record_process(path: str, library_dir: str, settings: dict, thumbnail: bool = True) -> dict:
    """Stands in for building an entry: notes which process built it."""
    folder = Path(library_dir) / "built-by"
    folder.mkdir(exist_ok=True)
    (folder / Path(path).name).write_text(str(os.getpid()))
    return {"status": "ok", "source": path}


def test_the_first_entry_is_built_here_and_said_before_the_bar(tmp_path, monkeypatch):
    for src in SWITCH_FILES[:3]:
        shutil.copy(src, tmp_path / src.name)
    monkeypatch.setattr(build, "process_capture", _record_process)
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    report = build.build_library([tmp_path], tmp_path / "lib", jobs=2)
    assert report.done == 3
    built_by = {p.name: int(p.read_text()) for p in (tmp_path / "lib" / "built-by").iterdir()}
    first = SWITCH_FILES[0].name
    assert built_by[first] == os.getpid()
    assert all(pid != os.getpid() for name, pid in built_by.items() if name != first)   # the pool's workers
    shown = term.getvalue()
    assert f"library: building the first entry ({first}) in this process" in shown
    assert shown.index("building the first entry") < shown.index("library:  33%")             # then the bar, from 1 of 3


def test_quiet_says_nothing(tmp_path, monkeypatch):
    shutil.copy(SWITCH_FILES[0], tmp_path / SWITCH_FILES[0].name)
    monkeypatch.setattr(build, "process_capture", _record_process)
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert build.build_library([tmp_path], tmp_path / "lib", jobs=1, quiet=True).done == 1
    assert term.getvalue() == ""

"""The scripts in examples/ run as a newcomer runs them (``python examples/NAME.py OUT_DIR``, each in a process
of its own), write only into the folder given, and do what their docstrings say: each result is checked
against a reference (the capture it was fitted to, the tick count of the duration asked for, the closed
forms of the paper's thermostat)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hapticam

from conftest import SWITCH_DIR

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: wall-clock bound of one example (s); each takes a few seconds once numba's cache holds the kernels
TIMEOUT_S = 600


def run_example(name: str, out_dir: Path, cwd: Path, *arguments: str) -> str:
    """Run ``examples/NAME.py OUT_DIR ARGUMENTS`` from ``cwd``; its stdout. Fails on a non-zero exit."""
    done = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py"), str(out_dir), *arguments], cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert list(cwd.iterdir()) == [], "the example wrote outside the folder it was given"
    return done.stdout


@pytest.fixture
def folders(tmp_path):
    """``(out_dir, cwd)``: the folder an example is given, and an empty folder to run it from."""
    out_dir, cwd = tmp_path / "out", tmp_path / "cwd"
    cwd.mkdir()
    return out_dir, cwd


def test_every_example_is_run_here():
    scripts = sorted(p.stem for p in EXAMPLES.glob("*.py"))
    tested = sorted(name[len("test_"):] for name in globals() if name.startswith("test_")
                    and (EXAMPLES / f"{name[len('test_'):]}.py").is_file())
    assert scripts and scripts == tested


def test_identify_switch(folders):
    out_dir, cwd = folders
    stdout = run_example("identify_switch", out_dir, cwd)
    model, document = hapticam.load_model(out_dir / "Gateron-Brown.yaml")
    assert document.kind == "segmented-impedance" and hapticam.check_passivity(model).passive
    # the model's pressing force follows the captured press (quasi-static: the static force is the force)
    capture = hapticam.load_capture(SWITCH_DIR / "Gateron-Brown.csv")
    turn = int(np.argmax(capture.x_m))
    press = slice(5, turn - 5)
    error = model.static_force(capture.x_m[press], 1) - capture.f_N[press]
    assert np.sqrt(np.mean(error ** 2)) < 0.05 * np.ptp(capture.f_N[press])
    assert re.search(r"\bm no\b", stdout) and re.search(r"\bb no\b", stdout)    # quasi-static: no inertia, damping


def test_render_simulated(folders):
    out_dir, cwd = folders
    stdout = run_example("render_simulated", out_dir, cwd, "--duration-s", "0.5")
    recording = hapticam.load_capture(out_dir / "render.csv")
    assert recording.n == 500                                   # 0.5 s at 1 kHz, every tick recorded
    assert np.allclose(np.diff(recording.t_s), 1e-3)
    assert "ticks 500 at 1000 Hz" in stdout


def test_verify_model(folders):
    out_dir, cwd = folders
    stdout = run_example("verify_model", out_dir, cwd)
    verdicts = re.findall(r"^(\S+) against .*?: (passed|FAILED), fit (-?[\d.]+) %", stdout, flags=re.M)
    assert [(model, verdict) for model, verdict, _ in verdicts] == [("tactile.yaml", "passed"),
                                                                     ("example:linear-key", "FAILED")]
    assert float(verdicts[0][2]) >= 95.0 > float(verdicts[1][2])
    assert {p.name for p in out_dir.iterdir()} == {"sweep.npz", "press.npz", "tactile.yaml"}


def test_build_library(folders):
    out_dir, cwd = folders
    stdout = run_example("build_library", out_dir, cwd)
    index = json.loads((out_dir / "library" / "index.json").read_text())
    names = sorted(e["name"] for e in index["entries"] if e["status"] == "ok")
    assert names == ["Cherry-MX-Blue-RGB", "Cherry-MX-Red", "Gateron-Brown"]
    assert "3 keys (3 built, 0 already there, 0 failed)" in stdout
    # the linear switch has no bump; the tactile one has: a difference a person notices
    assert re.search(r"^Gateron-Brown against Cherry-MX-Red: [\d.]+ JND apart\n  - bump", stdout, flags=re.M)


def test_reproduce_paper(folders):
    out_dir, cwd = folders
    stdout = run_example("reproduce_paper", out_dir, cwd)
    assert "seed000-thermostat" in stdout.split("\n\n")[0]      # the list comes first
    assert len(list((out_dir / "seed000-thermostat").glob("*.png"))) == 2
    # the first switching time and its sensitivity against their closed forms, ln 4 and 3 - ln 4
    for closed_form in (math.log(4.0), 3.0 - math.log(4.0)):
        ours = re.search(rf"\s({closed_form:.10f})\s+{closed_form:.10f}\s", stdout)
        assert ours, f"{closed_form:.10f} not reproduced"

"""``hapticam reproduce`` runs the seed 000 experiments (quick runs) and writes their figures and tables."""

from __future__ import annotations

import json

import pytest

from hapticam.cli import main

EXPERIMENTS = ("seed000-thermostat", "seed000-ball-rigid", "seed000-ball-compliant")


def test_the_seed000_experiments_are_listed(capsys):
    assert main(["reproduce", "--list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in EXPERIMENTS)


def _row(rows, start):
    return next(r for r in rows if r[0].startswith(start))


def test_quick_runs_write_figures_and_our_numbers_beside_the_papers(tmp_path, capsys):
    assert main(["reproduce", *EXPERIMENTS, "--quick", "-o", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for name in EXPERIMENTS:
        figures = data[name]["figures"]
        assert len(figures) == 2 and all(f.endswith(".png") for f in figures)
        assert all((tmp_path / name / f.rsplit("/", 1)[-1]).stat().st_size > 20_000 for f in figures)
    thermo = data["seed000-thermostat"]["rows"]
    ours, closed, _ = _row(thermo, "dt1/dtau")[1:]
    assert float(ours) == pytest.approx(float(closed), abs=1e-9)
    rigid = data["seed000-ball-rigid"]["rows"]
    assert float(_row(rigid, "|error| after the 20th")[1]) < 1.0  # percent
    compliant = data["seed000-ball-compliant"]["rows"]
    assert all(float(e) < 1.0 for e in _row(compliant, "|error| k / b final")[1].split(" / "))


def test_an_output_path_that_is_a_file_is_refused(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["reproduce", "seed000-thermostat", "-o", str(target)]) == 2
    assert "not a folder" in capsys.readouterr().err

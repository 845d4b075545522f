"""``hapticam reproduce`` runs the seed 002 hopper experiments (reduced) and ``bench identify`` times the fit."""

from __future__ import annotations

import json

import pytest

from hapticam.cli import main


def _rows(data):
    return {row[0]: row for row in data["rows"]}


def test_reproduce_lists_and_runs_the_hopper_orbit(tmp_path, capsys):
    assert main(["reproduce", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "seed002-hopper-orbit" in listed and "seed002-hopper-fit" in listed
    assert main(["reproduce", "seed002-hopper-orbit", "--quick", "-o", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["seed002-hopper-orbit"]
    rows = _rows(data)
    ours, paper = rows["fixed point (y, y'), relaxed Euler h = 0.01 s"][1:3]
    y, yd = (float(v) for v in ours.strip("()").split(","))
    assert paper == "(1.95, 1.91)" and abs(y - 1.952) < 0.005 and abs(yd - 1.908) < 0.005
    acc = rows["fixed point (y, y'), accurate (RK4, events located)"][1]
    assert acc == "(1.9650, 1.8757)"
    assert float(rows["fixed point, solve_ivp DOP853 rtol 1e-11 minus accurate"][1]) < 1e-7
    png = tmp_path / "seed002-hopper-orbit" / "seed002_hopper_orbit.png"
    assert data["figures"] == [str(png)] and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 30_000


def test_reproduce_runs_the_hopper_fits_with_the_papers_table(tmp_path, capsys):
    assert main(["reproduce", "seed002-hopper-fit", "--quick", "-o", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["seed002-hopper-fit"]
    rows = _rows(data)
    assert rows["Fig. 2: eps(truth)"][2] == "4.0e-2" and rows["Fig. 2: true z = (sigma, y, y')"][1] == "(4.70, 1.60, 1.00)"
    lm, sd = (float(v) for v in rows["Fig. 2: eps(z*) LM / steepest descent"][1].split("/"))
    assert lm <= float(rows["Fig. 2: eps(truth)"][1]) + 0.002
    assert any(r[0].startswith("Fig. 3") and r[2] == "0.95 (truth 1)" for r in data["rows"])
    for name in ("seed002_fig2.png", "seed002_fig3.png"):
        assert (tmp_path / "seed002-hopper-fit" / name).stat().st_size > 30_000


def test_reproduce_refuses_an_unknown_hopper_experiment(capsys):
    assert main(["reproduce", "seed002-hopper"]) == 2
    err = capsys.readouterr().err
    assert "unknown experiment" in err and "Traceback" not in err


def test_bench_rows_set_ours_beside_solve_ivp_and_the_answers_agree():
    from hapticam.commands.bench.hopper import bench_hopper, format_rows

    rows = bench_hopper(quick=True, repeat=1)
    assert [r["name"].split(",")[0].split(" (")[0] for r in rows] == [
        "one simulation", "fixed point and eigenvalues of DP", "Fig. 2 identification"]
    for r in rows:                                  # times are reported, not asserted (shared machine)
        assert r["ours_s"] > 0 and r["peer_s"] > 0 and r["ratio"] == pytest.approx(r["peer_s"] / r["ours_s"])
        assert float(r["difference"].split()[0]) < 1e-6
    fit = rows[-1]
    assert fit["cost"][0] == pytest.approx(fit["cost"][1], rel=1e-6) and fit["cost"][0] < 0.04
    table = format_rows(rows)
    assert "solve_ivp s" in table and "Fig. 2 identification" in table

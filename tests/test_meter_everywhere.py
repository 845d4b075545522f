"""The Open-Switch-Curve-Meter's own files work everywhere a capture does, without conversion.

Each published spreadsheet (tests/data/meter_files, bluepylons, CC-BY 4.0) goes through the command line
as it is: ``identify impedance SHEET.ods``, ``verify MODEL SHEET.ods`` and ``plot SHEET.ods``. The
reference is the capture itself: the model identified from a sheet, rendered through the servo loop along
the sheet's own probe trajectory, must reproduce its force with a fit of at least 95 % (seed 003 eq. 53)
and no feature a user could feel (the verify exit status says both). A jittered log of another build of
the meter (synthetic: closed-form force, 30 samples a second with 2 ms of jitter and missed samples, which
the reader resamples) must do the same.

Actuation as a feature: a sheet with an ``Actuated?`` column gives the model its switch's actuation and
release points (provenance metrics), ``model show`` prints them and ``verify`` compares them with the
capture's (reference: the capture's own points moved as verify moves its samples; a model whose actuation
point is moved by more than the makers' 0.6 mm tolerance fails).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hapticam.capture import Capture
from hapticam.cli import main
from hapticam.identify.impedance.fit import switch_points_in_model_frame
from hapticam.models.files import load_model, make_provenance, save_model
from hapticam.render.verify.features import ACTUATION_TOLERANCE_M, Thresholds, switch_point_verdicts

METER_DIR = Path(__file__).resolve().parent / "data" / "meter_files"
SHEETS = sorted(METER_DIR.glob("*.ods"))
FIT_PERCENT = 95.0


def _identify_verify_plot(tmp_path: Path, capture: Path, capsys) -> dict:
    """Run the three commands on ``capture``; the verify result as JSON."""
    model = tmp_path / "m.yaml"
    assert main(["identify", "impedance", str(capture), "-o", str(model), "--quiet"]) == 0
    capsys.readouterr()
    status = main(["verify", str(model), str(capture), "--json"])
    result = json.loads(capsys.readouterr().out)
    figure = tmp_path / "x.png"
    assert main(["plot", str(capture), str(model), "-o", str(figure)]) == 0
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert status == 0, result["failures"]
    return result


def test_the_six_published_sheets_are_here():
    assert len(SHEETS) == 6


@pytest.mark.parametrize("sheet", SHEETS, ids=[p.stem for p in SHEETS])
def test_each_sheet_identifies_verifies_and_plots(tmp_path, capsys, sheet):
    result = _identify_verify_plot(tmp_path, sheet, capsys)
    assert result["passed"] and result["fit_percent"] >= FIT_PERCENT
    assert "bluepylons" in result["capture_source"]
    model, doc = load_model(tmp_path / "m.yaml")
    points = {v["name"]: v for v in result["verdicts"] if v["name"] in ("actuation point", "release point")}
    if "actuation_m" not in doc.provenance["metrics"]:
        assert not points                     # no Actuated? contact in this sheet: nothing to compare
        return
    assert set(points) == {"actuation point", "release point"}
    for verdict in points.values():           # the same capture: apart by verify's contact shift only
        assert abs(verdict["difference"] + result["replay"]["x_offset_m"]) < 1e-9
    assert main(["model", "show", str(tmp_path / "m.yaml")]) == 0
    shown = capsys.readouterr().out
    assert f"actuates at {1e3 * doc.provenance['metrics']['actuation_m']:.3f} mm" in shown
    moved = dict(doc.provenance, metrics={**doc.provenance["metrics"],
                                          "actuation_m": doc.provenance["metrics"]["actuation_m"] + 1e-3})
    save_model(tmp_path / "moved.yaml", model, provenance=moved)
    assert main(["verify", str(tmp_path / "moved.yaml"), str(sheet), "--json"]) == 1
    failures = json.loads(capsys.readouterr().out)["failures"]
    assert [f for f in failures if f.startswith("actuation point")] and not [f for f in failures if "fit" in f]


def test_switch_point_verdicts_move_the_capture_as_verify_does():
    captured = {"actuation_m": 2.0e-3, "release_m": 1.9e-3}
    model = {"actuation_m": 2.1e-3, "release_m": 2.7e-3}
    verdicts = {v.name: v for v in switch_point_verdicts(captured, model, backlash_m=0.05e-3, offset_m=0.1e-3)}
    assert verdicts["actuation point"].difference == pytest.approx(0.0, abs=1e-12)
    assert not verdicts["actuation point"].noticeable
    assert verdicts["release point"].reference == pytest.approx(2.05e-3)
    assert verdicts["release point"].difference == pytest.approx(0.65e-3)
    assert verdicts["release point"].noticeable and verdicts["release point"].threshold == ACTUATION_TOLERANCE_M
    tight = Thresholds(actuation_tolerance_m=0.05e-3)
    assert [v.noticeable for v in switch_point_verdicts(captured, {"actuation_m": 2.2e-3}, 0.0, 0.0, tight)] == [True]
    assert switch_point_verdicts(captured, {"actuation_m": float("nan"), "release_m": True}, 0.0, 0.0) == []
    assert switch_point_verdicts({}, model, 0.0, 0.0) == []


def test_identification_carries_the_capture_points_into_the_model_frame():
    t = np.arange(50) * 0.1
    capture = Capture.from_arrays(t, np.linspace(0, 1e-3, 50), np.linspace(0, 1, 50),
                                  metadata={"actuation_m": 2.0e-3, "release_m": 1.9e-3})
    assert switch_points_in_model_frame(capture, 0.015e-3) == {"actuation_m": 2.0e-3,
                                                                "release_m": pytest.approx(1.915e-3)}
    capture.metadata.update(actuation_m="2 mm", release_m=float("inf"))
    assert switch_points_in_model_frame(capture, 0.0) == {}


def test_model_show_says_where_a_switch_actuates(tmp_path, capsys):
    model, _doc = load_model("example:linear-key")
    save_model(tmp_path / "k.yaml", model, provenance=make_provenance(
        "hand-authored", metrics={"actuation_m": 2.0e-3, "release_m": 1.85e-3}))
    assert main(["model", "show", str(tmp_path / "k.yaml")]) == 0
    out = capsys.readouterr().out
    assert "actuates at 2.000 mm" in out and "releases at 1.850 mm" in out
    save_model(tmp_path / "plain.yaml", model)
    assert main(["model", "show", str(tmp_path / "plain.yaml")]) == 0
    assert "actuates" not in capsys.readouterr().out


def _jittered_build_log(path: Path, seed: int = 0) -> None:
    """A log in the other build's format (``Millis,Steps,Travel (mm),Scale raw,Scale (grams)``): travel
    0 -> 4 mm -> 0 at 0.4 mm/s in 2.5 um steps, 30 samples a second with 2 ms of jitter and 3 % of the
    samples missed; force (gram-force) a preload, a spring and a smooth bump, 5 gf less on the release."""
    rng = np.random.default_rng(seed)
    dt = 0.033 + rng.normal(0.0, 0.002, 620)
    dt[rng.random(dt.size) < 0.03] += 0.033
    t_s = np.concatenate([[0.0], np.cumsum(dt)])
    millis = np.round(1000 * t_s)
    t_turn_s = 10.0
    travel_mm = np.where(millis <= 1000 * t_turn_s, 0.4e-3 * millis, 0.4e-3 * (2000 * t_turn_s - millis))
    keep = travel_mm >= 0
    millis, travel_mm = millis[keep], travel_mm[keep]
    steps = np.round(travel_mm * 400)
    travel_mm = steps / 400
    pressing = millis <= 1000 * t_turn_s
    grams = np.round(20.0 + 15.0 * travel_mm + 8.0 * np.sin(3.0 * travel_mm) - 5.0 * ~pressing, 2)
    lines = ["Millis,Steps,Travel (mm),Scale raw,Scale (grams)"]
    lines += [f"{int(m) + 5000},{int(s)},{x:.4f},{int(g * 420 + 8000)},{g:.2f}"
              for m, s, x, g in zip(millis, steps, travel_mm, grams)]
    path.write_text("\n".join(lines) + "\n")


def test_a_jittered_build_log_identifies_verifies_and_plots(tmp_path, capsys):
    log = tmp_path / "build-log.csv"
    _jittered_build_log(log)
    result = _identify_verify_plot(tmp_path, log, capsys)
    assert result["passed"] and result["fit_percent"] >= FIT_PERCENT

"""``hapticam identify friction`` end to end: captures of simulated targets with known friction, the model it
writes, ``hapticam verify`` on a held-out capture, rotary units in the reports, and bad input."""

from __future__ import annotations

import json
import math

import pytest

from hapticam.capture_io import save_capture
from hapticam.cli import main
from hapticam.world.excitations import Triangle, make_excitation
from hapticam.world.knob import DetentKnob, FrictionKey
from hapticam.world.probe import ProbeSpec, simulate
from hapticam.models.files import load_model

TRAVEL_M = 4e-3
TORQUE_SENSOR = ProbeSpec(force_bias_N=0.0, force_noise_N=2e-4, force_resolution_N=1e-4)


def _press(key, speed, seed, cycles=1):
    return simulate(key, Triangle(0.5 * TRAVEL_M, 0.5 * TRAVEL_M, period_s=2 * TRAVEL_M / speed, cycles=cycles),
                    seed=seed).to_capture()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("friction")
    key = FrictionKey(name="friction-key")
    presses = []
    for i, speed in enumerate((1e-3, 3e-3, 1e-2, 3e-2, 1e-1)):
        path = folder / f"press_{i}.csv"
        save_capture(path, _press(key, speed, i))
        presses.append(str(path))
    held_out = folder / "held_out.csv"
    save_capture(held_out, _press(key, 7e-3, 99))
    knob = DetentKnob(name="knob")
    run = simulate(knob, make_excitation("spin-down", 0.0, 2 * math.pi, 1.5), TORQUE_SENSOR)
    spin = run.to_capture()
    spin.metadata["force_absent"] = True                    # written as an angle-only capture
    spin_path = folder / "spin.csv"
    save_capture(spin_path, spin)
    return {"folder": folder, "presses": presses, "held_out": str(held_out), "spin": str(spin_path),
            "key": key, "knob": knob}


def test_key_pressed_at_several_speeds_then_verified_on_a_held_out_capture(files, capsys):
    out = files["folder"] / "key.yaml"
    assert main(["identify", "friction", *files["presses"], "-o", str(out), "--law", "stribeck", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    key = files["key"]
    assert data["experiment"] == "speeds" and data["axis"] == "linear" and data["model_kind"] == "composite"
    assert data["levels"]["coulomb"] == pytest.approx(key.coulomb_Nm, rel=0.05)
    assert data["levels"]["viscous"] == pytest.approx(key.viscous_Nmsprad, rel=0.05)
    assert data["levels"]["stribeck_peak"] == pytest.approx(key.stribeck_Nm, rel=0.10)
    assert data["levels"]["shape_speed"] == pytest.approx(key.stribeck_radps, rel=0.10)
    model, doc = load_model(out)
    assert doc.axis == "linear" and doc.uncertainty["friction"]["mu_d"] > 0
    friction = model.components()[1]
    assert friction.law == "stribeck" and friction["mu_s"] > friction["mu_d"]
    code = main(["verify", str(out), files["held_out"], "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    assert result["fit_percent"] >= 95.0
    assert result["axis"] == "linear" and result["units"]["force"] == "N"


def test_knob_spin_down_angle_only_writes_a_rotary_friction_model_with_units(files, capsys):
    out = files["folder"] / "knob.yaml"
    knob = files["knob"]
    assert main(["identify", "friction", files["spin"], "-o", str(out), "--inertia", str(knob.inertia_kgm2)]) == 0
    text = capsys.readouterr().out
    assert "rotary axis" in text and "N m s/rad" in text and "rad/s" in text and "N m" in text
    model, doc = load_model(out)
    assert doc.axis == "rotary" and model.kind == "friction"
    assert model["mu_d"] == pytest.approx(knob.coulomb_Nm, rel=0.05)          # F_n = 1: mu_d is the Coulomb level
    assert model["mu_v_Nspm"] == pytest.approx(knob.viscous_Nmsprad, rel=0.05)
    assert model["mu_s"] - model["mu_d"] == pytest.approx(knob.stribeck_Nm, rel=0.10)
    assert main(["model", "show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "axis:     rotary" in shown and "v_t_mps:" in shown and "rad/s" in shown.split("v_t_mps:")[1].splitlines()[0]


def test_uas_method_says_its_output_is_not_identified_friction(files, capsys):
    out = files["folder"] / "uas.yaml"
    assert main(["identify", "friction", files["spin"], "-o", str(out), "--method", "uas", "--experiment",
                 "spin-down", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["identified"] is False and "NOT identified friction" in data["statement"]
    # whatever the knob did, the parameters sit at eq. 23's end point (Table II's bounds and gamma)
    assert data["relative_distance_from_end_point"] < 1e-3
    _, doc = load_model(out)
    assert any("NOT identified" in n for n in doc.provenance["notes"])


@pytest.mark.parametrize("extra, needle", [
    (["--law", "dahl"], "unknown friction law"),
    (["--inertia", "-1e-3"], "--inertia"),
    (["--added-inertia", "-1"], "--added-inertia"),
    (["--experiment", "speeds"], "no force (torque) column"),
])
def test_bad_input_exits_2_with_one_line(files, capsys, extra, needle):
    out = files["folder"] / "bad.yaml"
    assert main(["identify", "friction", files["spin"], "-o", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_capture_without_the_needed_columns_exits_2(files, capsys, tmp_path):
    bad = tmp_path / "no_angle.csv"
    bad.write_text("t_s,torque_Nm\n" + "\n".join(f"{i / 1000},{0.01}" for i in range(100)) + "\n")
    assert main(["identify", "friction", str(bad), "-o", str(tmp_path / "m.yaml"), "--inertia", "1e-3"]) == 2
    err = capsys.readouterr().err.strip()
    assert "missing column theta_rad" in err and len(err.splitlines()) == 1


def test_friction_added_to_another_model_as_a_composite(files, capsys):
    from hapticam.models.files import save_model
    from hapticam.models.impedance import position_table

    table = files["folder"] / "table.yaml"
    save_model(table, position_table([0.0, 4e-3], [0.3, 0.54]))
    out = files["folder"] / "sum.yaml"
    assert main(["identify", "friction", *files["presses"][:3], "-o", str(out), "--law", "coulomb-viscous",
                 "--add-to", str(table)]) == 0
    assert "friction added to" in capsys.readouterr().out
    model, _ = load_model(out)
    assert [m.kind for m in model.components()] == ["segmented-impedance", "friction"]
    assert main(["identify", "friction", files["spin"], "-o", str(out), "--inertia", "1e-3", "--add-to",
                 str(table)]) == 2
    assert "a linear model; the captures are rotary" in capsys.readouterr().err

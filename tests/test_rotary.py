"""Rotary axes: angle and torque columns, the axis kind in captures and model files, and the knob target."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hapticam.capture import Capture
from hapticam.capture_columns import parameter_unit
from hapticam.capture_io import load_capture, save_capture
from hapticam.cli import main
from hapticam.world.knob import DetentKnob, SpeedProfile, spin_down, turns
from hapticam.world.probe import ProbeSpec, simulate
from hapticam.errors import CaptureError, ModelFileError
from hapticam.models.files import document_from_mapping, load_model, save_model
from hapticam.models.friction import Friction


def _write(path, header, rows):
    path.write_text(header + "\n" + "\n".join(",".join(f"{v:.9g}" for v in r) for r in rows) + "\n")
    return path


def _rows(n=200):
    t = np.arange(n) / 1000.0
    return np.column_stack([t, 3.0 * t, 0.01 * np.sin(t)])


def test_rotary_columns_convert_to_si_and_mark_the_axis(tmp_path):
    rows = _rows()
    rows_deg = rows.copy()
    rows_deg[:, 1] = np.degrees(rows[:, 1])
    rows_deg[:, 2] *= 1e3
    cap = load_capture(_write(tmp_path / "k.csv", "t_s,theta_deg,torque_mNm", rows_deg))
    assert cap.metadata["axis"] == "rotary"
    np.testing.assert_allclose(cap.x_m, rows[:, 1], rtol=1e-8)       # degrees -> rad
    np.testing.assert_allclose(cap.f_N, rows[:, 2], rtol=1e-8)       # mN m -> N m
    linear = load_capture(_write(tmp_path / "l.csv", "t_s,x_m,force_N", rows))
    assert linear.metadata.get("axis", "linear") == "linear"


def test_a_rotary_capture_round_trips_with_rotary_column_names(tmp_path):
    rows = _rows()
    cap = Capture.from_arrays(rows[:, 0], rows[:, 1], rows[:, 2], metadata={"axis": "rotary"})
    for suffix in (".csv", ".npz"):
        path = tmp_path / f"r{suffix}"
        save_capture(path, cap)
        back = load_capture(path)
        assert back.metadata["axis"] == "rotary"
        np.testing.assert_array_equal(back.x_m, cap.x_m)
    assert (tmp_path / "r.csv").read_text().splitlines()[-len(rows) - 1] == "t_s,theta_rad,torque_Nm"


def test_angle_only_capture_is_a_spin_down_with_torque_absent(tmp_path):
    rows = _rows()
    cap = load_capture(_write(tmp_path / "a.csv", "t_s,theta_rad", rows[:, :2]))
    assert cap.metadata["force_absent"] is True and not cap.f_N.any()
    assert any("angle-only" in n for n in cap.notes)
    save_capture(tmp_path / "again.csv", cap)
    assert "torque_Nm" not in (tmp_path / "again.csv").read_text()


@pytest.mark.parametrize("header, needle", [
    ("t_s,theta_rad,force_N", "mixed"),
    ("t_s,x_m", "missing column force_N"),
    ("t_s,torque_Nm", "missing column theta_rad"),
    ("t_s,theta_furlong,torque_Nm", "unknown unit"),
])
def test_bad_rotary_columns_are_refused_with_one_message(tmp_path, header, needle):
    ncol = header.count(",") + 1
    with pytest.raises(CaptureError, match=needle):
        load_capture(_write(tmp_path / "bad.csv", header, _rows()[:, :ncol]))


def test_bad_axis_in_metadata_is_refused(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("# axis: diagonal\n" + "t_s,x_m,force_N\n" + "\n".join(f"{i},{i},{i}" for i in range(50)))
    with pytest.raises(CaptureError, match="axis"):
        load_capture(path)


def test_model_files_carry_the_axis_and_old_files_stay_linear(tmp_path):
    friction = Friction("coulomb-viscous", Fc_N=0.02, b_v_Nspm=1e-3)
    save_model(tmp_path / "knob.yaml", friction, axis="rotary")
    save_model(tmp_path / "key.yaml", friction)
    assert load_model(tmp_path / "knob.yaml")[1].axis == "rotary"
    assert "axis" not in (tmp_path / "key.yaml").read_text()          # linear files read as before
    assert load_model(tmp_path / "key.yaml")[1].axis == "linear"
    raw = {"format": "hapticam-model", "schema_version": 1, "kind": "friction", "axis": "helical",
           "parameters": friction.to_dict()}
    with pytest.raises(ModelFileError, match="axis"):
        document_from_mapping(raw)
    assert main(["model", "convert", str(tmp_path / "knob.yaml"), str(tmp_path / "knob.msgpack")]) == 0
    assert load_model(tmp_path / "knob.msgpack")[1].axis == "rotary"


def test_units_of_parameters_on_each_axis():
    assert parameter_unit("Fc_N", "rotary") == "N m" and parameter_unit("Fc_N", "linear") == "N"
    assert parameter_unit("b_v_Nspm", "rotary") == "N m s/rad" and parameter_unit("k_Npm", "rotary") == "N m/rad"
    assert parameter_unit("v_t_mps", "rotary") == "rad/s" and parameter_unit("mu_d", "rotary") == ""


def test_speed_profile_is_the_integral_of_its_speed():
    prof = turns(0.3, speeds=(1.0, 4.0), hold_s=0.5)
    t = np.linspace(0.0, prof.duration_s, 200001)
    w = prof.velocity(t)
    theta = 0.3 + np.concatenate([[0.0], np.cumsum(0.5 * (w[1:] + w[:-1]) * np.diff(t))])   # trapezoid
    np.testing.assert_allclose(prof.position(t), theta, atol=1e-8)
    h = 1e-6
    mid = t[1:-1:997]
    np.testing.assert_allclose(prof.acceleration(mid), (prof.velocity(mid + h) - prof.velocity(mid - h)) / (2 * h),
                               atol=1e-3)
    assert prof.velocity(prof.duration_s) == 0.0
    with pytest.raises(Exception, match="one more speed"):
        SpeedProfile(0.0, (0.0, 1.0), (1.0, 1.0))


def test_knob_spin_down_coasts_under_its_friction_and_records_the_shafts_angle():
    knob = DetentKnob(name="knob", detent_Nm=0.0)
    prof = spin_down(0.0, 10.0, coast_s=1.0)
    run = simulate(knob, prof, ProbeSpec(force_noise_N=0.0, force_bias_N=0.0))
    w = run.observable("omega_radps")
    t = run.t_s
    release = int(np.searchsorted(t, 0.75))           # after the brake (0.5 + 0.2 + 0.01 s) the clutch is open
    assert np.all(run.force_N[release:] == 0.0)
    # coasting: J w' = -T_f(w); integrate the knob's own law from the release speed and compare
    wi, dt = w[release], t[1] - t[0]
    ref = [wi]
    for _ in range(release, release + 1200):
        wi -= dt * float(knob.friction(wi)) / knob.inertia_kgm2
        ref.append(wi)
    np.testing.assert_allclose(w[release:release + 1201], ref, atol=0.02)
    assert run.x_m[-1] == pytest.approx(run.observable("theta_rad")[-1], abs=1e-6)   # the encoder is on the shaft
    assert run.metadata["axis"] == "rotary"
    # the carriage stopped at the brake; the knob went on turning
    assert run.x_cmd_m[-1] < run.x_m[-1] - 1.0


def test_spin_down_model_verified_on_held_out_turns_with_rotary_units(tmp_path, capsys):
    """The knob's friction from a spin-down (angle only), rendered and replayed along held-out constant-speed
    turns (gentle speed changes: the model has no inertia term): fit >= 95 %, reported in N m."""
    from hapticam.world.excitations import make_excitation
    from hapticam.identify.friction.spin_down import fit_spin_downs

    knob = DetentKnob(name="knob")
    sensor = ProbeSpec(force_bias_N=0.0, force_noise_N=2e-4)
    spin = simulate(knob, make_excitation("spin-down", 0.0, 2 * math.pi, 1.5), sensor).to_capture()
    fit, _ = fit_spin_downs([spin], "stribeck", inertia=knob.inertia_kgm2)
    model = tmp_path / "knob.yaml"
    save_model(model, fit.to_model(), axis="rotary")
    held_out = simulate(knob, turns(0.0, speeds=(1.0, 4.0), hold_s=1.0, accel=5.0), sensor, seed=5)
    cap = tmp_path / "turns.csv"
    save_capture(cap, held_out.to_capture())
    main(["verify", str(model), str(cap), "--x-offset-mm", "0", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["fit_percent"] >= 95.0 and data["axis"] == "rotary" and data["units"]["force"] == "N m"
    main(["verify", str(model), str(cap), "--x-offset-mm", "0"])
    text = capsys.readouterr().out
    assert "rotary axis: rad, N m" in text and "RMS error (N m)" in text
    save_model(tmp_path / "lin.yaml", Friction("coulomb-viscous", Fc_N=0.02))
    assert main(["verify", str(tmp_path / "lin.yaml"), str(cap)]) == 2
    assert "rotary capture" in capsys.readouterr().err


def test_render_refuses_a_rotary_model_on_a_linear_handle_and_a_control_swap_to_one(tmp_path, capsys):
    """A knob's model (rad, N m) was rendered on the simulator's handle as if in m and N; render now exits 2
    naming the axis, and the loader a render session swaps models with refuses it too."""
    from hapticam.models.files import load_model_to_render

    friction = Friction("coulomb-viscous", Fc_N=0.02, b_v_Nspm=1e-3)
    save_model(tmp_path / "knob.yaml", friction, axis="rotary")
    save_model(tmp_path / "key.yaml", friction)
    assert main(["render", str(tmp_path / "knob.yaml"), "--simulated-clock", "--duration", "0.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a rotary model (rad, N m)" in err[0] and "linear axis" in err[0]
    with pytest.raises(ModelFileError, match="rotary model"):
        load_model_to_render(tmp_path / "knob.yaml")
    assert load_model_to_render(tmp_path / "key.yaml").to_dict() == friction.to_dict()
    assert main(["render", str(tmp_path / "key.yaml"), "--simulated-clock", "--duration", "0.1"]) == 0

"""Knobs rendered: a rotary model (rad, N m) on the simulated rotary device (``--device sim:rotary``), its
torque checked against the model's closed form along the recorded angle and speed, and the refusals of a
model on the other axis kind."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hapticam.capture_io import load_capture
from hapticam.cli import main
from hapticam.devices.base import DeviceSpec
from hapticam.devices.registry import device_axis, device_from_spec
from hapticam.world.sim import ROTARY_PARAMS, SimParams
from hapticam.errors import DeviceError, ModelFileError, UsageError
from hapticam.models.composite import Composite
from hapticam.models.files import load_model_to_render, save_model
from hapticam.models.friction import Friction
from hapticam.models.impedance import position_table

DETENT_NM = 0.004                 # detent amplitude A (N m)
DETENTS_PER_REV = 12              # N
COULOMB_NM = 0.01                 # Fc (N m)
VISCOUS_NMS = 5e-4                # b (N m s/rad)
SMOOTHING_RADPS = 0.05            # v_eps (rad/s) of the Coulomb term's tanh


def _knob() -> Composite:
    """Detents ``A sin(N theta)`` as a dense angle table plus Coulomb-viscous friction (rad, N m)."""
    theta = np.linspace(-1.0, 1.0, 2001)                         # a model file's angle table spans +-1 rad
    detents = position_table(theta, DETENT_NM * np.sin(DETENTS_PER_REV * theta))
    friction = Friction("coulomb-viscous", Fc_N=COULOMB_NM, b_v_Nspm=VISCOUS_NMS, v_eps_mps=SMOOTHING_RADPS)
    return Composite([detents, friction])


def _closed_form(theta: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """The knob's torque (N m) at angle ``theta`` (rad) and speed ``omega`` (rad/s)."""
    return (DETENT_NM * np.sin(DETENTS_PER_REV * theta) + COULOMB_NM * np.tanh(omega / SMOOTHING_RADPS)
            + VISCOUS_NMS * omega)


def _columns(path) -> dict[str, np.ndarray]:
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    names = lines[0].split(",")
    rows = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    return {name: rows[:, i] for i, name in enumerate(names)}


def test_a_knob_renders_its_closed_form_torque_along_the_turned_angle(tmp_path, capsys):
    model, record = tmp_path / "knob.yaml", tmp_path / "turn.csv"
    save_model(model, _knob(), axis="rotary")
    assert main(["render", str(model), "--device", "sim:rotary", "--simulated-clock", "--duration", "1",
                 "--record", str(record)]) == 0
    assert "turned by a hand" in capsys.readouterr().out
    cap = load_capture(record)
    assert cap.metadata["axis"] == "rotary"                       # the recording reads back in rad and N m
    c = _columns(record)
    theta, omega, torque_model, torque = c["x_m"], c["v_mps"], c["force_cmd_N"], c["force_N"]
    # the hand turned the knob through several detents, both ways
    assert theta.max() - theta.min() > 2 * (2 * math.pi / DETENTS_PER_REV)
    assert omega.max() > 1.0 and omega.min() < -1.0
    np.testing.assert_allclose(torque_model, _closed_form(theta, omega), atol=2e-6)   # table interpolation only
    ramped = np.nonzero(torque != torque_model)[0]
    settled = slice((ramped.max() + 1) if ramped.size else 0, None)                   # after the ramp-in
    assert theta[settled].size > 500
    np.testing.assert_allclose(torque[settled], _closed_form(theta[settled], omega[settled]), atol=2e-6)
    assert np.abs(torque).max() <= ROTARY_PARAMS.max_force_N


@pytest.mark.parametrize("axis, device, needle", [("linear", "sim:rotary", "a linear model"),
                                                  ("rotary", "sim", "a rotary model")])
def test_a_model_on_the_other_axis_kind_is_refused_with_one_line(tmp_path, capsys, axis, device, needle):
    model = tmp_path / "m.yaml"
    save_model(model, Friction("coulomb-viscous", Fc_N=0.01, b_v_Nspm=5e-4), axis=axis)
    assert main(["render", str(model), "--device", device, "--simulated-clock", "--duration", "0.05"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]


def test_the_loader_reads_a_model_in_its_devices_units(tmp_path):
    """What render and a render's model swaps load: a knob's model on a rotary device, a key's on a linear one."""
    friction = Friction("coulomb-viscous", Fc_N=0.01)
    save_model(tmp_path / "knob.yaml", friction, axis="rotary")
    save_model(tmp_path / "key.yaml", friction)
    assert load_model_to_render(tmp_path / "knob.yaml", "rotary").to_dict() == friction.to_dict()
    with pytest.raises(ModelFileError, match="linear model"):
        load_model_to_render(tmp_path / "key.yaml", "rotary")
    with pytest.raises(ModelFileError, match="rotary model"):
        load_model_to_render(tmp_path / "knob.yaml")


def test_the_simulated_rotary_device_states_its_axis_and_refuses_other_addresses():
    assert device_axis("sim:rotary") == "rotary" and device_axis("sim") == "linear"
    knob = device_from_spec("sim:rotary")
    assert knob.spec.axis == "rotary" and knob.spec.max_force_N == ROTARY_PARAMS.max_force_N
    assert device_from_spec("sim").spec.axis == "linear"
    with pytest.raises(DeviceError, match="rotary"):
        device_from_spec("sim:helical")
    with pytest.raises(DeviceError, match="axis"):
        DeviceSpec(name="x", max_force_N=1.0, max_force_rate_N_per_s=1.0, max_stiffness_N_per_m=0.0,
                   workspace_m=(-1.0, 1.0), resolution_m=0.0, damping_N_s_per_m=0.0, axis="helical")
    with pytest.raises(UsageError, match="axis"):
        SimParams(axis="helical")


def test_the_python_api_renders_a_knob_on_the_rotary_device_as_the_command_does(tmp_path):
    """``hapticam.render_model`` reads a rotary model file in the rotary device's units (rad, N m), as
    ``render --device sim:rotary`` does: the recorded torque is the knob's closed form."""
    import hapticam

    model, record = tmp_path / "knob.yaml", tmp_path / "turn.csv"
    save_model(model, _knob(), axis="rotary")
    report = hapticam.render_model(model, "sim:rotary", realtime=False, duration_s=1.0, record=record)
    assert report.stats.ticks == 1000 and not report.stats.fault and report.recording[1] == 1000
    assert load_capture(record).metadata["axis"] == "rotary"
    c = _columns(record)
    assert c["x_m"].max() - c["x_m"].min() > 2 * (2 * math.pi / DETENTS_PER_REV)
    np.testing.assert_allclose(c["force_cmd_N"], _closed_form(c["x_m"], c["v_mps"]), atol=2e-6)
    with pytest.raises(ModelFileError, match="rotary model"):
        hapticam.render_model(model, "sim", realtime=False, duration_s=0.05)


def test_a_knobs_angle_table_may_span_turns_where_a_keys_table_is_refused(tmp_path):
    """Lengths are bounded at 1 m on a linear axis and at a hundred turns on a rotary one: a detent table over
    two turns loads as a knob's model (rad) and is refused, with the bound named, as a key's (m)."""
    theta = np.linspace(0.0, 4.0 * np.pi, 401)
    table = position_table(theta, DETENT_NM * np.sin(DETENTS_PER_REV * theta))
    save_model(tmp_path / "knob.yaml", table, axis="rotary")
    assert load_model_to_render(tmp_path / "knob.yaml", "rotary").to_dict() == table.to_dict()
    with pytest.raises(ModelFileError, match=r"outside -1 \.\. 1 m"):
        save_model(tmp_path / "key.yaml", table)
    beyond = position_table(np.array([0.0, 201.0 * np.pi]), np.zeros(2))
    with pytest.raises(ModelFileError, match="rad"):
        save_model(tmp_path / "far.yaml", beyond, axis="rotary")

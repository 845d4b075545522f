"""Knobs over the serial protocol: a firmware that answers AXIS with rotary is a knob (rad, N m in INFO's,
STATE's and FORCE's fields); a knob's model rendered on the emulated rotary firmware gives its closed-form
torque along the recorded angle; models on the other axis kind are refused with one line; a firmware from
before the AXIS frame stays linear."""

from __future__ import annotations

import json
import math
import os
import shutil

import numpy as np
import pytest

pytest.importorskip("serial")

from hapticam.cli import main  # noqa: E402
from hapticam.devices import hsp_frames as hf  # noqa: E402
from hapticam.devices.hsp_emulator import HspEmulator, build_emulator  # noqa: E402
from hapticam.devices.registry import device_axis  # noqa: E402
from hapticam.devices.serial_device import SerialDevice  # noqa: E402
from hapticam.world.sim import ROTARY_PARAMS, SimParams, turning_hand  # noqa: E402
from hapticam.errors import DeviceError  # noqa: E402
from hapticam.models.files import save_model  # noqa: E402
from hapticam.models.friction import Friction  # noqa: E402

from test_device_serial import _exchange  # noqa: E402
from test_knob_render import DETENTS_PER_REV, _closed_form, _columns, _knob  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")

#: the interpolation of the knob's 2001-point detent table (N m), as on the simulated knob
TABLE_NM = 2e-6


@pytest.fixture(scope="module")
def emu_exe(tmp_path_factory):
    return build_emulator(tmp_path_factory.mktemp("hsp"))


def _knob_firmware(emu_exe, **kw) -> HspEmulator:
    """The emulated knob: the simulated knob's rotor (kg m^2), damping (N m s/rad), peak torque (N m) and
    encoder (counts per rad), turned by the simulated hand."""
    return HspEmulator(ROTARY_PARAMS, turning_hand(2.0), executable=emu_exe, name="knob-emu", **kw)


def test_the_firmware_answers_axis_with_its_kind_and_an_old_one_with_unknown_type(emu_exe):
    for firmware, want in ((_knob_firmware(emu_exe), [(hf.T_AXIS_INFO, bytes([hf.AXIS_ROTARY]))]),
                           (HspEmulator(executable=emu_exe), [(hf.T_AXIS_INFO, bytes([hf.AXIS_LINEAR]))]),
                           (HspEmulator(executable=emu_exe, axis_frame=False),
                            [(hf.T_ERROR, bytes([hf.T_AXIS, hf.E_TYPE]))])):
        with firmware as port:
            fd = os.open(port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
            try:
                assert _exchange(fd, hf.frame(hf.T_AXIS), 1) == want
            finally:
                os.close(fd)
    assert hf.unpack_axis_info(bytes([1])) == "rotary"
    with pytest.raises(DeviceError, match="axis kind"):
        hf.unpack_axis_info(bytes([7]))


def test_the_device_states_the_firmwares_axis_and_units(emu_exe):
    """The spec of a knob's firmware is rotary, with INFO's figures read in rad, N m, N m s/rad and kg m^2;
    a firmware without the AXIS frame, and one answering linear, give a linear spec; the address names none."""
    assert device_axis("serial:/dev/ttyACM0") is None          # the firmware tells, at open
    with _knob_firmware(emu_exe) as port, SerialDevice(port) as dev:
        spec = dev.spec
        assert spec.axis == "rotary"
        assert spec.max_force_N == pytest.approx(ROTARY_PARAMS.max_force_N, rel=1e-6)              # N m
        assert spec.resolution_m == pytest.approx(ROTARY_PARAMS.resolution_m, rel=1e-6)            # rad per count
        assert spec.apparent_mass_kg == pytest.approx(ROTARY_PARAMS.handle_mass_kg, rel=1e-6)      # kg m^2
        assert spec.max_stiffness_N_per_m == pytest.approx(2 * ROTARY_PARAMS.damping_N_s_per_m / 1e-3, rel=1e-6)
        assert any("rotary" in note and "counts/rad" in note for note in dev.notes)
    for firmware in (HspEmulator(SimParams(), executable=emu_exe), HspEmulator(executable=emu_exe, axis_frame=False)):
        with firmware as port, SerialDevice(port) as dev:
            assert dev.spec.axis == "linear" and dev.spec.resolution_m == pytest.approx(1e-6)
    with pytest.raises(DeviceError, match="AXIS"):
        HspEmulator(ROTARY_PARAMS, executable=emu_exe, axis_frame=False)


def test_a_knob_renders_its_closed_form_torque_over_the_serial_link(tmp_path, capsys, emu_exe):
    """A knob's model (detents, Coulomb-viscous friction) rendered on the emulated rotary firmware: the torque
    the model commands at each recorded angle (quantised to the encoder's counts) and speed is the closed
    form, and so is the torque sent outside the loop's ramps."""
    model, record = tmp_path / "knob.yaml", tmp_path / "turn.csv"
    save_model(model, _knob(), axis="rotary")
    with _knob_firmware(emu_exe) as port:
        code = main(["render", str(model), "--device", f"serial:{port}", "--duration", "1", "--record", str(record),
                     "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    stats = json.loads(out.out)["stats"]
    c = _columns(record)
    theta, omega, torque_model, torque = c["x_m"], c["v_mps"], c["force_cmd_N"], c["force_N"]
    counts = theta * float(f"{1.0 / ROTARY_PARAMS.resolution_m:.7g}")     # INFO's float32 counts per rad
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-2)  # on the encoder's grid (to the CSV's digits)
    assert theta.max() - theta.min() > 2 * (2 * math.pi / DETENTS_PER_REV)    # turned through several detents
    step = np.diff(theta)
    assert (step > 0).sum() > 100 and (step < 0).sum() > 100                  # both ways
    np.testing.assert_allclose(torque_model, _closed_form(theta, omega), atol=TABLE_NM)
    # the torque sent: the model's, but scaled down while the loop ramps it in (at the start, and after a late
    # reply of a loaded machine's pseudo-terminal)
    assert np.all(np.abs(torque) <= np.abs(torque_model) + 1e-12)
    assert np.abs(torque).max() <= ROTARY_PARAMS.max_force_N
    sent = torque == torque_model
    late = stats["interventions"].get("stale-device", 0)
    if sent.sum() <= 100 and (late or stats["misses"]):
        # each late reply zeroes the torque and ramps it in again: a loaded host may leave no tick at full torque
        pytest.skip(f"this machine answered late ({late} stale ticks, {stats['misses']} deadlines missed): "
                    f"{sent.sum()} ticks at the model's full torque")
    assert sent.sum() > 100
    np.testing.assert_allclose(torque[sent], _closed_form(theta[sent], omega[sent]), atol=TABLE_NM)


@pytest.mark.parametrize("model_axis, rotary_firmware, needle", [("linear", True, "a linear model"),
                                                                 ("rotary", False, "a rotary model")])
def test_a_model_on_the_other_axis_kind_is_refused_with_one_line(tmp_path, capsys, emu_exe, model_axis,
                                                                  rotary_firmware, needle):
    model = tmp_path / "m.yaml"
    save_model(model, Friction("coulomb-viscous", Fc_N=0.01, b_v_Nspm=5e-4), axis=model_axis)
    firmware = _knob_firmware(emu_exe) if rotary_firmware else HspEmulator(executable=emu_exe, axis_frame=False)
    with firmware as port:
        code = main(["render", str(model), "--device", f"serial:{port}", "--duration", "0.2"])
        summary = firmware.stop()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and needle in err[0]
    # refused before the loop's first tick (0.2 s would be 200 FORCE frames): the close's zero force only, then DISABLE
    assert summary["forces"] <= 2 and summary["disables"] >= 1


def test_a_model_file_is_read_once_for_a_device_that_states_its_axis_at_open(tmp_path, capsys, emu_exe, monkeypatch):
    """The file is read before the port opens and checked against the axis the firmware states (the refusals
    above); it is not read again once the device is open."""
    from hapticam.models import files

    model = tmp_path / "knob.yaml"
    save_model(model, Friction("coulomb-viscous", Fc_N=0.01, b_v_Nspm=5e-4), axis="rotary")
    reads, read = [], files.load_model
    monkeypatch.setattr(files, "load_model", lambda source: reads.append(str(source)) or read(source))
    with _knob_firmware(emu_exe) as port:
        code = main(["render", str(model), "--device", f"serial:{port}", "--duration", "0.2"])
    assert code == 0, capsys.readouterr().err
    assert reads == [str(model)]

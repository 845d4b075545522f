"""``hapticam verify --device NAME``: the capture replayed through a device as displayed, against the ideal
replay and against the series law of the display's virtual coupling."""

from __future__ import annotations

import importlib.util
import json
import shutil

import numpy as np
import pytest

from hapticam.capture_io import load_capture
from hapticam.cli import main
from hapticam.world.sim import SimParams
from hapticam.errors import ParameterError, UsageError
from hapticam.models.files import load_model
from hapticam.render.display import DISPLAY_MARGIN
from hapticam.render.verify import verify
from hapticam.commands.verify import summary_table
from hapticam.render.verify.device_replay import DEVICE_CHOICES, MAX_REALTIME_REPLAY_S, check_device

from conftest import SWITCH_DIR

MODEL = "example:gateron-brown"
CAPTURE = SWITCH_DIR / "Gateron-Brown.csv"
#: `hapticam verify example:gateron-brown tests/data/switch_curves/Gateron-Brown.csv` before --device existed
IDEAL_FIT_PERCENT = 99.77995640760653
IDEAL_RMS_N = 0.0071680924878399594


@pytest.fixture(scope="module")
def model():
    return load_model(MODEL)[0]


@pytest.fixture(scope="module")
def capture():
    return load_capture(CAPTURE)


@pytest.fixture(scope="module")
def ideal(model, capture):
    return verify(model, capture, model_name=MODEL)


@pytest.fixture(scope="module")
def on_sim(model, capture):
    return verify(model, capture, model_name=MODEL, device="sim")


def test_the_ideal_replay_says_so_and_keeps_its_fit(ideal) -> None:
    assert ideal.device["name"] is None and ideal.device["note"].startswith("ideal replay")
    assert ideal.fit_percent == pytest.approx(IDEAL_FIT_PERCENT, abs=1e-6)
    assert ideal.rms_N == pytest.approx(IDEAL_RMS_N, rel=1e-6)
    device_lines = [line for line in summary_table(ideal).splitlines() if line.strip().startswith("device:")]
    assert len(device_lines) == 1 and "ideal replay" in device_lines[0]
    assert ideal.to_dict()["device"] == ideal.device


def test_device_sim_displays_the_stiff_floor_through_a_passive_coupling(on_sim) -> None:
    section = on_sim.device
    params = SimParams()
    assert section["name"] == "sim" and section["spec"] == params.spec().to_dict()   # the device's own, not sized
    plan = section["display"]
    k, kc = plan["model_stiffness_Npm"], plan["coupling_Npm"]
    passive = 2.0 * params.damping_N_s_per_m * 1000.0          # K < 2 b / T at 1 kHz (Colgate & Schenkel)
    assert k > passive and kc == pytest.approx(DISPLAY_MARGIN * passive)
    assert section["displayed_stiffness_Npm"] == pytest.approx(k * kc / (k + kc)) and kc * k / (k + kc) < passive
    assert section["display_summary"] == plan["summary"]
    assert section["saturated_ticks"] == 0 and "saturation" not in on_sim.safety_events
    assert section["energy_out_J"] <= 1e-3
    table = summary_table(on_sim)
    assert "device: sim" in table and plan["summary"] in table


def test_through_the_coupling_the_hand_feels_the_model_at_the_proxy(ideal, on_sim) -> None:
    # Series law of the coupling: the handle at x receives F with the model's force F at the proxy x - F / k_c.
    # The ideal replay renders the model at the handle, so its F-x curve per direction is the model's.
    kc = on_sim.device["display"]["coupling_Npm"]
    for direction in (1, -1):
        ref = ideal.valid & (ideal.direction == direction)
        order = np.argsort(ideal.x_rendered_m[ref])
        x_model, f_model = ideal.x_rendered_m[ref][order], ideal.force_rendered_N[ref][order]
        sel = on_sim.valid & (on_sim.direction == direction)
        f = on_sim.force_rendered_N[sel]
        at_proxy = np.interp(on_sim.x_rendered_m[sel] - f / kc, x_model, f_model)
        at_handle = np.interp(on_sim.x_rendered_m[sel], x_model, f_model)
        rms = float(np.sqrt(np.mean((f - at_proxy) ** 2)))
        assert rms < 0.01                                             # measured 2.6 and 3.7 mN
        assert float(np.sqrt(np.mean((f - at_handle) ** 2))) > 3.0 * rms   # the floor is not the model's


def test_the_json_has_the_device_section(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["verify", MODEL, str(CAPTURE), "--device", "sim", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    device = out["device"]
    assert device["name"] == "sim" and device["spec"]["max_force_N"] == SimParams().max_force_N
    assert {"display", "saturated_ticks", "energy_out_J", "transients"} <= set(device)
    assert device["display"]["displayed_Npm"] < device["display"]["model_stiffness_Npm"]


def test_an_unknown_device_is_one_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["verify", MODEL, str(CAPTURE), "--device", "nope"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert all(name in err for name in DEVICE_CHOICES)


def test_phantom_without_its_means_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyOpenHaptics" else real_find_spec(name, *a))
    with pytest.raises(UsageError, match="pyOpenHaptics"):
        check_device("phantom")
    monkeypatch.setattr(importlib.util, "find_spec", real_find_spec)
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(UsageError, match="compiler"):
        check_device("phantom")


def test_replays_a_device_cannot_make_are_refused(model, capture) -> None:
    duration_s = float(capture.t_s[-1] - capture.t_s[0])        # at speed x1 the replay lasts the capture
    assert duration_s > MAX_REALTIME_REPLAY_S
    with pytest.raises(UsageError, match="real time"):
        verify(model, capture, speedup=1.0, device="zmq")
    with pytest.raises(ParameterError) as refused:                # it sizes the ideal replay's device
        verify(model, capture, device="sim", max_force_N=20.0)
    assert refused.value.parameter == "max_force_N"
    hi = SimParams().workspace_m[1]
    with pytest.raises(UsageError, match="workspace"):           # the capture moved past the device's travel
        verify(model, capture, device="sim", x_offset_m=hi)
    with pytest.raises(UsageError, match="rotary"):              # the devices are linear
        check_device("sim", axis="rotary")


@pytest.mark.skipif(importlib.util.find_spec("pyOpenHaptics") is None, reason="pyOpenHaptics is not installed")
@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_device_phantom_renders_the_simulators_forces(model, capture, on_sim) -> None:
    # The HDAPI emulator runs the simulator's plant, tick for tick, without its sensor noise (0.3 um here):
    # the noise moves the sensed position by at most one encoder count q (1 um) in nearly every tick, which the
    # coupling k_c turns into k_c q = 3.6 mN. Measured: max 4.2 mN, RMS 0.23 mN.
    on_phantom = verify(model, capture, model_name=MODEL, device="phantom")
    section, params = on_phantom.device, SimParams()
    assert section["clock"] == "real-time" and section["fault"] is None
    assert section["display"]["coupling_Npm"] == on_sim.device["display"]["coupling_Npm"]
    count_N = section["display"]["coupling_Npm"] * params.resolution_m
    diff = on_phantom.force_rendered_N - on_sim.force_rendered_N
    assert np.max(np.abs(diff)) <= 2.0 * count_N and np.sqrt(np.mean(diff ** 2)) <= 0.3 * count_N
    assert np.max(np.abs(on_phantom.x_rendered_m - on_sim.x_rendered_m)) <= 2.0 * params.resolution_m
    assert on_phantom.fit_percent == pytest.approx(on_sim.fit_percent, abs=0.1)
    assert section["saturated_ticks"] == 0 and section["energy_out_J"] <= 1e-3

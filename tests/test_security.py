"""The control socket as a hostile local user meets it: no file outside the folders fixed at start can
be written or read, nothing binds beyond loopback, and parameter changes are validated like a model file
and checked against the device (bounded loops, loopback only)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from hapticam.devices.sim import SimParams, SimulatedDevice
from hapticam.devices.users import press
from hapticam.errors import ControlError, UsageError
from hapticam.models.files import load_model_only
from hapticam.render.loop import LoopConfig
from hapticam.render.safety import SafetyConfig
from hapticam.render.session import RenderSession
from hapticam.render.telemetry import TelemetryPublisher, request


def _address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


@pytest.fixture
def running(tmp_path):
    """A real-time render with control, recording folder tmp_path/rec, model folder tmp_path/models."""
    (tmp_path / "rec").mkdir()
    (tmp_path / "models").mkdir()
    ctrl = _address()

    def check(model):                                      # as the CLI's: no stiffer than 4000 N/m or before
        from hapticam.render.gate import stiffnesses_Npm

        if max((abs(k) for _, k in stiffnesses_Npm(model)), default=0.0) > 2e6:
            raise UsageError("too stiff for this device")

    session = RenderSession(load_model_only("example:linear-key"), SimulatedDevice(user=press(0.0037, 1.0).repeating()),
                            LoopConfig(realtime=False), control=ctrl, record_dir=tmp_path / "rec",
                            model_dir=tmp_path / "models", check_model=check)
    th = threading.Thread(target=lambda: session.run(None, realtime=True), daemon=True)
    th.start()
    deadline = time.monotonic() + 30
    while session.loop.ticks < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    yield ctrl, tmp_path, session
    request(ctrl, {"cmd": "stop"})
    th.join(10)


@pytest.mark.parametrize("name", ["../../x.csv", "/any/where/notes.txt", "sub/r.csv", "..", ".hidden.csv"])
def test_record_start_refuses_paths_and_writes_nothing_outside_the_folder(running, name):
    ctrl, root, _ = running
    before = set(root.rglob("*"))
    reply = request(ctrl, {"cmd": "record_start", "name": name})
    assert reply["ok"] is False and "file name" in reply["error"]
    assert request(ctrl, {"cmd": "record_start", "path": str(root / "x.csv")})["ok"] is False
    assert set(root.rglob("*")) == before


def test_record_start_by_name_writes_inside_the_folder_and_never_overwrites(running):
    ctrl, root, _ = running
    (root / "rec" / "old.csv").write_text("keep me")
    assert request(ctrl, {"cmd": "record_start", "name": "old.csv"})["ok"] is False
    assert (root / "rec" / "old.csv").read_text() == "keep me"
    assert request(ctrl, {"cmd": "record_start", "name": "new.csv"})["ok"]
    time.sleep(0.1)
    done = request(ctrl, {"cmd": "record_stop"})
    assert done["ok"] and done["path"] == str((root / "rec" / "new.csv").resolve())


def test_load_model_only_from_the_model_folder_or_bundled_names(running, tmp_path):
    ctrl, root, _ = running
    outside = tmp_path / "elsewhere.yaml"
    from hapticam.models.files import save_model

    save_model(outside, load_model_only("example:linear-key"))
    assert request(ctrl, {"cmd": "load_model", "name": "../elsewhere.yaml"})["ok"] is False
    assert request(ctrl, {"cmd": "load_model", "path": str(outside)})["ok"] is False
    save_model(root / "models" / "inside.yaml", load_model_only("example:linear-key"))
    assert request(ctrl, {"cmd": "load_model", "name": "inside.yaml"})["ok"]
    assert request(ctrl, {"cmd": "load_model", "name": "example:tactile-key"})["ok"]


@pytest.mark.parametrize("value", [1e30, 1e308, "1e30", "120", True, [1.0, 2.0], -9223372036854775808])
def test_set_param_out_of_range_or_wrong_type_is_refused_and_nothing_applied(running, value):
    ctrl, _, session = running
    before = session.loop.model.to_dict()
    reply = request(ctrl, {"cmd": "set_param", "name": "components.1.parameters.k_Npm", "value": value})
    assert reply["ok"] is False and reply["error"]
    assert session.loop.model.to_dict() == before


@pytest.mark.parametrize("address", ["tcp://0.0.0.0:5599", "tcp://*:5599", "tcp://192.168.1.2:5599"])
def test_nothing_binds_beyond_loopback(address):
    with pytest.raises(ControlError, match="loopback"):
        TelemetryPublisher(address, 1000.0)
    with pytest.raises(ControlError, match="loopback"):
        RenderSession(load_model_only("example:linear-key"), SimulatedDevice(), LoopConfig(realtime=False),
                      control=address)


@pytest.mark.parametrize("field", ["max_force_N", "max_force_rate_N_per_s", "alpha_max_N_s_per_m"])
def test_a_nan_safety_limit_is_refused_not_ignored(field):
    with pytest.raises(UsageError, match=field):
        SafetyConfig(**{field: float("nan")})
    with pytest.raises(UsageError, match=field):
        SafetyConfig(**{field: -1.0})


@pytest.mark.parametrize("field, value", [("handle_mass_kg", 0.0), ("damping_N_s_per_m", float("nan")),
                                          ("max_force_N", float("inf")), ("noise_m", -1e-6)])
def test_simulated_device_parameters_are_checked(field, value):
    with pytest.raises(UsageError, match=field):
        SimParams(**{field: value})

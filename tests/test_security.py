"""The control socket as a hostile local user meets it: no file outside the folders fixed at start can
be written or read, nothing binds beyond loopback, and parameter changes are validated like a model file
and checked against the device (bounded loops, loopback only)."""

from __future__ import annotations

import socket
import threading
import time

import numpy as np
import pytest

from hapticam.world.sim import SimParams, SimulatedDevice
from hapticam.world.users import press
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


# -- control answers while a request is slow or hostile ---------------------------------------------------
def _session_with_slow_loader(tmp_path, delay_s):
    def slow_load(source):                                 # a valid file that takes delay_s to read
        time.sleep(delay_s)
        return load_model_only("example:tactile-key")

    (tmp_path / "m").mkdir()
    ctrl = _address()
    session = RenderSession(load_model_only("example:linear-key"), SimulatedDevice(user=press(0.0037, 1.0).repeating()),
                            LoopConfig(realtime=False), control=ctrl, record=tmp_path / "run.csv",
                            model_dir=tmp_path / "m", load_model=slow_load)
    return ctrl, session


def test_a_slow_load_does_not_block_status_or_stop_and_is_abandoned_at_its_deadline(tmp_path):
    ctrl, session = _session_with_slow_loader(tmp_path, delay_s=3.0)
    session.control.deadline_s = 0.5
    (tmp_path / "m" / "slow.yaml").write_text("x")
    out = {}
    th = threading.Thread(target=lambda: out.update(report=session.run(30.0, realtime=True)), daemon=True)
    th.start()
    while session.loop.ticks < 50:
        time.sleep(0.01)
    slow = {}
    loader = threading.Thread(target=lambda: slow.update(request(ctrl, {"cmd": "load_model", "name": "slow.yaml"})))
    loader.start()
    time.sleep(0.1)
    for _ in range(5):                                      # answered at once while the load is running
        t0 = time.monotonic()
        st = request(ctrl, {"cmd": "status"})
        assert st["ok"] and time.monotonic() - t0 < 0.1 and st["busy"] == "load_model"
    loader.join(5)
    assert slow["ok"] is False and "abandoned" in slow["error"]          # at 0.5 s, not 3 s
    t0 = time.monotonic()
    assert request(ctrl, {"cmd": "stop"})["ok"] and time.monotonic() - t0 < 0.1
    th.join(10)
    report = out["report"]
    assert report.stats.ticks < 10_000                     # stopped long before its 30 s
    time.sleep(3.0)                                         # the abandoned load returns: it changes nothing
    assert session.loop.model.to_dict() == load_model_only("example:linear-key").to_dict()
    assert report.recording[1] == report.stats.ticks


def test_a_fifo_in_the_model_folder_is_refused_without_blocking(running):
    import os

    ctrl, root, _ = running
    os.mkfifo(root / "models" / "pipe.yaml")
    t0 = time.monotonic()
    reply = request(ctrl, {"cmd": "load_model", "name": "pipe.yaml"})
    assert reply["ok"] is False and "not a regular file" in reply["error"] and time.monotonic() - t0 < 0.5
    assert request(ctrl, {"cmd": "status"})["busy"] is None


# -- signals and kill -9 leave a complete recording or a recoverable one --------------------------------------
def _render_process(tmp_path, name):
    import os
    import subprocess
    import sys

    rec = tmp_path / name
    env = {**os.environ, "HAPTICAM_RT_HYGIENE": "none"}
    proc = subprocess.Popen([sys.executable, "-m", "hapticam.cli", "render", "example:linear-key", "--duration", "60",
                             "--record", str(rec)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=tmp_path)
    partial = tmp_path / (name + ".partial")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not partial.exists() or partial.stat().st_size < 60_000):
        time.sleep(0.05)                                    # running, at least one flush of ticks on disk
    assert partial.exists(), proc.communicate(timeout=10)
    return proc, rec, partial


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_sigterm_and_sigint_finish_with_statistics_and_a_complete_recording(tmp_path, sig):
    import signal

    from hapticam.capture_io import load_capture

    proc, rec, partial = _render_process(tmp_path, "run.csv")
    proc.send_signal(getattr(signal, sig))
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "ticks" in out and "lateness us" in out and "recorded" in out
    assert "mlock off, prefault off, affinity off" in out        # the session log says what hygiene applied
    ticks = int(out.split("recorded ")[1].split()[0])
    assert not partial.exists()
    cap = load_capture(rec)
    assert cap.n == ticks and int(cap.metadata["ticks"]) == ticks and cap.metadata["stopped_by"] == sig
    assert np.allclose(np.diff(cap.t_s), 1e-3)              # every tick, none lost


def test_kill_9_leaves_a_partial_capture_that_recover_completes(tmp_path):
    import signal

    from hapticam.capture_io import load_capture
    from hapticam.cli import main

    proc, rec, partial = _render_process(tmp_path, "run.csv")
    time.sleep(1.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert partial.exists() and not rec.exists()
    assert main(["recover", str(tmp_path)]) == 0
    cap = load_capture(rec)
    assert cap.n >= 1500 and "partial recording" in cap.metadata["recovered"]
    assert np.allclose(np.diff(cap.t_s), 1e-3) and int(cap.metadata["ticks"]) == cap.n


def test_stale_temporary_files_are_cleaned_and_live_ones_kept(tmp_path):
    import os

    from hapticam.fileio import atomic_write_text

    dead = tmp_path / ".model.yaml.pid999999999.abc123.tmp"
    live = tmp_path / f".model.yaml.pid{os.getpid()}.def456.tmp"
    dead.write_text("half")
    live.write_text("being written")
    atomic_write_text(tmp_path / "model.yaml", "done")
    assert not dead.exists() and live.exists() and (tmp_path / "model.yaml").read_text() == "done"


# -- counted telemetry drops -------------------------------------------------------------------------------
def test_telemetry_drops_are_counted_exactly_by_sequence_number():
    import msgpack
    import zmq

    from hapticam.render.layout import RING_COLS

    addr = _address()
    pub = TelemetryPublisher(addr, 1000.0, hwm=3)
    sub = zmq.Context.instance().socket(zmq.SUB)
    sub.setsockopt(zmq.RCVHWM, 3)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(addr)
    time.sleep(0.3)
    n = 3000
    for i in range(n):                                     # the subscriber reads nothing meanwhile
        pub(i * 10, np.zeros((10, RING_COLS)), [])
    sub.setsockopt(zmq.RCVTIMEO, 500)
    seqs = []
    try:
        while True:
            seqs.append(msgpack.unpackb(sub.recv(), raw=False)["seq"])
    except zmq.Again:
        pass
    sub.close()
    pub.close()
    assert pub.seq == n and pub.sent + pub.dropped == n and pub.dropped > 0
    assert len(seqs) == pub.sent and n - len(set(seqs)) == pub.dropped   # the gaps in seq are the drops


# -- authentication beyond loopback ------------------------------------------------------------------------
def _secret(tmp_path, mode=0o600):
    import os

    p = tmp_path / "secret"
    p.write_text("correct horse battery staple\n")
    os.chmod(p, mode)
    return str(p)


@pytest.mark.parametrize("mechanism", ["secret", "curve"])
def test_beyond_loopback_only_with_credentials_and_only_authenticated_clients_answered(tmp_path, mechanism):
    from hapticam.render.endpoints import Auth, make_curve_keys

    auth = (Auth.from_options(_secret(tmp_path), None) if mechanism == "secret"
            else Auth(curve_dir=make_curve_keys(tmp_path / "keys")))
    port = _address().rsplit(":", 1)[1]
    session = RenderSession(load_model_only("example:linear-key"), SimulatedDevice(), LoopConfig(realtime=False),
                            control=f"tcp://0.0.0.0:{port}", auth=auth)
    session.control.start()
    try:
        with pytest.raises(ControlError, match="no reply"):
            request(f"tcp://127.0.0.1:{port}", {"cmd": "status"}, timeout_s=0.5)
        assert request(f"tcp://127.0.0.1:{port}", {"cmd": "status"}, auth=auth)["ok"]
    finally:
        session.control.halt()
        session.security.close()


def test_a_shared_secret_readable_by_others_is_refused(tmp_path):
    from hapticam.render.endpoints import Auth

    with pytest.raises(ControlError, match="readable by others"):
        Auth.from_options(_secret(tmp_path, 0o644), None)


# -- the passivity controller at low rates --------------------------------------------------------------------
def test_passivity_controller_helps_at_100_hz_and_is_refused_beyond_what_it_can_tame():
    from hapticam.world.users import finger
    from hapticam.models.contact import Contact
    from hapticam.render.loop import run_simulated
    from hapticam.render.safety import passivity_stiffness_limit

    spec = SimParams().spec()
    user = finger(0.004, 2.0, press_s=0.2, release_s=10.0)
    limit = passivity_stiffness_limit(spec, 100.0)           # m (2 / T)^2 = 2000 N/m on the 0.05 kg handle
    wall = Contact(law="linear", x_c_m=0.002, k_Npm=limit, b_Nspm=0.0)
    bare = LoopConfig(display="off")         # the wall at the handle: what the passivity controller must tame
    off = run_simulated(wall, user=user, duration_s=2.0, rate_hz=100.0, config=bare)
    on = run_simulated(wall, user=user, duration_s=2.0, rate_hz=100.0, safety=SafetyConfig(passivity=True),
                       config=bare)
    assert np.std(on.x_true_m[100:]) < 0.95 * np.std(off.x_true_m[100:])   # was 1.23x worse, unbounded alpha
    too_stiff = Contact(law="linear", x_c_m=0.002, k_Npm=2.0 * limit, b_Nspm=0.0)
    with pytest.raises(UsageError, match="cannot tame"):
        RenderSession(too_stiff, SimulatedDevice(), LoopConfig(rate_hz=100.0, realtime=False),
                      SafetyConfig(passivity=True))


# -- strict types in model files ---------------------------------------------------------------------------
@pytest.mark.parametrize("edit, field", [
    (lambda p: p["components"][2]["parameters"].update(k_Npm="2000.0"), "k_Npm"),
    (lambda p: p["components"][0]["parameters"]["press"].update(k_Npm=["0", "3259.0", "73.07"]), "k_Npm[0]"),
    (lambda p: p["components"][0]["parameters"]["press"].update(m_kg=[True, False, True]), "m_kg[0]"),
])
def test_strings_and_booleans_are_not_numbers_and_errors_name_file_and_field(tmp_path, edit, field):
    import yaml

    from hapticam.errors import ModelFileError

    doc = yaml.safe_load(open(_example_path("linear-key")).read())
    edit(doc["parameters"])
    p = tmp_path / "typed.yaml"
    p.write_text(yaml.safe_dump(doc))
    with pytest.raises(ModelFileError) as info:
        load_model_only(p)
    assert str(p) in str(info.value) and field in str(info.value)


@pytest.mark.parametrize("block, words", [({"press": {"k_Npm": ["1.0"]}}, "uncertainty.press.k_Npm[0]"),
                                          ({"press": {"k_Npm": [-1.0]}}, ">= 0"),
                                          ({"press": [True]}, "uncertainty.press[0]"), (["x"], "a mapping")])
def test_the_uncertainty_block_is_validated(tmp_path, block, words):
    import yaml

    from hapticam.errors import ModelFileError

    doc = yaml.safe_load(open(_example_path("linear-key")).read())
    doc["uncertainty"] = block
    p = tmp_path / "u.yaml"
    p.write_text(yaml.safe_dump(doc))
    with pytest.raises(ModelFileError, match="u.yaml") as info:
        load_model_only(p)
    assert words in str(info.value)


def _example_path(name):
    """A hand-written model file (tests/data/models) whose layout the edits above know."""
    from pathlib import Path

    return Path(__file__).parent / "data" / "models" / f"hand-{name}.yaml"

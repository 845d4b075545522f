"""Control at its edges: what a library session refuses by default, a session that never ran, a request that
commits as the session ends, replies that are not messages, and a short soak of all of it at once."""

from __future__ import annotations

import socket
import threading

import msgpack
import pytest
import zmq

from hapticam.capture_io import load_capture
from hapticam.world.sim import SimulatedDevice
from hapticam.world.users import press
from hapticam.errors import ControlError, RenderError
from hapticam.models.files import load_model_only
from hapticam.render.control import request
from hapticam.render.loop import LoopConfig
from hapticam.render.recording import Recorder
from hapticam.render.session import RenderSession
from hapticam.render.gate import require_tick_budget
from hapticam.render.soak import SWAP_MODEL, run_soak, scan_recording


def free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def session_with_control(tmp_path, address: str) -> RenderSession:
    return RenderSession(load_model_only("example:linear-key"), SimulatedDevice(user=press(0.0037, 1.0).repeating()),
                         LoopConfig(realtime=False), control=address, record_dir=tmp_path, simulated_ticks=2000)


def test_a_library_session_refuses_what_the_command_line_would(tmp_path) -> None:
    """No check_model given: control still refuses a stiffness the device cannot render stably, and takes a
    change within it."""
    session = session_with_control(tmp_path, free_address())
    try:
        stiff = session.control.handle(msgpack.packb({"cmd": "set_param", "name": "components.1.parameters.k_Npm",
                                                      "value": 1e30}))
        assert not stiff["ok"] and "renders stably" in stiff["error"]
        fine = session.control.handle(msgpack.packb({"cmd": "set_param", "name": "components.1.parameters.b_Nspm",
                                                     "value": 0.8}))
        assert fine["ok"], fine
    finally:
        session.control.halt()


def test_a_control_server_that_never_ran_frees_its_address(tmp_path) -> None:
    address = free_address()
    session_with_control(tmp_path, address).control.halt()
    again = session_with_control(tmp_path, address)           # binds the same address
    again.control.halt()


def test_a_recording_started_after_the_sessions_final_stop_is_refused(tmp_path) -> None:
    recorder = Recorder()
    recorder.start(tmp_path / "during.csv")
    assert recorder.stop(final=True)[1] == 0
    with pytest.raises(RenderError, match="session has ended"):
        recorder.start(tmp_path / "late.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["during.csv"]


def test_request_errors_are_control_errors() -> None:
    with pytest.raises(ControlError, match="control tcp://127.0.0.1:notaport"):
        request("tcp://127.0.0.1:notaport", {"cmd": "status"}, timeout_s=0.5)
    address = free_address()
    rep = zmq.Context.instance().socket(zmq.REP)
    rep.setsockopt(zmq.LINGER, 0)
    rep.bind(address)

    def answer_garbage() -> None:
        rep.recv()
        rep.send(b"\xc1 not msgpack")
    th = threading.Thread(target=answer_garbage)
    th.start()
    try:
        with pytest.raises(ControlError, match="not a msgpack message"):
            request(address, {"cmd": "status"}, timeout_s=2.0)
    finally:
        th.join(5.0)
        rep.close()


def test_a_short_soak_swaps_models_changes_parameters_refuses_the_rest_and_records_every_tick(tmp_path) -> None:
    result = run_soak(0.15, clients=2, out_dir=str(tmp_path))     # ~8 swaps: each model installs though some are busy
    ok = result["requests"]["ok_by_kind"]
    assert ok.get("status", 0) > 0 and ok.get("set_param", 0) > 0
    assert ok.get("too_stiff", 0) == ok.get("hostile_name", 0) == ok.get("malformed", 0) == 0
    swaps = result["model_swaps"]
    require_tick_budget(load_model_only(SWAP_MODEL), 1000.0)    # the key fits the tick: a missed deadline is the host's
    if result["fault"] == "missed-deadlines":
        # the soak runs in real time: a host that took its cores away stopped it (zero force), as it should
        pytest.skip("this machine did not hold the soak's 1 kHz (fault missed-deadlines): the swaps cannot be counted")
    assert result["fault"] is None
    # every swap installs another model: the key and the key with friction beside it, in turn
    assert swaps["installed"].get(SWAP_MODEL, 0) >= 1
    assert swaps["installed"].get("linear-key-friction.yaml", 0) >= 1
    assert set(swaps["reasons"]) <= {"busy"}
    assert result["recording_complete"] and result["finite_forces"]
    # the streamed count is the capture's
    assert result["ticks_recorded"] == load_capture(result["recording"], detect=False).t_s.size == result["ticks"]
    assert scan_recording(result["recording"]) == (result["ticks"], True)
    assert 0 < result["subscriber_ticks"] <= result["ticks"]
    assert result["rss_first_mb"] > 0 and result["rss_end_mb"] > 0

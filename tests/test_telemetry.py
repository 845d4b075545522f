"""Telemetry PUB (lossless, never blocking), control REP (every request type, hostile input), recording."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import msgpack
import numpy as np
import pytest
import zmq

from hapticam.cli import main
from hapticam.world.sim import SimParams, SimulatedDevice
from hapticam.world.users import press
from hapticam.capture_io import load_capture
from hapticam.models.files import load_model_only, save_model
from hapticam.render.loop import LoopConfig
from hapticam.render.layout import RING_COLS
from hapticam.render.recording import RECORD_COLUMNS, write_recording
from hapticam.render.session import RenderSession
from hapticam.render.telemetry import monitor, request


def free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def make_session(tmp_path, duration_s=None, **kw):
    model = load_model_only("example:linear-key")
    dev = SimulatedDevice(user=press(0.0037, 1.0).repeating())
    return RenderSession(model, dev, LoopConfig(realtime=False), **kw)


def test_telemetry_is_lossless_for_a_subscriber_that_keeps_up(tmp_path):
    addr = free_address()
    session = make_session(tmp_path, telemetry=addr)
    ctx = zmq.Context.instance()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.setsockopt(zmq.RCVTIMEO, 500)
    sub.connect(addr)
    time.sleep(0.3)  # PUB/SUB join
    got = []
    done = threading.Event()

    def receive():
        while True:
            try:
                got.append(msgpack.unpackb(sub.recv(), raw=False))
            except zmq.Again:
                if done.is_set():
                    return

    th = threading.Thread(target=receive)
    th.start()
    report = session.run(0.6, realtime=True)
    done.set()
    th.join()
    sub.close()
    assert report.stats.ticks == 600 and report.telemetry_dropped == 0
    ticks = [t for m in got for t in range(m["tick0"], m["tick0"] + m["n"])]
    assert ticks == list(range(600))                      # every tick, in order, once
    m = got[1]
    assert m["v"] == 1 and m["type"] == "ticks" and len(m["force_N"]) == m["n"] == len(m["flags"])
    assert 40 <= len(got) <= 200                          # ~100 batches per second
    assert all(isinstance(e["event"], str) for b in got for e in b["events"])


def _stalled_run(tmp_path):
    addr = free_address()
    session = make_session(tmp_path, telemetry=addr)
    session.publisher.socket.setsockopt(zmq.SNDHWM, 2)
    sub = zmq.Context.instance().socket(zmq.SUB)           # subscribes, then never reads
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.setsockopt(zmq.RCVHWM, 2)
    sub.connect(addr)
    time.sleep(0.2)
    report = session.run(0.5, realtime=True)
    sub.close()
    return report


def test_absent_or_stalled_subscriber_never_slows_the_loop(tmp_path):
    # A publisher that blocked the servo thread on the stalled subscriber would make every run's ticks late
    # by whole periods (ms) and miss deadlines; the loop is only as late as without telemetry, within the
    # noise of a shared machine (p99 within 3x or 200 us of the baseline's, a few more misses at most) in at
    # least one of three attempts (other programs' bursts land on single runs, a blocking publisher on all).
    for _ in range(3):
        report = _stalled_run(tmp_path)
        baseline = make_session(tmp_path).run(0.5, realtime=True)      # the same run with no telemetry at all
        assert report.stats.ticks == baseline.stats.ticks == 500
        assert report.telemetry_sent >= 40                               # the publisher went on publishing
        if (report.stats.lateness_p99_us <= max(3.0 * baseline.stats.lateness_p99_us,
                                                baseline.stats.lateness_p99_us + 200.0)
                and report.stats.misses <= baseline.stats.misses + 5):
            return
    raise AssertionError(f"stalled subscriber: p99 {report.stats.lateness_p99_us} us, {report.stats.misses} misses; "
                         f"without telemetry: {baseline.stats.lateness_p99_us} us, {baseline.stats.misses}")


def test_control_requests_and_hostile_input(tmp_path):
    ctrl = free_address()
    session = make_session(tmp_path, control=ctrl, record_dir=tmp_path, model_dir=tmp_path)
    loop = session.loop
    result = {}
    th = threading.Thread(target=lambda: result.setdefault("report", session.run(None, realtime=True)))
    th.start()
    try:
        deadline = time.monotonic() + 30
        while loop.ticks < 50 and time.monotonic() < deadline:
            time.sleep(0.01)
        ctx = zmq.Context.instance()
        raw = ctx.socket(zmq.REQ)
        raw.setsockopt(zmq.RCVTIMEO, 3000)
        raw.setsockopt(zmq.LINGER, 0)
        raw.connect(ctrl)
        hostile = [b"\xc1\xff\x00garbage", msgpack.packb([1, 2, 3]), msgpack.packb("status"),
                   msgpack.packb({"cmd": "format_disk"}), msgpack.packb({"nocmd": 1}),
                   msgpack.packb({"cmd": "load_model"}), msgpack.packb({"cmd": "load_model", "path": 7}),
                   msgpack.packb({"cmd": "load_model", "name": "missing.yaml"}),
                   msgpack.packb({"cmd": "set_param", "name": "components.0.parameters.dead_band_mps",
                                  "value": {"a": 1}}),
                   msgpack.packb({"cmd": "set_param", "name": "components.0.parameters.dead_band_mps",
                                  "value": float("inf")}),
                   msgpack.packb({"cmd": "set_param", "name": "components.9.x", "value": 1.0}),
                   msgpack.packb({"cmd": "record_stop"}),
                   msgpack.packb({"cmd": "record_start", "name": "no/dir.csv"}),
                   msgpack.packb({"cmd": "status", "pad": "x" * 70_000})]
        for data in hostile:
            raw.send(data)
            reply = msgpack.unpackb(raw.recv(), raw=False)
            assert reply["ok"] is False and reply["error"], data[:40]
        raw.close()
        assert loop.running and loop.stats().fault is None
        st = request(ctrl, {"cmd": "status"})
        assert st["ok"] and st["ticks"] > 50 and st["model"] == "composite"
        # a valid model swap, a parameter change, a recording
        # (the hand-made tactile key's bottom-out wall is stiffer than this device renders stably: refused, as
        # the command line refuses it, and accepted within the device's bound)
        source = (Path(__file__).parent / "data" / "models" / "hand-tactile-key.yaml").read_text()
        stiff = tmp_path / "stiff.yaml"
        save_model(stiff, load_model_only(Path(__file__).parent / "data" / "models" / "hand-tactile-key.yaml"))
        refused = request(ctrl, {"cmd": "load_model", "name": stiff.name})
        assert not refused["ok"] and "renders stably" in refused["error"]
        path = tmp_path / "tactile.yaml"
        assert "k_Npm: 1000000.0" in source
        path.write_text(source.replace("k_Npm: 1000000.0", "k_Npm: 2000.0"))
        assert request(ctrl, {"cmd": "load_model", "name": path.name})["ok"]
        assert request(ctrl, {"cmd": "set_param", "name": "components.1.parameters.Fc_N", "value": 0.02})["ok"]
        rec = tmp_path / "rec.csv"
        assert request(ctrl, {"cmd": "record_start", "name": rec.name})["ok"]
        time.sleep(0.2)
        done = request(ctrl, {"cmd": "record_stop"})
        assert done["ok"] and done["ticks"] > 100
        cap = load_capture(rec)
        assert cap.t_s.size == done["ticks"] and np.all(np.diff(cap.t_s) > 0)
        assert request(ctrl, {"cmd": "stop"})["ok"]
    finally:
        loop.request_stop()
        th.join(10)
    report = result["report"]
    names = [e.name for e in report.events]
    assert "model-swap" in names and "set-param" in names and names[-1] == "stop"
    assert np.all(np.abs(loop.ring[:min(loop.ticks, loop.ring.shape[0]), 4]) <= SimParams().max_force_N)
    assert report.stats.fault is None


def test_recording_is_a_capture_identify_reads(tmp_path):
    rows = np.zeros((5, RING_COLS))
    rows[:, 0] = np.arange(5) * 1e-3
    rows[:, 1] = np.linspace(0, 1e-3, 5)
    rows[:, 4] = np.linspace(0, 0.5, 5)
    rows[:, 5] = [0, 1, 256, 0, 2]
    p = write_recording(tmp_path / "r.csv", rows, {"model": "x", "extra": {"a": 1}})
    text = p.read_text()
    assert ",".join(RECORD_COLUMNS) in text and "# extra: {\"a\": 1}" in text
    assert not list(tmp_path.glob(".r.csv.*"))              # no temporary left behind
    with pytest.raises(Exception, match="csv"):
        write_recording(tmp_path / "r.bin", rows)


def test_cli_render_simulated_clock_records_and_reports(tmp_path, capsys):
    rec = tmp_path / "run.csv"
    code = main(["render", "example:tactile-key", "--simulated-clock", "--duration", "0.5", "--record", str(rec)])
    out = capsys.readouterr().out
    assert code == 0
    assert "ticks 500 at 1000 Hz" in out and "safety interventions" in out
    cap = load_capture(rec)
    assert cap.t_s.size == 500 and cap.metadata["model"] == "example:tactile-key"


def test_cli_render_real_time_with_telemetry_and_monitor(tmp_path, capsys):
    addr = free_address()
    counts = {}
    # the monitor stops after 12 batches (the render publishes ~60 in 0.8 s), whenever the servo loop is ready
    th = threading.Thread(target=lambda: counts.update(monitor(addr, duration_s=120.0, batches=12,
                                                               out=open("/dev/null", "w"))))
    th.start()
    code = main(["render", "example:linear-key", "--duration", "0.8", "--telemetry", addr])
    th.join()
    out = capsys.readouterr().out
    assert code == 0 and "real-time clock" in out and "lateness us" in out
    assert counts["batches"] > 10 and counts["gaps"] == 0


@pytest.mark.parametrize("argv", [
    ["render", "example:nope"],
    ["render", "example:linear-key", "--rate", "50", "--simulated-clock"],
    ["render", "example:linear-key", "--duration", "-1"],
    ["render", "example:linear-key", "--device", "phantom-x"],
    ["render", "example:linear-key", "--simulated-clock", "--duration", "0.1", "--record", "/tmp/x.bin"],
    ["bench", "render", "--seconds", "0"],
])
def test_cli_errors_are_one_line_and_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("hapticam: error:") and err.count("\n") == 1


def test_ctrl_c_stops_with_zero_force_and_a_complete_recording(tmp_path):
    import _thread

    from hapticam.world.sim import D_FCMD

    rec = tmp_path / "interrupted.csv"
    session = make_session(tmp_path, record=rec)
    loop = session.loop

    def interrupt_when_running():
        deadline = time.monotonic() + 30
        while loop.ticks < 300 and time.monotonic() < deadline:
            time.sleep(0.01)
        _thread.interrupt_main()

    threading.Thread(target=interrupt_when_running, daemon=True).start()
    report = session.run(None, realtime=True)
    assert report.interrupted and report.stats.ticks >= 300
    assert loop.io[4 + 1] == 0.0 and loop.device.dev[D_FCMD] == 0.0     # IO_FORCE and the motor command
    assert report.recording is not None and report.recording[1] == report.stats.ticks
    cap = load_capture(rec)
    assert cap.t_s.size == report.stats.ticks and report.lost_ticks == 0
    assert [e.name for e in report.events][-1] == "stop"

"""The serial adapter (hsp v1) against its reference firmware on a pseudo-terminal: protocol, CRC, the
servo loop's forces against the simulator, and every injected fault."""

from __future__ import annotations

import binascii
import os
import re
import select
import shutil
import time
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("serial")

from hapticam.devices import hsp_frames as hf  # noqa: E402
from hapticam.world.delayed_sim import DelayedSimulatedDevice, delayed_actuate, delayed_sense  # noqa: E402
from hapticam.devices.hsp_emulator import HspEmulator, build_emulator  # noqa: E402
from hapticam.devices.registry import device_from_spec  # noqa: E402
from hapticam.devices.serial_device import (ERR_FRAME, ERR_WATCHDOG, FAULT_GONE, FAULT_SILENT,  # noqa: E402
                                            SerialDevice, serial_actuate, serial_sense)
from hapticam.world.sim import SimulatedDevice, sim_binding_actuate, sim_binding_sense  # noqa: E402
from hapticam.world.users import press  # noqa: E402
from hapticam.errors import DeviceError, UsageError  # noqa: E402
from hapticam.render.layout import EV_OVERRUN, EV_STALE, SAFETY_FLAG_SHIFT  # noqa: E402
from hapticam.render.loop import LoopConfig, ServoLoop  # noqa: E402

#: the adapters' I/O against the simulator's, the model at the handle on both (no display stage to differ)
AT_HANDLE = LoopConfig(display="off")
from hapticam.render.result import RenderResult  # noqa: E402
from hapticam.render.safety import SafetyConfig  # noqa: E402
from hapticam.render.servo import build_servo  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")


from device_scenarios import DUR, MODEL, PARAMS, USERS, no_flags, spring_force  # noqa: E402


@pytest.fixture(scope="module")
def emu_exe(tmp_path_factory):
    return build_emulator(tmp_path_factory.mktemp("hsp"))


@pytest.fixture(scope="module")
def kernels():
    return (build_servo(spring_force, no_flags, serial_sense, serial_actuate),
            build_servo(spring_force, no_flags, delayed_sense, delayed_actuate),
            build_servo(spring_force, no_flags, sim_binding_sense, sim_binding_actuate))


def run_serial(kd, port, duration_s=DUR, safety=None, rate_hz=1000.0, **dev_kw):
    dev = SerialDevice(port, **dev_kw).open()
    loop = ServoLoop(MODEL, dev, LoopConfig(rate_hz=rate_hz, ring_capacity=4096, display="off",
                                            missed_deadline_share=None),   # I/O under test, not the deadlines
                     safety, kernels=kd)
    t0 = time.monotonic()
    loop.start(duration_s)
    assert loop.wait(duration_s + 5.0), "the loop must end by itself"
    wall = time.monotonic() - t0
    stats = loop.stop()
    res = RenderResult.from_rows(loop.ring[:loop.ticks].copy(), stats, loop.all_events())
    return dev, res, wall


# -- protocol -------------------------------------------------------------------------------------------------
def test_crc_is_ccitt_false_with_its_check_value_and_matches_an_independent_implementation():
    assert hf.crc16(b"123456789") == hf.CRC_CHECK == 0x29B1
    rng = np.random.default_rng(1)
    for n in (0, 1, 7, 64):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert hf.crc16(data) == binascii.crc_hqx(data, 0xFFFF)   # CCITT poly 0x1021, init 0xFFFF


def test_frames_round_trip_through_noise_splits_and_corruption():
    state = hf.State(seq=7, time_us=2**32 - 5, counts=-1234, force_uN=-3_000_000, status=hf.ST_ENABLED, rx_errors=3)
    info = hf.Info(1, 1e6, 8.0, 4.0, (-0.02, 0.03), 2.0, 0.05, 8000.0, "paddle")
    good = hf.pack_state(state)
    bad = bytearray(good)
    bad[8] ^= 0x01
    stream = b"\x00\xa5\x13" + bytes(bad) + good + hf.pack_info(info) + good[:5]
    frames, n_bad, rest = hf.parse_frames(stream)
    assert n_bad == 1 and rest == good[:5]
    assert [t for t, _ in frames] == [hf.T_STATE, hf.T_INFO]
    assert hf.unpack_state(frames[0][1]) == state
    back = hf.unpack_info(frames[1][1])
    assert back.name == "paddle" and back.workspace_m == pytest.approx((-0.02, 0.03), rel=1e-7)
    with pytest.raises(DeviceError, match="STATE"):
        hf.unpack_state(b"\x00" * 5)


def _exchange(fd, data, want, timeout_s=1.0):
    os.write(fd, data)
    buf, deadline = b"", time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.05)[0]:
            buf += os.read(fd, 4096)
        frames, _, _ = hf.parse_frames(buf)
        if len(frames) >= want:
            return frames
    raise AssertionError(f"no reply to {data.hex()} (got {buf.hex()})")


def test_firmware_protocol_round_trips(emu_exe):
    with HspEmulator(PARAMS, press(0.004, 1.0), executable=emu_exe) as port:   # handle held at -0.5 mm
        fd = os.open(port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        try:
            (t, p), = _exchange(fd, hf.pack_hello(), 1)
            info = hf.unpack_info(p)
            assert (t, info.version, info.counts_per_m, info.max_force_N, info.name) == (hf.T_INFO, 1, 1e6, 8.0, "hsp-emu")
            assert _exchange(fd, hf.pack_hello(2), 1) == [(hf.T_ERROR, bytes([hf.T_HELLO, hf.E_VERSION]))]
            assert _exchange(fd, hf.pack_force(1, 5), 1) == [(hf.T_ERROR, bytes([hf.T_FORCE, hf.E_NOT_ENABLED]))]
            assert _exchange(fd, hf.pack_config(1, 0), 1) == [(hf.T_ERROR, bytes([hf.T_CONFIG, hf.E_CONFIG]))]
            assert _exchange(fd, hf.frame(0x7F), 1) == [(hf.T_ERROR, bytes([0x7F, hf.E_TYPE]))]
            assert _exchange(fd, hf.pack_config(50, 0), 1) == [(hf.T_ACK, bytes([hf.T_CONFIG]))]
            ack, first = _exchange(fd, hf.frame(hf.T_ENABLE), 2)
            s = hf.unpack_state(first[1])
            assert ack == (hf.T_ACK, bytes([hf.T_ENABLE])) and (s.seq, s.counts, s.time_us) == (0, -500, 0)
            assert _exchange(fd, hf.frame(hf.T_SET_ZERO), 1) == [(hf.T_ACK, bytes([hf.T_SET_ZERO]))]
            (_, p), = _exchange(fd, hf.pack_force(5, 0), 1)
            s = hf.unpack_state(p)
            assert abs(s.counts) <= 1 and s.time_us == 1000         # counts from the new zero, 1 frame later
            broken = bytearray(hf.pack_force(6, 1))
            broken[-1] ^= 0xFF                                   # bad CRC: dropped by the firmware, counted
            (_, p), = _exchange(fd, bytes(broken) + hf.pack_force(7, 1_500_000), 1)
            s = hf.unpack_state(p)
            assert (s.seq, s.force_uN, s.rx_errors) == (7, 1_500_000, 1)
            assert s.status & hf.ST_ENABLED and s.status & hf.ST_RX_ERROR
            (_, p), = _exchange(fd, hf.pack_force(8, -20_000_000), 1)   # beyond 8 N: clamped, said so
            s = hf.unpack_state(p)
            assert s.force_uN == -8_000_000 and s.status & hf.ST_CLAMPED and not s.status & hf.ST_RX_ERROR
            assert _exchange(fd, hf.frame(hf.T_DISABLE), 1) == [(hf.T_ACK, bytes([hf.T_DISABLE]))]
            (_, p), = _exchange(fd, hf.pack_force(9, 0), 1)
            assert p == bytes([hf.T_FORCE, hf.E_NOT_ENABLED])
        finally:
            os.close(fd)


def test_handshake_gives_the_spec_and_bad_ports_fail_clearly(emu_exe):
    with pytest.raises(UsageError, match="needs a port"):
        device_from_spec("serial")
    assert isinstance(device_from_spec("serial:/dev/ttyACM9"), SerialDevice)
    t0 = time.monotonic()
    with pytest.raises(DeviceError, match="cannot open /nonexistent/tty") as missing:
        SerialDevice("/nonexistent/tty").open()
    assert "no such port" in str(missing.value) and "in use" not in str(missing.value)
    with HspEmulator(PARAMS, None, executable=emu_exe) as port:
        with SerialDevice(port) as dev:
            s = dev.spec
            assert (s.max_force_N, s.workspace_m, s.resolution_m, s.damping_N_s_per_m, s.apparent_mass_kg) == \
                (8.0, (-0.02, 0.03), 1e-6, 2.0, 0.05)
            assert s.max_stiffness_N_per_m == pytest.approx(4000.0)     # K < 2 b / T
            assert any("low-latency" in n for n in dev.notes)            # pseudo-terminals have none: recorded
            with pytest.raises(DeviceError, match="in use"):             # a second open of a port in use
                SerialDevice(port).open()
    assert time.monotonic() - t0 < 5.0


# -- forces: the simulator's, through one tick of delay and 1 uN ------------------------------------------------
def _flag(res, code):
    return (res.flags >> (SAFETY_FLAG_SHIFT + code)) & 1 == 1


def test_one_tick_of_delay_is_a_small_effect_on_the_simulator(kernels):
    """The documented I/O (one tick, 1 uN) against the plain simulator: deterministic, no real time."""
    _, kref, ksim = kernels
    for user in USERS.values():
        ref = ServoLoop(MODEL, DelayedSimulatedDevice(PARAMS, user, counts_per_N=1e6), AT_HANDLE,
                        kernels=kref).run_simulated(DUR)
        plain = ServoLoop(MODEL, SimulatedDevice(PARAMS, user), AT_HANDLE, kernels=ksim).run_simulated(DUR)
        peak = np.max(np.abs(plain.force_N))
        rms = np.sqrt(np.mean((ref.force_N - plain.force_N) ** 2))
        assert 1e-4 * peak < rms < 0.03 * peak


@pytest.mark.parametrize("name", list(USERS))
def test_forces_equal_the_simulator_through_the_documented_io(emu_exe, kernels, name):
    kd, kref, _ = kernels
    user = USERS[name]
    with HspEmulator(PARAMS, user, executable=emu_exe) as port:
        dev, res, _ = run_serial(kd, port)
        dev.close()
    n = res.force_N.size
    age = res.user_force_N                                 # AUX1: age of each tick's sample in FORCE frames
    assert res.stats.fault is None and n == round(DUR * 1000)
    assert np.mean(age == 0) > 0.2 and np.max(np.abs(res.force_N)) > 0.1   # not a vacuous run (timing is the bench's)
    ref = ServoLoop(MODEL, DelayedSimulatedDevice(PARAMS, user, counts_per_N=1e6, sample_age=age), AT_HANDLE,
                    kernels=kref).run_simulated(DUR)
    overrun = np.flatnonzero(_flag(res, EV_OVERRUN))        # the host's own overruns are not the link's
    m = overrun[0] if overrun.size else n
    np.testing.assert_allclose(res.x_m[:m], ref.x_m[:m], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.force_N[:m], ref.force_N[:m], rtol=0, atol=1e-9)
    # the force on the emulated handle (STATE) is the force the loop wrote one tick before, to 1 uN
    k = np.flatnonzero(age[1:] == 0) + 1
    np.testing.assert_allclose(res.x_true_m[k], np.round(res.force_N[k - 1] * 1e6) * 1e-6, rtol=0, atol=1e-12)


# -- faults -----------------------------------------------------------------------------------------------------
def _events(res, name):
    return [e for e in res.events if e.name == name]


def test_dropped_states_are_stale_data_zeroed_logged_and_counted(emu_exe, kernels):
    emu = HspEmulator(PARAMS, USERS["sine"], executable=emu_exe, drop_every=25)
    with emu as port:
        dev, res, _ = run_serial(kernels[0], port, safety=SafetyConfig(stale_ticks=1))
        dev.close()
    dropped = emu.summary["dropped"]
    stale = _flag(res, EV_STALE)
    assert res.stats.fault is None and dropped >= 20
    assert dev.counters()["stale_ticks"] >= dropped - 1
    assert res.stats.interventions["stale-device"] >= dropped - 1 and _events(res, "stale-device")
    assert np.all(res.force_N[stale] == 0.0) and np.max(np.abs(res.force_N)) <= PARAMS.max_force_N


def test_corrupted_states_are_dropped_counted_and_logged(emu_exe, kernels):
    emu = HspEmulator(PARAMS, USERS["sine"], executable=emu_exe, corrupt_every=25)
    with emu as port:
        dev, res, _ = run_serial(kernels[0], port)
        dev.close()
    summary = emu.summary
    assert summary["corrupted"] >= 20
    assert dev.counters()["bad_frames"] in (summary["corrupted"], summary["corrupted"] - 1)
    errors = _events(res, "device-error")
    assert errors and all(e.value == ERR_FRAME for e in errors)
    assert 0 < res.stats.interventions["device-error"] <= dev.counters()["bad_frames"]
    assert res.stats.fault is None and np.max(np.abs(res.force_N)) <= PARAMS.max_force_N


def test_late_replies_trip_the_stale_watchdog(emu_exe, kernels):
    emu = HspEmulator(PARAMS, USERS["press"], executable=emu_exe, late_every=150, late_us=6000)
    with emu as port:
        dev, res, _ = run_serial(kernels[0], port)
        dev.close()
    summary = emu.summary
    assert summary["late"] >= 3
    assert dev.counters()["stale_ticks"] >= 4 * summary["late"]
    assert len(_events(res, "stale-device")) >= summary["late"] - 1
    assert res.stats.fault is None and np.max(np.abs(res.force_N)) <= PARAMS.max_force_N


def test_silence_trips_the_watchdog_on_both_sides_and_the_run_recovers(emu_exe, kernels):
    emu = HspEmulator(PARAMS, USERS["press"], executable=emu_exe, silence_at_ms=200, silence_ms=150)
    with emu as port:
        dev, res, _ = run_serial(kernels[0], port, duration_s=0.8, watchdog_ms=50)
        dev.close()
    # the firmware's side: its watchdog trips 50 ms into the silence (200-350 ms on its clock); a loaded host
    # that takes over 50 ms from its last FORCE to closing the port trips it once more at the end
    trips = [float(t) for t in re.findall(r"watchdog at ([0-9.]+) ms", emu.log)]
    assert emu.summary["watchdog_trips"] == len(trips) >= 1
    assert any(245.0 <= t <= 350.0 for t in trips), trips
    assert _events(res, "stale-device")                                     # the host's side
    wd = [e for e in _events(res, "device-error") if e.value == ERR_WATCHDOG]
    assert wd and dev.counters()["watchdog_reports"] >= 1
    # the host's own view of the silence (its stale ticks), not the emulator's wall clock, which a loaded
    # machine's loop lags: the longest run of stale ticks holds zero force throughout
    stale = _flag(res, EV_STALE)
    edges = np.flatnonzero(np.diff(np.r_[0, stale.astype(np.int8), 0]))
    runs = list(zip(edges[::2], edges[1::2]))
    start, stop = max(runs, key=lambda r: r[1] - r[0])
    assert stop - start >= 20 and np.all(res.force_N[start:stop] == 0.0)
    assert np.all(res.force_N[stale] == 0.0)
    assert res.stats.fault is None and np.max(np.abs(res.force_N[res.t_s > 0.7])) > 0.1   # forces came back


def test_lasting_silence_stops_the_loop_with_zero_force(emu_exe, kernels):
    with HspEmulator(PARAMS, USERS["press"], executable=emu_exe, silence_at_ms=150, silence_ms=-1) as port:
        dev, res, wall = run_serial(kernels[0], port, duration_s=3.0, silence_ms=150)
        dev.close()
    fault = _events(res, "device-fault")
    assert res.stats.fault is not None and fault and fault[0].value == FAULT_SILENT
    assert wall < 2.5 and 0.25 < res.t_s[-1] < 0.6
    assert res.force_N[-1] == 0.0


@pytest.mark.parametrize("rate_hz", [500.0, 2000.0])
def test_silence_is_counted_in_time_at_the_loops_own_rate(emu_exe, kernels, rate_hz):
    """The adapter is opened knowing nothing of the loop's rate: 150 ms of silence stop the loop 150 ms after
    the last STATE at 500 Hz and at 2 kHz alike (not 300 or 75 ms, as ticks counted at 1 kHz would)."""
    with HspEmulator(PARAMS, USERS["press"], executable=emu_exe, silence_at_ms=150, silence_ms=-1) as port:
        dev, res, _wall = run_serial(kernels[0], port, duration_s=3.0, rate_hz=rate_hz, silence_ms=150)
        dev.close()
    fault = _events(res, "device-fault")[0]
    assert res.stats.fault is not None and fault.value == FAULT_SILENT and res.force_N[-1] == 0.0
    if res.stats.misses > 0.01 * res.stats.ticks:
        # the loop's clock is its tick count: with periods missed it lags the emulator's wall clock
        pytest.skip(f"this machine did not hold {rate_hz:g} Hz ({res.stats.misses} of {res.stats.ticks} "
                    "deadlines missed): the silence cannot be timed in the loop's ticks")
    # timed from the last fresh sample (the watchdog flags it stale 3 ticks later), whenever the emulator's
    # stream began: 150 ms, not 300 or 75 as ticks counted at 1 kHz would make it
    stale = [e for e in _events(res, "stale-device") if e.tick < fault.tick][-1]
    silent_s = (fault.tick - stale.tick + 3) / rate_hz
    assert 0.140 < silent_s < 0.160, silent_s


def test_an_info_beyond_the_wire_format_is_refused(emu_exe):
    """A FORCE frame carries i32 uN: a device claiming a peak force past 2147 N would have forces wrap."""
    with HspEmulator(replace(PARAMS, max_force_N=3000.0), None, executable=emu_exe) as port:
        with pytest.raises(DeviceError, match="not physical"):
            SerialDevice(port).open()


def test_unplugging_stops_the_loop_and_reconnecting_mid_run_is_refused(emu_exe, kernels):
    with HspEmulator(PARAMS, USERS["press"], executable=emu_exe, unplug_at_ms=150) as port:
        dev, res, wall = run_serial(kernels[0], port, duration_s=3.0)
        fault = _events(res, "device-fault")
        assert fault and fault[0].value == FAULT_GONE and wall < 2.5 and res.force_N[-1] == 0.0
        assert dev.lost
        with pytest.raises(DeviceError, match="does not reconnect inside a run"):
            ServoLoop(MODEL, dev, kernels=kernels[0])
        t0 = time.monotonic()
        dev.close()                                          # never a hang on a lost port
        assert time.monotonic() - t0 < 1.0 and not dev.is_open


def test_firmware_watchdog_zeroes_a_force_left_on(emu_exe):
    emu = HspEmulator(PARAMS, None, executable=emu_exe)
    with emu as port, SerialDevice(port, watchdog_ms=30) as dev:
        dev.write(1.0)
        time.sleep(0.1)
        dev.read()
        reports = dev.counters()["watchdog_reports"]
    assert reports == 1 and emu.summary["watchdog_trips"] == 1

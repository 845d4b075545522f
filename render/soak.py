"""``hapticam bench soak``: a long real-time render under everything control and telemetry can throw at it.

One render session (``example:linear-key`` on the simulated device, real time, 1 kHz) with, for
``minutes``:

- telemetry published, with one subscriber that keeps up and one that connects and never reads;
- ``clients`` control clients sending 100 requests a second between them (status, valid and refused
  parameter changes, hostile names and malformed messages);
- a model swap every second through the command line's check, alternating ``example:linear-key`` and the same
  key with Coulomb friction beside it (``SWAP_FRICTION_N``, written into the soak's folder): as stiff as the
  key, so the check takes both ways, and a different force, so every swap installs another model (the
  installs are counted by name and any refusals by reason);
- every tick recorded;
- with ``hostile``, beside them, a subscription flood, a stream of malformed and oversized requests and
  connections without valid credentials (:mod:`hapticam.render.soak_hostile`); the sockets then require
  a shared secret, which the well-behaved clients carry. The sockets are ``ipc://`` in a folder only this
  user can enter, as a render's by default.

Reported: ticks, deadline misses, lateness p99 and maximum, the slowest ``status`` reply, resident memory
of the render's process over time (first, last, largest, growth in %; at most ``RSS_GROWTH_LIMIT_PERCENT``
passes), telemetry batches sent and dropped (and what the keeping-up subscriber received), request
counts, what the render refused of the hostile peers, and whether the recording holds every tick.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import secrets
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import msgpack
import numpy as np
import zmq

from hapticam.errors import HapticError
from hapticam.fileio import make_output_folder
from hapticam.render.endpoints import Auth, secure_client

SWAP_MODEL = "example:linear-key"
#: the friction beside the key in the second swap model (N): a tenth of a key's travel force, above the force JND
SWAP_FRICTION_N = 0.05
#: its Coulomb law's width (m/s): above F_c T / m = 1 mm/s on the simulated 50 g handle at 1 kHz, so the law
#: does not flip sign from tick to tick at rest (:func:`hapticam.identify.hybrid_key.params.friction_width`)
SWAP_FRICTION_WIDTH_MPS = 2e-3
SWAP_VARIANT_FILE = "linear-key-friction.yaml"
#: the most the render's resident memory may grow over a soak (its largest sample while the loop ran, % of its
#: first, taken before the hostile peers start) for the soak to pass
RSS_GROWTH_LIMIT_PERCENT = 10.0
#: about how many times resident memory is sampled over a soak (at most once a second)
MEMORY_SAMPLES = 120
DESCRIPTION = ("A long real-time render under control requests, telemetry and model swaps: one session on the "
               "simulated device with a keeping-up and a stalled telemetry subscriber, control clients sending "
               "100 requests a second, a model swap every second and every tick recorded, and beside them hostile "
               "peers (a subscription flood, malformed and oversized requests, connections without credentials); "
               "reports deadline misses, lateness, reply times, memory growth, telemetry, what was refused and "
               "whether the recording is complete.")


def rss_mb() -> float:
    """Resident set size of this process (MB), from ``/proc/self/status``."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


class _Client(threading.Thread):
    """One control client: ``rate_hz`` requests a second of a fixed mix, counting replies."""

    def __init__(self, address: str, rate_hz: float, stop: threading.Event, seed: int, auth: Auth | None) -> None:
        super().__init__(name=f"soak-client-{seed}", daemon=True)
        self.address, self.period_s, self.stop_event, self.auth = address, 1.0 / rate_hz, stop, auth
        self.rng = random.Random(seed)
        self.counts = {"sent": 0, "ok": 0, "refused": 0, "timeouts": 0}
        self.timed_out: dict[str, int] = {}
        self.ok_by_kind: dict[str, int] = {}
        self.status_ms: list[float] = []

    def _message(self) -> tuple[str, bytes]:
        """(kind, message): ``status``; ``set_param`` (a valid change of the end-stops' damping, N s/m);
        ``too_stiff`` (1e30 N/m, refused); ``hostile_name`` (a path for a recording, refused); ``malformed``."""
        r = self.rng.random()
        if r < 0.5:
            return "status", msgpack.packb({"cmd": "status"})
        if r < 0.7:
            return "set_param", msgpack.packb({"cmd": "set_param", "name": "components.1.parameters.b_Nspm",
                                               "value": self.rng.choice([0.8, 1.0, 1.2])})
        if r < 0.8:
            return "too_stiff", msgpack.packb({"cmd": "set_param", "name": "components.1.parameters.k_Npm",
                                               "value": 1e30})
        if r < 0.9:
            return "hostile_name", msgpack.packb({"cmd": "record_start",
                                                  "name": self.rng.choice(["../x.csv", "/tmp/x.csv"])})
        return "malformed", os.urandom(self.rng.randint(1, 64))

    def run(self) -> None:
        ctx = zmq.Context.instance()
        sock = ctx.socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 3000)
        sock.setsockopt(zmq.REQ_RELAXED, 1)
        sock.setsockopt(zmq.REQ_CORRELATE, 1)
        secure_client(sock, self.auth)
        sock.connect(self.address)
        next_t = time.monotonic()
        while not self.stop_event.is_set():
            kind, msg = self._message()
            cmd = _cmd_of(msg)
            t0 = time.monotonic()
            try:
                sock.send(msg)
                reply = msgpack.unpackb(sock.recv(), raw=False)
                self.counts["ok" if reply.get("ok") else "refused"] += 1
                if reply.get("ok"):
                    self.ok_by_kind[kind] = self.ok_by_kind.get(kind, 0) + 1
                if reply.get("cmd") == "status":
                    self.status_ms.append((time.monotonic() - t0) * 1e3)
            except zmq.ZMQError:
                if self.stop_event.is_set():             # in flight as the session stopped: not a miss
                    break
                self.counts["timeouts"] += 1
                self.timed_out[cmd] = self.timed_out.get(cmd, 0) + 1
            self.counts["sent"] += 1
            next_t = max(next_t + self.period_s, time.monotonic())     # after a timeout: no burst to catch up
            time.sleep(max(0.0, next_t - time.monotonic()))
        sock.close()


def _cmd_of(msg: bytes) -> str:
    try:
        return str(msgpack.unpackb(msg, raw=False).get("cmd"))
    except Exception:
        return "malformed"


def _subscribers(address: str, stop: threading.Event,
                 auth: Auth | None) -> tuple[threading.Thread, dict[str, int], Any]:
    ctx = zmq.Context.instance()
    stalled = ctx.socket(zmq.SUB)              # connects, subscribes, never reads
    stalled.setsockopt(zmq.SUBSCRIBE, b"")
    stalled.setsockopt(zmq.RCVHWM, 10)
    stalled.setsockopt(zmq.LINGER, 0)
    secure_client(stalled, auth)
    stalled.connect(address)
    got = {"batches": 0, "ticks": 0}

    def keep_up() -> None:
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.setsockopt(zmq.RCVTIMEO, 200)
        sub.setsockopt(zmq.LINGER, 0)
        secure_client(sub, auth)
        sub.connect(address)
        while not stop.is_set():
            try:
                msg = msgpack.unpackb(sub.recv(), raw=False)
                got["batches"] += 1
                got["ticks"] += msg.get("n", 0)
            except zmq.Again:
                pass
        sub.close()
    th = threading.Thread(target=keep_up, name="soak-subscriber", daemon=True)
    th.start()
    return th, got, stalled


def _write_variant(folder: Path) -> str:
    """The second swap model (module notes) written into ``folder``; returns its name there."""
    from hapticam.models.composite import Composite
    from hapticam.models.files import load_model_only, make_provenance, save_model
    from hapticam.models.friction import Friction

    variant = Composite([load_model_only(SWAP_MODEL),
                         Friction("coulomb-viscous", Fc_N=SWAP_FRICTION_N, v_eps_mps=SWAP_FRICTION_WIDTH_MPS)])
    save_model(folder / SWAP_VARIANT_FILE, variant,
               provenance=make_provenance("bench soak", notes=[f"{SWAP_MODEL} with {SWAP_FRICTION_N} N friction"]))
    return SWAP_VARIANT_FILE


def run_soak(minutes: float, clients: int = 4, request_rate_hz: float = 100.0, out_dir: str | None = None,
             progress: Callable[[str], None] = lambda m: None, hostile: bool = False) -> dict[str, Any]:
    """Run the soak (module docstring) for ``minutes``, with the hostile peers when ``hostile``; returns
    the JSON-ready results."""
    from hapticam.devices.registry import open_device
    from hapticam.world.users import press
    from hapticam.models.files import load_model_only
    from hapticam.render.loop import LoopConfig
    from hapticam.render.session import RenderSession
    from hapticam.render.soak_hostile import HostilePeers, render_counts

    folder = Path(out_dir or tempfile.mkdtemp(prefix="hapticam-soak-"))
    make_output_folder("--out", folder)
    record = folder / f"soak-{os.getpid()}.csv"
    sockets = Path(tempfile.mkdtemp(prefix="hs-"))          # mode 0700; ipc paths stay short (about 100 bytes)
    telemetry, control = f"ipc://{sockets}/telemetry", f"ipc://{sockets}/control"
    auth = Auth(secret=secrets.token_hex(32).encode()) if hostile else None
    swap_models = (SWAP_MODEL, _write_variant(folder))
    session = RenderSession(load_model_only(SWAP_MODEL), open_device("sim", user=press(0.0037, 1.0).repeating()),
                            LoopConfig(), record=record, telemetry=telemetry, control=control, record_dir=folder,
                            model_dir=folder, metadata={"source": "hapticam bench soak"}, auth=auth)
    stop = threading.Event()
    sub_thread, received, stalled = _subscribers(telemetry, stop, auth)
    workers = [_Client(control, request_rate_hz / clients, stop, seed=i, auth=auth) for i in range(clients)]
    peers = HostilePeers(telemetry, control, auth.secret) if hostile else None
    if peers is not None:
        peers.start()
    memory: list[tuple[float, float]] = []
    every_s, t0 = max(1, round(minutes * 60.0 / MEMORY_SAMPLES)), time.monotonic()
    swaps: dict[str, Any] = {"ok": 0, "refused": 0, "reasons": {}, "installed": {}}

    def background() -> None:
        from hapticam.render.control import request

        while session.loop.ticks == 0 and not stop.is_set():
            time.sleep(0.01)
        for w in workers:
            w.start()
        memory.append((time.monotonic() - t0, rss_mb()))     # the first sample, before the hostile peers
        if peers is not None:
            peers.attack()
        k = 0
        while not stop.wait(1.0):
            k += 1
            try:
                reply = request(control, {"cmd": "load_model", "name": swap_models[k % 2]}, timeout_s=3.0, auth=auth)
            except HapticError as exc:
                if stop.is_set() or not session.loop.running:      # in flight as the session ended
                    break
                reply = {"ok": False, "error": str(exc)}
            if reply.get("ok"):
                swaps["ok"] += 1
                name = swap_models[k % 2]
                swaps["installed"][name] = swaps["installed"].get(name, 0) + 1
            else:
                swaps["refused"] += 1
                reason = str(reply.get("error", "?")).split(":")[0][:40]
                swaps["reasons"][reason] = swaps["reasons"].get(reason, 0) + 1
            if k % every_s == 0:
                memory.append((time.monotonic() - t0, rss_mb()))
            if k % 10 == 1:
                progress(f"{time.monotonic() - t0:.0f} s: {session.loop.ticks} ticks, RSS {rss_mb():.1f} MB")
    bg = threading.Thread(target=background, name="soak-swaps", daemon=True)
    bg.start()
    try:
        report = session.run(minutes * 60.0, realtime=True)
    finally:
        stop.set()
        hostile_counts = peers.stop() if peers is not None else None
        for th in (bg, sub_thread, *workers):
            if th.is_alive():
                th.join(5.0)
        memory.append((time.monotonic() - t0, rss_mb()))   # the end sample, after every thread that samples
        stalled.close()
        shutil.rmtree(sockets, ignore_errors=True)
    return {**_results(minutes, report, received, workers, swaps, memory, record),
            "hostile": None if peers is None else render_counts(session, hostile_counts)}


def _results(minutes: float, report: Any, received: dict[str, int], workers: list[_Client],
             swaps: dict[str, Any], memory: list[tuple[float, float]], record: Path) -> dict[str, Any]:
    st = report.stats
    ticks_recorded, finite = scan_recording(record)
    status = np.array([ms for w in workers for ms in w.status_ms])
    requests = {k: sum(w.counts[k] for w in workers) for k in ("sent", "ok", "refused", "timeouts")}
    requests["timed_out_by_cmd"] = {c: sum(w.timed_out.get(c, 0) for w in workers)
                                    for c in sorted({c for w in workers for c in w.timed_out})}
    requests["ok_by_kind"] = {c: sum(w.ok_by_kind.get(c, 0) for w in workers)
                              for c in sorted({c for w in workers for c in w.ok_by_kind})}
    return {
        "minutes": minutes, "ticks": st.ticks, "misses": st.misses, "skipped": st.skipped,
        "lateness_p99_us": st.lateness_p99_us, "lateness_p999_us": st.lateness_p999_us,
        "lateness_max_us": st.lateness_max_us, "scheduling": st.scheduling,
        "status_reply_p99_ms": float(np.percentile(status, 99)) if status.size else float("nan"),
        "status_reply_max_ms": float(status.max()) if status.size else float("nan"),
        "status_replies_over_100ms": int(np.sum(status > 100.0)),
        "requests": requests, "model_swaps": swaps,
        **_memory(memory),
        "telemetry_sent": report.telemetry_sent, "telemetry_dropped": report.telemetry_dropped,
        "subscriber_received": received["batches"], "subscriber_ticks": received["ticks"],
        "lost_ticks": report.lost_ticks,
        "recording": str(record), "ticks_recorded": ticks_recorded,
        "recording_complete": ticks_recorded == st.ticks and report.lost_ticks == 0,
        "interventions": {k: v for k, v in st.interventions.items() if v}, "fault": st.fault,
        "hygiene": report.hygiene, "finite_forces": finite,
    }


def _memory(memory: list[tuple[float, float]]) -> dict[str, Any]:
    """Resident memory (MB) from the samples (s, MB) taken while the loop ran and, last, after the session
    closed: the first, the last and the largest while it ran, growth to the last and to the largest (MB, %
    of the first), and at the end."""
    running = [m for _, m in memory[:-1]] or [memory[-1][1]]
    first, last, most = running[0], running[-1], max(running)
    return {"rss_first_mb": first, "rss_last_mb": last, "rss_max_mb": most, "rss_end_mb": memory[-1][1],
            "rss_growth_mb": last - first, "rss_growth_percent": 100.0 * (last - first) / first,
            "rss_peak_growth_percent": 100.0 * (most - first) / first,
            "rss_samples": [[round(t, 1), round(m, 2)] for t, m in memory]}


def scan_recording(path: Path) -> tuple[int, bool]:
    """(data rows, every force finite) of a session recording, read a line at a time: a day's soak records
    gigabytes, beyond what a capture is loaded whole for."""
    rows, finite, column = 0, True, None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split(",")
            if column is None:
                column = fields.index("force_N")
                continue
            rows += 1
            finite = finite and math.isfinite(float(fields[column]))
    return rows, finite


def format_soak(r: dict[str, Any]) -> str:
    """The human-readable soak report."""
    from hapticam.render.soak_hostile import hostile_lines

    q = r["requests"]
    return "\n".join([
        f"soak {r['minutes']:g} min: {r['ticks']} ticks, missed {r['misses']} ({r['skipped']} periods skipped); "
        f"lateness p99 {r['lateness_p99_us']:.1f} us, p99.9 {r['lateness_p999_us']:.1f} us, "
        f"max {r['lateness_max_us']:.1f} us",
        f"scheduling: {r['scheduling']}",
        f"control: {q['sent']} requests ({q['ok']} ok, {q['refused']} refused, {q['timeouts']} timed out "
        f"{q['timed_out_by_cmd'] or ''}); "
        f"status replies p99 {r['status_reply_p99_ms']:.1f} ms, max {r['status_reply_max_ms']:.1f} ms "
        f"({r['status_replies_over_100ms']} over 100 ms); model swaps {r['model_swaps']['ok']} ok "
        f"{r['model_swaps']['installed'] or ''}, {r['model_swaps']['refused']} refused {r['model_swaps']['reasons'] or ''}",
        f"telemetry: {r['telemetry_sent']} batches sent, {r['telemetry_dropped']} dropped (stalled subscriber); "
        f"the subscriber keeping up received {r['subscriber_received']} ({r['subscriber_ticks']} of "
        f"{r['ticks']} ticks)",
        f"memory: RSS {r['rss_first_mb']:.1f} MB at the first sample, {r['rss_last_mb']:.1f} MB at the last "
        f"while running ({r['rss_growth_percent']:+.1f} %), {r['rss_max_mb']:.1f} MB at most "
        f"({r['rss_peak_growth_percent']:+.1f} %; at most {RSS_GROWTH_LIMIT_PERCENT:+g} % passes), "
        f"{r['rss_end_mb']:.1f} MB once the session closed",
        *hostile_lines(r.get("hostile")),
        f"recording: {r['ticks_recorded']} of {r['ticks']} ticks ({'complete' if r['recording_complete'] else 'INCOMPLETE'}), "
        f"{r['lost_ticks']} lost; {r['recording']}",
    ])


#: the render each kill trial starts and kills (real time, 1 kHz, recording every tick)
KILL_MODEL = SWAP_MODEL
KILL_RATE_HZ = 1000.0


def kill_trials(trials: int, out_dir: str | None = None, seed: int = 0, after_s: tuple[float, float] = (0.2, 1.5),
                progress: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Kill ``trials`` recording renders with SIGKILL at random times and count what their recordings lost.

    Each trial starts ``hapticam render KILL_MODEL --record ... --control ...`` as a process of its own,
    waits for its loop to tick, sleeps a random ``after_s`` (s), asks its control socket for the tick count
    and kills it at once; ``hapticam recover`` then completes the ``.partial`` recording. Ticks lost: the
    ticks the loop had run when it died less those recovered, at most the count in the ``status`` reply plus
    the ticks of the time from sending that request to the kill (``kill_window_ticks``; an upper bound),
    at least the count in the reply. Returns the ticks lost in each trial and the worst, in ticks and ms."""
    from hapticam.render.recording import partial_path
    from hapticam.render.recover import recover

    folder = Path(out_dir or tempfile.mkdtemp(prefix="hapticam-kill-"))
    make_output_folder("--out", folder)
    sockets = Path(tempfile.mkdtemp(prefix="hk-"))            # ipc paths must stay short (about 100 bytes)
    rng = random.Random(seed)
    results = []
    try:
        for k in range(trials):
            record = folder / f"kill-{k}.csv"
            control = f"ipc://{sockets}/control-{k}"
            results.append(_kill_once(record, control, rng.uniform(*after_s)))
            recovered = recover(partial_path(record))
            results[-1]["recovered_ticks"] = recovered.ticks
            results[-1]["lost_ticks_min"] = results[-1]["status_ticks"] - recovered.ticks
            results[-1]["lost_ticks"] = results[-1]["lost_ticks_min"] + results[-1]["kill_window_ticks"]
            progress(f"kill trial {k + 1}/{trials}: {results[-1]['lost_ticks']} ticks lost "
                     f"(killed after {results[-1]['status_ticks']} ticks)")
    finally:
        for leftover in sockets.iterdir():
            leftover.unlink()
        sockets.rmdir()
    worst = max((r["lost_ticks"] for r in results), default=0)
    return {"trials": results, "rate_hz": KILL_RATE_HZ, "worst_lost_ticks": worst,
            "worst_lost_ms": worst * 1e3 / KILL_RATE_HZ, "lost_ticks": [r["lost_ticks"] for r in results],
            "worst_lost_ticks_min": max((r["lost_ticks_min"] for r in results), default=0), "folder": str(folder)}


def _kill_once(record: Path, control: str, after_s: float, startup_s: float = 600.0) -> dict[str, Any]:
    """One render killed with SIGKILL ``after_s`` (s) after its loop started ticking (:func:`kill_trials`)."""
    import subprocess

    from hapticam.errors import ControlError, RenderError
    from hapticam.render.control import request

    proc = subprocess.Popen([sys.executable, "-m", "hapticam", "render", KILL_MODEL, "--record", str(record),
                             "--control", control, "--rate", f"{KILL_RATE_HZ:g}", "--duration", "600"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + startup_s
        while True:
            if proc.poll() is not None:
                raise RenderError(f"the render to kill ended by itself: {proc.communicate()[1].strip()[-400:]}")
            try:
                if request(control, {"cmd": "status"}, timeout_s=1.0).get("ticks", 0) > 0:
                    break
            except ControlError:
                pass
            if time.monotonic() > deadline:
                raise RenderError(f"the render to kill did not start ticking within {startup_s:g} s")
            time.sleep(0.05)
        time.sleep(after_s)
        sent = time.monotonic()
        status = request(control, {"cmd": "status"}, timeout_s=5.0)
        proc.kill()
        window_s = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    return {"after_s": after_s, "status_ticks": int(status["ticks"]),
            "kill_window_ticks": int(math.ceil(window_s * KILL_RATE_HZ)) + 1}


def format_kill_trials(r: dict[str, Any]) -> str:
    """The human-readable kill -9 report."""
    spans = ", ".join(f"{max(t['lost_ticks_min'], 0)}-{t['lost_ticks']}" for t in r["trials"])
    return (f"kill -9 of a recording render, {len(r['trials'])} trials at {r['rate_hz']:g} Hz: ticks lost "
            f"(at least-at most; the most counts every tick of the time between the status request and the kill) "
            f"{spans}; worst at most {r['worst_lost_ticks']} ticks ({r['worst_lost_ms']:.0f} ms), at least "
            f"{max(r['worst_lost_ticks_min'], 0)}; recordings in {r['folder']}")


def register(sub: Any, bench: Any) -> None:
    """Add ``hapticam bench soak`` to the bench group (``sub`` unused)."""
    b = bench.add_parser("soak", help="a long real-time render under control requests, telemetry and model swaps",
                         description=DESCRIPTION)
    b.add_argument("--minutes", type=float, default=30.0, help="how long to run (default 30)")
    b.add_argument("--clients", type=int, default=4, help="control clients sharing 100 requests/s (default 4)")
    b.add_argument("--out", metavar="DIR", default=None, help="folder for the recording (default: a temporary one)")
    b.add_argument("--hostile", action=argparse.BooleanOptionalAction, default=True,
                   help="beside the well-behaved clients, a subscription flood, malformed and oversized requests and "
                        "connections without credentials, in a process of their own (default: on)")
    b.add_argument("--json", action="store_true", help="print the results as one JSON object")
    b.add_argument("--json-file", metavar="FILE", help="also write the results as JSON to FILE")
    b.add_argument("--kill-trials", type=int, default=None, metavar="N",
                   help="instead of the soak: kill -9 a recording render N times at random moments and report the "
                        "ticks each recovered recording lost (the worst in ms)")
    b.set_defaults(func=_cmd_soak)


def _cmd_soak(args: Any) -> int:
    from hapticam.errors import UsageError
    from hapticam.fileio import check_output_file, report_json

    if not (0 < args.minutes <= 24 * 60) or not (1 <= args.clients <= 64):
        raise UsageError("--minutes must be in (0, 1440] and --clients in [1, 64]")
    check_output_file("--json-file", args.json_file)
    if args.kill_trials is not None:
        if not 1 <= args.kill_trials <= 1000:
            raise UsageError(f"--kill-trials must be in [1, 1000], got {args.kill_trials}")
        killed = kill_trials(args.kill_trials, out_dir=args.out,
                             progress=lambda m: print(m, file=sys.stderr, flush=True))
        report_json(killed, args.json, args.json_file, format_kill_trials)
        return 0
    results = run_soak(args.minutes, clients=args.clients, out_dir=args.out, hostile=args.hostile,
                       progress=lambda m: print(m, file=sys.stderr, flush=True))
    report_json(results, args.json, args.json_file, format_soak)
    bounded = results["rss_peak_growth_percent"] <= RSS_GROWTH_LIMIT_PERCENT
    return 0 if results["recording_complete"] and results["fault"] is None and bounded else 1

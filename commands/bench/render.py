"""``hapticam bench render``: the servo loop against a plain Python loop, idle and under load.

In one run:

- ``hapticam``: our compiled loop (:class:`~hapticam.render.loop.ServoLoop`, real time, SCHED_FIFO when
  permitted) rendering ``example:linear-key`` on the simulated device at 1 kHz;
- ``python``: a plain Python loop on its own thread with the same scheduling request, paced by
  ``time.sleep``, stepping the same simulated device and evaluating the same model with NumPy (its
  force-position curve tabulated from the kernel and interpolated with ``np.interp``, plus viscous term);

each for ``seconds`` idle and again while another Python thread does busy work (msgpack-serialising
telemetry-sized batches and allocating arrays). Lateness is the delay of each tick's start after its
deadline; a miss is a tick that ends after the next deadline (same definition for both loops).

Also: per-call compute time of each model kind's kernel along a press trajectory (``tick_us``: mean
without the slowest 0.1 % of calls, which are preemptions rather than compute; p50, p99 and max are
also given), and our
loop sustained at 10 kHz (missed deadlines in percent).

With a device (``--device phantom|serial|zmq``, :func:`run_device_bench`): the adapter rendering the
same model on its emulator (phantom: the HDAPI emulator ``libHD.so``; serial: the hsp firmware emulator
on a pseudo-terminal; zmq: the simulator served on loopback), beside the simulator in the same run, idle
and under load: tick lateness (start after its deadline), tick gap (start to start) and round-trip
lateness, each as p50/p99/p99.9 in us. Round trip: for serial and zmq, how many periods late the
device's answer to a command was (the sample's age, times the period; 0 when it came within its tick);
for phantom, the time from the device's frame opening to its force being committed (``hdBeginFrame`` to
``hdEndFrame``, one tick's whole work). For phantom, also pyOpenHaptics' Python callback doing the same
work on the same emulated device (:mod:`hapticam.devices.phantom_peer`), the anchor a Python user has.
Run it as ``python -m hapticam.commands.bench.render --device NAME [--seconds S] [--json]``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Callable

import msgpack
import numpy as np
from numba import njit

from hapticam.devices.base import IO_FORCE, IO_SIZE, IO_X
from hapticam.devices.registry import EMULATED_ADAPTERS, open_device
from hapticam.world.users import press
from hapticam.models.kernels import model_force
from hapticam.render.clock import now_ns, request_realtime
from hapticam.render.emulated import Emulated as _Emulated
from hapticam.render.layout import HIST_BIN_NS, R_AUX1, R_LATE
from hapticam.render.loop import LoopConfig, ServoLoop
from hapticam.commands.bench.render_plot import tail_from_histogram, tail_from_samples
from hapticam.commands.bench.render_display import display_timings, format_display_table
from hapticam.render.stats import hist_percentile_us

BENCH_MODEL = "example:linear-key"


class BusyLoad:
    """A Python thread doing telemetry-like busy work (msgpack of 1,000-float batches, allocation)."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-load", daemon=True)
        self.iterations = 0

    def _run(self) -> None:
        batch = {"t_s": [0.001 * i for i in range(1000)], "x_m": [1e-6 * i for i in range(1000)]}
        while not self._stop.is_set():
            msgpack.unpackb(msgpack.packb(batch))
            junk = [np.zeros(256) for _ in range(64)]
            del junk
            self.iterations += 1

    def __enter__(self) -> "BusyLoad":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _summary(lateness_ns: np.ndarray | None, hist: np.ndarray | None, missed: int, ticks: int,
             scheduling: str) -> dict[str, Any]:
    if hist is not None:
        p = {"p50_us": hist_percentile_us(hist, 0.5), "p99_us": hist_percentile_us(hist, 0.99),
             "p999_us": hist_percentile_us(hist, 0.999)}
    else:
        lat_us = lateness_ns * 1e-3
        p = {"p50_us": float(np.percentile(lat_us, 50)), "p99_us": float(np.percentile(lat_us, 99)),
             "p999_us": float(np.percentile(lat_us, 99.9))}
    return {**p, "missed": int(missed), "ticks": int(ticks), "scheduling": scheduling}


def run_hapticam(model: Any, seconds: float, rate_hz: float = 1000.0) -> dict[str, Any]:
    """Our loop in real time for ``seconds``; lateness percentiles from its histogram."""
    dev = open_device("sim", user=press(0.0037, 1.0).repeating())
    loop = ServoLoop(model, dev, LoopConfig(rate_hz=rate_hz))
    loop.start(seconds)
    loop.wait()
    st = loop.stop()
    out = _summary(None, loop.hist, st.misses, st.ticks, st.scheduling)
    out["max_us"] = st.lateness_max_us
    out["tail"] = tail_from_histogram(loop.hist)
    return out


def run_python(model: Any, seconds: float, rate_hz: float = 1000.0) -> dict[str, Any]:
    """The plain Python reference loop on its own thread (same scheduling request)."""
    c = model.compile()
    grid = np.linspace(-0.002, 0.006, 4001)
    table = np.array([model_force(c.params, c.reset_state(), float(x), 0.0, 0.0, 1e-3) for x in grid])
    b_visc = 0.02
    binding = open_device("sim", user=press(0.0037, 1.0).repeating()).servo_binding()
    io = np.zeros(IO_SIZE)
    n = int(round(seconds * rate_hz))
    period_ns = int(round(1e9 / rate_hz))
    dt = 1.0 / rate_hz
    lateness = np.zeros(n, dtype=np.int64)
    result: dict[str, Any] = {}

    def body() -> None:
        scheduling = request_realtime()
        missed = 0
        x_prev = None
        v = 0.0
        deadline = time.perf_counter_ns() + period_ns
        k = 0
        while k < n:
            wait = deadline - time.perf_counter_ns()
            if wait > 0:
                time.sleep(wait * 1e-9)
            start = time.perf_counter_ns()
            lateness[k] = max(start - deadline, 0)
            binding.sense(binding.state, io)
            x = io[IO_X]
            if x_prev is not None:
                v += 0.7 * ((x - x_prev) / dt - v)
            x_prev = x
            f = float(np.interp(x, grid, table)) + b_visc * v     # NumPy evaluation of the model
            f = min(max(f, -8.0), 8.0)
            io[IO_FORCE] = f
            binding.actuate(binding.state, io, dt)
            k += 1
            deadline += period_ns
            end = time.perf_counter_ns()
            if end > deadline:
                missed += 1
                lost = (end - deadline) // period_ns
                missed += lost
                deadline += lost * period_ns
        result.update(_summary(lateness, None, missed, n, scheduling))
        result["max_us"] = float(lateness.max() * 1e-3)
        result["tail"] = tail_from_samples(lateness)

    th = threading.Thread(target=body, name="bench-python-loop")
    th.start()
    th.join()
    return result


@njit(cache=True, nogil=True)
def _time_kernel(params, state, xs, dt, out_ns, ts):
    """Per-call time (ns) of model_force along ``xs`` (velocity from differences)."""
    total = 0.0
    x_prev = xs[0]
    for i in range(xs.size):
        v = (xs[i] - x_prev) / dt
        x_prev = xs[i]
        t0 = now_ns(ts)
        total += model_force(params, state, xs[i], v, 0.0, dt)
        out_ns[i] = now_ns(ts) - t0
    return total


def kind_timings(n: int = 20000) -> dict[str, dict[str, float]]:
    """Per-call kernel time of each model kind along a 1 kHz press trajectory (us)."""
    from hapticam.models.files import example_names, load_model_only

    models: dict[str, Any] = {}
    for name in example_names():
        m = load_model_only(f"example:{name}")
        models.setdefault(m.kind, m)
        for part in m.components():
            models.setdefault(part.kind, part)
    t = np.arange(n) * 1e-3
    xs = 0.0045 * 0.5 * (1 - np.cos(2 * np.pi * t / 1.0)) - 0.0002   # 1 Hz press, 4.3 mm
    ts = np.zeros(2, dtype=np.int64)
    clock_cost = np.zeros(1000, dtype=np.int64)
    _time_kernel(np.array([0.0]), np.zeros(0), np.zeros(1000), 1e-3, clock_cost, ts)  # empty model: clock cost
    overhead = float(np.median(clock_cost))
    out: dict[str, dict[str, float]] = {}

    def body() -> None:  # on a thread with the loop's scheduling, so preemption does not count as compute
        request_realtime()
        for kind, m in sorted(models.items()):
            c = m.compile()
            ns = np.zeros(n, dtype=np.int64)
            _time_kernel(c.params, c.reset_state(), xs, 1e-3, ns, ts)
            us = np.sort(np.maximum(ns - overhead, 0) * 1e-3)
            kept = us[: max(1, int(us.size * 0.999))]  # drop the top 0.1 %: preemption, not compute
            out[kind] = {"tick_us": float(kept.mean()), "p50_us": float(np.percentile(us, 50)),
                         "p99_us": float(np.percentile(us, 99)), "max_us": float(us[-1])}

    th = threading.Thread(target=body, name="bench-kinds")
    th.start()
    th.join()
    return out


def run_bench(seconds: float = 10.0, progress: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Run every part of the benchmark; returns the JSON-ready results."""
    from hapticam.models.files import load_model_only

    model = load_model_only(BENCH_MODEL)
    progress("compiling and warming up")
    run_hapticam(model, 0.2)
    results: dict[str, Any] = {"model": BENCH_MODEL, "rate_hz": 1000.0, "seconds": seconds,
                               "hapticam": {}, "python": {}}
    for cond in ("idle", "load"):
        for name, fn in (("hapticam", run_hapticam), ("python", run_python)):
            progress(f"{name} loop, {cond}, {seconds:g} s")
            if cond == "load":
                with BusyLoad() as load:
                    r = fn(model, seconds)
                r["load_iterations"] = load.iterations
            else:
                r = fn(model, seconds)
            results[name][cond] = r
    progress(f"hapticam loop at 10 kHz, {seconds:g} s")
    r10 = run_hapticam(model, seconds, rate_hz=10_000.0)
    r10["missed_pct"] = 100.0 * r10["missed"] / max(r10["ticks"], 1)
    results["hapticam_10khz"] = r10
    progress("per-kind kernel timing")
    results["kinds"] = kind_timings()
    progress("servo step with and without the display stage")
    results["display"] = display_timings()
    results["scheduling"] = results["hapticam"]["idle"]["scheduling"]
    results["lateness_resolution_us"] = HIST_BIN_NS * 1e-3
    results["p99_ratio"] = {cond: p99_ratio(results["python"][cond], results["hapticam"][cond])
                            for cond in ("idle", "load")}
    return results


def p99_ratio(peer: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """The peer's p99 lateness over ours, as a value only where both lie above the lateness histogram's
    resolution (``HIST_BIN_NS``); where ours is at the resolution the ratio is only a lower bound
    (``bound: ">="``), and where the peer's is too there is no ratio. Max lateness and misses go beside it."""
    res_us = HIST_BIN_NS * 1e-3
    a, b = float(peer["p99_us"]), float(ours["p99_us"])
    if a <= res_us:
        value, bound = None, "none"
    elif b <= res_us:
        value, bound = a / res_us, ">="
    else:
        value, bound = a / b, "="
    return {"value": value, "bound": bound, "max_us": [peer.get("max_us"), ours.get("max_us")],
            "missed": [peer.get("missed"), ours.get("missed")]}


def _ratio_text(cond: str, r: dict[str, Any]) -> str:
    if r["value"] is None:
        head = f"{cond}: both at the clock's resolution, no ratio"
    else:
        head = f"{cond} {'>= ' if r['bound'] == '>=' else ''}{r['value']:.0f}x"
        if r["bound"] == ">=":
            head += " (hapticam's p99 at the 0.1 us resolution)"
    (pm, hm), (pmiss, hmiss) = r["max_us"], r["missed"]
    return f"{head}; max {pm:.0f} vs {hm:.0f} us, missed {pmiss} vs {hmiss}"


def format_table(r: dict[str, Any]) -> str:
    """The human-readable report."""
    lines = [f"servo loop at {r['rate_hz']:g} Hz, {r['seconds']:g} s per run, model {r['model']}, "
             f"scheduling: {r['scheduling']}",
             f"{'loop':<10}{'cond':<6}{'p50 us':>10}{'p99 us':>10}{'p99.9 us':>11}{'max us':>11}{'missed':>8}"]
    for name in ("hapticam", "python"):
        for cond in ("idle", "load"):
            x = r[name][cond]
            lines.append(f"{name:<10}{cond:<6}{x['p50_us']:>10.1f}{x['p99_us']:>10.1f}{x['p999_us']:>11.1f}"
                         f"{x['max_us']:>11.1f}{x['missed']:>8d}")
    lines += ["p99 lateness ratio python/hapticam (python vs hapticam beside it):"]
    lines += [f"  {_ratio_text(c, v)}" for c, v in r["p99_ratio"].items()]
    h = r["hapticam_10khz"]
    lines.append(f"10 kHz: {h['ticks']} ticks, missed {h['missed']} ({h['missed_pct']:.3f} %), "
                 f"p99 {h['p99_us']:.1f} us, max {h['max_us']:.1f} us")
    lines.append(f"{'model kind':<22}{'tick_us':>10}{'p99 us':>10}{'max us':>10}")
    for kind, k in r["kinds"].items():
        lines.append(f"{kind:<22}{k['tick_us']:>10.3f}{k['p99_us']:>10.3f}{k['max_us']:>10.2f}")
    if "display" in r:
        lines.append(format_display_table(r["display"]))
    return "\n".join(lines)


# -- devices on their emulators ------------------------------------------------------------------------------
#: the adapters timed on their emulators: those the registry says have one
BENCH_DEVICES = EMULATED_ADAPTERS


def _pct(values_us: np.ndarray) -> dict[str, float]:
    v = np.asarray(values_us, dtype=float)
    if v.size == 0:
        return {"p50_us": float("nan"), "p99_us": float("nan"), "p999_us": float("nan"), "max_us": float("nan")}
    return {"p50_us": float(np.percentile(v, 50)), "p99_us": float(np.percentile(v, 99)),
            "p999_us": float(np.percentile(v, 99.9)), "max_us": float(v.max())}


def _device_run(device: Any, model: Any, seconds: float, rate_hz: float = 1000.0) -> dict[str, Any]:
    """One real-time run; lateness and gaps from the ring (gap = T + late(k) - late(k-1)), round trip
    from the sample's age in periods (``R_AUX1`` of lockstep adapters)."""
    loop = ServoLoop(model, device, LoopConfig(rate_hz=rate_hz, ring_capacity=int(seconds * rate_hz) + 64))
    loop.start(seconds)
    loop.wait()
    st = loop.stop()
    rows = loop.ring[:loop.ticks]
    late = rows[:, R_LATE]
    out = {"ticks": st.ticks, "missed": st.misses, "fault": st.fault, "lateness": _pct(late),
           "gap": _pct(1e6 / rate_hz + np.diff(late)), "scheduling": st.scheduling}
    if not device.external_clock and device.spec.name != "sim":
        out["round_trip"] = _pct(np.maximum(rows[:, R_AUX1], 0.0) * 1e6 / rate_hz)
    return out


def _frames_run(emu: Any) -> dict[str, Any]:
    """Gaps and frame durations (us) from the HDAPI emulator's own log of the frames that ran callbacks."""
    f = emu.frames()
    return {"gap": _pct(np.diff(f["t_begin_ns"]) * 1e-3), "round_trip": _pct((f["t_end_ns"] - f["t_begin_ns"]) * 1e-3),
            "ticks": int(f["t_begin_ns"].size)}


def _python_callback_run(user: Any, seconds: float) -> dict[str, Any]:
    """pyOpenHaptics' Python callback on the HDAPI emulator (same model terms: the bench key's stiffness)."""
    from hapticam.devices.phantom_emulator import HdEmulator
    from hapticam.devices.phantom_peer import run_pyopenhaptics_callback

    emu = HdEmulator().configure(None, user)
    calls = run_pyopenhaptics_callback(seconds)["calls"]
    return {**_frames_run(emu), "calls": calls}


def run_device_bench(device: str, seconds: float = 5.0, progress: Callable[[str], None] = lambda m: None
                     ) -> dict[str, Any]:
    """The adapter ``device`` on its emulator beside the simulator (and, for phantom, pyOpenHaptics'
    Python callback), idle and under load (module docstring)."""
    from hapticam.models.files import load_model_only

    if device not in BENCH_DEVICES:
        raise ValueError(f"bench render --device: one of {', '.join(BENCH_DEVICES)}, got {device!r}")
    model = load_model_only(BENCH_MODEL)
    user = press(0.0037, 1.0).repeating()
    rows: dict[str, dict[str, Any]] = {"sim": {}, device: {}}
    progress(f"{device} on its emulator: compiling and warming up")
    with _Emulated(device, user) as dev:
        _device_run(dev, model, 0.1)
    for cond in ("idle", "load"):
        with BusyLoad() if cond == "load" else contextlib.nullcontext():
            progress(f"sim, {cond}, {seconds:g} s")
            sim = open_device("sim", user=user)
            rows["sim"][cond] = _device_run(sim, model, seconds)
            sim.close()
            progress(f"{device}, {cond}, {seconds:g} s")
            emulated = _Emulated(device, user)
            with emulated as dev:
                rows[device][cond] = _device_run(dev, model, seconds)
            if device == "phantom":
                rows[device][cond].update(_frames_run(emulated.emu))
                progress(f"pyOpenHaptics Python callback, {cond}, {seconds:g} s")
                rows.setdefault("pyOpenHaptics", {})[cond] = _python_callback_run(user, seconds)
    return {"device": device, "model": BENCH_MODEL, "seconds": seconds, "rate_hz": 1000.0, "rows": rows}


def format_device_table(r: dict[str, Any]) -> str:
    """The human-readable report of :func:`run_device_bench`."""
    lines = [f"bench render --device {r['device']}: {r['seconds']:g} s per run at {r['rate_hz']:g} Hz, model {r['model']}",
             f"{'loop':<15}{'cond':<6}{'what':<12}{'p50 us':>10}{'p99 us':>10}{'p99.9 us':>10}{'max us':>10}"]
    for name, conds in r["rows"].items():
        for cond, row in conds.items():
            for what in ("lateness", "gap", "round_trip"):
                if what in row:
                    x = row[what]
                    lines.append(f"{name:<15}{cond:<6}{what:<12}{x['p50_us']:>10.1f}{x['p99_us']:>10.1f}"
                                 f"{x['p999_us']:>10.1f}{x['max_us']:>10.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m hapticam.commands.bench.render --device NAME [--seconds S] [--json] [--json-file FILE]``."""
    import argparse
    import sys

    from hapticam.fileio import check_output_file, report_json

    ap = argparse.ArgumentParser(prog="python -m hapticam.commands.bench.render", description=run_device_bench.__doc__)
    ap.add_argument("--device", choices=BENCH_DEVICES, required=True)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--json-file", default=None)
    args = ap.parse_args(argv)
    if not (0 < args.seconds <= 600):
        ap.error("--seconds: more than 0 and at most 600")
    check_output_file("--json-file", args.json_file)
    results = run_device_bench(args.device, args.seconds, progress=lambda m: print(m, file=sys.stderr, flush=True))
    report_json(results, args.json, args.json_file, format_device_table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import msgpack
import numpy as np
from numba import njit

from hapticam.devices.base import IO_FORCE, IO_SIZE, IO_X
from hapticam.devices.registry import open_device
from hapticam.devices.users import press
from hapticam.models.kernels import model_force
from hapticam.render.clock import now_ns, request_realtime
from hapticam.render.loop import LoopConfig, ServoLoop
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
    results["scheduling"] = results["hapticam"]["idle"]["scheduling"]
    results["p99_ratio"] = {cond: results["python"][cond]["p99_us"] / max(results["hapticam"][cond]["p99_us"], 0.1)
                            for cond in ("idle", "load")}
    return results


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
    lines.append("p99 ratio python/hapticam: " + ", ".join(f"{c} {v:.0f}x" for c, v in r["p99_ratio"].items()))
    h = r["hapticam_10khz"]
    lines.append(f"10 kHz: {h['ticks']} ticks, missed {h['missed']} ({h['missed_pct']:.3f} %), "
                 f"p99 {h['p99_us']:.1f} us, max {h['max_us']:.1f} us")
    lines.append(f"{'model kind':<22}{'tick_us':>10}{'p99 us':>10}{'max us':>10}")
    for kind, k in r["kinds"].items():
        lines.append(f"{kind:<22}{k['tick_us']:>10.3f}{k['p99_us']:>10.3f}{k['max_us']:>10.2f}")
    return "\n".join(lines)

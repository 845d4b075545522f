"""``hapticam bench probe``: the compiled probe simulation against the same loop in pure Python.

For every target this times seed 001's capture (a 90 s, 1-4 Hz swept sine at 4 kHz: 360,000 samples,
40 kHz internal step) through :func:`hapticam.world.probe.simulate`, and, in the same run, the very
same code with numba disabled (``NUMBA_DISABLE_JIT=1``, in a child process, without the settling
hold) on a short stretch of the same sweep, and reports the time per sample of each and their ratio.
Absolute times drift on shared machines; the ratio is the result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

_PEER_SCRIPT = """
import json, sys, time
from hapticam.commands.bench.probe import _sweep
from hapticam.world.probe import ProbeSpec, simulate
from hapticam.world.targets import get_target
out = {}
for name in sys.argv[2:]:
    target = get_target(name)
    t0 = time.perf_counter()
    run = simulate(target, _sweep(target, float(sys.argv[1])), ProbeSpec(settle_s=0.0))
    out[name] = {"seconds": time.perf_counter() - t0, "samples": int(run.t_s.size)}
print(json.dumps(out))
"""


def _sweep(target: Any, duration_s: float) -> Any:
    from hapticam.world.excitations import SweptSine

    lo, hi = target.probe_range_m()
    return SweptSine(0.5 * (lo + hi), 0.5 * (hi - lo), duration_s=duration_s)


def _python_peer(names: list[str], seconds: float) -> dict[str, Any]:
    """Run the probe with numba disabled in a child process; per-target seconds and samples."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", _PEER_SCRIPT, repr(seconds), *names], env=env,
                          capture_output=True, text=True, timeout=3600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"pure-Python peer failed: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_bench(duration_s: float = 90.0, peer_seconds: float = 0.25, targets: list[str] | None = None,
              python_peer: bool = True) -> dict[str, Any]:
    """Time the compiled probe on a ``duration_s`` sweep of each target and the pure-Python peer on
    ``peer_seconds`` of it; return times, per-sample costs and ratios."""
    from hapticam.world.probe import ProbeSpec, simulate
    from hapticam.world.targets import TARGETS, get_target

    names = sorted(TARGETS) if targets is None else list(targets)
    spec = ProbeSpec()
    results: dict[str, Any] = {"duration_s": duration_s, "sample_rate_hz": spec.sample_rate_hz,
                               "internal_rate_hz": spec.sample_rate_hz * spec.substeps,
                               "peer_seconds": peer_seconds, "targets": {}}
    for name in names:
        target = get_target(name)
        simulate(target, _sweep(target, 0.01), spec)                   # compile or load the cache
        t0 = time.perf_counter()
        run = simulate(target, _sweep(target, duration_s), spec)
        wall = time.perf_counter() - t0
        results["targets"][name] = {"samples": int(run.t_s.size), "hapticam_s": wall,
                                    "hapticam_loop_s": run.metadata["compute_s"],
                                    "hapticam_us_per_sample": 1e6 * wall / run.t_s.size}
    if python_peer:
        peer = _python_peer(names, peer_seconds)
        for name in names:
            row = results["targets"][name]
            p = peer[name]
            row["python_s"] = p["seconds"]
            row["python_samples"] = p["samples"]
            row["python_us_per_sample"] = 1e6 * p["seconds"] / p["samples"]
            row["speedup"] = row["python_us_per_sample"] / row["hapticam_us_per_sample"]
    return results


def format_table(results: dict[str, Any]) -> str:
    """The results as a text table."""
    lines = [f"probe: {results['duration_s']:g} s swept sine at {results['sample_rate_hz']:g} Hz "
             f"(internal {results['internal_rate_hz']:g} Hz); pure-Python peer on "
             f"{results['peer_seconds']:g} s of it",
             f"{'target':<16}{'samples':>9}{'hapticam s':>12}{'us/sample':>11}{'python us/sample':>18}"
             f"{'speedup':>10}",
             "-" * 76]
    for name, row in results["targets"].items():
        py = row.get("python_us_per_sample")
        lines.append(f"{name:<16}{row['samples']:>9}{row['hapticam_s']:>12.3f}{row['hapticam_us_per_sample']:>11.2f}"
                     + (f"{py:>18.1f}{row['speedup']:>9.0f}x" if py is not None else f"{'-':>18}{'-':>10}"))
    return "\n".join(lines)

"""``hapticam bench library``: library build throughput on one process, all cores, and Dask.

Each capture is written ``copies`` times with a distinguishing metadata line (so the content hashes
differ and nothing is skipped), then built into a fresh library three times in one run: with one
process, with a local process pool of every core, and on a ``dask.distributed.LocalCluster`` with one
single-threaded worker process per core. Reported: captures per second and the ratios to one process.
The per-capture cost gives what more cores would give: ``throughput(n) ~ n / cost`` while captures
outnumber workers, less the pool's start-up.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from hapticam.render.verify.library.build import build_library, collect_captures

DEFAULT_CAPTURES = Path(__file__).resolve().parents[3] / "tests" / "data" / "switch_curves"


def run_bench(captures: list[str] | None = None, copies: int = 2,
              progress: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Time the three ways of building (module notes); returns rows and ratios."""
    paths = collect_captures(captures or [DEFAULT_CAPTURES])
    cores = os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="hapticam-bench-library-"))
    try:
        src = work / "captures"
        src.mkdir()
        for i in range(copies):
            for p in paths:
                text = p.read_text(encoding="utf-8", errors="replace")
                (src / f"{p.stem}-copy{i}{p.suffix}").write_text(f"# bench_copy: {i}\n" + text, encoding="utf-8")
        n = len(paths) * copies
        rows = []
        for label, kw in (("1 process", {"jobs": 1}), (f"{cores} local processes", {"jobs": cores}),
                          (f"Dask LocalCluster, {cores} workers", {"dask": "local"})):
            progress(f"bench library: {label} ...")
            out = work / f"lib-{len(rows)}"
            t = _timed_build(src, out, cores, **kw)
            rows.append({"how": label, "captures": n, "seconds": t, "captures_per_s": n / t})
        base = rows[0]["captures_per_s"]
        for r in rows:
            r["ratio"] = r["captures_per_s"] / base
        cost = rows[0]["seconds"] / n
        return {"cores": cores, "captures": n, "per_capture_s": cost, "rows": rows,
                "projection_16_cores_captures_per_s": 16.0 / cost}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _timed_build(src: Path, out: Path, cores: int, jobs: int | None = None, dask: str | None = None) -> float:
    if dask == "local":
        from dask.distributed import LocalCluster

        with LocalCluster(n_workers=cores, threads_per_worker=1, processes=True, dashboard_address=None,
                          host="127.0.0.1") as cluster:
            t0 = time.perf_counter()
            build_library([src], out, dask=cluster.scheduler_address, quiet=True)
            return time.perf_counter() - t0
    t0 = time.perf_counter()
    build_library([src], out, jobs=jobs, quiet=True)
    return time.perf_counter() - t0


def format_table(r: dict[str, Any]) -> str:
    """The results as a text table."""
    lines = [f"library build of {r['captures']} captures on {r['cores']} cores",
             f"{'how':<36}{'seconds':>10}{'captures/s':>12}{'x 1 process':>13}", "-" * 71]
    lines += [f"{row['how']:<36}{row['seconds']:>10.2f}{row['captures_per_s']:>12.2f}{row['ratio']:>13.2f}"
              for row in r["rows"]]
    lines.append(f"per capture {r['per_capture_s']:.3f} s on one process: a 16-core machine would build about "
                 f"{r['projection_16_cores_captures_per_s']:.0f} captures/s, and a Dask cluster of N such machines "
                 "about N times that while captures outnumber workers")
    return "\n".join(lines)

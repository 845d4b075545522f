"""``hapticam bench library``: captures per second of a catalogue rebuild on 1 and N processes and on Dask.

By default the work is the shipped switch catalogue rebuilt from its captures, as
``hapticam library build --catalogue`` does it (:func:`~hapticam.library.export.build_catalogue`:
unpack ``switches/captures.tar.xz``, identify and verify every capture, export the models and
``index.json``), three times in one run, each into fresh folders so nothing is skipped: with one
process, with a local pool of ``workers`` processes (default 2), and on a ``dask.distributed.LocalCluster``
of ``workers`` single-threaded worker processes. ``only`` rebuilds a subset: that many captures spread
evenly over the archive's (alphabetical) order, repacked into an archive of their own beforehand.

Given capture files or folders instead, each is written ``copies`` times with a distinguishing metadata
line (so the content hashes differ and nothing is skipped) and built into a plain library the same three
ways.

Seconds are wall-clock seconds of the whole rebuild (a cluster's start-up excluded: a build is given a
running one); one capture is built beforehand, timed apart (``warm_up_s``), so that the first row does
not carry this process's imports and kernel loading, nor, on a first run of this source, the kernels'
compilation (:data:`~hapticam.library.build.FIRST_ENTRY_COMPILE_S`). Reported: captures
per second, the ratio to one process, and the wall-clock and CPU seconds one capture takes on one
process: on ``n`` idle cores ``throughput(n) ~ n / cpu_cost`` while captures outnumber workers. Other
work on the machine slows every row (the CPU seconds much less): the load average before and after is
kept.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from hapticam.library.build import build_library, collect_captures

#: the wall-clock seconds within which the catalogue should rebuild on two cores
GOAL_SECONDS = 120.0


def run_bench(captures: list[str] | None = None, copies: int = 1, only: int | None = None, workers: int = 2,
              progress: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Time the three ways of building (module notes); returns the rows, their ratios and the load."""
    work = Path(tempfile.mkdtemp(prefix="hapticam-bench-library-"))
    try:
        load_before = _load()
        if captures:
            build, n, what = _plain_library(captures, copies, only, work)
            whole = False
        else:
            build, n, what, whole = _catalogue(only, work)
        progress("bench library: one capture first, timed apart (imports, kernels) ...")
        t0 = time.perf_counter()
        _warm_up(work)
        warm_up_s = time.perf_counter() - t0
        rows = []
        for label, kw in (("1 process", {"jobs": 1}), (f"{workers} local processes", {"jobs": workers}),
                          (f"Dask LocalCluster, {workers} workers", {"dask": workers})):
            progress(f"bench library: {label} ...")
            cpu0 = time.process_time()
            seconds = _timed(build, work / f"run-{len(rows)}", **kw)
            rows.append({"how": label, "captures": n, "seconds": seconds, "captures_per_s": n / seconds})
            if not rows[1:]:                                  # one process: all of the work is this one's
                cpu_per_capture_s = (time.process_time() - cpu0) / n
        for r in rows:
            r["ratio"] = r["captures_per_s"] / rows[0]["captures_per_s"]
        return {"what": what, "captures": n, "workers": workers, "cores": os.cpu_count() or 1,
                "per_capture_s": rows[0]["seconds"] / n, "cpu_per_capture_s": cpu_per_capture_s,
                "rows": rows, "warm_up_s": warm_up_s,
                "goal_s": GOAL_SECONDS if whole and workers == 2 else None,
                "load_average_before": load_before, "load_average_after": _load()}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def spread(items: list[Any], only: int | None) -> list[Any]:
    """``only`` of ``items`` spread evenly over them (first and last included), in their order; all for None."""
    if only is None or only >= len(items):
        return list(items)
    if only == 1:
        return [items[0]]
    return [items[round(i * (len(items) - 1) / (only - 1))] for i in range(only)]


def _catalogue(only: int | None, work: Path) -> tuple[Callable[..., None], int, str, bool]:
    """The rebuild of the shipped catalogue (of ``only`` of its captures), the number of captures, what it
    is in words, and whether it is the whole catalogue."""
    from hapticam.library.export import build_catalogue, pack_captures
    from hapticam.library.switches import (CAPTURES_ARCHIVE, CATALOGUE_DIR, capture_members,
                                                         read_readme)

    archive = CATALOGUE_DIR / CAPTURES_ARCHIVE
    members = [name for name, _ in capture_members(archive)]
    chosen = spread(members, only)
    if len(chosen) < len(members):
        keep = set(chosen)
        subset = work / "subset"
        subset.mkdir()
        for name, data in capture_members(archive):
            if name in keep:
                (subset / name).write_bytes(data)
        archive = work / CAPTURES_ARCHIVE
        pack_captures([subset], archive, read_readme(CATALOGUE_DIR / CAPTURES_ARCHIVE))
    what = f"switch catalogue rebuilt from {len(chosen)} of its {len(members)} captures"

    def build(run: Path, jobs: int | None = None, dask: str | None = None) -> None:
        build_catalogue(run / "catalogue", run / "work", archive=archive, jobs=jobs, dask=dask, quiet=True)
    return build, len(chosen), what, len(chosen) == len(members)


def _plain_library(captures: list[str], copies: int, only: int | None, work: Path
                   ) -> tuple[Callable[..., None], int, str]:
    """A library build of ``copies`` copies of the given captures (``only`` of them)."""
    paths = spread(collect_captures(captures), only)
    src = work / "captures"
    src.mkdir()
    for i in range(copies):
        for p in paths:
            text = p.read_text(encoding="utf-8", errors="replace")
            (src / f"{p.stem}-copy{i}{p.suffix}").write_text(f"# bench_copy: {i}\n" + text, encoding="utf-8")
    what = f"library build of {len(paths)} captures x {copies} copies"

    def build(run: Path, jobs: int | None = None, dask: str | None = None) -> None:
        build_library([src], run / "library", jobs=jobs, dask=dask, quiet=True)
    return build, len(paths) * copies, what


def _warm_up(work: Path) -> None:
    """Build one repository test capture in this process (imports, numba's cached kernels), untimed."""
    from hapticam.library.entry import process_capture

    capture = Path(__file__).resolve().parents[2] / "tests" / "data" / "switch_curves" / "Gateron-Brown.csv"
    if capture.is_file():
        process_capture(str(capture), str(work / "warm-up"), {"allow_active": False, "pipeline": "warm-up"})


def _timed(build: Callable[..., None], run: Path, jobs: int | None = None, dask: int | None = None) -> float:
    """Wall-clock seconds of ``build`` into ``run``: on ``jobs`` local processes, or on a LocalCluster of
    ``dask`` worker processes (started before the clock)."""
    if dask is not None:
        from hapticam.errors import DependencyMissingError
        try:
            from dask.distributed import LocalCluster
        except ImportError as exc:
            raise DependencyMissingError("bench library needs dask.distributed (pip install 'hapticam[dask]')") from exc

        with LocalCluster(n_workers=dask, threads_per_worker=1, processes=True, dashboard_address=None,
                          host="127.0.0.1") as cluster:
            t0 = time.perf_counter()
            build(run, dask=cluster.scheduler_address)
            return time.perf_counter() - t0
    t0 = time.perf_counter()
    build(run, jobs=jobs)
    return time.perf_counter() - t0


def _load() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the system has none)."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None


def format_table(r: dict[str, Any]) -> str:
    """The results as a text table."""
    lines = [f"{r['what']} on {r['cores']} cores",
             f"{'how':<36}{'seconds':>10}{'captures/s':>12}{'x 1 process':>13}", "-" * 71]
    lines += [f"{row['how']:<36}{row['seconds']:>10.2f}{row['captures_per_s']:>12.2f}{row['ratio']:>13.2f}"
              for row in r["rows"]]
    lines.append(f"per capture {r['per_capture_s']:.3f} s on one process, of which {r['cpu_per_capture_s']:.3f} "
                 f"s of CPU: n idle cores build about n / {r['cpu_per_capture_s']:.3f} captures/s while captures "
                 f"outnumber them ({r['captures'] * r['cpu_per_capture_s'] / 2:.0f} s for these on two)")
    lines.append(f"before them, one capture in this process (imports; kernels compiled or loaded from numba's "
                 f"cache): {r['warm_up_s']:.1f} s")
    if r["goal_s"] is not None:
        pooled = r["rows"][1]
        met = "within" if pooled["seconds"] <= r["goal_s"] else "NOT within"
        lines.append(f"the whole catalogue on {pooled['how']}: {pooled['seconds']:.1f} s, {met} the goal of "
                     f"{r['goal_s']:.0f} s on two cores")
    if r["load_average_before"] is not None:
        lines.append(f"load average (1, 5, 15 min) before {r['load_average_before']}, after "
                     f"{r['load_average_after']}: other work on the machine slows every row")
    return "\n".join(lines)

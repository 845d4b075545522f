"""``hapticam library build``: identify and verify many captures, in parallel, resumably.

Work runs on local processes (:class:`concurrent.futures.ProcessPoolExecutor`, ``--jobs N``) or on an
existing Dask distributed cluster (``--dask tcp://scheduler:8786``; ``pip install "hapticam[dask]"``),
whose futures API matches ``concurrent.futures``, so both go through one path: ``submit`` per capture,
results as they complete.

- **Resumable**: each capture's key is the hash of its bytes and the build settings; a capture whose
  ``entries/KEY.json`` exists is skipped (a failed one too, with its recorded reason, unless
  ``retry_failed``). Killing a build loses at most the captures in flight.
- **Never half-written**: every file (model, thumbnail, entry) is written atomically by the worker that
  made it, and the index (``index.json``, ``index.html``) last, by the main process, from the entries.
- **Failures do not stop the batch**: a capture that fails is recorded with its reason.
- **Thumbnails** (each key's force-travel plot, for ``index.html``) unless ``thumbnails=False``: a
  build whose pictures nobody looks at saves about 40 % of its time (the index then shows no plots).
- **Progress**: a bar with counts of done, failed and skipped (tqdm; off when stderr is not a terminal or
  with ``quiet``). On local processes the first capture is built in this process before the pool starts,
  saying so (and, on a first run, that it compiles the kernels, :mod:`hapticam.progress`): the workers
  then load the compiled kernels from numba's cache instead of each compiling them behind a bar at 0.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from hapticam.errors import DependencyMissingError, ParameterError, UsageError
from hapticam.fileio import make_output_folder
from hapticam.progress import bar, step
from hapticam.library.catalogue import write_index
from hapticam.library.entry import entry_key, process_capture, read_entry

CAPTURE_SUFFIXES = (".csv", ".txt", ".npz", ".ods")


@dataclass
class BuildReport:
    """Counts of a build and the entries it left in the index."""

    done: int = 0
    failed: int = 0
    skipped: int = 0
    entries: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    duplicates: list[tuple[str, str]] = field(default_factory=list)   # (capture, the same bytes named first)


def collect_captures(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Capture files named, or found in named folders (not recursive), in a stable order."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(sorted(q for q in p.iterdir() if q.suffix.lower() in CAPTURE_SUFFIXES and q.is_file()))
        elif p.is_file():
            out.append(p)
        else:
            raise UsageError(f"{p}: no such capture file or folder")
    seen: set[Path] = set()
    unique = [p for p in out if not (p.resolve() in seen or seen.add(p.resolve()))]
    if not unique:
        raise UsageError("no capture files (.csv, .txt, .npz) found in the given paths")
    return unique


def build_library(paths: Iterable[str | os.PathLike[str]], out: str | os.PathLike[str], *, jobs: int | None = None,
                  dask: str | None = None, allow_active: bool = False, retry_failed: bool = False,
                  quiet: bool = False, thumbnails: bool = True) -> BuildReport:
    """Build (or complete) the library at ``out`` from the captures in ``paths`` (module notes)."""
    captures = collect_captures(paths)
    library = Path(out)
    executor = _executor(jobs, dask)                  # its settings checked before anything is written
    created = make_output_folder("out", library)
    settings = {"allow_active": bool(allow_active), "pipeline": "impedance-passive-v1"}
    report = BuildReport()
    todo, first_of = [], {}
    for path in captures:
        key = entry_key(path.read_bytes(), settings)
        existing = library / "entries" / f"{key}.json"
        if key in first_of:               # the same bytes under another name: one entry, said so
            report.skipped += 1
            report.duplicates.append((str(path), str(first_of[key])))
            continue
        first_of[key] = path
        entry = read_entry(existing)    # None: missing or unreadable (the index would leave it out): built again
        status = None if entry is None else entry["status"]
        if status is not None and not (retry_failed and status != "ok"):
            report.skipped += 1
        else:
            todo.append(path)
    try:
        with executor as (submit, as_completed):
            if todo and not executor.dask:          # a cluster's workers compile for themselves
                with step(f"library: building the first entry ({todo[0].name}) in this process",
                          compiles="the fitting and verification kernels", about_s=FIRST_ENTRY_COMPILE_S,
                          quiet=quiet):
                    _tally(report, process_capture(str(todo[0]), str(library), settings, thumbnails))
                todo = todo[1:]
            with _progress(len(captures), report, quiet) as progress:
                futures = [submit(process_capture, str(p), str(library), settings, thumbnails) for p in todo]
                progress.set_postfix(done=report.done, failed=report.failed, skipped=report.skipped)
                if futures and executor.pooled:
                    progress.set_postfix_str(executor.waiting(len(futures)))
                for fut in as_completed(futures):
                    _tally(report, fut.result())
                    progress.update(1)
                    progress.set_postfix(done=report.done, failed=report.failed, skipped=report.skipped)
    except BaseException:
        if created and library.is_dir() and not any(library.iterdir()):
            library.rmdir()                           # nothing was written (no scheduler): no empty library left
        raise
    report.entries = write_index(library)
    return report


#: a first run's compilation (s, one core) of what building one entry runs: identification, verification
FIRST_ENTRY_COMPILE_S = 40.0


def _tally(report: BuildReport, entry: dict[str, Any]) -> None:
    if entry.get("status") == "ok":
        report.done += 1
    else:
        report.failed += 1
        report.failures.append((entry.get("source", "?"), entry.get("reason", "")))


#: most worker processes a build starts (a worker per core is what helps; thousands only exhaust memory)
MAX_JOBS = max(64, 4 * (os.cpu_count() or 1))
#: a Dask scheduler address: protocol://... (tcp, tls, inproc, ucx) or host:port
DASK_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+]*://\S+|[^\s:/]+:\d{1,5})$")


class _executor:
    """``(submit, as_completed)`` of a local process pool, a Dask cluster, or this process (jobs = 1)."""

    def __init__(self, jobs: int | None, dask: str | None) -> None:
        if jobs is not None and not 1 <= jobs <= MAX_JOBS:
            raise ParameterError("jobs", f"must be from 1 to {MAX_JOBS}, got {jobs}")
        if dask and not DASK_ADDRESS.match(dask):
            raise ParameterError("dask", f"{dask}: not a scheduler address like tcp://HOST:8786")
        self.jobs = jobs or os.cpu_count() or 1
        self.dask = dask
        self._pool: Any = None

    @property
    def pooled(self) -> bool:
        """Whether the work goes to other processes (a local pool or a cluster)."""
        return bool(self.dask) or self.jobs > 1

    def waiting(self, tasks: int) -> str:
        """What the bar says until the first of ``tasks`` captures handed out comes back."""
        if self.dask:
            return "waiting for the cluster's first result"
        return f"starting {min(self.jobs, tasks)} worker processes"

    def __enter__(self) -> tuple[Any, Any]:
        if self.dask:
            try:
                from dask.distributed import Client, as_completed
            except ImportError as exc:
                raise DependencyMissingError("building on a Dask cluster needs dask.distributed "
                                             "(pip install 'hapticam[dask]')") from exc
            try:
                with step(f"library: connecting to the Dask scheduler at {self.dask}"):
                    self._pool = Client(self.dask, timeout="10s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise ParameterError("dask", f"{self.dask}: cannot reach the scheduler ({exc})") from exc
            return self._pool.submit, as_completed
        if self.jobs == 1:
            return _InlineFuture, iter
        self._pool = cf.ProcessPoolExecutor(max_workers=self.jobs)
        return self._pool.submit, cf.as_completed

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            if self.dask:
                self._pool.close()
            else:
                self._pool.shutdown(wait=True, cancel_futures=True)


class _InlineFuture:
    """A future that runs its call in this process when its result is asked for (``--jobs 1``)."""

    def __init__(self, fn: Any, *args: Any) -> None:
        self.fn, self.args = fn, args

    def result(self) -> Any:
        return self.fn(*self.args)


def _progress(total: int, report: BuildReport, quiet: bool) -> Any:
    """The build's bar (a context): captures done, failed and skipped, from those already counted."""
    progress = bar(total, initial=report.skipped + report.done + report.failed, unit="capture", desc="library",
                   leave=True, quiet=quiet)
    return progress

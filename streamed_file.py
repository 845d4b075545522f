"""A file written line by line as its data arrive, safe against a crash, and the completion of one a crash
left behind.

Three writers stream this way: a render's recording (:mod:`hapticam.render.recording`), a device probe's
capture (:mod:`hapticam.devices.probe_capture`) and a recording from the switch meter's port
(:mod:`hapticam.devices.meter_port`). Each writes its own format; :class:`StreamFormat` names what
``hapticam recover`` (:mod:`hapticam.render.recover`) needs to know of it.

Writing. A :class:`StreamedFile` opens its partial file beside the destination exclusively (an earlier run's
is never overwritten): ``NAME.partial`` (:func:`partial_path`) or, for a file readers must take as it is
while it grows (the meter's record), ``STEM.partial.csv``. It holds an advisory lock on it (``flock``, where
the system has one) while open, so a reader can tell a file still being written (:func:`writer_alive`; the
``# pid: N`` line of a format with metadata tells it too). Lines are kept in memory, then handed to the
operating system every ``flush_period_s`` (:data:`FLUSH_PERIOD_S`, 50 ms: what a ``kill -9`` loses) or
once :data:`BUFFER_BYTES` are pending, and ``fsync``\\ ed every ``sync_period_s`` (:data:`SYNC_PERIOD_S`,
1 s: what a power cut loses). Each write is of whole lines, so a ``kill -9`` leaves whole lines; a power
cut or a full disk may leave part of one. :meth:`StreamedFile.finish` appends the final lines, syncs and
renames the partial file onto the destination, so the destination's name never holds a partial file;
:meth:`StreamedFile.close` syncs and keeps the partial file (a recording cut short). A write that fails
closes the file (``failure`` says why) and raises the :class:`OSError`; the partial file keeps what was
written before.

Completing. :func:`complete_partial` copies the complete lines of a partial file (a cut last line is
dropped), tells its format by its column header (the first line that is not a ``# key: value`` line), counts
its data lines and, for a format with metadata lines, appends the count and a ``recovered`` note: the result
is what the format's reader reads in a finished file.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Sequence

from hapticam.capture_io import metadata_lines
from hapticam.errors import CaptureError
from hapticam.fileio import current_umask, pid_alive

try:
    import fcntl
except ImportError:                      # no advisory locks (Windows): the pid line alone tells a live writer
    fcntl = None  # type: ignore[assignment]

PARTIAL_SUFFIX = ".partial"
#: a partial file that keeps its format's suffix (``STEM.partial.csv``)
PARTIAL_CSV_SUFFIX = ".partial.csv"
#: how often lines are handed to the operating system (s): what a ``kill -9`` loses
FLUSH_PERIOD_S = 0.05
#: how often the partial file is ``fsync``\ ed (s): what a power cut loses
SYNC_PERIOD_S = 1.0
#: lines pending beyond this (bytes) are handed to the operating system before the flush period ends
BUFFER_BYTES = 1 << 20
#: the column header is in a streamed file's first lines, and its data lines are short: a file with no
#: header this far in, or a longer line, is not one (and is never held whole in memory)
MAX_HEADER_OFFSET = 1 << 20
MAX_LINE_BYTES = 1 << 20
_PID = re.compile(rb"^# pid: (\d+)\s*$", re.MULTILINE)
_CHUNK = 1 << 24


@dataclass(frozen=True)
class StreamFormat:
    """A streamed file's format: ``kind`` (its name in messages), ``header`` (its column header line, without
    the newline), ``count_name`` (what a data line is: ``"ticks"``, ``"samples"``) and ``metadata`` (whether
    it carries ``# key: value`` lines: then its header may follow some, and a completion appends
    ``# COUNT_NAME: N`` and ``# recovered: ...``)."""

    kind: str
    header: str
    count_name: str
    metadata: bool = True


@dataclass(frozen=True)
class Completion:
    """What :func:`complete_partial` wrote: the format, the data lines, the bytes of a cut line dropped."""

    format: StreamFormat
    lines: int
    cut_bytes: int


def partial_path(path: str | os.PathLike[str]) -> Path:
    """Where a file streamed to ``path`` is written until it is complete: ``NAME.partial`` beside it."""
    p = Path(path)
    return p.with_name(p.name + PARTIAL_SUFFIX)


def partial_csv_path(path: str | os.PathLike[str]) -> Path:
    """Where a CSV file streamed to ``path`` is written until it is complete, for readers that take it as it is
    (a spreadsheet, a CSV reader): ``STEM.partial.csv`` beside it."""
    p = Path(path)
    return p.with_name(p.stem + PARTIAL_CSV_SUFFIX)


def destination_of(partial: str | os.PathLike[str]) -> Path | None:
    """The file a partial file completes into (``NAME.partial`` -> ``NAME``, ``STEM.partial.csv`` ->
    ``STEM.csv``); None for a name of neither form."""
    p = Path(partial)
    for suffix, keep in ((PARTIAL_CSV_SUFFIX, ".csv"), (PARTIAL_SUFFIX, "")):
        stem = p.name[: -len(suffix)]
        if p.name.endswith(suffix) and stem.strip("."):
            return p.with_name(stem + keep)
    return None


def writer_alive(fh: IO[bytes]) -> bool:
    """Whether another process writes the open partial file ``fh``: it holds the file's lock; where the system
    has no locks, the ``# pid: N`` line in its first 64 kB names a running process other than this one (a
    free lock outweighs a pid line, whose process id a dead writer may have handed on). ``fh`` is left at 0."""
    locked = _locked(fh.fileno())
    if locked is not None:
        return locked
    try:
        head = fh.read(1 << 16)
    except OSError:
        return False
    finally:
        fh.seek(0)
    m = _PID.search(head)
    return bool(m and int(m.group(1)) != os.getpid() and pid_alive(int(m.group(1))))


def _locked(fd: int) -> bool | None:
    """Whether a writer holds the lock of ``fd``'s file (tested without waiting, and released at once); None
    where the system or the file system has no locks."""
    if fcntl is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:                       # a file system without locks
        return None
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


class StreamedFile:
    """Whole lines streamed to ``partial`` (default :func:`partial_path` of ``path``) and renamed onto ``path``
    by :meth:`finish` (module docstring). ``head``: the first lines, written and synced before this returns.
    Periods in s. Not thread-safe: a writer used from two threads locks around it.

    Raises :class:`OSError` (:class:`FileExistsError`: the partial file exists) when the partial file cannot
    be made or its first lines written; none is left then."""

    def __init__(self, path: str | os.PathLike[str], head: str, *, partial: str | os.PathLike[str] | None = None,
                 flush_period_s: float = FLUSH_PERIOD_S, sync_period_s: float = SYNC_PERIOD_S) -> None:
        self.path = Path(path)
        if self.path.name.endswith((PARTIAL_SUFFIX, PARTIAL_CSV_SUFFIX)):   # recover would take it for one
            raise OSError(f"{self.path}: a name ending in {PARTIAL_SUFFIX} or {PARTIAL_CSV_SUFFIX} is kept for "
                          "the file being written; choose another")
        self.partial = partial_path(self.path) if partial is None else Path(partial)
        self.flush_period_s, self.sync_period_s = flush_period_s, sync_period_s
        self.written = 0                  # bytes taken, pending ones included
        self.flushes = 0
        self.failure: str | None = None
        self._pending = bytearray()
        self._last_flush = self._last_sync = 0.0
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        self._fd: int | None = os.open(self.partial, flags, 0o666 & ~current_umask())
        _lock(self._fd)
        try:
            self.write(head)
            self.flush(sync=True)
        except OSError:
            self.partial.unlink(missing_ok=True)
            raise

    @property
    def closed(self) -> bool:
        """True once finished, closed, or cut short by a failed write."""
        return self._fd is None

    def write(self, text: str) -> None:
        """Take whole lines (``text`` ends with a newline); flush (and sync) when a period has passed. A closed
        file takes nothing."""
        if self._fd is None:
            return
        data = text.encode("utf-8")
        self._pending += data
        self.written += len(data)
        if len(self._pending) >= BUFFER_BYTES:
            self.flush(sync=False)
        self.flush_if_due()

    def flush_if_due(self) -> None:
        """Flush if ``flush_period_s`` has passed since the last flush, and sync if ``sync_period_s`` has."""
        now = time.monotonic()
        if now - self._last_flush >= self.flush_period_s:
            self.flush(sync=now - self._last_sync >= self.sync_period_s)

    def flush(self, sync: bool) -> None:
        """Hand the pending lines to the operating system (they survive ``kill -9``) and, if ``sync``, to the
        disk (they survive a power cut). A failure closes the file and raises."""
        if self._fd is None:
            return
        try:
            while self._pending:
                done = os.write(self._fd, self._pending)
                del self._pending[:done]
            if sync:
                os.fsync(self._fd)
                self._last_sync = time.monotonic()
        except OSError as exc:
            self.fail(exc)
            raise
        self._last_flush = time.monotonic()
        self.flushes += 1

    def fail(self, exc: OSError) -> None:
        """Close the file after a failed write, keeping what it holds; ``failure`` says why."""
        self.failure = self.failure or (exc.strerror or str(exc))
        self._pending.clear()
        self._close_fd()

    def close(self) -> None:
        """Flush, sync and close, keeping the partial file (a recording cut short). Raises OSError."""
        try:
            self.flush(sync=True)
        finally:
            self._close_fd()

    def finish(self, tail: str = "") -> Path:
        """Append ``tail`` (the final lines), sync, close and rename the partial file onto ``path``; returns
        ``path``. Raises OSError (the partial file is kept, closed), also when the file was already closed or
        cut short by a failed write: the destination's name never holds a partial file."""
        if self._fd is None:
            raise OSError(self.failure or f"{self.partial}: already closed")
        try:
            self.write(tail)
            self.flush(sync=True)
            os.replace(self.partial, self.path)
        finally:
            self._close_fd()
        return self.path

    def _close_fd(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


def _lock(fd: int) -> None:
    """Hold the advisory lock of the partial file while it is written (where the system has locks)."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:                   # a file system without locks: the pid line still tells
            pass


def complete_partial(fh: IO[bytes], out: IO[bytes], formats: Sequence[StreamFormat], where: str) -> Completion:
    """Copy the complete lines of partial file ``fh`` to ``out`` in bounded chunks and append the final
    metadata of its format (one of ``formats``, told by the column header); a cut last line is dropped.
    Raises :class:`CaptureError` naming ``where`` for a file that is none of ``formats``."""
    head, fmt = _read_head(fh, formats, where)
    out.write(head)
    lines, tail = 0, b""
    while chunk := fh.read(_CHUNK):
        block = tail + chunk
        cut = block.rfind(b"\n") + 1
        body, tail = block[:cut], block[cut:]
        if len(tail) > MAX_LINE_BYTES:
            raise CaptureError(f"{where}: a line longer than {MAX_LINE_BYTES >> 20} MiB; not a hapticam {fmt.kind}")
        out.write(body)
        lines += body.count(b"\n") - body.count(b"\n#") - body.startswith(b"#")   # less comment lines
    if fmt.metadata:
        note = f"partial {fmt.kind}; {len(tail)} bytes of an unfinished line cut"
        out.write(metadata_lines({fmt.count_name: lines, "recovered": note}).encode())
    return Completion(format=fmt, lines=lines, cut_bytes=len(tail))


def _read_head(fh: IO[bytes], formats: Sequence[StreamFormat], where: str) -> tuple[bytes, StreamFormat]:
    """The lines up to and including the column header, and the format it names (module docstring)."""
    head = bytearray()
    while len(head) < MAX_HEADER_OFFSET:
        line = fh.readline(MAX_LINE_BYTES)
        if not line.endswith(b"\n"):
            break
        head += line
        if line.startswith(b"#"):
            continue
        found = [f for f in formats if line.rstrip(b"\r\n") == f.header.encode()]
        if found and (found[0].metadata or len(head) == len(line)):
            return bytes(head), found[0]
        break
    kinds = " or ".join(f.kind for f in formats)
    raise CaptureError(f"{where}: no column header of a {kinds} in its first lines; not a partial file hapticam "
                       "wrote")

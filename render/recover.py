"""``hapticam recover``: complete the files a killed writer left behind, and report or clean stale files.

Three writers stream their file to a partial file (a :class:`~hapticam.streamed_file.StreamedFile`): a
render's recording (``NAME.csv.partial``, :mod:`hapticam.render.recording`), a device probe's capture
(``NAME.csv.partial``, :mod:`hapticam.devices.probe_capture`) and a recording from the switch meter's port
(``STEM.partial.csv``, :mod:`hapticam.devices.meter_port`). A process killed without a chance to finish
(``kill -9``, a crash, a power cut) leaves that file with every line up to its last flush (``kill -9``, a
crash: at most 50 ms before the end, about 60 ms for a recording, whose samples reach it in batches; a power
cut: its last ``fsync``, about a second) and perhaps part of a line
after it. :func:`recover` tells which of the three it is by its column header and writes its header and
complete lines, and for a recording or a probe capture the metadata a finished one carries (``ticks`` or
``samples``, and ``recovered``; the meter's record has no metadata lines), to a temporary file beside it,
renames that to ``NAME.csv`` (``NAME.recovered.csv`` if ``NAME.csv`` exists) and only then removes the
partial, so ``identify`` and ``verify`` read it as they read a finished file, and a write that fails (a full
disk) leaves the partial as it was. The partial is never written to, and never opened through a symbolic
link (one is refused: writing would change the file it points to).

A partial file whose writer is still running (it holds the file's lock, or the ``# pid: N`` line of its
header names a running process) is left alone. Temporary files of atomic writes
(:func:`hapticam.fileio.atomic_write`) whose writer died never held a complete file and are removed
(:func:`clean_folder`). ``hapticam recover`` completes every partial it can and reports each one it cannot (a
link, an unreadable file, a file none of the three wrote) on a line of its own, with exit code 2.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from hapticam.devices.meter_port import METER_FORMAT
from hapticam.devices.probe_capture import PROBE_FORMAT
from hapticam.errors import CaptureError, RenderError
from hapticam.fileio import atomic_write, remove_stale_temp_files
from hapticam.render.recording import RECORDING_FORMAT
from hapticam.streamed_file import PARTIAL_CSV_SUFFIX, PARTIAL_SUFFIX, complete_partial, destination_of, writer_alive

MAX_PARTIAL_BYTES = 64 * 1024 ** 3
#: the exit code when any partial file could not be completed (the command line's code for bad input)
EXIT_REFUSED = 2
#: the formats of the partial files recover completes, told apart by their column headers
FORMATS = (RECORDING_FORMAT, PROBE_FORMAT, METER_FORMAT)
_NAMES = f"*{PARTIAL_SUFFIX} or *{PARTIAL_CSV_SUFFIX}"


@dataclass(frozen=True)
class Recovered:
    """One recovered file: where it went, how many data lines it holds (``ticks``: a recording's ticks, a
    capture's samples), bytes of a cut partial line, and what it is (``kind``, ``count_name``)."""

    source: Path
    path: Path
    ticks: int
    cut_bytes: int
    kind: str = RECORDING_FORMAT.kind
    count_name: str = RECORDING_FORMAT.count_name


def partial_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The ``*.partial`` and ``*.partial.csv`` entries of ``folder`` (anything but a folder: a link, say, is
    listed for :func:`recover` to refuse) except those whose writer is still running."""
    try:
        found = sorted(p for p in Path(folder).iterdir() if destination_of(p) is not None)
    except OSError:
        return []
    return [p for p in found if not _is_folder(p) and not _writer_alive(p)]


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _writer_alive(path: Path) -> bool:
    """Whether the process named in ``path``'s header runs (False when it cannot be read: recover says why)."""
    try:
        fh, _st = _open_partial(path)
    except RenderError:
        return False
    with fh:
        return writer_alive(fh)


def _open_partial(path: Path) -> tuple[IO[bytes], os.stat_result]:
    """Open a partial file to read, never through a symbolic link (``O_NOFOLLOW``) and without
    blocking on a FIFO; refuse anything but a regular file of at most ``MAX_PARTIAL_BYTES``."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise RenderError(f"{path}: is a symbolic link; recover never writes through a link (recover the "
                              "file it points to, or move that file here)") from None
        if exc.errno == errno.ENOENT:
            raise RenderError(f"{path}: no such file") from None
        raise RenderError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RenderError(f"{path}: not a regular file (a pipe, socket or device); not a partial file")
        if st.st_size > MAX_PARTIAL_BYTES:
            raise RenderError(f"{path}: over {MAX_PARTIAL_BYTES >> 30} GiB; not a partial file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), st
    except BaseException:
        os.close(fd)
        raise


def clean_folder(folder: str | os.PathLike[str]) -> tuple[list[Path], list[Path]]:
    """Remove dead writers' temporary files; return ``(removed, stale partial files)``."""
    return remove_stale_temp_files(folder), partial_files(folder)


def _destination(partial: Path) -> Path:
    target = destination_of(partial)
    if target is None:
        raise RenderError(f"{partial}: not a partial file ({_NAMES})")
    if os.path.lexists(target):
        target = target.with_name(f"{target.stem}.recovered{target.suffix}")
    if os.path.lexists(target):
        raise RenderError(f"{partial}: both {target.name} and the file's own name exist; move one away")
    return target


def recover(partial: str | os.PathLike[str], *, force: bool = False) -> Recovered:
    """Complete one partial file (module docstring); ``force`` recovers one whose writer seems alive (a
    recycled process id). Raises :class:`~hapticam.errors.RenderError` with one line.

    The completion (the complete lines, then the metadata of a format that has them) is written to a
    temporary file in the same folder and renamed into place; the partial is removed only after that, so a
    write that fails (a full disk) leaves it as it was. Nothing is written to the partial itself, nor through
    a link."""
    src = Path(partial)
    if destination_of(src) is None:
        raise RenderError(f"{src}: not a partial file ({_NAMES})")
    fh, st = _open_partial(src)
    with fh:
        if not force and writer_alive(fh):
            raise RenderError(f"{src}: still being written by a running process (it holds the file's lock, "
                              "or its header names it); stop that process, or give --force if the process id "
                              "was reused")
        dest = _destination(src)
        done = []
        try:
            atomic_write(dest, lambda out: done.append(complete_partial(fh, out, FORMATS, str(src))),
                         error=_WriteFailed)
        except _WriteFailed as exc:
            raise RenderError(f"{src}: left as it was, its completion could not be written ({exc})") from None
        except CaptureError as exc:
            raise RenderError(str(exc)) from None
    try:
        now = os.lstat(src)
        if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
            os.unlink(src)
    except OSError as exc:
        raise RenderError(f"{src}: completed into {dest}, but the partial could not be removed "
                          f"({exc.strerror or exc}); remove it") from None
    c = done[0]
    return Recovered(source=src, path=dest, ticks=c.lines, cut_bytes=c.cut_bytes, kind=c.format.kind,
                     count_name=c.format.count_name)


class _WriteFailed(RenderError):
    """Writing the completion failed (a full disk, a file size limit): the partial is untouched."""


def recover_paths(paths: list[str], *, force: bool = False
                  ) -> tuple[list[Recovered], list[Path], list[tuple[Path, str]]]:
    """Recover each partial file given, or every stale one in each folder given; remove dead writers'
    temporary files in those folders. One that cannot be recovered does not stop the others. Returns
    ``(recovered, temporary files removed, (path, reason) of each one refused)``."""
    done: list[Recovered] = []
    removed: list[Path] = []
    refused: list[tuple[Path, str]] = []
    for text in paths:
        p = Path(text)
        if p.is_dir():
            gone, partials = clean_folder(p)
            removed += gone
        elif os.path.lexists(p):
            partials = [p]
        else:
            refused.append((p, f"{p}: no such file or folder"))
            continue
        for q in partials:
            try:
                done.append(recover(q, force=force))
            except RenderError as exc:
                refused.append((q, " ".join(str(exc).split())))
    return done, removed, refused


def register(sub: Any, bench: Any) -> None:
    """Add ``hapticam recover`` to the command line's subcommands (``bench`` unused)."""
    p = sub.add_parser("recover", help="complete files a killed render, probe or meter recording left behind",
                       description="Complete each PATH (a render's recording or a device probe's capture "
                                   "NAME.csv.partial, a meter recording STEM.partial.csv, or every stale one in "
                                   "a folder) into NAME.csv (STEM.csv), valid up to its last flush; remove the "
                                   "temporary files of writes that were killed.")
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                   help="partial files or folders (default: the working folder)")
    p.add_argument("--force", action="store_true", help="recover even if the writing process seems alive")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=_cmd_recover)


def _cmd_recover(args: Any) -> int:
    from hapticam.fileio import report_json

    done, removed, refused = recover_paths(args.paths, force=args.force)
    result = {"recovered": [{"partial": str(r.source), "path": str(r.path), "kind": r.kind, "ticks": r.ticks,
                             "count_name": r.count_name, "cut_bytes": r.cut_bytes} for r in done],
              "removed_temporary": [str(p) for p in removed],
              "refused": [{"partial": str(p), "reason": reason} for p, reason in refused]}

    def table(res: dict[str, Any]) -> str:
        lines = [f"recovered {r['kind']} of {r['ticks']} {r['count_name']}: {r['partial']} -> {r['path']}"
                 for r in res["recovered"]]
        lines += [f"removed {p} (a killed write's temporary file)" for p in res["removed_temporary"]]
        return "\n".join(lines) or ("nothing recovered" if refused else "nothing to recover")
    report_json(result, args.json, None, table)
    for _path, reason in refused:                    # one line each, as the command line reports an error
        print(f"hapticam: error: {reason}", file=sys.stderr)
    return EXIT_REFUSED if refused else 0

"""``hapticam recover``: complete the recordings a killed render left behind, and report or clean stale files.

A render streams its recording to ``NAME.csv.partial`` (:mod:`hapticam.render.recording`); a process
killed without a chance to finish (``kill -9``, a crash, a power cut) leaves that file with every tick up
to its last flush (``kill -9``, a crash: about 60 ms before the end; a power cut: its last ``fsync``,
about a second) and perhaps half a line after it.
:func:`recover` writes its complete lines and the metadata a finished recording carries (``ticks``,
``recovered``) to a temporary file beside it, renames that to ``NAME.csv`` (``NAME.recovered.csv`` if
``NAME.csv`` exists) and only then removes the partial, so ``identify`` and ``verify`` read it like any
recording and a write that fails (a full disk) leaves the partial as it was. The partial is never written
to, and never opened through a symbolic link (one is refused: writing would change the file it points to).

A partial file whose writer (``# pid: N`` in its header) is still running is left alone. Temporary files
of atomic writes (:func:`hapticam.fileio.atomic_write`) whose writer died never held a complete file and
are removed (:func:`clean_folder`). ``hapticam recover`` completes every partial it can and reports each
one it cannot (a link, an unreadable file, not a recording) on a line of its own, with exit code 2.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from hapticam.errors import RenderError
from hapticam.fileio import atomic_write, pid_alive, remove_stale_temp_files
from hapticam.render.recording import PARTIAL_SUFFIX, RECORD_COLUMNS, metadata_lines

MAX_PARTIAL_BYTES = 64 * 1024 ** 3
#: the column header is in a recording's first lines, and a tick's line is about 100 bytes: a file with
#: no header this far in, or a longer line, is not a recording (and is never held whole in memory)
MAX_HEADER_OFFSET = 1 << 20
MAX_LINE_BYTES = 1 << 20
#: the exit code when any partial recording could not be completed (the command line's code for bad input)
EXIT_REFUSED = 2
_PID = re.compile(rb"^# pid: (\d+)\s*$", re.MULTILINE)
_CHUNK = 1 << 24


@dataclass(frozen=True)
class Recovered:
    """One recovered recording: where it went, how many ticks it holds, bytes of a cut partial line."""

    source: Path
    path: Path
    ticks: int
    cut_bytes: int


def partial_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The ``*.partial`` entries of ``folder`` (anything but a folder: a link, say, is listed for
    :func:`recover` to refuse) except those whose writer is still running."""
    try:
        found = sorted(p for p in Path(folder).iterdir() if p.name.endswith(PARTIAL_SUFFIX))
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
        return _alive_in(fh)


def _alive_in(fh: IO[bytes]) -> bool:
    try:
        head = fh.read(1 << 16)
    except OSError:
        return False
    finally:
        fh.seek(0)
    m = _PID.search(head)
    return bool(m) and int(m.group(1)) != os.getpid() and pid_alive(int(m.group(1)))


def _open_partial(path: Path) -> tuple[IO[bytes], os.stat_result]:
    """Open a partial recording to read, never through a symbolic link (``O_NOFOLLOW``) and without
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
            raise RenderError(f"{path}: not a regular file (a pipe, socket or device); not a partial recording")
        if st.st_size > MAX_PARTIAL_BYTES:
            raise RenderError(f"{path}: over {MAX_PARTIAL_BYTES >> 30} GiB; not a partial recording")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), st
    except BaseException:
        os.close(fd)
        raise


def clean_folder(folder: str | os.PathLike[str]) -> tuple[list[Path], list[Path]]:
    """Remove dead writers' temporary files; return ``(removed, stale partial recordings)``."""
    return remove_stale_temp_files(folder), partial_files(folder)


def _destination(partial: Path) -> Path:
    target = partial.with_name(partial.name[: -len(PARTIAL_SUFFIX)])
    if os.path.lexists(target):
        target = target.with_name(f"{target.stem}.recovered{target.suffix}")
    if os.path.lexists(target):
        raise RenderError(f"{partial}: both {target.name} and the recording's own name exist; move one away")
    return target


def recover(partial: str | os.PathLike[str], *, force: bool = False) -> Recovered:
    """Complete one partial recording (module docstring); ``force`` recovers one whose writer seems alive
    (a recycled process id). Raises :class:`~hapticam.errors.RenderError` with one line.

    The completion (the complete lines, then the metadata) is written to a temporary file in the same
    folder and renamed into place; the partial is removed only after that, so a write that fails (a full
    disk) leaves it as it was. Nothing is written to the partial itself, nor through a link."""
    src = Path(partial)
    if not src.name.endswith(PARTIAL_SUFFIX):
        raise RenderError(f"{src}: not a partial recording (*{PARTIAL_SUFFIX})")
    fh, st = _open_partial(src)
    with fh:
        if not force and _alive_in(fh):
            raise RenderError(f"{src}: still being written by a running process (its header names it); "
                              "stop that render, or give --force if the process id was reused")
        dest = _destination(src)
        counted: dict[str, int] = {}
        try:
            atomic_write(dest, lambda out: counted.update(_complete(fh, out, src)), error=_WriteFailed)
        except _WriteFailed as exc:
            raise RenderError(f"{src}: left as it was, its completion could not be written ({exc})") from None
    try:
        now = os.lstat(src)
        if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
            os.unlink(src)
    except OSError as exc:
        raise RenderError(f"{src}: completed into {dest}, but the partial could not be removed "
                          f"({exc.strerror or exc}); remove it") from None
    return Recovered(source=src, path=dest, ticks=counted["ticks"], cut_bytes=counted["cut"])


class _WriteFailed(RenderError):
    """Writing the completion failed (a full disk, a file size limit): the partial is untouched."""


def _complete(fh: IO[bytes], out: IO[bytes], src: Path) -> dict[str, int]:
    """Copy the complete lines of partial ``fh`` to ``out`` in bounded chunks, counting the data lines after
    the column header, then append the metadata; returns ``{"ticks", "cut"}`` (bytes of a half line cut)."""
    header = ",".join(RECORD_COLUMNS).encode()
    ticks, seen_header, tail, offset = 0, False, b"", 0
    while chunk := fh.read(_CHUNK):
        block = tail + chunk
        cut = block.rfind(b"\n") + 1
        body, tail = block[:cut], block[cut:]
        out.write(body)
        if not seen_header and header in body:
            seen_header = True
            body = body[body.index(header) + len(header) + 1:]   # after the header's newline
        if seen_header:
            ticks += body.count(b"\n") - body.count(b"\n#") - body.startswith(b"#")   # less comment lines
        offset += len(body)
        if not seen_header and offset + len(tail) > MAX_HEADER_OFFSET or len(tail) > MAX_LINE_BYTES:
            break
    if not seen_header:
        raise RenderError(f"{src}: no column header ({header.decode()}) in its first lines; not a hapticam "
                          "recording")
    if len(tail) > MAX_LINE_BYTES:
        raise RenderError(f"{src}: a line longer than {MAX_LINE_BYTES >> 20} MiB; not a hapticam recording")
    out.write(metadata_lines({"ticks": ticks, "recovered": f"partial recording; {len(tail)} bytes of an "
                                                            "unfinished line cut"}).encode())
    return {"ticks": ticks, "cut": len(tail)}


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
    p = sub.add_parser("recover", help="complete recordings a killed render left behind (*.partial)",
                       description="Complete each PATH (a NAME.csv.partial recording, or every stale one in a "
                                   "folder) into NAME.csv, valid up to its last flush; remove the temporary "
                                   "files of writes that were killed.")
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                   help="partial recordings or folders (default: the working folder)")
    p.add_argument("--force", action="store_true", help="recover even if the writing process seems alive")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=_cmd_recover)


def _cmd_recover(args: Any) -> int:
    from hapticam.fileio import report_json

    done, removed, refused = recover_paths(args.paths, force=args.force)
    result = {"recovered": [{"partial": str(r.source), "path": str(r.path), "ticks": r.ticks,
                             "cut_bytes": r.cut_bytes} for r in done],
              "removed_temporary": [str(p) for p in removed],
              "refused": [{"partial": str(p), "reason": reason} for p, reason in refused]}

    def table(res: dict[str, Any]) -> str:
        lines = [f"recovered {r['ticks']} ticks: {r['partial']} -> {r['path']}" for r in res["recovered"]]
        lines += [f"removed {p} (a killed write's temporary file)" for p in res["removed_temporary"]]
        return "\n".join(lines) or ("nothing recovered" if refused else "nothing to recover")
    report_json(result, args.json, None, table)
    for _path, reason in refused:                    # one line each, as the command line reports an error
        print(f"hapticam: error: {reason}", file=sys.stderr)
    return EXIT_REFUSED if refused else 0

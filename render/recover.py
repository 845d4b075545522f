"""``hapticam recover``: complete the recordings a killed render left behind, and report or clean stale files.

A render streams its recording to ``NAME.csv.partial`` (:mod:`hapticam.render.recording`); a process
killed without a chance to finish (``kill -9``, a crash, a power cut) leaves that file with every tick up
to its last flush (at most about a second before the end) and perhaps half a line after it.
:func:`recover` cuts the half line, appends the metadata a finished recording carries (``ticks``,
``recovered``) and renames it to ``NAME.csv`` (``NAME.recovered.csv`` if ``NAME.csv`` exists), so
``identify`` and ``verify`` read it like any recording.

A partial file whose writer (``# pid: N`` in its header) is still running is left alone. Temporary files
of atomic writes (:func:`hapticam.fileio.atomic_write`) whose writer died never held a complete file and
are removed (:func:`clean_folder`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hapticam.errors import RenderError
from hapticam.fileio import open_regular, pid_alive, remove_stale_temp_files
from hapticam.render.recording import PARTIAL_SUFFIX, RECORD_COLUMNS, metadata_lines

MAX_PARTIAL_BYTES = 64 * 1024 ** 3
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
    """The ``*.partial`` recordings in ``folder`` whose writer is no longer running."""
    try:
        found = sorted(p for p in Path(folder).iterdir() if p.name.endswith(PARTIAL_SUFFIX) and p.is_file())
    except OSError:
        return []
    return [p for p in found if not _writer_alive(p)]


def _writer_alive(path: Path) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    m = _PID.search(head)
    return bool(m) and int(m.group(1)) != os.getpid() and pid_alive(int(m.group(1)))


def clean_folder(folder: str | os.PathLike[str]) -> tuple[list[Path], list[Path]]:
    """Remove dead writers' temporary files; return ``(removed, stale partial recordings)``."""
    return remove_stale_temp_files(folder), partial_files(folder)


def _destination(partial: Path) -> Path:
    target = partial.with_name(partial.name[: -len(PARTIAL_SUFFIX)])
    if target.exists():
        target = target.with_name(f"{target.stem}.recovered{target.suffix}")
    if target.exists():
        raise RenderError(f"{partial}: both {target.name} and the recording's own name exist; move one away")
    return target


def recover(partial: str | os.PathLike[str], *, force: bool = False) -> Recovered:
    """Complete one partial recording (module docstring); ``force`` recovers one whose writer seems alive
    (a recycled process id). Raises :class:`~hapticam.errors.RenderError` with one line."""
    src = Path(partial)
    if not src.name.endswith(PARTIAL_SUFFIX):
        raise RenderError(f"{src}: not a partial recording (*{PARTIAL_SUFFIX})")
    fh, size = open_regular(src, MAX_PARTIAL_BYTES, error=RenderError, what="partial recording")
    if not force and _writer_alive(src):
        fh.close()
        raise RenderError(f"{src}: still being written by a running process (its header names it); "
                          "stop that render, or give --force if the process id was reused")
    header = ",".join(RECORD_COLUMNS).encode()
    ticks, seen_header, tail = 0, False, b""
    with fh:                                         # count complete data lines in bounded chunks
        while chunk := fh.read(_CHUNK):
            block = tail + chunk
            cut = block.rfind(b"\n") + 1
            body, tail = block[:cut], block[cut:]
            if not seen_header and header in body:
                seen_header = True
                body = body[body.index(header) + len(header) + 1:]   # after the header's newline
            if seen_header:
                ticks += body.count(b"\n") - len(re.findall(rb"^#", body, re.MULTILINE))
    if not seen_header:
        raise RenderError(f"{src}: no column header ({header.decode()}); not a hapticam recording")
    dest = _destination(src)
    with open(src, "r+b") as out:                   # drop the half line, then append the metadata
        out.truncate(size - len(tail))
        out.seek(0, os.SEEK_END)
        out.write(metadata_lines({"ticks": ticks,
                                  "recovered": f"partial recording; {len(tail)} bytes of an unfinished "
                                               "line cut"}).encode())
        out.flush()
        os.fsync(out.fileno())
    os.replace(src, dest)
    return Recovered(source=src, path=dest, ticks=ticks, cut_bytes=len(tail))


def recover_paths(paths: list[str], *, force: bool = False) -> tuple[list[Recovered], list[Path]]:
    """Recover each partial file given, or every stale one in each folder given; remove dead writers'
    temporary files in those folders. Returns ``(recovered, temporary files removed)``."""
    done: list[Recovered] = []
    removed: list[Path] = []
    for text in paths:
        p = Path(text)
        if p.is_dir():
            gone, partials = clean_folder(p)
            removed += gone
            done += [recover(q, force=force) for q in partials]
        elif p.exists():
            done.append(recover(p, force=force))
        else:
            raise RenderError(f"{p}: no such file or folder")
    return done, removed


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

    done, removed = recover_paths(args.paths, force=args.force)
    result = {"recovered": [{"partial": str(r.source), "path": str(r.path), "ticks": r.ticks,
                             "cut_bytes": r.cut_bytes} for r in done],
              "removed_temporary": [str(p) for p in removed]}

    def table(res: dict[str, Any]) -> str:
        lines = [f"recovered {r['ticks']} ticks: {r['partial']} -> {r['path']}" for r in res["recovered"]]
        lines += [f"removed {p} (a killed write's temporary file)" for p in res["removed_temporary"]]
        return "\n".join(lines) or "nothing to recover"
    report_json(result, args.json, None, table)
    return 0

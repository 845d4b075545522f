"""File helpers every floor uses: atomic writes, size-limited reads, JSON-safe conversion.

- :func:`atomic_write` / :func:`atomic_write_bytes`: write through a temporary file in the destination's
  folder, ``fsync``, then ``os.replace``; on any failure the temporary file is removed and the destination
  is untouched (never half-written). The new file's permissions follow the process umask, as for any file
  created with ``open()`` (``mkstemp`` alone would leave every output at 0600).
- :func:`stale_temp_files` / :func:`remove_stale_temp_files`: the temporary files of writers that died
  (killed mid-write: ``kill -9``, power loss); their names carry the writer's process id, so a live
  writer's file is never touched.
- :func:`read_limited`: read a whole regular file of at most ``limit`` bytes, with one clear error for a
  missing file, a folder, an oversize or an empty file.
- :func:`json_safe`: numpy scalars and arrays to Python numbers and lists, non-finite floats to ``None``,
  tuples to lists, keys to strings, anything else to its ``str``; the result always passes ``json.dumps``.
- :func:`report_json` and :func:`check_output_file`: the commands' one output convention (``--json``: one
  JSON object on stdout and nothing else; ``--json-file FILE``: the same JSON written to a file).

Errors are raised as the caller's :class:`~hapticam.errors.HapticError` subclass (``error=``), so a
capture reader raises ``CaptureError`` and a model reader ``ModelFileError`` with the same wording.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, Callable

from hapticam.errors import HapticError, ParameterError, UsageError

_UMASK_LOCK = threading.Lock()
#: marks the writer's process id in a temporary file's name: ``.NAME.pid1234.XXXXXX.tmp``
TEMP_PID_TAG = "pid"


def current_umask() -> int:
    """The process umask (read by setting and restoring it, under a lock)."""
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], Any], *,
                 error: type[HapticError] = HapticError) -> None:
    """Call ``write(fh)`` on a temporary binary file beside ``path``, then rename it onto ``path``.

    Raises ``error`` (with the path and the reason) when the folder does not exist or the write fails.
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise error(f"{target}: folder {folder} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{TEMP_PID_TAG}{os.getpid()}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise error(f"{target}: cannot write ({exc.strerror or exc})") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, target)
        remove_stale_temp_files(folder, target.name)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise error(f"{target}: cannot write ({exc.strerror or exc})") from exc
        raise


def pid_alive(pid: int) -> bool:
    """True if a process ``pid`` exists (signal 0 delivered or refused for permission)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale_temp_files(folder: str | os.PathLike[str], name: str | None = None) -> list[Path]:
    """Temporary files of :func:`atomic_write` in ``folder`` (for target ``name``, or any) whose writing
    process no longer exists: what a writer killed mid-write leaves behind. Sorted by name."""
    pattern = re.compile(r"^\.(?P<name>.+)\." + TEMP_PID_TAG + r"(?P<pid>\d+)\.[^.]+\.tmp$")
    out = []
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return []
    for p in entries:
        m = pattern.match(p.name)
        if m and (name is None or m.group("name") == name) and not pid_alive(int(m.group("pid"))):
            out.append(p)
    return sorted(out)


def remove_stale_temp_files(folder: str | os.PathLike[str], name: str | None = None) -> list[Path]:
    """Remove :func:`stale_temp_files` (they never became a file: the rename is the last step); returns
    the paths removed."""
    removed = []
    for p in stale_temp_files(folder, name):
        try:
            p.unlink()
            removed.append(p)
        except OSError:
            pass
    return removed


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *,
                       error: type[HapticError] = HapticError) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_write`)."""
    atomic_write(path, lambda fh: fh.write(data), error=error)


def atomic_write_text(path: str | os.PathLike[str], text: str, *,
                      error: type[HapticError] = HapticError) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically (see :func:`atomic_write`)."""
    atomic_write_bytes(path, text.encode("utf-8"), error=error)


def save_figure(fig: Any, path: str | os.PathLike[str], *, dpi: float | None = None, tight: bool = True,
                error: type[HapticError] = HapticError) -> Path:
    """Write a matplotlib figure to ``path`` as PNG atomically (:func:`atomic_write`) and close it, also on
    failure; ``tight``: lay it out first (``tight_layout``). Returns the path."""
    import matplotlib.pyplot as plt

    try:
        if tight:
            fig.tight_layout()
        atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=dpi), error=error)
    finally:
        plt.close(fig)
    return Path(path)


def open_regular(path: str | os.PathLike[str], limit: int, *, error: type[HapticError] = HapticError,
                 what: str = "file") -> tuple[IO[bytes], int]:
    """Open a regular file of at most ``limit`` bytes for reading; returns ``(binary file, size)``.

    The file is opened with ``O_NONBLOCK`` and checked on the open descriptor (``fstat``), so a FIFO or a
    device is refused before any read and without blocking, and a file swapped for one between a check
    and the open is refused as well. Every problem raises ``error`` with one line."""
    text = os.fspath(path)
    try:
        fd = os.open(text, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error(f"{text}: no such file") from None
    except IsADirectoryError:
        raise error(f"{text}: is a directory, not a {what}") from None
    except OSError as exc:
        raise error(f"{text}: cannot read ({exc.strerror or exc})") from exc
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise error(f"{text}: is a directory, not a {what}")
        if not stat.S_ISREG(st.st_mode):               # a FIFO or a device would block or never end
            raise error(f"{text}: not a regular file (a pipe, socket or device); give a {what}")
        if st.st_size > limit:
            raise error(f"{text}: file is {st.st_size} bytes, over the {_mib(limit)} limit")
        if st.st_size == 0:
            raise error(f"{text}: file is empty (an empty file holds no {what})")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), int(st.st_size)
    except BaseException:
        os.close(fd)
        raise


def read_limited(path: str | os.PathLike[str], limit: int, *, error: type[HapticError] = HapticError,
                 what: str = "file") -> bytes:
    """Read the whole regular file at ``path`` (at most ``limit`` bytes) or raise ``error`` with one clear
    line (see :func:`open_regular`)."""
    text = os.fspath(path)
    fh, _size = open_regular(path, limit, error=error, what=what)
    try:
        with fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise error(f"{text}: cannot read ({exc.strerror or exc})") from exc
    if len(data) > limit:
        raise error(f"{text}: file is over the {_mib(limit)} limit")
    if not data:
        raise error(f"{text}: file is empty (an empty file holds no {what})")
    return data


def _mib(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 else f"{n} bytes"


def json_safe(value: Any) -> Any:
    """A copy of ``value`` that ``json.dumps`` accepts: numbers, strings, bools, None, lists, dicts."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy arrays and scalars
        return json_safe(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def make_output_folder(parameter: str, path: str | os.PathLike[str]) -> bool:
    """Create the output folder ``path`` (and its parents) or refuse it with one
    :class:`~hapticam.errors.ParameterError` of ``parameter`` (the caller's name for the path: a library
    function's parameter, which its command says as a flag, or a command's flag); return whether it was
    created here (so a command that fails before writing anything can remove it again)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ParameterError(parameter, f"{p}: exists and is not a folder")
    created = not p.exists()
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParameterError(parameter, f"{p}: cannot create the folder ({exc.strerror or exc})") from None
    return created


#: file names a model is written to and read from (YAML or msgpack)
YAML_SUFFIXES = (".yaml", ".yml")
MSGPACK_SUFFIXES = (".msgpack", ".mpk")
MODEL_SUFFIXES = YAML_SUFFIXES + MSGPACK_SUFFIXES
MODEL_HINT = "use a .yaml or .msgpack file name"


def check_output_file(option: str, path: str | os.PathLike[str] | None, suffixes: tuple[str, ...] = (),
                      hint: str = "") -> None:
    """Refuse, before any work, an output file that is a folder, whose name does not end in one of
    ``suffixes`` (lower case, with the dot; ``hint`` says what to use) or whose folder does not exist."""
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{option} {p}: is a folder")
    if suffixes and p.suffix.lower() not in suffixes:
        raise UsageError(f"{option} {p}: {hint or 'use a ' + ' or '.join(suffixes) + ' file name'}")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{option} {p}: folder {p.parent} does not exist")
    try:                                    # writable: the file is written at the end, after the work
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise UsageError(f"{option} {p}: cannot write in {folder} ({exc.strerror or exc})") from None


def report_json(data: Any, to_stdout: bool, json_file: str | os.PathLike[str] | None,
                table: Callable[[Any], str]) -> None:
    """The one output convention: ``to_stdout`` prints ``data`` as one JSON object and nothing else,
    otherwise ``table(data)`` is printed; ``json_file`` also writes the JSON there (atomically)."""
    text = json.dumps(json_safe(data), indent=None if to_stdout else 2)
    if to_stdout:
        print(text)
    else:
        print(table(data))
    if json_file is not None:
        atomic_write_text(json_file, text + "\n", error=UsageError)

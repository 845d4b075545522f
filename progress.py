"""Notices and progress bars for steps that may take long: on standard error, and only in a terminal.

A step that can take more than a second says what it does before it starts (:func:`step`): one status
line on standard error, rewritten in place (a carriage return, the new text padded over the old) and
cleared when the step ends, so a command's own output (standard output, a ``--json`` object) is left
alone. Work with a count gets a bar (:func:`bar`, tqdm). Both are off when standard error is not a
terminal: a pipe or a log file receives nothing from here.

Compiling. numba compiles a kernel on its first call and keeps it in its on-disk cache (a folder named by
the package's source, see :mod:`hapticam`), from which later runs load it. A step given ``compiles``
(or :func:`compiling` alone, which shows nothing else) listens to numba's ``numba:compile`` event, which
numba raises only when it compiles: a kernel loaded from the cache raises none. While a compilation runs
the line reads, e.g., "compiling the model kernels (first run only, about 20 s)". "First run only" is
said only of a kernel numba will load next time (:func:`kept_for_next_run`): one it caches, that is not a
closure over other kernels (numba keys such a closure by its kernels' per-process ids, so it never loads
from the cache) and that its cache does not already hold (there yet compiled again: not reused). A warm
run compiles nothing and shows no such notice; a kernel compiled on every run is announced on every run,
without "first run only".

Steps nest: the innermost one with something to say holds the line, and a bar shows the innermost notice
above it as its description.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator, TextIO

_lock = threading.RLock()
_entries: list["_Entry"] = []          # the active steps and bars, innermost last
_line: "StatusLine | None" = None      # standard error's status line while any step is active


def shown(stream: TextIO | None = None) -> bool:
    """True when notices and bars are written: ``stream`` (default: standard error) is a terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):            # no stream, or a closed one
        return False


def terminal_columns(stream: TextIO) -> int:
    """Columns of the terminal ``stream`` writes to (80 when it cannot be told)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        columns = 0
    return columns or 80                       # a terminal that reports no size (0 columns): assume 80


class StatusLine:
    """One terminal line rewritten in place: :meth:`show` replaces its text, :meth:`clear` blanks it,
    :meth:`keep` leaves the text standing and moves to the next line."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.text = ""                       # the text on the line now

    def show(self, text: str) -> None:
        text = text[: max(terminal_columns(self.stream) - 1, 10)]   # a wrapped line cannot be rewritten
        if text != self.text:
            self.stream.write("\r" + text.ljust(len(self.text)))
            self.stream.flush()
            self.text = text

    def clear(self) -> None:
        if self.text:
            self.stream.write("\r" + " " * len(self.text) + "\r")
            self.stream.flush()
            self.text = ""

    def keep(self) -> None:
        """Leave the text standing; the next :meth:`show` starts a new line."""
        if self.text:
            self.stream.write("\n")
            self.stream.flush()
            self.text = ""

    def forget(self) -> None:
        """Someone else blanked the line (or left it and moved on): nothing of ours is on it."""
        self.text = ""


class _Entry:
    """A step (``text``; None: a compile watch with nothing to say until numba compiles) or a bar."""

    def __init__(self, text: str | None, bar: Any = None, desc: str = "") -> None:
        self.text = text
        self.notice: str | None = None       # the compile notice while numba compiles
        self.bar = bar
        self.desc = desc

    def current(self) -> str | None:
        return self.notice or self.text


def _draw() -> None:
    """Show the innermost notice (lock held): on the status line, or as the innermost bar's description."""
    global _line
    text = None
    for entry in reversed(_entries):
        if entry.bar is not None:
            entry.bar.set_description_str(text or entry.desc)
            return
        text = text or entry.current()
    if _line is None:
        if not _entries:
            return
        _line = StatusLine(sys.stderr)
    if text:
        _line.show(text)
    else:
        _line.clear()
    if not _entries:
        _line = None


def _push(entry: _Entry) -> None:
    with _lock:
        _entries.append(entry)
        _draw()


def _pop(entry: _Entry) -> None:
    with _lock:
        _entries.remove(entry)
        _draw()


@contextmanager
def step(text: str | None, *, compiles: str | None = None, about_s: float = 20.0,
         quiet: bool = False) -> Iterator[None]:
    """Say ``text`` on the status line while the block runs (nothing when standard error is not a
    terminal, or with ``quiet``); with ``compiles`` (what the block may compile, e.g. "the servo loop"),
    say so while numba compiles in it, with ``about_s``, the usual first compilation's time in s (module
    notes)."""
    if quiet or not shown():
        yield
        return
    entry = _Entry(text)
    _push(entry)
    try:
        if compiles is None:
            yield
        else:
            with _watch_compiles(entry, compiles, about_s):
                yield
    finally:
        _pop(entry)


def compiling(what: str, about_s: float = 20.0) -> Any:
    """A block that may compile ``what``: silent unless numba compiles in it (see :func:`step`)."""
    return step(None, compiles=what, about_s=about_s)


def compile_notice(what: str, about_s: float, cached: bool = True) -> str:
    """The line shown while numba compiles ``what``."""
    return f"compiling {what} ({'first run only, ' if cached else ''}about {about_s:.0f} s)"


def kept_for_next_run(dispatcher: Any) -> bool:
    """Whether the next run loads what numba compiles now for ``dispatcher`` from its cache (module notes)."""
    if getattr(getattr(dispatcher, "stats", None), "cache_path", None) is None:
        return False                                                 # not cached at all
    cells = getattr(getattr(dispatcher, "py_func", None), "__closure__", None) or ()
    if any(hasattr(_cell_contents(cell), "py_func") for cell in cells):
        return False                                                 # a closure over other kernels
    index = getattr(getattr(getattr(dispatcher, "_cache", None), "_cache_file", None), "_index_path", None)
    return not (isinstance(index, str) and os.path.exists(index))    # held already, yet compiled again


def _cell_contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:                                               # an empty cell
        return None


@contextmanager
def _watch_compiles(entry: _Entry, what: str, about_s: float) -> Iterator[None]:
    try:
        from numba.core import event
    except ImportError:                                  # an older numba without the event API: no notice
        yield
        return

    class Watch(event.Listener):
        depth = 0

        def on_start(self, ev: Any) -> None:
            with _lock:
                self.depth += 1
                if self.depth == 1:
                    kept = kept_for_next_run((ev.data or {}).get("dispatcher"))
                    entry.notice = compile_notice(what, about_s, kept)
                    _draw()

        def on_end(self, ev: Any) -> None:
            with _lock:
                self.depth -= 1
                if self.depth == 0:
                    entry.notice = None
                    _draw()

    with event.install_listener("numba:compile", Watch()):
        yield


@contextmanager
def bar(total: int | None = None, *, desc: str, unit: str, initial: int = 0, leave: bool = False,
        quiet: bool = False) -> Iterator[Any]:
    """A tqdm bar on standard error (a disabled one, whose calls do nothing, when standard error is not a
    terminal or with ``quiet``); it takes the status line while it runs, and ``leave`` keeps it after."""
    from tqdm import tqdm

    on = shown() and not quiet
    with _lock:
        if on and _line is not None:
            _line.clear()                                # the bar draws on this line
        progress = tqdm(total=total, initial=initial, desc=desc, unit=unit, leave=leave, disable=not on,
                        file=sys.stderr, dynamic_ncols=True)
    entry = _Entry(None, bar=progress, desc=desc)
    if on:
        _push(entry)
    try:
        yield progress
    finally:
        with _lock:
            progress.close()
            if on:
                _entries.remove(entry)
                if _line is not None:
                    _line.forget()                       # tqdm blanked its line (or left it and moved on)
                _draw()

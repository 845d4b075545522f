"""Decoding a model file's bytes into plain data, bounded: YAML through :mod:`hapticam.bounded_yaml`, msgpack with
its nodes and components counted as they are decoded, and the check that what came out is plain data
(:func:`plain_data`). Each refusal is one short line (:class:`~hapticam.errors.ModelFileError`)."""

from __future__ import annotations

import datetime as _dt
import math
import re
import sys
from typing import Any

import msgpack

from hapticam.bounded_yaml import load_bounded
from hapticam.errors import ModelFileError
from hapticam.models.composite import MAX_COMPONENTS
from hapticam.models.validation import excerpt, one_line

#: a msgpack document is built whole by its C unpacker: its size bounds its memory (a 1-byte node costs a
#: 8-byte list slot, a 9-byte float 32 bytes: 16 MiB -> at most ~130 MB)
MAX_MSGPACK_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 32
#: nodes (numbers, strings, lists, mappings) in one model file, counted as they are decoded; 200,000 breakpoints'
#: worth of tables (five numbers each)
MAX_NODES = 1_000_000


def decode_yaml(data: bytes, name: str) -> Any:
    """One bounded parse (:func:`hapticam.bounded_yaml.load_bounded`): depth and node limits, tags,
    anchors and aliases refused at the event that carries them, before anything is built."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"{name}: not UTF-8 text; a YAML model file must be UTF-8") from None
    try:
        return load_bounded(text, name, max_depth=MAX_DEPTH, max_nodes=MAX_NODES, error=ModelFileError)
    except ModelFileError as exc:
        raise ModelFileError(one_line(str(exc))) from None
    except (ValueError, OverflowError) as exc:      # a plain scalar read as an int or a date Python cannot make
        raise ModelFileError(f"{name}: {_unreadable_scalar(text, exc)}") from None


def _unreadable_scalar(text: str, exc: Exception) -> str:
    """Why a plain scalar YAML resolves as a number or a date could not be built, with its line when it is an
    integer longer than Python converts from text (``sys.get_int_max_str_digits``)."""
    max_digits = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    long_run = re.search(r"(?<![\w.])[0-9][0-9_]{%d,}(?![\w.])" % max_digits, text) if max_digits else None
    if long_run is not None:
        line = text.count("\n", 0, long_run.start()) + 1
        return (f"line {line}: an integer of {len(long_run.group())} digits; integers are read up to "
                f"{max_digits} digits (write a measurement as a float: 1.5e+300)")
    return f"a value YAML reads as a number or a date cannot be read ({excerpt(str(exc), 60, quoted=False)})"


class _DecodeCounts:
    """Nodes and component mappings of a msgpack document, counted as its unpacker completes each list and
    mapping (its hooks): a file past :data:`MAX_NODES` or :data:`MAX_COMPONENTS` is refused at the container
    that crosses the limit, before the rest is decoded."""

    def __init__(self, name: str) -> None:
        self.name, self.nodes, self.components = name, 1, 0

    def _count(self, items: int) -> None:
        self.nodes += items
        if self.nodes > MAX_NODES:
            raise ModelFileError(f"{self.name}: more than {MAX_NODES:,} msgpack nodes; not a model file")

    def on_list(self, value: list[Any]) -> list[Any]:
        self._count(len(value))
        return value

    def on_map(self, value: dict[Any, Any]) -> dict[Any, Any]:
        self._count(2 * len(value))
        if len(value) == 2 and "kind" in value and "parameters" in value:
            self.components += 1
            if self.components > MAX_COMPONENTS:
                raise ModelFileError(f"{self.name}: more than {MAX_COMPONENTS} model components (mappings of kind "
                                     "and parameters), the most a composite holds")
        return value


def decode_msgpack(data: bytes, name: str) -> Any:
    def no_ext(code: int, _payload: bytes) -> Any:
        raise ModelFileError(f"{name}: msgpack extension types are not allowed (type {code})")

    if len(data) > MAX_MSGPACK_BYTES:
        raise ModelFileError(f"{name}: {len(data)} bytes, over the {MAX_MSGPACK_BYTES // 2**20} MiB limit of a "
                             "msgpack model file")
    counts = _DecodeCounts(name)
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=True, ext_hook=no_ext, max_array_len=MAX_NODES,
                               max_map_len=MAX_NODES, max_str_len=MAX_MSGPACK_BYTES, max_bin_len=0,
                               list_hook=counts.on_list, object_hook=counts.on_map)
    except ModelFileError:
        raise
    except msgpack.ExtraData:
        raise ModelFileError(f"{name}: trailing bytes after the msgpack document (corrupted file)") from None
    except msgpack.StackError:
        raise ModelFileError(f"{name}: nested deeper than the msgpack reader's limit (not a model file)") from None
    except (ValueError, msgpack.UnpackException, TypeError) as exc:
        raise ModelFileError(f"{name}: not a valid msgpack model file (truncated or corrupted: "
                             f"{excerpt(str(exc), 60, quoted=False)})") from None


class _NotPlain(Exception):
    """A value :func:`plain_data` refuses: ``reason``, and the path to it, collected innermost first as the
    refusal returns through the containers (no path is built for the values that pass)."""

    def __init__(self, reason: str, *steps: str | int) -> None:
        super().__init__(reason)
        self.reason, self.steps = reason, list(steps)

    def where(self) -> str:
        """The refused value's path (``provenance.settings.grid[3]``); a long or unprintable key as an excerpt."""
        path = ""
        for step in reversed(self.steps):
            if isinstance(step, int):
                path += f"[{step}]"
            else:
                shown = step if len(step) <= 40 and step.isprintable() else excerpt(step)
                path += f".{shown}" if path else shown
        return path


def plain_data(value: Any) -> Any:
    """A decoded value as plain data (dicts with string keys, lists, strings, finite floats, ints, booleans,
    None; a date or a time as its ISO text) no deeper than :data:`MAX_DEPTH`. Raises :class:`ModelFileError`
    naming the path to the first value that is not."""
    try:
        return _plain(value, 0)
    except _NotPlain as exc:
        where = exc.where()
        raise ModelFileError(f"{where}: {exc.reason}" if where else exc.reason) from None


def _plain(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise _NotPlain(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotPlain(f"keys must be strings, got {excerpt(key)}")
            try:
                out[key] = _plain(item, depth + 1)
            except _NotPlain as exc:
                exc.steps.append(key)
                raise
        return out
    if isinstance(value, (list, tuple)):
        items = []
        for i, item in enumerate(value):
            leaf = type(item)                               # the common leaves without a call each
            if leaf is float:
                if item - item != 0.0:                      # inf - inf and nan - nan are nan
                    raise _NotPlain(f"must be finite, got {item}", i)
                items.append(item)
            elif leaf is int or leaf is str or leaf is bool or item is None:
                items.append(item)
            else:
                try:
                    items.append(_plain(item, depth + 1))
                except _NotPlain as exc:
                    exc.steps.append(i)
                    raise
        return items
    if isinstance(value, float) and not math.isfinite(value):
        raise _NotPlain(f"must be finite, got {value}")
    if isinstance(value, _dt.date):                     # a datetime is a date too
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise _NotPlain(f"unsupported value of type {type(value).__name__}")

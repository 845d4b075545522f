"""Reading a library index's JSON within bounds: its nesting and value count measured in chunks before it is
parsed (:func:`json_shape`), and its decoded size (:func:`decoded_bytes`), so that neither ``json``'s recursion
nor its memory depend on what the file holds. Used by the library's commands and by ``library:DIR/NAME``."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from hapticam.errors import HapticError, UsageError

#: the largest library index read (bytes)
MAX_INDEX_BYTES = 64 * 1024 * 1024

#: nesting levels of an index (the schema's own: index, entries, entry, features)
MAX_INDEX_DEPTH = 32
#: values (objects, lists, keys, items) and escapes (``\n``, ``\u00e9``) in an index: about 50 an entry,
#: so some 40,000 entries, a 28 MB index. It bounds the memory of the parsed index: 2 million short strings
#: take about 130 MB (and ``json`` keeps one string object for each escape while it reads a string).
MAX_INDEX_VALUES = 2_000_000
#: bytes of an index read at a time while counting its shape (its arrays: about 12 times this)
_SHAPE_CHUNK = 1 << 20
_BACKSLASH_RUN = re.compile(rb"\\*")
_BRACKET_STEP = np.zeros(256, dtype=np.int8)
_BRACKET_STEP[list(b"[{")], _BRACKET_STEP[list(b"]}")] = 1, -1
_VALUE_MARK = np.zeros(256, dtype=bool)
_VALUE_MARK[list(b",:[{")] = True
_UTF8_CONTINUATION = bytes(range(0x80, 0xC0))
_UTF8_LEAD_2 = re.compile(rb"[\xc4-\xef]")          # a character from U+0100 to U+FFFF
_UTF8_LEAD_4 = re.compile(rb"[\xf0-\xff]")          # from U+10000 (and bytes no UTF-8 text holds)


def parse_index(raw: bytes, name: str, error: type[HapticError] = UsageError) -> Any:
    """Parse the UTF-8 JSON text ``raw`` of an index called ``name``, once :func:`json_shape` found it
    nested at most :data:`MAX_INDEX_DEPTH` levels with at most :data:`MAX_INDEX_VALUES` values and its
    decoded text no larger than ``MAX_INDEX_BYTES``: ``json`` recurses once a level (200,000 brackets end
    in ``RecursionError``) and builds every value whatever memory it takes. Raises ``error`` with one line."""
    depth, values = json_shape(raw, MAX_INDEX_DEPTH, MAX_INDEX_VALUES)
    if depth > MAX_INDEX_DEPTH:
        raise error(f"{name}: nested deeper than {MAX_INDEX_DEPTH} levels; not a library index")
    if values > MAX_INDEX_VALUES:
        raise error(f"{name}: more than {MAX_INDEX_VALUES:,} values and escapes; not a library index")
    if (decoded := decoded_bytes(raw)) > MAX_INDEX_BYTES:
        raise error(f"{name}: its text would take {decoded // 2**20} MiB decoded, over "
                         f"{MAX_INDEX_BYTES // 2**20} MiB; not a library index")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{name}: not a library index (not UTF-8 text at byte {exc.start})") from None
    del raw
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise error(f"{name}: not a library index ({exc})") from None


def decoded_bytes(raw: bytes) -> int:
    """Bytes the characters of the UTF-8 text ``raw`` take once decoded to a Python string: 1, 2 or 4 each
    for the whole string, as its widest character needs (past U+00FF: 2, past U+FFFF: 4)."""
    if raw.isascii():
        return len(raw)
    characters = len(raw.translate(None, _UTF8_CONTINUATION))
    return characters * (4 if _UTF8_LEAD_4.search(raw) else 2 if _UTF8_LEAD_2.search(raw) else 1)


def json_shape(raw: bytes, max_depth: int, max_values: int, chunk_bytes: int = _SHAPE_CHUNK) -> tuple[int, int]:
    """``(deepest nesting, values)`` of the JSON text ``raw``, counted outside its strings in chunks of
    ``chunk_bytes`` (memory bounded whatever the size); values are an upper bound: each comma, colon,
    opening bracket and backslash counts one, plus one (for valid JSON: its values, plus its backslashes and
    its empty objects and lists). Stops once either passes its maximum.

    Within a chunk, escaped backslashes and then escaped quotes are removed, so the quotes left each open or
    close a string; a chunk never ends inside a run of backslashes or between one and the character it
    escapes. Where ``raw`` is not valid JSON the counts cover at least the part ``json`` would read before
    it stops (``json`` reads a string and its escapes the same way)."""
    depth = deepest = inside = 0
    values = 1
    start = 0
    while start < len(raw) and deepest <= max_depth and values <= max_values:
        end = min(start + chunk_bytes, len(raw))
        if raw[end - 1:end] == b"\\":               # take the whole run and the character escaped
            end = min(_BACKSLASH_RUN.match(raw, end).end() + 1, len(raw))
        chunk = raw[start:end]
        values += chunk.count(b"\\")
        bare = np.frombuffer(chunk.replace(b"\\\\", b"").replace(b'\\"', b""), np.uint8)
        parity = (np.cumsum(bare == ord('"'), dtype=np.int32) + inside) & 1   # 1: within a string
        outside = parity == 0
        levels = np.cumsum(np.where(outside, _BRACKET_STEP[bare], 0), dtype=np.int32) + depth
        if len(bare):
            deepest, depth, inside = max(deepest, int(levels.max())), int(levels[-1]), int(parity[-1])
        values += int(np.count_nonzero(_VALUE_MARK[bare] & outside))
        start = end
    return deepest, values

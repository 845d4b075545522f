"""Parameter checks shared by every model type. Each failure names the field it rejects."""

from __future__ import annotations

import re

from typing import Any

import numpy as np

from hapticam.errors import ModelValidationError

MAX_BREAKPOINTS = 1_000_000
#: characters of a refused value a message quotes at most
EXCERPT_CHARS = 40
#: characters of one error message at most, a last resort: the file, the field's path and an excerpt of the
#: value fit in far fewer
MESSAGE_CHARS = 400
#: a run of characters without a space that a long message shortens (a quoted value; a file name is shorter)
_LONG_WORD = re.compile(r"\S{201,}")


def excerpt(value: Any, limit: int = EXCERPT_CHARS, quoted: bool = True) -> str:
    """``repr(value)`` cut to ``limit`` characters, with the full length said when cut: a message quotes
    a short excerpt of a refused value, never a 60 MB string. Containers are described, not printed;
    ``quoted=False`` shows a string as it is (a field's name)."""
    if isinstance(value, (dict, list, tuple, set)):
        return f"a {type(value).__name__} of {len(value)} items"
    if isinstance(value, (str, bytes)) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value)} characters)"
    if isinstance(value, str) and not quoted:
        return value
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def one_line(message: str, limit: int = MESSAGE_CHARS) -> str:
    """``message`` as one line of at most about ``limit`` characters, whoever quoted what in it: line breaks
    become spaces; in a longer message, each run of over 200 characters without a space (a quoted value, not
    a file name) is cut to its first ``EXCERPT_CHARS`` with its length said, and what is still too long is
    cut the same way."""
    text = message.replace("\n", " ").replace("\r", " ")
    if len(text) <= limit:
        return text
    text = _LONG_WORD.sub(lambda m: f"{m.group()[:EXCERPT_CHARS]}... ({len(m.group())} characters)", text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def as_float(field: str, value: Any, *, min_value: float | None = None, strict_min: bool = False,
             max_value: float | None = None) -> float:
    """Return ``value`` as a finite float, checking optional bounds; raise naming ``field``. Numbers only:
    a string ("1e30") or a boolean is refused, not converted."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise ModelValidationError(f"{field}: expected a number, got {_type_name(value)}")
    try:
        out = float(value)
    except OverflowError:
        raise ModelValidationError(f"{field}: must be finite, got an integer of {value.bit_length()} bits") from None
    except (TypeError, ValueError):
        raise ModelValidationError(f"{field}: expected a number, got {type(value).__name__}") from None
    if not np.isfinite(out):
        raise ModelValidationError(f"{field}: must be finite, got {out}")
    if min_value is not None:
        if strict_min and out <= min_value:
            raise ModelValidationError(f"{field}: must be > {min_value:g}, got {out:g}")
        if not strict_min and out < min_value:
            raise ModelValidationError(f"{field}: must be >= {min_value:g}, got {out:g}")
    if max_value is not None and out > max_value:
        raise ModelValidationError(f"{field}: must be <= {max_value:g}, got {out:g}")
    return out


#: a number YAML 1.1 leaves as text (an exponent without a dot or a sign: 3e3, 1E-4)
_LOOKS_NUMERIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")
_YAML_FLOAT = re.compile(r"^[-+]?(\d[\d_]*)?\.[\d.]*([eE][-+]\d+)?$")     # YAML 1.1's float


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        text = value.strip()
        hint = ("YAML reads 3e3 as text: write 3.0e+3" if _LOOKS_NUMERIC.match(text) and not _YAML_FLOAT.match(text)
                else "write numbers without quotes")
        return f"the string {excerpt(value, 20)} ({hint})"
    return "nothing" if value is None else type(value).__name__


def as_array(field: str, value: Any, *, length: int | None = None, min_length: int = 1,
             nonnegative: bool = False, increasing: bool = False,
             max_length: int = MAX_BREAKPOINTS + 1) -> np.ndarray:
    """Return ``value`` as a finite 1-D float64 array with optional checks; raise naming ``field``. The
    entries must be numbers (strings and booleans are refused, not converted)."""
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            if isinstance(item, (bool, str, bytes)) or item is None:
                raise ModelValidationError(f"{field}[{i}]: expected a number, got {_type_name(item)}")
    elif isinstance(value, np.ndarray) and value.dtype.kind not in "iuf":
        raise ModelValidationError(f"{field}: expected numbers, got an array of {value.dtype}")
    elif not isinstance(value, np.ndarray):
        raise ModelValidationError(f"{field}: expected a list of numbers, got {_type_name(value)}")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except OverflowError:
        raise ModelValidationError(f"{field}: must be finite (an integer too large for a float)") from None
    except (TypeError, ValueError):
        raise ModelValidationError(f"{field}: expected a list of numbers") from None
    if arr.ndim != 1:
        raise ModelValidationError(f"{field}: expected a 1-D list of numbers, got shape {arr.shape}")
    if arr.size > max_length:
        raise ModelValidationError(f"{field}: {arr.size} entries exceed the limit of {max_length}")
    if arr.size < min_length:
        raise ModelValidationError(f"{field}: needs at least {min_length} entries, got {arr.size}")
    if length is not None and arr.size != length:
        raise ModelValidationError(f"{field}: expected {length} entries, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ModelValidationError(f"{field}[{bad}]: must be finite, got {arr[bad]}")
    if nonnegative and np.any(arr < 0):
        bad = int(np.flatnonzero(arr < 0)[0])
        raise ModelValidationError(f"{field}[{bad}]: must be >= 0, got {arr[bad]:g}")
    if increasing and arr.size > 1 and np.any(np.diff(arr) <= 0):
        bad = int(np.flatnonzero(np.diff(arr) <= 0)[0]) + 1
        raise ModelValidationError(
            f"{field}[{bad}]: breakpoints must be strictly increasing ({arr[bad - 1]:g} then {arr[bad]:g})")
    return arr


def as_choice(field: str, value: Any, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``; raise naming ``field`` otherwise."""
    if not isinstance(value, str) or value not in choices:
        raise ModelValidationError(f"{field}: expected one of {', '.join(choices)}, got {excerpt(value)}")
    return value


def check_keys(where: str, data: Any, required: set[str], optional: set[str] = frozenset()) -> dict:
    """Check that mapping ``data`` has every required key and no unknown key."""
    if not isinstance(data, dict):
        raise ModelValidationError(f"{where}: expected a mapping, got {type(data).__name__}")
    missing = sorted(required - data.keys())
    if missing:
        raise ModelValidationError(f"{where}: missing field {missing[0]!r}")
    unknown = sorted(str(k) for k in data.keys() - required - set(optional))
    if unknown:
        raise ModelValidationError(f"{where}: unknown field {excerpt(unknown[0])}")
    return data

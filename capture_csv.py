"""Reading CSV captures in bounded chunks (:func:`read_csv`); the format is described in
:mod:`hapticam.capture_io`."""

from __future__ import annotations

import hashlib
import io
import os
import re
import warnings
from functools import lru_cache
from typing import Any

import numpy as np

from hapticam.capture import MAX_SAMPLES
from hapticam.capture_columns import (DELIMITER_NAMES, SI_NAMES, RECORDING_FLAGS, axis_of, columns_axis, delimiter_of,
                                      map_columns, time_if_absent, torque_if_absent)
from hapticam.errors import CaptureError
from hapticam.fileio import open_regular

MAX_CAPTURE_BYTES = 512 * 1024 * 1024
MAX_LINE_CHARS = 4096
#: bytes of a CSV capture read and parsed at a time
CSV_CHUNK_BYTES = 1024 * 1024
#: files of at least this many bytes are parsed by the compiled reader of plain decimal numbers (smaller
#: ones parse faster with NumPy's reader than numba imports)
COMPILED_PARSE_BYTES = 16 * 1024 * 1024
#: exact powers of ten (10**22 is the largest a float64 holds exactly)
_POWERS_OF_TEN = 10.0 ** np.arange(23)
#: bytes that may begin a data line: a digit, a sign or a decimal point
_NUMBER_START = np.zeros(256, dtype=bool)
_NUMBER_START[list(b"0123456789+-.")] = True


def read_csv(path: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, Any], list[str], str]:
    """Read a CSV capture in bounded chunks: ``(columns in SI, metadata, notes, sha256 of the bytes)``.

    A first pass counts the lines (no parsing): a file with more lines that begin like a number than
    ``MAX_SAMPLES`` (the header aside) is refused before anything is allocated, and the used columns are
    allocated once, as float64 arrays of at most the line count. The second pass reads
    ``CSV_CHUNK_BYTES`` at a time (cut at line ends) and parses each chunk into those arrays: a file of
    ``COMPILED_PARSE_BYTES`` or more by the compiled reader of plain decimal numbers, any chunk it does not
    take (and a smaller file) by NumPy's C reader, which gives the same values and names a bad line. Memory
    is the used columns plus one chunk (10 million rows of t, x, F: 0.24 GB of columns)."""
    where = os.fspath(path)
    fh, size = open_regular(path, MAX_CAPTURE_BYTES, error=CaptureError, what="capture file")
    digest = hashlib.sha256()
    with fh:
        lines = _count_lines(fh)
        if lines - 1 > MAX_SAMPLES and (rows := _count_lines(fh, numeric=True) - _numeric_header(fh)) > MAX_SAMPLES:
            raise CaptureError(f"{where}: at least {rows:,} data lines, over the {MAX_SAMPLES:,} samples a capture "
                               "may hold (split it, or resample it to a lower rate)")
        state = _CsvState(where, max(1, min(lines, MAX_SAMPLES)),
                          _compiled_parser() if size >= COMPILED_PARSE_BYTES else None)
        tail = b""
        first = True
        while True:
            chunk = fh.read(CSV_CHUNK_BYTES)
            if first and chunk.startswith(b"\xef\xbb\xbf"):
                digest.update(chunk[:3])
                chunk = chunk[3:]
            first = False
            digest.update(chunk)
            block = tail + chunk
            if not chunk:
                if block:
                    state.feed(block + b"\n")
                break
            cut = block.rfind(b"\n") + 1
            if cut == 0 and len(block) > CSV_CHUNK_BYTES:
                raise CaptureError(f"{where}: line {state.line_no + 1} is longer than {MAX_LINE_CHARS} characters")
            state.feed(block[:cut])
            tail = block[cut:]
    cols, meta, notes = state.finish()
    return cols, meta, notes, digest.hexdigest()


def _count_lines(fh: Any, *, numeric: bool = False) -> int:
    """The lines of a binary file or, with ``numeric``, those beginning with a digit, sign or point (each
    one a data row, the header or a malformed line that fails the parse); read ``CSV_CHUNK_BYTES`` at a
    time without parsing, then rewound."""
    count = 0
    before = b"\n"                                      # the first line begins like one after a newline
    while chunk := fh.read(CSV_CHUNK_BYTES):
        if numeric:
            text = np.frombuffer(before + chunk, dtype=np.uint8)
            starts = np.flatnonzero(text[:-1] == 10) + 1    # each newline followed by a byte of this chunk
            count += int(np.count_nonzero(_NUMBER_START[text[starts]]))
        else:
            count += chunk.count(b"\n")
        before = chunk[-1:]
    fh.seek(0)
    return count + int(not numeric and before != b"\n")      # a last line without its newline


def _numeric_header(fh: Any) -> int:
    """1 if the header (the first line neither blank nor a ``#`` comment) begins with a digit, sign or point,
    as :func:`_count_lines` counts data lines, else 0 (1 too when it is not in the first chunk); rewound."""
    head = fh.read(CSV_CHUNK_BYTES)
    fh.seek(0)
    for line in head.split(b"\n")[:-1]:
        if line.strip() and not line.strip().startswith(b"#"):
            return int(_NUMBER_START[line[0]])
    return 1


def _parse_plain_numbers(buf: np.ndarray, delim: int, table: np.ndarray, powers_of_ten: np.ndarray) -> int:
    """Parse ``buf`` (uint8: whole lines, each ``table.shape[1]`` numbers separated by the byte ``delim`` and
    ended by a newline) into ``table`` (rows x columns); returns the rows parsed, or -1 at the first field
    that is not a plain decimal number ``[sign] digits [. digits] [e [sign] digits]`` or whose value would
    need more than the exact fast path: at most 18 significant digits, a mantissa up to 2**53 and a power of
    ten up to 22 (Clinger, "How to read floating point numbers accurately", 1990), which rounds exactly as
    a correctly rounded reader does. Compiled by :func:`_compiled_parser`."""
    n = buf.size
    rows, ncols = table.shape
    pos = 0
    row = 0
    while pos < n:
        if row == rows:
            return -1
        for j in range(ncols):
            neg = pos < n and buf[pos] == 45
            if pos < n and (buf[pos] == 45 or buf[pos] == 43):
                pos += 1
            mantissa, significant, digits, scale, point = 0, 0, 0, 0, False
            while pos < n:
                c = buf[pos]
                if 48 <= c <= 57:
                    digits += 1
                    if mantissa > 0 or c != 48:
                        significant += 1
                        if significant > 18:
                            return -1
                        mantissa = mantissa * 10 + (c - 48)
                    if point:
                        scale -= 1
                elif c == 46 and not point:
                    point = True
                else:
                    break
                pos += 1
            if digits == 0:
                return -1
            if pos < n and (buf[pos] == 101 or buf[pos] == 69):
                pos += 1
                exp_neg = pos < n and buf[pos] == 45
                if pos < n and (buf[pos] == 45 or buf[pos] == 43):
                    pos += 1
                exponent, exp_digits = 0, 0
                while pos < n and 48 <= buf[pos] <= 57:
                    exponent = min(exponent * 10 + (buf[pos] - 48), 100000)
                    exp_digits += 1
                    pos += 1
                if exp_digits == 0:
                    return -1
                scale += -exponent if exp_neg else exponent
            if mantissa == 0:
                value = 0.0
            elif mantissa > 9007199254740992 or scale > 22 or scale < -22:
                return -1
            elif scale >= 0:
                value = mantissa * powers_of_ten[scale]
            else:
                value = mantissa / powers_of_ten[-scale]
            table[row, j] = -value if neg else value
            if pos >= n or buf[pos] != (delim if j < ncols - 1 else 10):
                return -1
            pos += 1
        row += 1
    return row


@lru_cache(maxsize=1)
def _compiled_parser() -> Any:
    """:func:`_parse_plain_numbers` compiled by numba (cached on disk after the first compilation), or None
    where numba cannot be imported."""
    try:
        from numba import njit
    except ImportError:
        return None
    return njit(cache=True, nogil=True)(_parse_plain_numbers)


_COMMENT_LINE = re.compile(rb"^[ \t]*#[^\n]*$", re.MULTILINE)


class _CsvState:
    """The running parse of :func:`read_csv`: metadata and header, then the used columns chunk by chunk."""

    def __init__(self, where: str, capacity: int, compiled: Any = None) -> None:
        self.where = where
        self.capacity = capacity                   # rows the used columns are allocated for
        self.compiled = compiled                   # the compiled parser of plain numbers, or None
        self.meta: dict[str, Any] = {}
        self.notes: list[str] = []
        self.header: list[str] | None = None
        self.delim = ","
        self.found: dict[str, tuple[int, float, str]] = {}
        self.used: list[int] = []
        self.cols: dict[int, np.ndarray] = {}      # used columns, allocated once for ``capacity`` rows
        self.rows = 0
        self.line_no = 0

    def feed(self, block: bytes) -> None:
        """Take whole lines (``block`` ends with a newline)."""
        if b"\x00" in block:
            raise CaptureError(f"{self.where}: contains NUL bytes; not a text CSV file")
        if self.header is None:
            block = self._head(block)
        pos = 0
        for m in _COMMENT_LINE.finditer(block) if b"#" in block else ():      # comment lines between data: metadata, notes
            self._data(block[pos:m.start()])
            self._comment(self._text(m.group()).strip())
            self.line_no += 1
            pos = m.end() + 1
        self._data(block[pos:])

    def _text(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CaptureError(f"{self.where}: not UTF-8 text (near line {self.line_no + 1}, byte {exc.start} "
                               "of it); not a CSV capture") from None

    def _comment(self, s: str) -> None:
        body = s[1:].strip()
        m = re.match(r"^([A-Za-z][\w .-]{0,63}):\s*(.*)$", body)
        if m:
            self.meta[m.group(1).strip()] = m.group(2).strip()
        elif body:
            self.notes.append(body)

    def _head(self, block: bytes) -> bytes:
        """Metadata lines and the header; returns what follows the header."""
        pos = 0
        while pos < len(block):
            end = block.index(b"\n", pos)
            line = self._text(block[pos:end])
            self.line_no += 1
            pos = end + 1
            if len(line) > MAX_LINE_CHARS:
                raise CaptureError(f"{self.where}: line {self.line_no} is longer than {MAX_LINE_CHARS} characters")
            s = line.strip()
            if not s:
                continue
            if s.startswith("#"):
                self._comment(s)
                continue
            self.delim = delimiter_of(s)
            self.header = [h.strip() for h in s.split(self.delim)]
            self.found, ignored = map_columns(self.where, self.header)
            if ignored:
                self.notes.append(f"ignored columns: {', '.join(ignored)}")
            self.used = sorted({i for i, _f, _u in self.found.values()}
                               | ({self.header.index(RECORDING_FLAGS)} if RECORDING_FLAGS in self.header else set()))
            break
        return block[pos:]

    def _data(self, raw: bytes) -> None:
        if not raw.strip():
            self.line_no += raw.count(b"\n")
            return
        table = self._plain_table(raw)
        lines = raw.count(b"\n") if table is None else table.shape[0]
        if table is None:
            table = self._general_table(raw)
        self._store(table)
        self.rows += table.shape[0]
        self.line_no += lines

    def _plain_table(self, raw: bytes) -> np.ndarray | None:
        """The lines' numbers (lines x columns) by the compiled parser if every line is plain decimal numbers
        (always finite; one row a line); None otherwise or without it."""
        if self.compiled is None:
            return None
        ncols = len(self.header)
        table = np.empty((len(raw) // (2 * ncols), ncols))       # a row takes at least 2 bytes a column
        rows = self.compiled(np.frombuffer(raw, dtype=np.uint8), ord(self.delim), table, _POWERS_OF_TEN)
        return table[:rows] if rows >= 0 else None

    def _general_table(self, raw: bytes) -> np.ndarray:
        """The lines' numbers (lines x columns) by NumPy's reader; one clear error for a bad line."""
        text = self._text(raw)
        try:
            table = self._table(text)
        except ValueError:                      # blank-looking lines, or a malformed one: line by line
            lines = text.splitlines()
            kept = [(ln.strip(), no) for no, ln in enumerate(lines, start=self.line_no + 1) if ln.strip()]
            try:
                table = self._table("\n".join(r for r, _ in kept))
            except ValueError:
                for r, no in kept:
                    if len(r) > MAX_LINE_CHARS:
                        raise CaptureError(f"{self.where}: line {no} is longer than {MAX_LINE_CHARS} characters") from None
                _locate_bad_row(self.where, [r for r, _ in kept], [no for _, no in kept], self.header, self.delim)
                raise CaptureError(f"{self.where}: malformed data lines after line {self.line_no}") from None
        self._check_finite(table, text)
        return table

    def _store(self, table: np.ndarray) -> None:
        """Copy the used columns into the arrays allocated for the counted lines (grown by a quarter, up to
        ``MAX_SAMPLES``, only if the file grew while it was read)."""
        end = self.rows + table.shape[0]
        if end > MAX_SAMPLES:
            raise CaptureError(f"{self.where}: more than {MAX_SAMPLES:,} data lines, the most samples a capture "
                               "may hold (split it, or resample it to a lower rate)")
        if not self.cols:
            self.cols = {i: np.empty(self.capacity) for i in self.used}
        if end > self.capacity:
            self.capacity = min(max(end, int(1.25 * self.capacity)), MAX_SAMPLES)
            for i in self.used:
                self.cols[i] = np.resize(self.cols[i], self.capacity)
        for i in self.used:
            self.cols[i][self.rows:end] = table[:, i]

    def _table(self, text: str) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)      # loadtxt's "input contained no data"
            table = np.loadtxt(io.StringIO(text), delimiter=self.delim, dtype=np.float64, ndmin=2, comments=None)
        if table.shape[1] != len(self.header):
            raise ValueError("column count")
        return table

    def _check_finite(self, table: np.ndarray, text: str) -> None:
        for q, (i, _factor, _unit) in self.found.items():
            bad = np.flatnonzero(~np.isfinite(table[:, i]))
            if bad.size:
                lines = [no for no, ln in enumerate(text.splitlines(), start=self.line_no + 1) if ln.strip()]
                raise CaptureError(f"{self.where}: line {lines[bad[0]]}: column {self.header[i]} is "
                                   f"{table[bad[0], i]} (not a finite number; {bad.size} such line(s) here)")

    def finish(self) -> tuple[dict[str, np.ndarray], dict[str, Any], list[str]]:
        if self.header is None:
            raise CaptureError(f"{self.where}: no header line (expected e.g. 't_s,x_m,force_N')")
        if not self.rows:
            raise CaptureError(f"{self.where}: header but no data lines")
        cols: dict[str, np.ndarray] = {}
        for q, (i, factor, _unit) in self.found.items():
            cols[q] = self.cols[i][:self.rows]
            if factor != 1.0:
                cols[q] *= factor
        if RECORDING_FLAGS in self.header:
            cols["flags"] = np.nan_to_num(self.cols[self.header.index(RECORDING_FLAGS)][:self.rows], copy=False)
        self.meta["units"] = {SI_NAMES[q]: self.header[i] for q, (i, _f, _u) in self.found.items()}
        if columns_axis([self.header[i] for i, _f, _u in self.found.values()]) == "rotary":
            self.meta["axis"] = "rotary"                    # theta_rad, torque_Nm: a knob's capture
        axis_of(self.meta)
        torque_if_absent(cols, self.notes, self.meta)
        if self.delim != ",":
            self.notes.append(f"columns separated by {DELIMITER_NAMES[self.delim]}")
        time_if_absent(cols, self.notes)
        return cols, self.meta, self.notes


def _locate_bad_row(where: str, rows: list[str], line_no: list[int], header: list[str], delim: str = ",") -> None:
    """Find the first malformed data line and raise a CaptureError naming it."""
    ncol = len(header)
    for k, (row, no) in enumerate(zip(rows, line_no)):
        fields = row.split(delim)
        if len(fields) != ncol:
            hint = " (file truncated?)" if k == len(rows) - 1 and len(fields) < ncol else ""
            raise CaptureError(f"{where}: line {no}: expected {ncol} fields ({', '.join(header)}), "
                               f"got {len(fields)}{hint}")
        for col, fld in zip(header, fields):
            try:
                float(fld)
            except ValueError:
                shown = fld.strip()[:40]
                raise CaptureError(f"{where}: line {no}: column {col}: {shown!r} is not a number") from None

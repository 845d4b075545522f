"""Reading CSV captures in bounded chunks (:func:`read_csv`); the format is described in
:mod:`hapticam.capture_io`."""

from __future__ import annotations

import hashlib
import io
import os
import re
import warnings
from typing import Any

import numpy as np

from hapticam.capture_columns import (DELIMITER_NAMES, SI_NAMES, RECORDING_FLAGS, axis_of, columns_axis, delimiter_of,
                                      map_columns, time_if_absent, torque_if_absent)
from hapticam.errors import CaptureError
from hapticam.fileio import open_regular

MAX_CAPTURE_BYTES = 512 * 1024 * 1024
MAX_LINE_CHARS = 4096
#: bytes of a CSV capture read and parsed at a time
CSV_CHUNK_BYTES = 16 * 1024 * 1024


def read_csv(path: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, Any], list[str], str]:
    """Read a CSV capture in bounded chunks: ``(columns in SI, metadata, notes, sha256 of the bytes)``.

    The file is read ``CSV_CHUNK_BYTES`` at a time (cut at line ends); each chunk's numbers are parsed by
    NumPy's C reader and only the columns used are kept, so memory is the used columns plus one chunk
    (10 million rows of t, x, F: about 0.3 GB) and time is NumPy's parse rate."""
    where = os.fspath(path)
    fh, size = open_regular(path, MAX_CAPTURE_BYTES, error=CaptureError, what="capture file")
    digest = hashlib.sha256()
    state = _CsvState(where, size)
    with fh:
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


_COMMENT_LINE = re.compile(rb"^[ \t]*#[^\n]*$", re.MULTILINE)


class _CsvState:
    """The running parse of :func:`read_csv`: metadata and header, then the used columns chunk by chunk."""

    def __init__(self, where: str, size: int) -> None:
        self.where = where
        self.size = size
        self.meta: dict[str, Any] = {}
        self.notes: list[str] = []
        self.header: list[str] | None = None
        self.delim = ","
        self.found: dict[str, tuple[int, float, str]] = {}
        self.used: list[int] = []
        self.cols: dict[int, np.ndarray] = {}      # used columns, preallocated from the file size
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
        self._store(table, len(raw))
        self.rows += table.shape[0]
        self.line_no += raw.count(b"\n")

    def _store(self, table: np.ndarray, nbytes: int) -> None:
        """Copy the used columns into the preallocated arrays, sized on the first chunk's bytes per row
        (grown by a quarter when a later chunk needs more room)."""
        n, end = table.shape[0], self.rows + table.shape[0]
        if not self.cols:
            capacity = int(1.05 * self.size * n / max(nbytes, 1)) + n
            self.cols = {i: np.empty(capacity) for i in self.used}
        capacity = next(iter(self.cols.values())).size
        if end > capacity:
            for i in self.used:
                self.cols[i] = np.resize(self.cols[i], max(end, int(1.25 * capacity)))
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
            cols["flags"] = np.nan_to_num(self.cols[self.header.index(RECORDING_FLAGS)][:self.rows])
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

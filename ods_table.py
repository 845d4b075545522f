"""Reading the cells of an OpenDocument spreadsheet (``.ods``) with the standard library, within bounds.

An ``.ods`` file is a zip archive whose ``content.xml`` holds the sheets as ``table:table`` elements of
``table:table-row`` elements of ``table:table-cell`` (and ``table:covered-table-cell``) elements.
:func:`read_ods_sheets` streams ``content.xml`` through :class:`xml.etree.ElementTree.XMLPullParser`,
a block at a time, and keeps each sheet as one float64 column per spreadsheet column (NaN where a cell
holds no number) plus the text of its text cells.

Bounds
------
Every limit is checked before anything is allocated for it:

* the file: at most ``MAX_ODS_BYTES`` on disk, a regular file (:func:`hapticam.fileio.open_regular`);
* ``content.xml``: at most ``MAX_CONTENT_BYTES`` expanded, refused from its zip entry's declared size
  before anything is expanded, and counted again while it is read (a member whose data runs past its
  declared size fails the archive's CRC check and is refused as damaged);
* repeats: ``table:number-rows-repeated`` and ``table:number-columns-repeated`` may declare millions of
  copies (a spreadsheet pads its sheets that way). Empty repeated rows and cells cost nothing; repeated
  rows or cells that hold a value count in full against ``MAX_ROWS``, ``MAX_COLUMNS`` and
  ``MAX_CELLS`` (stored values) and are refused beyond them, before they are expanded;
* at most ``MAX_TEXT_CELLS`` text cells per file, each kept to its first ``MAX_TEXT_CHARS`` characters;
* elements nested at most ``MAX_DEPTH`` deep, at most ``MAX_CELL_ELEMENTS`` inside one cell; every other
  element is dropped once read, so the parsed tree stays small whatever ``content.xml`` holds.

The XML parser is Expat, which (from version 2.4, as Python bundles it) refuses entity expansion beyond
a small amplification factor (the "billion laughs"); external entities are never fetched.

Every problem raises the ``error`` class given (default :class:`~hapticam.errors.CaptureError`) with one
message naming the file and what is wrong.
"""

from __future__ import annotations

import hashlib
import lzma
import math
import os
import zipfile
import zlib
from array import array
from dataclasses import dataclass, field
from typing import IO, Any
from xml.etree import ElementTree

from hapticam.errors import CaptureError, HapticError
from hapticam.fileio import open_regular

#: the largest ``.ods`` file read (bytes on disk)
MAX_ODS_BYTES = 64 * 1024 * 1024
#: the largest expanded ``content.xml`` read (bytes): a 2000-row meter sheet takes about 2 MB; 32 MiB (140,000
#: rows of three numbers) parse in about 4 s of processor time and 60 MB
MAX_CONTENT_BYTES = 32 * 1024 * 1024
#: the most rows with a value a sheet may hold (the row count of a LibreOffice or Excel sheet)
MAX_ROWS = 1_048_576
#: the most columns with a value a sheet may hold (the column count of a LibreOffice sheet)
MAX_COLUMNS = 16_384
#: the most numeric cells stored, over all sheets (8 bytes each: 64 MB)
MAX_CELLS = 8_000_000
#: the most text cells stored, over all sheets, and the characters kept of each
MAX_TEXT_CELLS = 100_000
MAX_TEXT_CHARS = 256
#: the deepest element nesting and the most elements inside one cell (a cell holds a few paragraphs)
MAX_DEPTH = 256
MAX_CELL_ELEMENTS = 10_000
#: bytes of content.xml fed to the parser at a time
READ_BLOCK = 1 << 20

_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_SHEET = f"{{{_TABLE}}}table"
_ROW = f"{{{_TABLE}}}table-row"
_CELLS = (f"{{{_TABLE}}}table-cell", f"{{{_TABLE}}}covered-table-cell")
_ROWS_REPEATED = f"{{{_TABLE}}}number-rows-repeated"
_COLUMNS_REPEATED = f"{{{_TABLE}}}number-columns-repeated"
_VALUE_TYPE = f"{{{_OFFICE}}}value-type"
_VALUE = f"{{{_OFFICE}}}value"
_BOOLEAN = f"{{{_OFFICE}}}boolean-value"
_NAME = f"{{{_TABLE}}}name"
_PARAGRAPH = f"{{{_TEXT}}}p"
_NUMERIC_TYPES = ("float", "percentage", "currency")


@dataclass
class OdsSheet:
    """One sheet: ``n_rows`` rows (up to the last row holding a value; row 0 is the sheet's first row).

    Attributes
    ----------
    name : str
        The sheet's name.
    numbers : dict of int to array of float
        Per column index (0 = column A), the numeric value of each row's cell (a boolean as 1 or 0), NaN
        where the cell holds no number; every array is ``n_rows`` long.
    texts : dict of (int, int) to str
        The text of text cells by ``(row, column)``, stripped, at most ``MAX_TEXT_CHARS`` characters.
    """

    name: str
    n_rows: int = 0
    numbers: dict[int, array] = field(default_factory=dict)
    texts: dict[tuple[int, int], str] = field(default_factory=dict)

    def column(self, index: int) -> array:
        """Column ``index`` as ``n_rows`` floats (all NaN if the column holds no number)."""
        return self.numbers.get(index, array("d", [math.nan]) * self.n_rows)


def read_ods_sheets(path: str | os.PathLike[str], *,
                    error: type[HapticError] = CaptureError) -> tuple[list[OdsSheet], str]:
    """``(sheets in document order, SHA-256 of the file's bytes)`` of the ``.ods`` file ``path``, read
    within the module's bounds."""
    where = os.fspath(path)
    fh, _size = open_regular(path, MAX_ODS_BYTES, error=error, what="spreadsheet (.ods)")
    with fh:
        try:
            hasher = hashlib.sha256()
            while block := fh.read(READ_BLOCK):
                hasher.update(block)
            digest = hasher.hexdigest()
            fh.seek(0)
        except OSError as exc:
            raise error(f"{where}: cannot read ({exc.strerror or exc})") from exc
        try:
            zf = zipfile.ZipFile(fh)
            info = zf.getinfo("content.xml")
        except KeyError:
            raise error(f"{where}: not an OpenDocument spreadsheet (no content.xml in the archive)") from None
        except (zipfile.BadZipFile, OSError, ValueError):
            raise error(f"{where}: not an OpenDocument spreadsheet (not a zip archive, or a damaged one)") from None
        if info.file_size > MAX_CONTENT_BYTES:
            raise error(f"{where}: content.xml would expand to {info.file_size:,} bytes, over the "
                        f"{MAX_CONTENT_BYTES // 2**20} MiB a spreadsheet may hold here")
        try:
            with zf.open(info) as member:
                return _parse(where, member, error), digest
        except (zipfile.BadZipFile, zlib.error, lzma.LZMAError, OSError, EOFError, NotImplementedError,
                RuntimeError):
            raise error(f"{where}: content.xml cannot be expanded (damaged, encrypted or an unknown "
                        "compression)") from None


def _parse(where: str, member: IO[bytes], error: type[HapticError]) -> list[OdsSheet]:
    """Feed ``content.xml`` to the pull parser a block at a time, at most ``MAX_CONTENT_BYTES`` in all."""
    builder = _SheetBuilder(where, error)
    parser = ElementTree.XMLPullParser(events=("start", "end"))
    read = 0
    try:
        while block := member.read(READ_BLOCK):
            read += len(block)
            if read > MAX_CONTENT_BYTES:
                raise error(f"{where}: content.xml expands beyond the {MAX_CONTENT_BYTES // 2**20} MiB a "
                            "spreadsheet may hold here (its zip entry understates its size)")
            parser.feed(block)
            builder.consume(parser.read_events())
        parser.close()
        builder.consume(parser.read_events())
    except ElementTree.ParseError as exc:
        raise error(f"{where}: content.xml is not well-formed XML ({exc})") from None
    return builder.sheets


class _SheetBuilder:
    """Turns the parser's start/end events into :class:`OdsSheet` columns.

    Every element is detached from its parent once it ends (a cell once its value is read), so the
    parsed tree never holds more than the open elements and the current cell: memory is the stored values
    plus one block of events, whatever the XML holds. Tables embedded in a cell are not read."""

    def __init__(self, where: str, error: type[HapticError]) -> None:
        self.where, self.error = where, error
        self.sheets: list[OdsSheet] = []
        self.parents: list[ElementTree.Element] = []
        self.sheet: OdsSheet | None = None
        self.sheet_element: ElementTree.Element | None = None
        self.in_cell = 0               # open cell elements (more than one inside an embedded table)
        self.cell_elements = 0         # elements inside the current top-level cell
        self.row = 0                   # index of the current row in the current sheet
        self.col = 0                   # index of the next cell in the current row
        self.pending: list[tuple[int, int, float | None, str | None]] = []   # (column, span, number, text)
        self.cells = 0                 # numeric cells stored over all sheets
        self.text_cells = 0

    def consume(self, events: Any) -> None:
        parents = self.parents
        for event, elem in events:
            if event == "start":
                parents.append(elem)
                if len(parents) > MAX_DEPTH:
                    raise self.error(f"{self.where}: content.xml nests elements more than {MAX_DEPTH} deep; "
                                     "not a spreadsheet")
                if self.in_cell:
                    self._inside_cell(elem)
                    continue
                tag = elem.tag
                if tag == _ROW:
                    self.col = 0
                elif tag in _CELLS:
                    self.in_cell, self.cell_elements = 1, 0
                elif tag == _SHEET and self.sheet is None:
                    self.sheet = OdsSheet(str(elem.get(_NAME, f"Sheet{len(self.sheets) + 1}")))
                    self.sheet_element, self.row, self.pending = elem, 0, []
                continue
            parents.pop()
            if self.in_cell:                           # the end of a cell, or of something inside one
                if elem.tag in _CELLS:
                    self.in_cell -= 1
                    if not self.in_cell:
                        if self.sheet is not None:
                            self._cell_done(elem)
                        parents[-1].remove(elem)       # read: let it go
                continue
            if self.sheet is not None:
                if elem.tag == _ROW:
                    self._row_done(elem)
                elif elem is self.sheet_element:
                    self._sheet_done()
            if parents:
                parents[-1].remove(elem)

    def _inside_cell(self, elem: ElementTree.Element) -> None:
        """Count an element inside a cell (a paragraph, a span, an embedded table's parts)."""
        self.cell_elements += 1
        if self.cell_elements > MAX_CELL_ELEMENTS:
            raise self.error(f"{self.where}: a cell of sheet {self._name()!r} holds more than "
                             f"{MAX_CELL_ELEMENTS:,} elements; not a table of measurements")
        if elem.tag in _CELLS:
            self.in_cell += 1

    def _cell_done(self, cell: ElementTree.Element) -> None:
        """Note a cell's value and columns; refuse a value beyond ``MAX_COLUMNS``."""
        raw = cell.get(_COLUMNS_REPEATED)
        span = 1 if raw is None else self._count(raw, "columns")
        kind = cell.get(_VALUE_TYPE)
        if kind is not None:
            number, text = _cell_value(cell, kind)
            if number is not None or text:
                if self.col + span > MAX_COLUMNS:
                    raise self.error(f"{self.where}: sheet {self._name()!r} row {self.row + 1:,}: a value in "
                                     f"column {self.col + span:,}, beyond the {MAX_COLUMNS:,} columns a sheet "
                                     "may hold")
                self.pending.append((self.col, span, number, text))
        self.col += span

    def _row_done(self, row: ElementTree.Element) -> None:
        """Store one row and its repeats (their numbers by column, their texts by (row, column)), after
        checking what they add against the bounds; empty rows are counted, never stored."""
        sheet = self.sheet
        assert sheet is not None
        raw = row.get(_ROWS_REPEATED)
        repeat = 1 if raw is None else self._count(raw, "rows")
        values, self.pending = self.pending, []
        if not values:
            self.row += repeat
            return
        last = self.row + repeat
        numbers = texts = 0
        for _c, span, number, _t in values:
            if number is None:
                texts += span
            else:
                numbers += span
        if last > MAX_ROWS:
            raise self.error(f"{self.where}: sheet {sheet.name!r}: a value in row {last:,}, beyond the "
                             f"{MAX_ROWS:,} rows a sheet may hold")
        if self.cells + numbers * repeat > MAX_CELLS:
            raise self.error(f"{self.where}: more than {MAX_CELLS:,} numeric cells (row {self.row + 1:,} of sheet "
                             f"{sheet.name!r} holds {numbers:,} and is repeated {repeat:,} times)")
        if self.text_cells + texts * repeat > MAX_TEXT_CELLS:
            raise self.error(f"{self.where}: more than {MAX_TEXT_CELLS:,} text cells (at row {self.row + 1:,} of "
                             f"sheet {sheet.name!r}); not a table of measurements")
        self.cells += numbers * repeat
        self.text_cells += texts * repeat
        first = self.row
        for start, span, number, text in values:
            for c in range(start, start + span):
                if number is None:
                    sheet.texts.update(((r, c), str(text)) for r in range(first, last))
                    continue
                column = sheet.numbers.get(c)
                if column is None:
                    column = sheet.numbers[c] = array("d")
                if len(column) < first:
                    _pad(column, first)
                if repeat == 1:
                    column.append(number)
                else:
                    column.extend(array("d", [number]) * repeat)
        self.row = sheet.n_rows = last

    def _sheet_done(self) -> None:
        sheet = self.sheet
        assert sheet is not None
        for column in sheet.numbers.values():
            _pad(column, sheet.n_rows)
        self.sheets.append(sheet)
        self.sheet = self.sheet_element = None

    def _name(self) -> str:
        return self.sheet.name if self.sheet is not None else "?"

    def _count(self, raw: str | None, what: str) -> int:
        """A repeat attribute as a positive int (absent: 1); refuses a malformed one."""
        if raw is None:
            return 1
        try:
            count = int(raw)
        except ValueError:
            count = 0
        if count < 1:
            raise self.error(f"{self.where}: content.xml: number-{what}-repeated {raw[:20]!r} is not a "
                             "positive whole number")
        return count


def _cell_value(cell: ElementTree.Element, kind: str) -> tuple[float | None, str | None]:
    """``(number, text)`` of a cell of value type ``kind``: a number for numeric and boolean cells, the
    text of the others (strings, dates, times)."""
    if kind in _NUMERIC_TYPES:
        try:
            return float(cell.get(_VALUE, "nan")), None
        except ValueError:
            return None, None
    if kind == "boolean":
        return (1.0 if cell.get(_BOOLEAN, "false").strip().lower() == "true" else 0.0), None
    text = " ".join("".join(p.itertext()).strip() for p in cell.iter(_PARAGRAPH))
    return None, text.strip()[:MAX_TEXT_CHARS] or None


def _pad(column: array, length: int) -> None:
    """Extend ``column`` with NaN up to ``length`` values."""
    if len(column) < length:
        column.extend(array("d", [math.nan]) * (length - len(column)))

"""Record a capture from the Open-Switch-Curve-Meter's serial port: ``hapticam probe --device meter:PORT``.

bluepylons' Open-Switch-Curve-Meter (CC-BY 4.0, bluepylons/Open-Switch-Curve-Meter; an emulator of its stream
is :mod:`hapticam.devices.meter_emulator`) streams, once its Start button is pressed, the header
``Raw X (microns),Raw Force (gf),Actuated?`` and one line ``position, force,actuated`` per 5 um step, pressing
until the force passes its reverse limit, then releasing back to 0. :func:`record_meter` opens the port
(pyserial, the ``serial`` extra; 9600 baud, the firmware's), waits for the header, and records the lines until
the release is back at 0.

The file. The lines are streamed as they arrive to ``STEM.partial.csv`` beside the output (a
:class:`~hapticam.streamed_file.StreamedFile`), in the meter's own format (its header, then the data lines as
received), which every command reads as a meter record (:mod:`hapticam.capture_meter`: units converted, force
tared by the first sample, strokes, actuation and release points, the meter's author credited in
``instrument``). Lines are handed to the operating system every ``FLUSH_PERIOD_S`` (whole lines only) and
``fsync``\\ ed every ``SYNC_PERIOD_S``, so a recorder killed (``kill -9``) leaves a readable partial record
missing at most the last flush period's lines; ``hapticam recover`` (:mod:`hapticam.render.recover`) completes
it into ``STEM.csv`` (its complete lines, a line cut by a power cut dropped). When the
release ends, the partial file is synced and renamed onto a ``.csv`` output (the meter's stream itself) or,
for ``.npz``, converted (:func:`hapticam.capture_io.save_capture`, atomic; metadata: the port, the time, the
counts) and removed. The output's name never holds a half-written file, nor a record cut short.

What ends a recording early (:attr:`MeterRecording.complete` False; the samples received are kept in the
partial file and the reason says where): no line for ``timeout_s``, the port hung up (the meter unplugged),
Ctrl-C, too much malformed input, or a record over ``MAX_RECORD_BYTES``. A port that cannot be opened, or that
sends no header within ``header_timeout_s`` (or ``MAX_PREAMBLE_BYTES`` of something else), raises
:class:`~hapticam.errors.DeviceError` and leaves nothing.

Hostile input. A line is at most ``MAX_LINE_BYTES``: a longer one is dropped as it arrives (memory stays
bounded) and counted. A data line must be three numbers (a position >= 0 in microns, a force in gram-force,
0 or 1) that continue the stroke: the press advances by at most ``MAX_JUMP_UM``; the turn (a position no
deeper than the last) carries a force at least the press's largest (the firmware turns on a reading over its
limit, which no press reading passed); the release retreats by at most ``MAX_JUMP_UM`` to 0. Any other line is
malformed: skipped and counted, and past ``max_malformed`` lines (or ``MAX_MALFORMED_BYTES``) the recording
stops. Readings before the first sample below ``HX711_ERROR_GF`` (a load-cell drop-out, near -207 gf) are
skipped, since the reader tares by the first sample; later drop-outs are kept and found by the capture's
drop-out scan (:func:`hapticam.capture.detect_dropouts`), as for the meter's files.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from hapticam.capture_io import save_capture
from hapticam.capture_meter import load_meter_capture
from hapticam.capture_meter_log import MAX_LOG_BYTES, SERIAL_HEADER, header_kind
from hapticam.errors import CaptureError, DependencyMissingError, DeviceError, UsageError
from hapticam.fileio import json_safe
from hapticam.progress import StatusLine
from hapticam.streamed_file import (FLUSH_PERIOD_S, PARTIAL_CSV_SUFFIX, SYNC_PERIOD_S,  # noqa: F401
                                    StreamedFile, StreamFormat, destination_of, partial_csv_path)

#: the header the partial record starts with (the firmware's)
METER_HEADER = "Raw X (microns),Raw Force (gf),Actuated?"
#: the first-generation firmware's baud rate
BAUD = 9600
#: the longest line accepted (bytes, line ending included); the meter's are under 30
MAX_LINE_BYTES = 256
#: bytes read from the port at a time
READ_BYTES = 4096
#: what may precede the header (bytes: an Arduino's boot noise) before the port is refused
MAX_PREAMBLE_BYTES = 64 * 1024
#: malformed input that stops a recording: lines (default of ``max_malformed``) and bytes dropped
MAX_MALFORMED = 50
MAX_MALFORMED_BYTES = 64 * 1024
#: the largest record (bytes): what the meter-record reader accepts
MAX_RECORD_BYTES = MAX_LOG_BYTES
#: the farthest a data line may move from the last (um)
MAX_JUMP_UM = 50.0
#: the firmware's own threshold of an HX711 error (gf): a first reading below it is a drop-out
HX711_ERROR_GF = -30.0
#: what ``hapticam recover`` needs to know of a partial record: the meter's own stream, without metadata
METER_FORMAT = StreamFormat(kind="meter record", header=METER_HEADER, count_name="samples", metadata=False)
#: how long one read waits for data (s): how quickly Ctrl-C and the timeouts are seen
POLL_S = 0.1
#: how often the progress line is redrawn (s)
PROGRESS_PERIOD_S = 0.1


@dataclass
class MeterRecording:
    """What :func:`record_meter` recorded.

    ``path``: the output (complete) or the partial record (cut short; None when it held no sample);
    ``reason``: why the recording ended; ``samples`` and ``press_samples``: data lines kept (all, and of the
    press); ``deepest_m`` (m) and ``max_force_gf`` (gf, as the meter printed it, before the tare); ``malformed``:
    lines skipped (``malformed_bytes``: their bytes); ``leading_dropouts``: first readings skipped as drop-outs;
    ``dropouts``: drop-outs the capture's scan found; ``actuation_m``, ``release_m``: the switch's points (m,
    complete records with the ``Actuated?`` contact); ``seconds``: from the header to the end."""

    port: str
    path: Path | None
    complete: bool
    reason: str
    samples: int = 0
    press_samples: int = 0
    deepest_m: float = 0.0
    max_force_gf: float = float("nan")
    malformed: int = 0
    malformed_bytes: int = 0
    leading_dropouts: int = 0
    dropouts: int = 0
    actuation_m: float | None = None
    release_m: float | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-ready values (SI, and gf where named)."""
        return json_safe(asdict(self))

    def describe(self) -> str:
        """One line for the terminal (travel in mm, force in gf)."""
        points = "".join(f", {name} at {1e3 * value:.3f} mm" for name, value in
                         (("actuation", self.actuation_m), ("release", self.release_m)) if value is not None)
        skipped = f", {self.malformed} malformed line(s) skipped" if self.malformed else ""
        figures = (f"{self.samples} samples ({self.press_samples} pressing) in {self.seconds:.1f} s, deepest "
                   f"{1e3 * self.deepest_m:.3f} mm, up to {self.max_force_gf:.2f} gf{skipped}")
        if self.complete:
            return f"meter {self.port}: recorded {figures}{points}, {self.dropouts} drop-out(s) -> {self.path}"
        kept = ("nothing kept" if self.path is None
                else f"the samples received are in {self.path} (a meter record every command reads; "
                     f"'hapticam recover {self.path}' completes it)")
        return f"meter {self.port}: recording cut short: {self.reason}; {figures}; {kept}"


def record_meter(port: str, output: str | os.PathLike[str], *, timeout_s: float = 5.0,
                 header_timeout_s: float = 60.0, baud: int = BAUD, credit: str | None = None,
                 max_malformed: int = MAX_MALFORMED, progress: TextIO | None = None) -> MeterRecording:
    """Record one press and release from the meter on ``port`` into ``output`` (``.csv`` or ``.npz``).

    ``timeout_s``: silence (s) that ends a started recording; ``header_timeout_s``: how long (s) to wait for the
    header (the user presses the meter's Start button); ``credit``: the measurement's author (kept in a ``.npz``
    capture's metadata; a ``.csv`` is the meter's own stream, without metadata; the meter's design is credited
    in any case); ``progress``: a stream for the status line (samples,
    travel, force), None for none. Module notes: the file, what ends a recording early.

    Raises
    ------
    DeviceError
        The port cannot be opened or sends no header (nothing is written).
    UsageError
        The output is not ``.csv`` or ``.npz``, or a partial record of an earlier recording is in the way.
    """
    out = Path(output)
    if out.suffix.lower() not in (".csv", ".npz"):
        raise UsageError(f"{out}: a meter recording is a .csv or .npz capture")
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir() or out.is_dir():
        raise UsageError(f"{out}: {'is a folder' if out.is_dir() else f'folder {folder} does not exist'}")
    part = partial_csv_path(out)
    if part.exists():
        raise UsageError(f"{part} exists (a recording interrupted earlier?): it is a readable meter record; "
                         "rename or remove it")
    if timeout_s <= 0 or header_timeout_s <= 0 or max_malformed < 0:
        raise UsageError("record_meter: the timeouts must be > 0 and max_malformed >= 0")
    line = StatusLine(progress) if progress is not None else None
    conn = _open_port(port, baud)
    try:
        reader = _LineReader(conn)
        first = _await_header(reader, port, header_timeout_s, line)
        session = _Session(port, part, max_malformed, line)
        try:
            session.run(reader, timeout_s, first)
        finally:
            session.close()
    finally:
        conn.close()
        if line is not None:
            line.clear()
    return _finish(session, out, credit)


# -- the port -----------------------------------------------------------------------------------------
def _open_port(port: str, baud: int) -> Any:
    try:
        import serial  # pyserial: pip install 'hapticam[serial]'
    except ImportError:
        raise DependencyMissingError("recording from the meter needs pyserial: pip install 'hapticam[serial]'") \
            from None
    try:
        return serial.Serial(port, baud, timeout=POLL_S, exclusive=True)
    except (serial.SerialException, OSError, ValueError) as exc:
        raise DeviceError(f"meter: cannot open {port}: {_open_failure(port, exc)}") from None


def _open_failure(port: str, exc: BaseException) -> str:
    """Why a port would not open, read from the file system rather than the driver's wording."""
    if not os.path.exists(port):
        return "no such port (is the meter plugged in? 'python -m serial.tools.list_ports' lists the ports)"
    if not os.access(port, os.R_OK | os.W_OK):
        return "permission denied (on Linux, join the group that owns the port, usually 'dialout', and log in again)"
    return f"{exc} (in use by another program?)"


class _LineReader:
    """Lines of at most ``MAX_LINE_BYTES`` from the port: :meth:`poll` waits up to ``POLL_S`` and returns the
    complete lines (bytes, ending stripped) and the over-long ones (None, once each); ``received`` counts
    bytes, ``dropped`` the bytes of over-long lines."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.buf = bytearray()
        self.dropping = False
        self.received = 0
        self.dropped = 0

    def poll(self) -> list[bytes | None]:
        """The lines completed by what arrives within ``POLL_S``. Raises DeviceError when the port hangs up."""
        try:
            waiting = self.conn.in_waiting
            data = self.conn.read(min(max(waiting, 1), READ_BYTES))
        except Exception as exc:                 # pyserial's SerialException, OSError: the line is gone
            raise DeviceError(f"the port hung up or failed ({exc.__class__.__name__}: the meter unplugged?)") from None
        self.received += len(data)
        out: list[bytes | None] = []
        while data:
            end = data.find(b"\n")
            piece, data = (data, b"") if end < 0 else (data[:end], data[end + 1:])
            if self.dropping:
                self.dropped += len(piece) + (end >= 0)
            else:
                self.buf += piece
                if len(self.buf) > MAX_LINE_BYTES:
                    self.dropped += len(self.buf)
                    self.buf.clear()
                    self.dropping = True
                    out.append(None)
            if end >= 0:
                if not self.dropping:
                    out.append(bytes(self.buf))
                self.buf.clear()
                self.dropping = False
        return out


def _await_header(reader: _LineReader, port: str, header_timeout_s: float,
                  line: StatusLine | None) -> list[bytes | None]:
    """Read until the meter's header; returns the lines that came with it, after it. DeviceError after
    ``header_timeout_s`` or ``MAX_PREAMBLE_BYTES``."""
    deadline = time.monotonic() + header_timeout_s
    if line is not None:
        line.show(f"meter {port}: waiting for the header: press the meter's Start button")
    while time.monotonic() < deadline:
        lines = reader.poll()
        for index, raw in enumerate(lines):
            if raw is not None and header_kind(raw.decode("utf-8", "replace")) == "serial":
                return lines[index + 1:]
        if reader.received > MAX_PREAMBLE_BYTES:
            raise DeviceError(f"meter {port}: {reader.received} bytes and no Open-Switch-Curve-Meter header "
                              f"({','.join(SERIAL_HEADER)}): not the meter, or not at {BAUD} baud")
    raise DeviceError(f"meter {port}: no Open-Switch-Curve-Meter header within {header_timeout_s:g} s "
                      f"({reader.received} bytes of something else): is it the meter, and was its Start button "
                      "pressed?")


# -- recording ----------------------------------------------------------------------------------------
def parse_data_line(text: str) -> tuple[float, float, bool] | None:
    """``(position um, force gf, actuated)`` of a data line ``position, force,actuated``; None if it is not one
    (not three finite numbers, a negative position, a contact other than 0 or 1)."""
    parts = text.split(",")
    if len(parts) != 3:
        return None
    try:
        x_um, f_gf, contact = (float(p) for p in parts)
    except ValueError:
        return None
    if not (x_um >= 0.0 and abs(f_gf) < 1e9 and contact in (0.0, 1.0)) or x_um > 1e9:
        return None
    return x_um, f_gf, contact == 1.0


class _Session:
    """The strokes received so far and the partial file they stream to (module notes)."""

    def __init__(self, port: str, part: Path, max_malformed: int, line: StatusLine | None) -> None:
        self.port, self.part, self.max_malformed, self.line = port, part, max_malformed, line
        self.result = MeterRecording(port=port, path=None, complete=False, reason="")
        self.pressing = True
        self.last_um: float | None = None
        self.bad_line_bytes = 0
        self.peak_gf = -float("inf")          # the largest reading kept (gf)
        self.started = time.monotonic()
        self._last_shown = 0.0
        try:
            self.file = StreamedFile(destination_of(part) or part, METER_HEADER + "\n", partial=part)
        except FileExistsError:
            raise UsageError(f"{part} exists (another recording to the same name?)") from None
        except OSError as exc:                   # nothing is left
            raise DeviceError(f"meter {port}: cannot write {part} ({exc.strerror or exc})") from None

    def run(self, reader: _LineReader, timeout_s: float, first: list[bytes | None]) -> None:
        """Record ``first`` (the lines that came with the header) and the lines that follow until the release
        ends or something ends the recording early (sets ``result.reason``)."""
        last_data, received = time.monotonic(), reader.received
        try:
            while not self.result.reason:
                lines, first = (first, []) if first else (reader.poll(), [])
                now = time.monotonic()
                if reader.received > received:
                    last_data, received = now, reader.received
                elif now - last_data > timeout_s:
                    self.stop(f"no data for {timeout_s:g} s {self._where()}")
                for raw in lines:
                    self.take(raw)
                    if self.result.reason:
                        break
                self.result.malformed_bytes = reader.dropped + self.bad_line_bytes
                if self.result.malformed_bytes > MAX_MALFORMED_BYTES:
                    self.stop(f"over {MAX_MALFORMED_BYTES} bytes of malformed input")
                self.tick(now)
        except DeviceError as exc:
            self.stop(f"{exc} {self._where()}")
        except KeyboardInterrupt:
            self.stop(f"stopped by Ctrl-C {self._where()}")

    def _where(self) -> str:
        """Where the stroke is, for a message: ``(at 1.235 mm, pressing)``."""
        if self.last_um is None:
            return "(before the first sample)"
        return f"(at {1e-3 * self.last_um:.3f} mm, {'pressing' if self.pressing else 'releasing'})"

    def take(self, raw: bytes | None) -> None:
        """Keep one line of the stream, or count it as malformed (module notes)."""
        text = None if raw is None else raw.decode("ascii", "replace").strip()
        values = None if text is None else parse_data_line(text)
        if text == "":
            return
        if values is None or not self._continues(values[0], values[1]):
            self.result.malformed += 1
            self.bad_line_bytes += 0 if raw is None else len(raw) + 1
            if self.result.malformed > self.max_malformed:
                last = "an over-long line" if text is None else repr(text[:40])
                self.stop(f"more than {self.max_malformed} malformed lines (the last: {last})")
            return
        x_um, f_gf, _contact = values
        if self.last_um is None and f_gf < HX711_ERROR_GF:
            self.result.leading_dropouts += 1
            return
        if self.file.written + len(text) + 1 > MAX_RECORD_BYTES:
            self.stop(f"the record reached {MAX_RECORD_BYTES // 2**20} MiB, over what a meter record may hold")
            return
        self._stream(text + "\n")
        if self.file.closed:                     # the write failed: the recording has ended
            return
        self._count(x_um, f_gf)
        if not self.pressing and x_um == 0.0:
            self.result.complete = True
            self.stop("the release is back at 0")

    def _continues(self, x_um: float, f_gf: float) -> bool:
        """Whether a reading continues the stroke (module notes); turns the stroke at the turn."""
        last = self.last_um
        if last is None:
            return x_um <= MAX_JUMP_UM
        if self.pressing:
            if last < x_um <= last + MAX_JUMP_UM:
                return True
            if last - MAX_JUMP_UM <= x_um <= last and f_gf >= self.peak_gf:
                self.pressing = False
                return True
            return False
        return last - MAX_JUMP_UM <= x_um < last

    def _count(self, x_um: float, f_gf: float) -> None:
        r = self.result
        r.samples += 1
        r.press_samples += self.pressing
        r.deepest_m = max(r.deepest_m, round(1e-6 * x_um, 9))
        if f_gf > self.peak_gf:
            self.peak_gf = r.max_force_gf = f_gf
        self.last_um = x_um

    def stop(self, reason: str) -> None:
        self.result.reason = self.result.reason or reason

    def tick(self, now: float) -> None:
        """Flush (and sync) when a period has passed; redraw the status line."""
        self._stream()
        if self.line is not None and now - self._last_shown >= PROGRESS_PERIOD_S:
            self._last_shown = now
            r = self.result
            force = f"{r.max_force_gf:.2f} gf max" if r.samples else "no sample yet"
            self.line.show(f"meter {self.port}: {r.samples} samples, {1e-3 * (self.last_um or 0.0):.3f} mm "
                           f"{'pressing' if self.pressing else 'releasing'}, {force}"
                           + (f", {r.malformed} malformed" if r.malformed else ""))

    def _stream(self, text: str = "") -> None:
        """Stream whole lines ``text`` (none: only flush and sync if a period has passed); a failed write ends
        the recording."""
        if self.file.closed:
            return
        try:
            self.file.write(text)
        except OSError as exc:
            self.result.complete = False
            self.stop(f"cannot write {self.part} ({exc.strerror or exc})")

    def close(self) -> None:
        """Flush, sync and close the partial file."""
        try:
            self.file.close()
        except OSError as exc:
            self.result.complete = False
            self.stop(f"cannot write {self.part} ({exc.strerror or exc})")
        self.result.seconds = time.monotonic() - self.started


def _finish(session: _Session, out: Path, credit: str | None) -> MeterRecording:
    """Put a complete record in place (module notes: the file); keep a cut-short one in the partial file."""
    r, part = session.result, session.part
    if r.samples == 0:
        part.unlink(missing_ok=True)
        r.complete, r.path = False, None
        return r
    r.path = part
    if not r.complete:
        return r
    try:
        capture = load_meter_capture(part, credit=credit)
    except CaptureError as exc:
        r.complete, r.reason = False, f"the record is not one press and release ({exc})"
        return r
    meta = capture.metadata
    r.dropouts = int(capture.dropouts.size)
    r.actuation_m, r.release_m = meta.get("actuation_m"), meta.get("release_m")
    if out.suffix.lower() == ".npz":
        meta.update(source=f"recorded from the Open-Switch-Curve-Meter on {session.port}", port=session.port,
                    recorded=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
                    malformed_lines=r.malformed, leading_dropouts=r.leading_dropouts)
        save_capture(out, capture)
        part.unlink()
    else:
        os.replace(part, out)
    r.path = out
    return r

"""The Open-Switch-Curve-Meter's own files load as captures: its spreadsheets, its serial stream, the log of
another build.

References: the converted capture of the same measurement (tests/data/switch_curves/Gateron-Brown.csv), the
actuation and release points the author wrote in the sheets (read off the cells), the firmware's reverse rule
(no press sample passes the 110 gf reverse limit; the first release sample does), and synthetic records made
from closed-form force curves. Hostile spreadsheets are refused quickly (processor time: the machine may be
shared) with one message.
"""

from __future__ import annotations

import struct
import time
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

from hapticam.capture_io import load_capture
from hapticam.capture_meter import is_meter_file, load_meter_capture
from hapticam.errors import CaptureError
from hapticam.ods_table import MAX_CONTENT_BYTES, read_ods_sheets

from conftest import SWITCH_DIR

METER_DIR = Path(__file__).resolve().parent / "data" / "meter_files"
METER_FILES = sorted(METER_DIR.glob("*.ods"))
GF = 9.80665e-3                  # N per gram-force
STEP_M = 5e-6
REVERSE_LIMIT_GF = 110.0         # the firmware's default reverse limit
#: the sheets' own actuation and release points (mm, the author's corrected frame), read off the cells:
#: Gateron-Brown L2 and N2; AdobauLabs M59 (under "Actuation") and M63 (under "Release")
SHEET_POINTS_MM = {"Gateron-Brown.ods": (2.315, 2.325),
                   "AdobauLabs-JWK-Bouquet-Sample-2-Measurement-1.ods": (2.42, 2.38)}


# -- the published spreadsheets ---------------------------------------------------------------------
def test_six_published_sheets_are_here():
    assert [p.name for p in METER_FILES] == sorted([
        "AEBoards-Naevy-R1-5.ods", "AdobauLabs-JWK-Bouquet-Sample-2-Measurement-1.ods", "Gateron-Brown.ods",
        "Gateron-Ink-Black.ods", "Gazzew-Phoenix-In-Boba-Housing-With-MX-Clear-Spring.ods",
        "Naevy-Stem-In-Dusk-Panda.ods"])


@pytest.mark.parametrize("path", METER_FILES, ids=[p.stem for p in METER_FILES])
def test_every_sheet_loads_as_one_press_and_release(path):
    cap = load_meter_capture(path)
    assert is_meter_file(path)
    assert cap.metadata["credit"] == "bluepylons" and "CC-BY 4.0" in cap.metadata["source"]
    assert f"Force curve measurements/{path.name}" in cap.metadata["source"]
    assert cap.n > 1000 and np.allclose(np.diff(cap.t_s), 0.1)           # the nominal 10 samples a second
    steps = np.round(cap.x_m / STEP_M)
    assert np.allclose(cap.x_m, steps * STEP_M, atol=1e-12) and cap.x_m.min() == 0.0
    k = cap.metadata["press_samples"]
    assert np.all(np.diff(cap.x_m[:k]) > 0) and np.all(np.diff(cap.x_m[k:]) < 0)
    assert cap.x_m[k] == cap.x_m[k - 1] == cap.x_m.max()     # the firmware prints the deepest travel twice
    # the firmware reverses on the first reading over the limit: no press sample passes it, the first
    # release sample does (tared force; the tares are under 1 gf)
    press = cap.f_N[:k][cap.valid[:k]] / GF
    assert press.max() < REVERSE_LIMIT_GF + 1.0 and cap.f_N[k] / GF > REVERSE_LIMIT_GF - 1.0
    assert abs(cap.f_N[0]) < 0.1 * GF                         # tared: the first sample carries ~no force


def test_gateron_brown_sheet_is_the_converted_capture():
    sheet = load_meter_capture(METER_DIR / "Gateron-Brown.ods")
    converted = load_capture(SWITCH_DIR / "Gateron-Brown.csv")
    assert sheet.n == converted.n
    np.testing.assert_allclose(sheet.x_m, converted.x_m, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sheet.f_N, converted.f_N, rtol=1e-6, atol=1e-9)   # the CSV has 7 digits
    np.testing.assert_allclose(sheet.t_s, converted.t_s, rtol=0, atol=1e-12)
    assert sheet.metadata["source"] == converted.metadata["source"]


@pytest.mark.parametrize("name", sorted(SHEET_POINTS_MM))
def test_actuation_points_agree_with_the_sheets_own(name):
    cap = load_meter_capture(METER_DIR / name)
    actuation_mm, release_mm = SHEET_POINTS_MM[name]
    meta = cap.metadata
    assert meta["sheet_actuation_corrected_m"] == pytest.approx(actuation_mm * 1e-3, abs=1e-9)
    assert meta["sheet_release_corrected_m"] == pytest.approx(release_mm * 1e-3, abs=1e-9)
    # the frame offsets are right: each corrected stroke's first force steps are the raw ones at its start
    sheet = read_ods_sheets(METER_DIR / name)[0][0]
    k = meta["press_samples"]
    for stroke, span in (("press", slice(0, k)), ("release", slice(k, cap.n))):
        first_x_mm, first_forces_gf = _corrected_start(sheet, "downstroke" if stroke == "press" else "upstroke")
        start_m = first_x_mm * 1e-3 + meta[f"sheet_{stroke}_offset_m"]
        at = np.flatnonzero(np.isclose(cap.x_m[span], start_m, atol=1e-9))
        assert at.size == 1
        steps_gf = np.diff(cap.f_N[span][at[0]:at[0] + 3]) / GF
        assert np.allclose(steps_gf, np.diff(first_forces_gf), atol=1e-6)
    assert abs(meta["actuation_m"] - (actuation_mm * 1e-3 + meta["sheet_press_offset_m"])) <= STEP_M
    assert abs(meta["release_m"] - (release_mm * 1e-3 + meta["sheet_release_offset_m"])) <= STEP_M
    assert abs(meta["actuation_m"] - meta["sheet_actuation_m"]) <= STEP_M
    assert abs(meta["release_m"] - meta["sheet_release_m"]) <= STEP_M


def _corrected_start(sheet, word):
    """The first travel (mm) and first three forces (gf) of the author's corrected stroke ``word``."""
    headers = {(r, c): t.lower() for (r, c), t in sheet.texts.items() if r <= 1 and word in t.lower()}
    force = [rc for rc, t in headers.items() if "force" in t]
    if force:          # one header row: "Corrected <word> X (mm)", "Corrected <word> force (gf)"
        (row, f_col), = force
        x_col = next(c for (_r, c), t in headers.items() if "x (mm)" in t)
    else:              # a "Corrected <word>" title over "X (mm)", "Force (gf)"
        (title_row, x_col), = headers
        row, f_col = title_row + 1, x_col + 1
    x, f = np.asarray(sheet.column(x_col))[row + 1:], np.asarray(sheet.column(f_col))[row + 1:]
    return float(x[0]), f[:3]


def test_a_sheet_without_actuation_has_no_points():
    cap = load_meter_capture(METER_DIR / "AEBoards-Naevy-R1-5.ods")
    assert "actuation_m" not in cap.metadata and cap.metadata["actuation_changes"] == 0


# -- synthetic sheets and records -------------------------------------------------------------------
def _press(top_um=2000):
    """A press to ``top_um`` and back in 5 um steps, as the firmware prints it (deepest travel twice)."""
    down = np.arange(0, top_um + 1, 5)
    return np.concatenate([down, down[::-1]]).astype(float), down.size


def _spring_gf(x_um):
    return 0.2 + 0.02 * x_um + 5.0 * np.sin(x_um / 300.0)


def test_a_synthetic_sheet_converts_units_and_finds_actuation(tmp_path):
    x_um, n_press = _press()
    raw_gf = _spring_gf(x_um) - 0.3
    acted = np.zeros(x_um.size)
    acted[:n_press][x_um[:n_press] >= 1200] = 1
    acted[n_press:][x_um[n_press:] > 1100] = 1
    rows = [_row([_text("Raw X (microns)"), _text("Raw Force (gf)"), _text("Actuated?"), _text("Force - Tared (gf)")])]
    rows += [_row([_num(a) for a in values]) for values in zip(x_um, raw_gf, acted, raw_gf + 0.3)]
    rows.append(_row([_cell(repeat=10 ** 9)], repeat=10 ** 9))           # a sheet's padding: free
    path = _ods(tmp_path / "spring.ods", rows)
    start = time.process_time()
    cap = load_meter_capture(path, credit="someone")
    assert time.process_time() - start < 2.0
    np.testing.assert_allclose(cap.x_m, x_um * 1e-6, atol=1e-15)
    np.testing.assert_allclose(cap.f_N, _spring_gf(x_um) * GF, rtol=1e-12)
    assert cap.metadata["actuation_m"] == pytest.approx(1.2e-3) and cap.metadata["release_m"] == pytest.approx(1.1e-3)
    assert cap.metadata["credit"] == "someone" and "bluepylons" in cap.metadata["instrument"]
    assert "license" not in cap.metadata                    # not one of the published files


def test_serial_stream_loads_tared_with_switch_points(tmp_path):
    x_um, n_press = _press(2500)
    force_gf = np.round(_spring_gf(x_um) + 0.15, 2)            # the firmware prints two decimals
    acted = np.zeros(x_um.size, dtype=int)
    acted[:n_press][x_um[:n_press] >= 2000] = 1
    acted[n_press:][x_um[n_press:] > 1900] = 1
    lines = ["Raw X (microns),Raw Force (gf),Actuated?"]
    lines += [f"{int(x)}, {f:.2f},{a}" for x, f, a in zip(x_um, force_gf, acted)]
    path = tmp_path / "serial.txt"
    path.write_text("\r\n".join(lines) + "\r\n")
    assert is_meter_file(path)
    cap = load_meter_capture(path)
    np.testing.assert_allclose(cap.x_m, x_um * 1e-6, atol=1e-15)
    np.testing.assert_allclose(cap.f_N, (force_gf - force_gf[0]) * GF, atol=1e-12)
    assert cap.metadata["actuation_m"] == pytest.approx(2.0e-3) and cap.metadata["release_m"] == pytest.approx(1.9e-3)
    assert cap.metadata["press_samples"] == n_press and "credit" not in cap.metadata
    assert np.allclose(np.diff(cap.t_s), 0.1)


def _build_log(path, *, gaps=0.0, seed=0):
    """A log of another build: 30 samples a second with 2 ms of jitter, ``gaps`` of the intervals doubled
    (a missed sample); travel 0 -> 4 mm -> 0 at 0.4 mm/s in 2.5 um steps; force from closed forms (gram-force),
    5 gf less on the release. Returns the travel (mm) of the turn."""
    rng = np.random.default_rng(seed)
    dt = 0.033 + rng.normal(0.0, 0.002, 620)
    dt[rng.random(dt.size) < gaps] += 0.033
    t = np.concatenate([[0.0], np.cumsum(dt)])
    millis = np.round(1000 * t)
    t_turn = 10.0
    travel = np.where(millis / 1000 <= t_turn, 0.4 * millis / 1000, 0.4 * (2 * t_turn - millis / 1000))
    keep = travel >= 0
    millis, travel = millis[keep], travel[keep]
    steps = np.round(travel * 400)
    travel = steps / 400
    pressing = millis / 1000 <= t_turn
    grams = np.round(_log_force_gf(travel, pressing), 2)
    lines = ["Millis,Steps,Travel (mm),Scale raw,Scale (grams)"]
    lines += [f"{int(m) + 5000},{int(s)},{x:.4f},{int(g * 420 + 8000)},{g:.2f}"
              for m, s, x, g in zip(millis, steps, travel, grams)]
    path.write_text("\n".join(lines) + "\n")
    return millis, travel, grams


def _log_force_gf(travel_mm, pressing):
    return 20.0 + 15.0 * travel_mm + 8.0 * np.sin(3.0 * travel_mm) - 5.0 * ~np.asarray(pressing)


def test_regular_build_log_keeps_its_times(tmp_path):
    millis, travel, grams = _build_log(tmp_path / "log.csv")
    cap = load_meter_capture(tmp_path / "log.csv")
    assert cap.metadata["resampled"] is False
    np.testing.assert_allclose(cap.t_s, (millis - millis[0]) / 1000, atol=1e-12)
    np.testing.assert_allclose(cap.x_m, travel * 1e-3, atol=1e-12)
    np.testing.assert_allclose(cap.f_N, grams * GF, atol=1e-12)


def test_jittered_build_log_is_resampled_and_keeps_its_curve(tmp_path):
    millis, travel, _grams = _build_log(tmp_path / "log.csv", gaps=0.03)
    dt = np.diff(millis)
    assert np.percentile(np.abs(dt / np.median(dt) - 1), 99) > 0.5            # irregular by the rule
    cap = load_meter_capture(tmp_path / "log.csv")
    assert cap.metadata["resampled"] is True and any("resampled" in n for n in cap.notes)
    grid = np.diff(cap.t_s)
    assert np.ptp(grid) < 1e-9 and grid[0] == pytest.approx(0.033, rel=0.05)
    assert cap.t_s[-1] == pytest.approx((millis[-1] - millis[0]) / 1000, abs=grid[0])
    k = cap.metadata["press_samples"]
    assert np.all(np.diff(cap.x_m[:k]) >= 0) and np.all(np.diff(cap.x_m[k:]) <= 0)
    assert cap.x_m.max() == pytest.approx(travel.max() * 1e-3, abs=0.4e-3 * 0.066)
    away = np.abs(np.arange(cap.n) - (k - 0.5)) > 2          # the samples astride the turn mix the strokes
    pressing = np.arange(cap.n) < k
    truth_N = _log_force_gf(cap.x_m * 1e3, pressing) * GF
    assert np.max(np.abs(cap.f_N - truth_N)[away]) < 0.02 * GF


def test_build_log_rows_out_of_order_are_put_in_stroke_order(tmp_path):
    _build_log(tmp_path / "log.csv")
    lines = (tmp_path / "log.csv").read_text().splitlines()
    lines[101], lines[102] = lines[102], lines[101]
    (tmp_path / "swapped.csv").write_text("\n".join(lines) + "\n")
    clean, swapped = load_meter_capture(tmp_path / "log.csv"), load_meter_capture(tmp_path / "swapped.csv")
    np.testing.assert_array_equal(swapped.x_m, clean.x_m)
    np.testing.assert_array_equal(swapped.t_s, clean.t_s)
    assert swapped.metadata["resampled"] is False and any("stroke order" in n for n in swapped.notes)


def test_a_log_with_two_presses_is_refused(tmp_path):
    lines = ["Millis,Steps,Travel (mm),Scale raw,Scale (grams)"]
    travel = np.concatenate([np.linspace(0, 2, 60), np.linspace(2, 0, 60), np.linspace(0, 2, 60)])
    lines += [f"{33 * i},{int(x * 400)},{x:.4f},0,{10 + x:.2f}" for i, x in enumerate(travel)]
    (tmp_path / "two.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(CaptureError) as err:
        load_meter_capture(tmp_path / "two.csv")
    assert "two.csv" in str(err.value) and "\n" not in str(err.value)


def test_ordinary_captures_are_not_meter_files():
    assert not is_meter_file(SWITCH_DIR / "Gateron-Brown.csv")


def test_load_capture_reads_meter_files():
    import hapticam.capture_io as capture_io
    if not hasattr(capture_io, "load_meter_capture"):
        pytest.skip("capture_io does not dispatch meter files yet")
    assert load_capture(METER_DIR / "Gateron-Brown.ods").metadata["credit"] == "bluepylons"


# -- hostile spreadsheets -----------------------------------------------------------------------------
_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
       'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
       'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"')


def _cell(value=None, text=None, repeat=None):
    rep = f' table:number-columns-repeated="{repeat}"' if repeat else ""
    if value is not None:
        return f'<table:table-cell{rep} office:value-type="float" office:value="{value!r}"/>'
    if text is not None:
        return f'<table:table-cell{rep} office:value-type="string"><text:p>{text}</text:p></table:table-cell>'
    return f"<table:table-cell{rep}/>"


def _num(value):
    return _cell(value=float(value))


def _text(text):
    return _cell(text=text)


def _row(cells, repeat=None):
    rep = f' table:number-rows-repeated="{repeat}"' if repeat else ""
    return f"<table:table-row{rep}>{''.join(cells)}</table:table-row>"


def _content(rows, prolog=""):
    return (f'<?xml version="1.0" encoding="UTF-8"?>{prolog}<office:document-content {_NS}><office:body>'
            f'<office:spreadsheet><table:table table:name="Sheet1">{"".join(rows)}</table:table>'
            "</office:spreadsheet></office:body></office:document-content>").encode()


def _ods(path, rows, prolog=""):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        zf.writestr("content.xml", _content(rows, prolog))
    return path


def _header_and_rows(n=30):
    return [_row([_text("Raw X (microns)"), _text("Raw Force (gf)"), _text("Actuated?")])] + [
        _row([_num(5 * i), _num(i), _num(0)]) for i in range(n)]


def _bomb(path, mib, declared=None):
    """A zip whose content.xml expands to ``mib`` MiB of spaces (full-flush deflate blocks repeated), its
    size declared as ``declared`` bytes (default: the true size)."""
    chunk = b" " * (1 << 20)
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = co.compress(chunk) + co.flush(zlib.Z_FULL_FLUSH)
    data = block * mib + zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(chunk, crc)
    size = mib << 20 if declared is None else declared
    name = b"content.xml"
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), size, len(name), 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc, len(data), size, len(name),
                          0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    path.write_bytes(local + data + central + end)
    return path


def _damaged(path):
    """A sheet whose compressed content.xml has bytes overwritten in its middle."""
    _ods(path, _header_and_rows(3000))
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("content.xml")
    middle = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2
    data[middle:middle + 64] = bytes(64)
    return _write(path, bytes(data))


def _write(path, data):
    path.write_bytes(data)
    return path


_LAUGHS = ('<!DOCTYPE lolz [<!ENTITY lol "lollollollollollollollollollol">'
           + "".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10))
           + "]>")

HOSTILE = {
    "a row repeated 1e9 times": lambda p: _ods(p, _header_and_rows() + [_row([_num(1), _num(2)], repeat=10 ** 9)]),
    "1e9 empty rows, then a value": lambda p: _ods(p, _header_and_rows() + [_row([_cell()], repeat=10 ** 9),
                                                                            _row([_num(1)])]),
    "a value repeated over 1e9 columns": lambda p: _ods(p, _header_and_rows() + [_row([_cell(1.0, repeat=10 ** 9)])]),
    "rows repeated over the cell limit": lambda p: _ods(p, _header_and_rows() + [_row([_cell(1.0, repeat=1000)],
                                                                                     repeat=10 ** 5)]),
    "a zip bomb": lambda p: _bomb(p, MAX_CONTENT_BYTES // 2**20 + 8),
    "a zip bomb that understates its size": lambda p: _bomb(p, 64, declared=4096),
    "entities that expand a billion times": lambda p: _ods(p, _header_and_rows() + [_row([_text("&lol9;")])],
                                                           prolog=_LAUGHS),
    "elements nested 10000 deep": lambda p: _ods(p, ["<text:span>" * 10000 + "</text:span>" * 10000]),
    "a damaged deflate stream": _damaged,
    "not a zip": lambda p: _write(p, b"PK\x03\x04 not really a zip archive" * 10),
    "no content.xml": lambda p: zipfile.ZipFile(p, "w").close() or p,
    "no meter header": lambda p: _ods(p, [_row([_text("Name"), _text("Value")]), _row([_text("a"), _num(1)])]),
    "a gap in the travel": lambda p: _ods(p, _header_and_rows()[:10] + [_row([_cell(), _num(1), _num(0)])]
                                          + _header_and_rows()[10:]),
    "a repeat count that is not a number": lambda p: _ods(p, _header_and_rows() + [_row([_num(1)], repeat="lots")]),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_spreadsheets_are_refused_quickly_with_one_message(tmp_path, case):
    path = HOSTILE[case](tmp_path / "hostile.ods")
    start = time.process_time()
    with pytest.raises(CaptureError) as err:
        load_meter_capture(path)
    assert time.process_time() - start < 2.0
    message = str(err.value)
    assert str(path) in message and "\n" not in message

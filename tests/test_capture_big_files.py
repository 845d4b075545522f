"""Captures at the size limits: a capture inside them loads in memory that grows by its float64 columns
alone (under 500 MB at ``MAX_SAMPLES`` rows of t, x, F), and one over them is refused with one line and
exit code 2 before its arrays are allocated. Also: the compiled CSV number reader gives exactly NumPy's
values, and the bounded-memory median and percentiles give exactly NumPy's."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from hapticam import capture, capture_csv
from hapticam.capture import MAX_SAMPLES, median_of_blocks, percentile_of_blocks
from hapticam.capture_io import load_capture
from hapticam.errors import CaptureError

MB = 1024 * 1024
#: the resident-memory budget of a capture at the limit (bytes)
BUDGET_BYTES = 500 * MB
#: three float64 columns (t, x, F) are 24 bytes a row; allowed: 4 more (no whole extra copy of a column)
BYTES_PER_ROW = 28
_PERIOD = 2000                                     # rows of one triangle of position (0 .. 1000 um .. 0)


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    """ASCII digits (uint8, ``(n, width)``) of non-negative integers, zero-padded."""
    out = np.empty((values.size, width), dtype=np.uint8)
    rest = values.copy()
    for k in range(width - 1, -1, -1):
        out[:, k] = 48 + rest % 10
        rest //= 10
    return out


def write_triangle_csv(path, rows: int, block: int = 1 << 20) -> None:
    """``t_ms,x_um,force_mN``: a sample every ms, position a triangle of 0..1000 um and back every 2 s,
    force 1.5 mN per um; fixed-width lines built by numpy (19 bytes a row)."""
    phase = np.arange(_PERIOD)
    x_um = np.abs(phase - _PERIOD // 2)
    comma, newline = np.full((_PERIOD, 1), ord(","), np.uint8), np.full((_PERIOD, 1), ord("\n"), np.uint8)
    tail = np.concatenate([comma, _digits(x_um, 4), comma, _digits(x_um * 3 // 2, 4), newline], axis=1)
    with open(path, "wb") as fh:
        fh.write(b"t_ms,x_um,force_mN\n")
        for start in range(0, rows, block):
            i = np.arange(start, min(start + block, rows), dtype=np.int64)
            fh.write(np.concatenate([_digits(i, 8), tail[i % _PERIOD]], axis=1).tobytes())


_LOAD_AND_MEASURE = """
import json, resource, sys
from hapticam import capture_csv
from hapticam.capture_io import load_capture
def peak_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
capture_csv.COMPILED_PARSE_BYTES = 0          # the reader a large file gets, at every size measured
load_capture(sys.argv[1])                     # everything a load imports and compiles, on a small file
before = peak_bytes()
with open("/proc/self/statm") as fh:          # resident now: the imports, not a compiler's freed transient
    resident = int(fh.read().split()[1]) * resource.getpagesize()
runs = []
for path in sys.argv[2:]:                     # ascending sizes: each load's peak is above the one before
    cap = load_capture(path)
    runs.append({"n": cap.n, "t_last": float(cap.t_s[-1]), "x_max": float(cap.x_m.max()),
                 "f_max": float(cap.f_N.max()), "dropouts": int(cap.dropouts.size),
                 "grown_bytes": peak_bytes() - before, "resident_before_bytes": resident})
    del cap
print(json.dumps(runs))
"""


def _load_in_child(warm_up, *paths) -> list[dict]:
    """Load ``paths`` one after the other in a fresh interpreter, after loading ``warm_up``: what each
    gave, and the peak resident memory (``getrusage`` of the child) and its growth over the warmed-up one."""
    done = subprocess.run([sys.executable, "-c", _LOAD_AND_MEASURE, str(warm_up), *map(str, paths)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_memory_grows_by_the_columns_alone_and_fits_the_budget_at_the_limit(tmp_path):
    capture_csv._compiled_parser()(np.frombuffer(b"1\n", np.uint8), ord(","), np.empty((1, 1)),
                                   capture_csv._POWERS_OF_TEN)            # compiled (and cached) once, here
    sizes = {"warm_up": 1000, "small": 300_000, "large": 1_200_000}   # 1 MiB chunks: 6 and 22 of them
    for name, rows in sizes.items():
        write_triangle_csv(tmp_path / f"{name}.csv", rows)
    _load_in_child(tmp_path / "warm_up.csv")      # a first child compiles what the load needs into the cache,
    small, large = _load_in_child(*(tmp_path / f"{name}.csv" for name in sizes))  # so this one's peak is loads
    for got, rows in ((small, sizes["small"]), (large, sizes["large"])):
        # the values the file was written from: t = i ms, x up to 1000 um, F = 1.5 mN per um
        assert (got["n"], got["t_last"], got["dropouts"]) == (rows, (rows - 1) * 1e-3, 0)
        assert got["x_max"] == pytest.approx(1e-3) and got["f_max"] == pytest.approx(1.5)
    per_row = (large["grown_bytes"] - small["grown_bytes"]) / (sizes["large"] - sizes["small"])
    assert per_row <= BYTES_PER_ROW, f"{per_row:.1f} bytes a row"
    at_limit = large["resident_before_bytes"] + large["grown_bytes"] + per_row * (MAX_SAMPLES - sizes["large"])
    assert at_limit <= BUDGET_BYTES, f"{at_limit / MB:.0f} MB at {MAX_SAMPLES:,} rows"


_REFUSE_AND_MEASURE = """
import json, resource, sys
from hapticam.capture_io import load_capture
from hapticam.errors import CaptureError
def peak_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
before = peak_bytes()
try:
    load_capture(sys.argv[1])
    refused = ""
except CaptureError as exc:
    refused = str(exc)
print(json.dumps({"refused": refused, "grown_bytes": peak_bytes() - before}))
"""


def _refused_in_child(path) -> tuple[str, int]:
    """The message ``load_capture`` refuses ``path`` with in a fresh interpreter, and how much its peak
    resident memory grew while it did (``getrusage`` of the child)."""
    done = subprocess.run([sys.executable, "-c", _REFUSE_AND_MEASURE, str(path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    return got["refused"], got["grown_bytes"]


def _assert_the_command_line_refuses(path, tmp_path) -> None:
    """``hapticam identify impedance PATH`` ends with exit code 2 and one line naming the file."""
    done = subprocess.run([sys.executable, "-m", "hapticam", "identify", "impedance", str(path), "-o",
                           str(tmp_path / "model.yaml")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0], done.stderr


def test_an_npz_declaring_more_samples_than_the_limit_is_refused_before_it_is_expanded(tmp_path):
    declared = 50_000_000                               # > MAX_SAMPLES: 100 MB as float16, 400 MB as float64
    big = tmp_path / "big.npz"
    with open(big, "wb") as fh:
        np.savez_compressed(fh, t_s=np.zeros(declared, np.float16), x_m=np.zeros(2), force_N=np.zeros(2))
    assert big.stat().st_size < 1 * MB
    refused, grown = _refused_in_child(big)
    assert f"{MAX_SAMPLES:,}" in refused
    assert grown < 30 * MB                     # not one member expanded: t_s alone would take 100 MB
    _assert_the_command_line_refuses(big, tmp_path)


def test_a_csv_with_more_data_lines_than_the_limit_is_refused_before_it_is_parsed(tmp_path):
    big = tmp_path / "big.csv"
    big.write_bytes(b"x_m,force_N\n" + b"1,2\n" * (MAX_SAMPLES + 1))      # 40 MB, within the byte limit
    assert big.stat().st_size < capture_csv.MAX_CAPTURE_BYTES
    refused, grown = _refused_in_child(big)
    assert f"at least {MAX_SAMPLES + 1:,} data lines" in refused
    assert grown < 30 * MB                     # nothing allocated: its columns would take 160 MB as float64
    _assert_the_command_line_refuses(big, tmp_path)


def _rows(count: int, lead: str = "") -> str:
    return "".join(f"{lead}{i * 1e-3},{i % 7 * 1e-4},1\n" for i in range(count))


@pytest.mark.parametrize("header", ["t_s,x_m,force_N", "1,t_s,x_m,force_N"], ids=["header", "numeric header"])
def test_the_line_count_refuses_one_data_line_over_the_limit_and_not_the_header(tmp_path, monkeypatch, header):
    monkeypatch.setattr(capture_csv, "MAX_SAMPLES", 50)
    path = tmp_path / "c.csv"
    extra = "1," if header.startswith("1") else ""
    path.write_text(f"# rate_hz: 1000\n{header}\n" + "".join(extra + r for r in _rows(51).splitlines(True)))
    with pytest.raises(CaptureError, match="at least 51 data lines"):
        capture_csv.read_csv(path)
    path.write_text(f"# rate_hz: 1000\n{header}\n" + "".join(extra + r for r in _rows(50).splitlines(True)))
    assert load_capture(path).n == 50


def test_lines_the_count_cannot_see_as_numbers_are_refused_as_they_pass_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(capture_csv, "MAX_SAMPLES", 50)
    path = tmp_path / "spaced.csv"
    path.write_text("t_s,x_m,force_N\n" + _rows(60, lead=" "))
    with pytest.raises(CaptureError, match="more than 50 data lines"):
        capture_csv.read_csv(path)
    path.write_text("t_s,x_m,force_N\n" + _rows(50, lead=" "))
    assert load_capture(path).n == 50


# -- the compiled number reader reads what NumPy's reader reads ------------------------------------------
def _read_both(path, monkeypatch) -> tuple[object, object, bool]:
    """``read_csv`` by the compiled reader, then by NumPy's (each ``(columns, metadata, notes)`` or the
    error), and whether the compiled reader took a chunk."""
    compiled, taken = capture_csv._compiled_parser(), []

    def counting(*args):
        rows = compiled(*args)
        taken.append(rows >= 0)
        return rows

    monkeypatch.setattr(capture_csv, "_compiled_parser", lambda: counting)
    results = []
    for threshold in (0, 2**62):
        monkeypatch.setattr(capture_csv, "COMPILED_PARSE_BYTES", threshold)
        try:
            cols, meta, notes, _sha = capture_csv.read_csv(path)
            results.append((cols, meta, notes))
        except CaptureError as exc:
            results.append(str(exc))
    return results[0], results[1], any(taken)


def _same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    (cols_a, meta_a, notes_a), (cols_b, meta_b, notes_b) = a, b
    return (meta_a == meta_b and notes_a == notes_b and cols_a.keys() == cols_b.keys()
            and all(np.array_equal(cols_a[k], cols_b[k]) and np.array_equal(np.signbit(cols_a[k]),
                                                                             np.signbit(cols_b[k])) for k in cols_a))


RNG = np.random.default_rng(7)
_VALUES = RNG.normal(size=(400, 3)) * 10.0 ** RNG.integers(-8, 9, size=(400, 3))
_VALUES[:, 0] = np.arange(400) * 1e-3


def _table_text(fmt: str, delimiter: str = ",") -> str:
    buf = io.StringIO()
    np.savetxt(buf, _VALUES, fmt=fmt, delimiter=delimiter)
    return buf.getvalue()


def _with_line(text: str, line: str, at: int = 200) -> str:
    """``text`` with ``line`` inserted before its line ``at``."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[:at]) + line + "".join(lines[at:])


CASES = {
    "scientific": "t_s,x_m,force_N\n" + _table_text("%.9e"),
    "fixed": "t_s,x_m,force_N\n" + _table_text("%.6f"),
    "17 digits (NumPy's reader)": "t_s,x_m,force_N\n" + _table_text("%.17g"),
    "signs, points, exponents": ("t_s,x_m,force_N\n0,1.,+.5\n1e-3,-.25,-0\n2E-3,1.e-3,1E+2\n3e-03,0.0001,-0.0\n"
                                 + "".join(f"{i}e-3,{i % 9}.0e-4,{i}\n" for i in range(4, 40))),
    "semicolons and a comment between": ("# rate_hz: 1000\nt_ms;x_mm;force_N\n"
                                         + _with_line(_table_text("%.5f", ";"), "# half way: here\n")),
    "CRLF lines": "t_s,x_m,force_N\r\n" + _table_text("%.6f").replace("\n", "\r\n"),
    "blank line": "t_s,x_m,force_N\n" + _with_line(_table_text("%.6f"), "\n"),
    "a word among the numbers": "t_s,x_m,force_N\n" + _with_line(_table_text("%.6f"), "abc,1,2\n"),
    "a missing field": "t_s,x_m,force_N\n" + _with_line(_table_text("%.6f"), "1,2\n"),
    "an empty field": "t_s,x_m,force_N\n" + _with_line(_table_text("%.6f"), "1,,2\n"),
    "a trailing delimiter": "t_s,x_m,force_N\n" + _with_line(_table_text("%.6f"), "1,2,3,\n"),
    "nan": "t_s,x_m,force_N\n" + _with_line(_table_text("%.6f"), "9,nan,1\n"),
    "too large for a double": "t_s,x_m,force_N\n" + _with_line(_table_text("%.6f"), "9,1e400,1\n"),
    "an ignored column": "t_s,x_m,force_N,note\n" + "".join(f"{i}e-3,{i % 5}e-4,{i},{i * 7}\n" for i in range(40)),
}


#: the cases whose lines are all plain decimal numbers: the compiled reader parses them itself
PLAIN = {"scientific", "fixed", "signs, points, exponents", "semicolons and a comment between", "an ignored column"}


@pytest.mark.parametrize("name", list(CASES))
def test_the_compiled_reader_gives_numpys_values_and_errors(tmp_path, monkeypatch, name):
    path = tmp_path / "c.csv"
    path.write_bytes(CASES[name].encode())
    compiled, numpys, taken = _read_both(path, monkeypatch)
    assert _same(compiled, numpys)
    assert taken == (name in PLAIN)


def test_the_compiled_reader_rounds_every_plain_number_as_python_does():
    rng = random.Random(11)
    words = []
    for _ in range(5000):
        whole = "".join(rng.choices("0123456789", k=rng.randint(0, 10)))
        part = "".join(rng.choices("0123456789", k=rng.randint(0, 12)))
        word = rng.choice(["", "-", "+"]) + whole + ("." + part if part or not whole else "")
        word += "7" if not (whole or part) else ""
        if rng.random() < 0.5:
            word += rng.choice("eE") + rng.choice(["", "-", "+"]) + str(rng.randint(0, 30))
        words.append(word)
    parse = capture_csv._compiled_parser()
    taken = 0
    for word in words:
        table = np.empty((1, 1))
        if parse(np.frombuffer(f"{word}\n".encode(), np.uint8), ord(","), table, capture_csv._POWERS_OF_TEN) == 1:
            taken += 1
            assert table[0, 0] == float(word) and np.signbit(table[0, 0]) == np.signbit(float(word)), word
    assert taken > len(words) // 2                       # most are plain: the fast path is exercised


# -- bounded-memory order statistics ---------------------------------------------------------------
def _blocks_of(values: np.ndarray, size: int = 4096):
    """``values`` as consecutive blocks of ``size`` (a new iterator on each call)."""
    return lambda: (values[start:start + size] for start in range(0, values.size, size))


_ARRAYS = {
    "normal": RNG.normal(size=70_001),
    "few values, many ties": np.round(RNG.normal(size=70_000), 1),
    "ties a few ulps apart": 1e-3 + RNG.integers(-2, 3, size=70_000) * 2e-19,
    "sorted": np.sort(RNG.exponential(size=65_537)),
    "periodic": np.tile(RNG.normal(size=7), 10_000),
    "ten values, periodic": (np.arange(70_000) * 3 // 2 % 10) * 1e-3,
    "tiny": np.array([3.0, -1.0]),
}


@pytest.mark.parametrize("sample, gather", [(1 << 16, 1 << 20), (16, 1 << 20), (16, 5)],
                         ids=["default", "coarse sample", "full copy"])
@pytest.mark.parametrize("name", list(_ARRAYS))
def test_bounded_median_and_percentiles_are_numpys(monkeypatch, name, sample, gather):
    monkeypatch.setattr(capture, "BRACKET_SAMPLE", sample)
    monkeypatch.setattr(capture, "BRACKET_GATHER", gather)
    values = _ARRAYS[name]
    blocks = _blocks_of(values)
    assert median_of_blocks(blocks, values.size) == np.median(values)
    for q in (0, 1, 37.5, 50, 99, 100):
        assert percentile_of_blocks(blocks, values.size, q) == np.percentile(values, q)


_SIGNALS = {                                        # 4 million samples: a float64 copy is 30.5 MB
    "continuous": lambda i: np.sin(i * 1e-3) + 1e-3 * np.cos(i * 0.7),
    "ten values, periodic": lambda i: (i * 3 // 2 % 10) * 1e-3,
    "intervals a few ulps apart": lambda i: np.diff(np.append(i, i.size) * 1e-3),
}


@pytest.mark.parametrize("name", list(_SIGNALS))
def test_median_percentiles_and_noise_work_in_memory_that_does_not_grow_with_the_signal(name):
    values = _SIGNALS[name](np.arange(4_000_000))
    blocks = _blocks_of(values)
    tracemalloc.start()
    try:
        got = (median_of_blocks(blocks, values.size), percentile_of_blocks(blocks, values.size, 1),
               percentile_of_blocks(blocks, values.size, 99), capture.noise_scale(values))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    noise = float(np.median(np.abs(np.diff(values, 2))) / 0.6745 / np.sqrt(6.0))
    assert got == (np.median(values), np.percentile(values, 1), np.percentile(values, 99), noise)
    assert peak < 16 * MB                           # half of one copy of the signal


def test_npz_columns_of_any_number_type_become_float64_in_si(tmp_path):
    path = tmp_path / "c.npz"
    t_ms = np.arange(100, dtype=np.int32)
    x_mm = (np.arange(100) % 10).astype(np.float16)
    with open(path, "wb") as fh:
        np.savez(fh, t_ms=t_ms, x_mm=x_mm, force_N=np.linspace(0, 1, 100, dtype=np.float32))
    cap = load_capture(path)
    assert cap.t_s.dtype == cap.x_m.dtype == cap.f_N.dtype == np.float64
    assert np.array_equal(cap.t_s, t_ms * 1e-3)
    assert np.array_equal(cap.x_m, x_mm.astype(np.float64) * 1e-3)
    assert np.array_equal(cap.f_N, np.linspace(0, 1, 100, dtype=np.float32).astype(np.float64))

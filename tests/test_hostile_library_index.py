"""A key library's ``index.json`` that fights back: a link to ``/dev/zero``, a FIFO, 200,000 nested brackets,
an oversize file, millions of empty objects. Each is refused by ``hapticam library nearest|compare`` with one
line on stderr and exit code 2, in under 5 s of processor time and 500 MB of peak memory; an index with brackets
inside its strings or a few levels of nesting is still read. The count of nesting and values that decides is
checked against the values of any JSON document.

Each command runs in a child process that reports its exit code, processor time (user + system) and peak
resident memory (``VmHWM``); its address space is capped at 3 GB so that a reader without a bound fails
there instead of taking the machine's memory, and a child still running after 60 s (blocked on a FIFO) fails
the test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

LIMIT_S = 5.0
LIMIT_MB = 500.0
WALL_LIMIT_S = 60.0
QUERY = "example:gateron-brown"

_CHILD = """
import contextlib, json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
from hapticam.cli import main
def hwm_mb():
    return int([l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]) / 1024.0
report, argv = sys.argv[1], sys.argv[2:]
r0 = resource.getrusage(resource.RUSAGE_SELF)
code = main(argv)
r1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
with open(report, "w") as fh:
    json.dump({"code": code, "seconds": cpu, "peak_mb": hwm_mb()}, fh)
"""


def _run(tmp_path, *argv: str) -> dict:
    """Run ``hapticam ARGV`` in a child; its exit code, stdout, stderr, processor seconds and peak MB."""
    report = tmp_path / "report.json"
    env = {**os.environ, "NUMBA_CACHE_DIR": os.environ.get("NUMBA_CACHE_DIR", "/tmp/nbc_hard"),
           "OPENBLAS_NUM_THREADS": "1"}
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(report), *argv], capture_output=True, text=True,
                              timeout=WALL_LIMIT_S, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hapticam {' '.join(argv)}: still running after {WALL_LIMIT_S} s")
    assert report.exists(), done.stderr[-2000:]
    return {**json.loads(report.read_text()), "stdout": done.stdout, "stderr": done.stderr}


def _assert_refused(result: dict, *words: str) -> None:
    assert result["seconds"] < LIMIT_S and result["peak_mb"] < LIMIT_MB, result
    assert result["code"] == 2, result
    lines = result["stderr"].strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result["stderr"], result["stderr"][-2000:]
    for w in words:
        assert w in lines[0], lines[0]


def _entry(name: str, source: str = "synthetic.csv") -> dict:
    """A valid ``ok`` entry of the index schema, with the features of a light tactile key."""
    features = {"preload_N": 0.3, "actuation_force_N": 0.55, "pretravel_m": 0.0015, "total_travel_m": 0.004,
                "bump_peak_N": 0.6, "bump_drop_N": 0.15, "hysteresis_N": 0.08, "travel_stiffness_Npm": 60.0,
                "drop_steepness_Npm": 500.0}
    return {"name": name, "key": "0" * 24, "source": source, "status": "ok", "licence": "CC0",
            "capture_source": source, "model": f"models/{name}.yaml", "thumbnail": f"thumbs/{name}.png",
            "samples": 2000, "fit_percent": 95.0, "holdout_fit_percent": None, "verify_fit_percent": 94.0,
            "verify_passed": True, "passive": True, "features": features}


def _index(entries: list) -> dict:
    return {"format": "hapticam-library", "schema_version": 1, "entries": entries}


def _commands(library) -> list[list[str]]:
    """The commands that read the index: nearest (LIBRARY_DIR), compare (LIBRARY_DIR/NAME) and a model named
    ``library:DIR/NAME`` (models/files.py's reader)."""
    return [["library", "nearest", str(library), QUERY], ["library", "compare", str(library / "some-key"), QUERY],
            ["model", "show", f"library:{library}/some-key"]]


@pytest.fixture(params=[0, 1, 2], ids=["nearest", "compare", "library-model"])
def command(request):
    return lambda library: _commands(library)[request.param]


def test_an_index_linked_to_dev_zero_is_refused(tmp_path, command):
    library = tmp_path / "lib"
    library.mkdir()
    (library / "index.json").symlink_to("/dev/zero")           # was: read until memory ran out
    _assert_refused(_run(tmp_path, *command(library)), "index.json")


def test_an_index_that_is_a_fifo_is_refused_without_blocking(tmp_path, command):
    library = tmp_path / "lib"
    library.mkdir()
    os.mkfifo(library / "index.json")                           # nobody writes: a read would block forever
    _assert_refused(_run(tmp_path, *command(library)), "index.json")


def test_two_hundred_thousand_nested_brackets_are_refused(tmp_path, command):
    library = tmp_path / "lib"
    library.mkdir()
    (library / "index.json").write_text("[" * 200_000 + "]" * 200_000)   # was: RecursionError traceback
    _assert_refused(_run(tmp_path, *command(library)), "index.json")


def test_deep_nesting_inside_a_valid_index_is_refused(tmp_path):
    library = tmp_path / "lib"
    library.mkdir()
    text = json.dumps(_index([_entry("some-key")]))
    text = text.replace('"passive": true', '"passive": true, "notes": ' + "[" * 5000 + "]" * 5000, 1)
    (library / "index.json").write_text(text)
    _assert_refused(_run(tmp_path, *_commands(library)[0]), "index.json")


@pytest.mark.parametrize("times", [1, 8])
def test_an_index_over_the_size_limit_is_refused_before_it_is_read(tmp_path, times):
    from hapticam.models.files import MAX_INDEX_BYTES

    library = tmp_path / "lib"
    library.mkdir()
    with open(library / "index.json", "wb") as fh:              # sparse: no disk space taken
        fh.write(b"[")
        fh.truncate(times * MAX_INDEX_BYTES + 1)                # 8 times: was read whole, 1 GB
    _assert_refused(_run(tmp_path, *_commands(library)[0]), "index.json")


def test_millions_of_empty_objects_are_refused_within_memory(tmp_path):
    # 60 MB of '{},' under the 64 MiB size limit: 20 million dicts, 1.5 GB once built
    library = tmp_path / "lib"
    library.mkdir()
    n = 20_000_000
    with open(library / "index.json", "wb") as fh:
        fh.write(b'{"format": "hapticam-library", "schema_version": 1, "entries": [')
        fh.write(b"{}," * (n - 1) + b"{}]}")
    _assert_refused(_run(tmp_path, *_commands(library)[0]), "index.json")


def test_brackets_inside_strings_and_shallow_nesting_are_read(tmp_path):
    # the controls: what the bounds must not refuse (the query is an entry: no model to evaluate)
    library = tmp_path / "lib"
    library.mkdir()
    entry = _entry("bracket-key", source="[" * 100_000 + '\\"{' * 1000 + "}" * 5)
    text = json.dumps(_index([entry, _entry("other-key")]))
    text = text.replace('"passive": true', '"passive": true, "notes": ' + "[" * 8 + "1" + "]" * 8, 1)
    (library / "index.json").write_text(text)
    result = _run(tmp_path, "library", "nearest", str(library), str(library / "other-key"), "--json")
    assert result["code"] == 0, result["stderr"][-2000:]
    ranked = [r["name"] for r in json.loads(result["stdout"])["nearest"]]
    assert sorted(ranked) == ["bracket-key", "other-key"]
    assert result["seconds"] < LIMIT_S and result["peak_mb"] < LIMIT_MB, result


# -- the shape count against the values themselves ---------------------------------------------------------
_TEXT = st.text(alphabet=st.sampled_from('ab"\\[]{},: \n\té€𝄞'), max_size=12)
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                     | _TEXT, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                     max_leaves=25)


def _depth(value) -> int:
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    return 0 if children is None else 1 + max((_depth(c) for c in children), default=0)


def _counts(value) -> tuple[int, int]:
    """(values: containers, keys and items, counted recursively; empty containers) of ``value``."""
    if isinstance(value, dict):
        inner = [_counts(v) for v in value.values()]
        return 1 + len(value) + sum(c[0] for c in inner), (not value) + sum(c[1] for c in inner)
    if isinstance(value, list):
        inner = [_counts(v) for v in value]
        return 1 + sum(c[0] for c in inner), (not value) + sum(c[1] for c in inner)
    return 1, 0


@settings(max_examples=60, deadline=None)
@given(_JSON, st.booleans(), st.sampled_from([None, 1]), st.sampled_from([2, 3, 7, 64]))
def test_json_shape_counts_the_nesting_and_values_of_any_json(value, ascii_only, indent, chunk_bytes):
    # small chunks put chunk ends inside strings, escapes and runs of backslashes
    from hapticam.bounded_json import json_shape

    raw = json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode()
    values, empty = _counts(value)
    depth, counted = json_shape(raw, 10**6, 10**9, chunk_bytes=chunk_bytes)
    assert depth == _depth(value)
    assert counted == values + raw.count(b"\\") + empty

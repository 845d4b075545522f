"""Shared test settings: where the real switch captures are.

The twelve captures in ``tests/data/switch_curves`` are bluepylons' Open-Switch-Curve-Meter
measurements (repository bluepylons/Open-Switch-Curve-Meter, CC-BY 4.0; credit: bluepylons), converted
to SI units; see the README there.
"""

from __future__ import annotations

from pathlib import Path

SWITCH_DIR = Path(__file__).resolve().parent / "data" / "switch_curves"
SWITCH_FILES = sorted(SWITCH_DIR.glob("*.csv"))

import re
import tomllib
from importlib import metadata

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def tested_versions() -> list[tuple[str, str]]:
    """Every dependency pyproject names (runtime and the test extra) with the version installed here."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    names: list[str] = []
    for requirement in project["dependencies"] + project["optional-dependencies"]["test"]:
        name = re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]
        if name not in names:
            names.append(name)
    out = []
    for name in names:
        try:
            out.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            out.append((name, "not installed"))
    return out


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    """Say which versions of the dependencies this run tested (shown with -q too, pass or fail)."""
    import platform

    terminalreporter.write_line(f"tested with Python {platform.python_version()}, "
                                + ", ".join(f"{n} {v}" for n, v in tested_versions()))


import contextlib
import io
import json

import pytest

#: ``hapticam bench identify`` as the tests run it: quick (below 100,000 samples), one repeat
BENCH_IDENTIFY = ["bench", "identify", "--samples", "2000", "--repeat", "1"]


def _bench_identify(tmp_path_factory, *extra: str, captures: tuple[str, ...] = ()) -> tuple[int, str, str, dict]:
    """``BENCH_IDENTIFY`` with ``extra`` options, the pipeline timed on ``captures`` (names in ``SWITCH_DIR``;
    none: an empty folder) and a --json-file: (exit code, stdout, stderr, the file's JSON)."""
    import shutil

    from hapticam.cli import main

    folder = tmp_path_factory.mktemp("bench-identify")
    (folder / "captures").mkdir()
    for name in captures:
        shutil.copy(SWITCH_DIR / name, folder / "captures" / name)
    path = folder / "bench.json"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*BENCH_IDENTIFY, "--captures", str(folder / "captures"), "--json-file", str(path), *extra])
    return code, out.getvalue(), err.getvalue(), json.loads(path.read_text()) if path.exists() else {}


@pytest.fixture(scope="session")
def bench_identify_json(tmp_path_factory) -> tuple[int, str, str, dict]:
    """One ``hapticam bench identify --json`` run the tests share (the bench takes a minute even when quick)."""
    return _bench_identify(tmp_path_factory, "--json")


@pytest.fixture(scope="session")
def bench_identify_table(tmp_path_factory) -> tuple[int, str, str, dict]:
    """One ``hapticam bench identify`` run printing its table (the pipeline timed on one real capture),
    shared like :func:`bench_identify_json`."""
    return _bench_identify(tmp_path_factory, captures=("Cherry-MX-Red.csv",))

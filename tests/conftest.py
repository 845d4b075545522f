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

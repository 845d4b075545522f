"""Every subpackage of the source tree is installed (pyproject's explicit package list)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_in_the_package_list():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"hapticam" + ("." + ".".join(p.parent.relative_to(ROOT).parts) if p.parent != ROOT else "")
             for p in ROOT.rglob("__init__.py")
             if not ({"tests", ".venv", "build"} & set(p.relative_to(ROOT).parts)) and not any(
                 part.startswith(".") for part in p.relative_to(ROOT).parts)}
    assert found - listed == set(), "not installed"
    assert listed - found == set(), "listed but absent"


def test_the_licence_pyproject_declares_is_shipped_beside_it():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]
    text = (ROOT / "LICENSE").read_text()
    assert declared == "MIT" and text.startswith("MIT License")
    assert "bluepylons" in text and "CC-BY 4.0" in text        # the data's own licence, credited


def test_a_quiet_run_names_the_dependency_versions_it_tested():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/test_packaging.py::test_every_subpackage_is_in_the_package_list"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    line = next((l for l in done.stdout.splitlines() if l.startswith("tested with Python")), "")
    for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        name = requirement.split(">")[0].split("=")[0].split("<")[0].strip()
        assert f" {name} " in line, (name, done.stdout)

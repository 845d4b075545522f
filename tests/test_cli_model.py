"""``hapticam`` CLI frame and ``hapticam model ...`` (issue 2, "CLI")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hapticam import __version__
from hapticam.cli import main
from hapticam.models.files import load_model


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0                      # argparse's exit becomes main's return code
    assert __version__ in capsys.readouterr().out
    assert main(["--help"]) == 0
    assert "model" in capsys.readouterr().out
    assert main(["model", "show"]) == 2                  # a usage error: one line, exit code 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["linear-key", "tactile-key", "piano-key"])
def test_model_show_and_validate_examples(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, _ = run(capsys, "model", "show", f"example:{name}")
    assert code == 0
    assert "kind:" in out and "provenance:" in out and "passivity:" in out
    code, out, _ = run(capsys, "model", "validate", f"example:{name}")
    assert code == 0 and "valid" in out


def test_convert_round_trip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, _ = run(capsys, "model", "convert", "example:tactile-key", str(tmp_path / "k.msgpack"))
    assert code == 0
    code, _, _ = run(capsys, "model", "convert", str(tmp_path / "k.msgpack"), str(tmp_path / "k.yaml"))
    assert code == 0
    assert load_model(tmp_path / "k.yaml")[1].to_dict() == load_model("example:tactile-key")[1].to_dict()
    code, out, _ = run(capsys, "model", "show", "--json", str(tmp_path / "k.msgpack"))
    assert json.loads(out)["kind"] == "composite"


@pytest.mark.parametrize("argv, message", [
    (["model", "validate", "missing.yaml"], "no such file"),
    (["model", "show", "example:unknown"], "unknown example"),
    (["model", "convert", "example:linear-key", "out.txt"], "must end in .yaml or .msgpack"),
    (["model", "frobnicate"], "'frobnicate'"),              # the refused word, not argparse's wording of it
    (["nosuchcommand"], "'nosuchcommand'"),
])
def test_user_errors_exit_2_with_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert not (tmp_path / "out.txt").exists()


def _reverse_first_breakpoints(node: object) -> bool:
    if isinstance(node, dict):
        if "breakpoints_m" in node:
            node["breakpoints_m"] = node["breakpoints_m"][::-1]
            return True
        return any(_reverse_first_breakpoints(v) for v in node.values())
    if isinstance(node, list):
        return any(_reverse_first_breakpoints(v) for v in node)
    return False


def test_invalid_model_file_exits_2_and_names_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import yaml

    doc = load_model("example:tactile-key")[1].to_dict()
    assert _reverse_first_breakpoints(doc)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, _, err = run(capsys, "model", "validate", str(path))
    assert code == 2 and err.startswith("hapticam: error:") and len(err.strip().splitlines()) == 1
    assert "breakpoints_m" in err and "increasing" in err


def test_console_script_has_no_traceback(tmp_path: Path) -> None:
    exe = str(Path(sys.executable).with_name("hapticam"))       # installed beside the interpreter by pip
    assert Path(exe).exists()
    proc = subprocess.run([exe, "model", "validate", str(tmp_path / "x.yaml")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "no such file" in proc.stderr

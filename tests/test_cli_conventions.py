"""Every subcommand: --help exits 0, an unknown option is one line and exit 2, and every command that
reports takes --json, printing one JSON object on stdout and nothing else there."""

from __future__ import annotations

import argparse
import json

import pytest

from hapticam.cli import build_parser, main

from conftest import SWITCH_DIR

CAPTURE = str(SWITCH_DIR / "Gateron-Brown.csv")


def _subcommands() -> list[list[str]]:
    """Every leaf command path, e.g. ['bench', 'render'] or ['library', 'build']."""
    out = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out.append(path)
            return
        for name, child in subs[0].choices.items():
            walk(child, path + [name])

    walk(build_parser(), [])
    return out


COMMANDS = _subcommands()


def test_the_command_tree_is_what_the_readme_lists():
    names = {" ".join(c) for c in COMMANDS}
    for expected in ("demo", "probe", "identify impedance", "render", "monitor", "verify", "plot", "model show",
                     "bench render", "bench identify", "bench probe", "bench library", "library build"):
        assert expected in names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p))
def test_help_exits_0_and_an_unknown_option_is_one_line_and_exit_2(path, capsys):
    assert main([*path, "--help"]) == 0
    assert capsys.readouterr().out.strip()
    assert main([*path, "--no-such-option"]) == 2
    captured = capsys.readouterr()
    assert len(captured.err.strip().splitlines()) == 1 and captured.err.startswith("hapticam: error:")
    assert captured.out == ""


def _json_runs(tmp):
    return {
        "probe": ["probe", "linear-switch", "--excitation", "triangle", "-o", str(tmp / "p.csv"), "--json"],
        "identify impedance": ["identify", "impedance", CAPTURE, "-o", str(tmp / "m.yaml"), "--json"],
        "render": ["render", "example:linear-key", "--simulated-clock", "--duration", "0.2", "--json"],
        "verify": ["verify", "example:gateron-brown", CAPTURE, "--json"],
        "demo": ["demo", "--sweep-seconds", "5", "--out", str(tmp / "demo"), "--json"],
        "model show": ["model", "show", "example:linear-key", "--json"],
        "bench probe": ["bench", "probe", "--duration", "1", "--peer-seconds", "0.02", "--json"],
        "bench render": ["bench", "render", "--seconds", "0.2", "--json"],
    }


@pytest.mark.parametrize("name", ["probe", "identify impedance", "render", "verify", "demo", "model show",
                                  "bench identify", "bench probe", "bench render"])
def test_json_is_one_object_on_stdout_and_nothing_else(name, tmp_path, capsys, request):
    if name == "bench identify":                             # one run shared with the bench's own tests
        code, out, _, _ = request.getfixturevalue("bench_identify_json")
    else:
        code = main(_json_runs(tmp_path)[name])
        out = capsys.readouterr().out
    assert code in (0, 1)                                    # 1: a verification or demo verdict of FAIL
    data = json.loads(out)                                   # the whole of stdout parses
    assert isinstance(data, dict) and data


@pytest.mark.parametrize("value", ["-1", "-0.5", "-.5", "-1e-3", "-2.5E+1", "-1.e2"])
def test_a_negative_number_in_any_notation_is_an_options_value(value):
    args = build_parser().parse_args(["verify", "example:gateron-brown", CAPTURE, "--x-offset-mm", value])
    assert args.x_offset_mm == float(value)


@pytest.mark.parametrize("value", ["-x", "-1e", "--1", "-e5"])
def test_what_is_not_a_number_after_an_option_still_reads_as_an_option(value, capsys):
    assert main(["verify", "example:gateron-brown", CAPTURE, "--x-offset-mm", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()     # argparse's own wording varies by Python release
    assert len(err) == 1 and err[0].startswith("hapticam: error:") and "--x-offset-mm" in err[0], err

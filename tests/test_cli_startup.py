"""Start-up of the command line: ``hapticam --help`` and a light command import none of scipy, numba or
matplotlib, the parser built for one command line helps exactly as the whole tree does, and
``hapticam bench cli`` times each command beside ``python -c pass`` and ``python -c "import numpy"``."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

from hapticam.cli import build_parser, main

HEAVY = ("scipy", "numba", "matplotlib")


def _run_and_list_modules(argv: list[str]) -> tuple[int, list[str]]:
    """``main(argv)`` in a fresh interpreter: its exit code and the modules it had imported by the end."""
    script = ("import contextlib, io, json, sys\n"
              "from hapticam.cli import main\n"
              "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
              f"    code = main({argv!r})\n"
              "print(json.dumps([code, sorted(sys.modules)]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    code, modules = json.loads(done.stdout)
    return code, modules


@pytest.mark.parametrize("argv", [["--help"], ["--version"], [], ["nope"], ["bench", "--help"], ["bench", "cli", "--help"],
                                  ["probe", "--help"], ["demo", "--help"], ["render", "--help"], ["monitor", "--help"],
                                  ["device", "serve", "--help"]], ids=lambda a: " ".join(a) or "(none)")
def test_the_top_level_parser_and_a_light_command_import_no_scipy_numba_or_matplotlib(argv):
    code, modules = _run_and_list_modules(argv)
    assert code == (2 if argv == ["nope"] else 0)
    assert [m for m in modules if m.split(".")[0] in HEAVY] == []


def test_identify_help_builds_no_estimator_of_the_other_identify_commands():
    code, modules = _run_and_list_modules(["identify", "impedance", "--help"])
    assert code == 0
    for module in ("hapticam.identify.contact.fit", "hapticam.identify.friction.product", "scipy.optimize",
                   "scipy.signal", "matplotlib", "hapticam.render.verify.compare"):
        assert module not in modules


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """``(path, parser)`` of the parser and every sub-parser under it, e.g. ``(('bench', 'cli'), ...)``."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, (*path, name))


WHOLE_TREE = dict(_parsers(build_parser()))


@pytest.mark.parametrize("path", list(WHOLE_TREE), ids=lambda p: " ".join(p) or "hapticam")
def test_the_parser_built_for_one_command_line_helps_as_the_whole_tree_does(path):
    own = dict(_parsers(build_parser([*path, "--help"])))
    assert own[path].format_help() == WHOLE_TREE[path].format_help()


def test_the_names_the_command_line_offers_are_those_the_library_takes():
    from hapticam.commands import probe as devices_cli
    from hapticam.world.excitations import EXCITATION_KINDS
    from hapticam.commands import identify_more as cli_more
    from hapticam.identify.contact import fit as contact_fit
    from hapticam.commands import identify_friction as friction_cli
    from hapticam.identify.friction import product

    assert devices_cli.EXCITATION_KINDS == EXCITATION_KINDS
    assert (cli_more.ESTIMATORS, cli_more.LAWS) == (contact_fit.ESTIMATORS, contact_fit.LAWS)
    assert friction_cli.LAWS == product.LAWS


@pytest.mark.skipif(not (hasattr(os, "fork") and hasattr(os, "wait4")), reason="peak memory needs fork and wait4")
def test_a_commands_peak_memory_is_its_own_not_the_benchs():
    from hapticam.commands.demo_bench import child_env, run_once

    ballast = b"x" * (300 * 2 ** 20)                          # the bench holding 300 MiB
    small = run_once([sys.executable, "-c", "pass"], child_env())
    large = run_once([sys.executable, "-c", "b = b'x' * (200 * 2 ** 20)"], child_env())
    assert len(ballast) and small["exit_code"] == 0 and large["exit_code"] == 0
    assert small["peak_rss_MiB"] < 100.0 < 200.0 < large["peak_rss_MiB"]


@pytest.fixture(scope="module")
def bench_cli(tmp_path_factory):
    """``hapticam bench cli --repeat 1 --json --json-file FILE``: (stdout, the file's JSON)."""
    path = tmp_path_factory.mktemp("bench-cli") / "cli.json"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["bench", "cli", "--repeat", "1", "--json", "--json-file", str(path)])
    assert code == 0, err.getvalue()
    return out.getvalue(), json.loads(path.read_text())


def test_bench_cli_prints_one_json_object_the_file_holds_too(bench_cli):
    stdout, data = bench_cli
    assert json.loads(stdout) == data


def test_bench_cli_times_the_commands_beside_both_peers_with_ratios(bench_cli):
    data = bench_cli[1]
    rows = {r["name"]: r for r in data["rows"]}
    python, numpy = rows[data["peers"]["python"]], rows[data["peers"]["numpy"]]
    assert python["peer"] and numpy["peer"] and python["argv"] == ["-c", "pass"]
    assert {"hapticam --version", "hapticam --help", "hapticam identify impedance --help",
            "hapticam identify impedance CAPTURE -o MODEL", "hapticam model show example:gateron-brown",
            "hapticam verify example:gateron-brown CAPTURE"} <= set(rows)
    for row in rows.values():
        assert row["wall_s"] > 0 and len(row["wall_s_runs"]) == 1
        assert row["wall_over_python"] == pytest.approx(row["wall_s"] / python["wall_s"])
        assert row["wall_over_numpy"] == pytest.approx(row["wall_s"] / numpy["wall_s"])
    assert python["wall_over_python"] == numpy["wall_over_numpy"] == 1.0
    assert rows["hapticam identify impedance CAPTURE -o MODEL"]["exit_codes"] == [0]
    if python["peak_rss_MiB"] is not None:                    # numpy's arrays and libraries outweigh the interpreter
        assert python["peak_rss_MiB"] < numpy["peak_rss_MiB"] < rows["hapticam identify impedance CAPTURE -o MODEL"][
            "peak_rss_MiB"]
        assert numpy["rss_over_numpy"] == 1.0


@pytest.mark.parametrize("argv", [["--repeat", "0"], ["--capture", "no-such-capture.csv"],
                                  ["--json-file", "no-such-folder/cli.json"]])
def test_bench_cli_refuses_bad_options_in_one_line_naming_the_option(argv, capsys):
    assert main(["bench", "cli", *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"hapticam: error: {argv[0]}")

"""The ``hapticam`` command line.

Each subpackage contributes its subcommands through a ``register(subparsers, bench)`` function in its
own ``cli`` module; the ``bench`` group is built here once and handed to each, so any subpackage adds
``hapticam bench NAME`` without reaching into another's parser. Every user error (any :class:`~hapticam.errors.HapticError`, or a bad argument) ends
in one line on stderr and exit code 2; ``--debug`` shows the traceback first (still exit code 2).

Start-up: :data:`COMMANDS` and :data:`BENCHES` name every command, its help line and the module that
registers it, so ``hapticam --help`` imports no command's module and ``hapticam NAME ...`` imports NAME's
alone (:func:`build_parser` given the command line); its other commands stand in the parser as their help
line. ``hapticam bench cli`` times it.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import traceback
from typing import Any, Sequence

from hapticam._version import __version__
from hapticam.errors import HapticError, missing_subcommand

BENCH_HELP = "benchmarks (each runs its peer in the same run and reports ratios)"

#: The top-level commands in help order: (name, help line, module whose ``register`` adds it); ``bench``
#: is the group built here. ``tests/test_cli_startup.py`` checks the lines against the modules' own.
COMMANDS = (
    ("bench", BENCH_HELP, None),
    ("demo", "probe -> identify -> render -> verify on a simulated keyswitch (no hardware)", "hapticam.commands.demo"),
    ("probe", "probe a simulated target, or a real object with a device, and write a capture", "hapticam.commands.probe"),
    ("devices", "list the device adapters, whether their drivers are present, how to install them",
     "hapticam.commands.probe"),
    ("device", "serve a device to other processes or machines", "hapticam.commands.serve"),
    ("identify", "identify models from probe captures", "hapticam.commands.identify"),
    ("reproduce", "run a paper's experiment and compare with the paper's numbers", "hapticam.commands.identify"),
    ("render", "render a model on a haptic device (1 kHz servo loop)", "hapticam.commands.render"),
    ("monitor", "print live telemetry of a running render", "hapticam.commands.render"),
    ("recover", "complete files a killed render, probe or meter recording left behind", "hapticam.render.recover"),
    ("verify", "replay a capture's probe trajectory on the rendered model and compare forces",
     "hapticam.commands.verify"),
    ("plot", "plot captures, recordings and models (F-x per direction, F and x against time)",
     "hapticam.commands.verify"),
    ("library", "a library of identified keys: build, nearest, compare", "hapticam.commands.library"),
    ("model", "show, convert and validate model files", "hapticam.commands.model"),
)

#: The ``hapticam bench`` group in help order, as :data:`COMMANDS`.
BENCHES = (
    ("probe", "compiled probe simulation vs the same loop in pure Python (90 s sweep, 4 kHz)", "hapticam.commands.probe"),
    ("identify", "EWLS core vs padasip RLS and numpy batch least squares (360,000 samples)", "hapticam.commands.identify"),
    ("render", "servo loop timing: hapticam vs a plain Python loop, idle and under load", "hapticam.commands.render"),
    ("soak", "a long real-time render under control requests, telemetry and model swaps", "hapticam.render.soak"),
    ("library", "catalogue rebuild throughput: 1 and 2 processes, a Dask LocalCluster",
     "hapticam.commands.library"),
    ("cli", "command-line start-up: wall time and peak memory per command beside python and numpy",
     "hapticam.commands.demo_bench"),
)

#: Every module with a ``register(subparsers, bench)``, in the order that builds the whole tree in help order.
COMMAND_MODULES = (
    "hapticam.commands.demo",
    "hapticam.commands.probe",
    "hapticam.commands.serve",
    "hapticam.commands.identify",
    "hapticam.commands.render",
    "hapticam.render.recover",
    "hapticam.render.soak",
    "hapticam.commands.verify",
    "hapticam.commands.library",
    "hapticam.commands.model",
    "hapticam.commands.demo_bench",
)

EXIT_USAGE = 2

#: an option's value that is a negative number, scientific notation included: argparse's own pattern
#: (``^-\d+$|^-\d*\.\d+$`` on Python 3.11) reads ``--x-offset-mm -1e-3`` as an option without its value
NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit code 2 (argparse's own code), and which takes
    any negative number, ``-1e-3`` included, as an option's value (:data:`NEGATIVE_NUMBER`)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"hapticam: error: {message} (see '{self.prog} --help')\n")


class _Only:
    """A subparsers action as one module's ``register`` sees it when a single command is wanted: the parser
    named ``keep`` goes into ``real``; any other (every one when ``real`` is None) is built apart and dropped."""

    def __init__(self, real: argparse._SubParsersAction | None, keep: str | None = None) -> None:
        self.real, self.keep = real, keep

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if self.real is not None and name == self.keep:
            return self.real.add_parser(name, **kwargs)
        kwargs = {k: v for k, v in kwargs.items() if k not in ("help", "aliases")}
        return _Parser(**{"prog": name, **kwargs})


def _register(module: str, sub: Any, bench: Any) -> None:
    importlib.import_module(module).register(sub, bench)


def _wanted(argv: Sequence[str]) -> tuple[str | None, str | None]:
    """The command and, under ``bench``, the benchmark that ``argv`` names: its first and second words that
    are not options (neither the top level nor the bench group has an option that takes a value)."""
    words = [w for w in argv if not w.startswith("-")]
    command = words[0] if words else None
    return command, (words[1] if command == "bench" and len(words) > 1 else None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command-line parser. Without ``argv``, every command's own parser (every command module is
    imported); with ``argv``, only the command it names (and under ``bench``, the benchmark) is built by its
    module, and the others are their name and help line (``hapticam --help`` imports none of them)."""
    parser = _Parser(prog="hapticam",
                     description="Identify haptic models of real keys and switches, render them at 1 kHz, "
                                 "and verify the rendering against the real object.")
    parser.add_argument("--version", action="version", version=f"hapticam {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    if argv is None:
        bench = _bench_group(sub)
        for module in COMMAND_MODULES:
            _register(module, sub, bench)
        return parser
    command, benchmark = _wanted(argv)
    for name, help_line, module in COMMANDS:
        if name == "bench":
            bench = _bench_group(sub)
            for bench_name, bench_help, bench_module in BENCHES:
                if command == "bench" and bench_name == benchmark:
                    _register(bench_module, _Only(None), _Only(bench, bench_name))
                else:
                    bench.add_parser(bench_name, help=bench_help)
        elif name == command:
            _register(module, _Only(sub, name), _Only(None))
        else:
            sub.add_parser(name, help=help_line)
    return parser


def _bench_group(sub: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add ``hapticam bench`` and return its subparsers, where each module adds its benchmarks."""
    bench_parser = sub.add_parser("bench", help=BENCH_HELP, description="Benchmarks that ship with hapticam.")
    bench = bench_parser.add_subparsers(dest="bench", metavar="BENCH", parser_class=_Parser)
    bench_parser.set_defaults(func=lambda args: missing_subcommand(bench_parser.prog))
    return bench


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 1 check failed, 2 user error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE if args.command is None and argv else 0
        code = args.func(args)
        return int(code or 0)
    except HapticError as exc:
        if debug:
            traceback.print_exc()
        print(f"hapticam: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("hapticam: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit as exc:               # argparse's --help (0) and usage errors (2), as a return code
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

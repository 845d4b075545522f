"""The ``hapticam`` command line.

Each subpackage contributes its subcommands through a ``register(subparsers, bench)`` function in its
own ``cli`` module; the ``bench`` group is built here once and handed to each, so any subpackage adds
``hapticam bench NAME`` without reaching into another's parser. Every user error (any :class:`~hapticam.errors.HapticError`, or a bad argument) ends
in one line on stderr and exit code 2; ``--debug`` shows the traceback first (still exit code 2).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import traceback
from typing import Sequence

from hapticam._version import __version__
from hapticam.errors import HapticError, missing_subcommand

#: Modules whose ``register(subparsers, bench)`` adds subcommands, in help order.
COMMAND_MODULES = (
    "hapticam.demos.cli",
    "hapticam.devices.cli",
    "hapticam.devices.serve_cli",
    "hapticam.identify.cli",
    "hapticam.render.cli",
    "hapticam.render.verify.cli",
    "hapticam.render.verify.library.cli",
    "hapticam.models.cli",
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


def build_parser() -> argparse.ArgumentParser:
    """Build the full parser with every subpackage's subcommands."""
    parser = _Parser(prog="hapticam",
                     description="Identify haptic models of real keys and switches, render them at 1 kHz, "
                                 "and verify the rendering against the real object.")
    parser.add_argument("--version", action="version", version=f"hapticam {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    bench_parser = sub.add_parser("bench", help="benchmarks (each runs its peer in the same run and reports ratios)",
                                  description="Benchmarks that ship with hapticam.")
    bench = bench_parser.add_subparsers(dest="bench", metavar="BENCH", parser_class=_Parser)
    bench_parser.set_defaults(func=lambda args: missing_subcommand(bench_parser.prog))
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub, bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 1 check failed, 2 user error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        parser = build_parser()
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

"""Reproduce a paper's experiment: its figures, and our numbers beside the paper's.

Reproduction is a command (``hapticam reproduce``), so this script runs it the way a person would: it
lists the experiments, then runs one (default: the thermostat of Patoglu & Gillespie, trajectory
sensitivity with switching-time sensitivity, whose switching times have closed forms) in the reduced form
the test suite uses, writing its figures (PNG) and printing its table of quantities, ours against the
paper's.

    python examples/reproduce_paper.py [OUT_DIR] [--experiment NAME] [--full]

Writes ``OUT_DIR/NAME/*.png`` (default OUT_DIR: a new temporary folder). ``--full`` runs the experiment
as the command does by default (longer).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path


def hapticam_command(*arguments: str) -> None:
    """Run ``hapticam ARGUMENTS`` with this Python; its output goes to this script's; stop on failure."""
    subprocess.run([sys.executable, "-m", "hapticam", *arguments], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", help="folder for the figures (default: a new temporary one)")
    parser.add_argument("--experiment", default="seed000-thermostat", help="a name from hapticam reproduce --list")
    parser.add_argument("--full", action="store_true", help="the full run instead of the reduced one")
    args = parser.parse_args()
    out_dir = Path(args.out_dir or tempfile.mkdtemp(prefix="hapticam-reproduce-"))

    hapticam_command("reproduce", "--list")
    print(flush=True)
    hapticam_command("reproduce", args.experiment, "-o", str(out_dir), *([] if args.full else ["--quick"]))


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as error:         # the command has said why on stderr
        sys.exit(error.returncode)

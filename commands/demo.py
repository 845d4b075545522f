"""``hapticam demo``: the haptic camera end to end on the built-in simulator."""

from __future__ import annotations

import argparse
import json
import sys

from hapticam.commands.probe import seed_arg
from hapticam.fileio import json_safe


def register(sub: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    """Add ``hapticam demo``."""
    p = sub.add_parser(
        "demo", help="probe -> identify -> render -> verify on a simulated keyswitch (no hardware)",
        description="Run the haptic camera end to end on the built-in simulator: probe a simulated target "
                    "with a swept sine, identify a segmented impedance model, render it in the servo loop, "
                    "and verify it against a held-out probing. Writes the captures, the model file and the "
                    "verification report into --out. Exit 0 when the verification passes, 1 when not. In a "
                    "terminal each stage says on stderr what it is doing (and, on a first run, what it compiles).")
    p.add_argument("--target", default=None, help="simulated target (default tactile-switch; see 'hapticam probe --list')")
    p.add_argument("--capture", metavar="FILE", default=None,
                   help="use a real capture instead of probing a simulated target: identify from part of it and "
                        "verify against the part held out (its last press/release cycle, or every fifth sample "
                        "of a single stroke), e.g. a file of tests/data/switch_curves in the repository")
    p.add_argument("-o", "--out", metavar="DIR", default="hapticam-demo",
                   help="output folder (default ./hapticam-demo)")
    p.add_argument("--sweep-seconds", type=float, default=90.0, help="swept-sine duration in s (default 90, seed 001)")
    p.add_argument("--seed", type=seed_arg, default=0, help="random seed of the simulated sensors (default 0)")
    p.add_argument("--json", action="store_true",
                   help="print each stage's numbers and the files written as one JSON object (progress on stderr)")
    p.set_defaults(func=_cmd_demo)


#: the parameters of :func:`~hapticam.demos.camera.run_camera` said as ``demo``'s flags
DEMO_FLAGS = {"target": "--target", "out_dir": "--out"}


def _cmd_demo(args: argparse.Namespace) -> int:
    import math

    from hapticam.demos.camera import DEFAULT_TARGET, run_camera
    from hapticam.errors import UsageError, parameters_as_flags

    if args.capture is not None and args.target is not None:
        raise UsageError("give either --target or --capture, not both")
    if not (math.isfinite(args.sweep_seconds) and 1.0 <= args.sweep_seconds <= 3600.0):
        raise UsageError(f"--sweep-seconds: must be between 1 and 3600, got {args.sweep_seconds}")
    say = (lambda line: print(line, file=sys.stderr)) if args.json else print   # stdout: only the JSON
    with parameters_as_flags(DEMO_FLAGS):
        run = run_camera(args.target or DEFAULT_TARGET, capture_path=args.capture, out_dir=args.out,
                         sweep_s=args.sweep_seconds, seed=args.seed, say=say)
    if args.json:
        print(json.dumps(json_safe({"passed": run.passed, "out_dir": str(run.out_dir), "stages": run.stages,
                                    "files": {k: str(v) for k, v in run.files.items()}})))
    return 0 if run.passed else 1

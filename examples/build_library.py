"""Build a small library of keys from captures, then search it by feel.

Three real switch captures (``tests/data/switch_curves/``: a tactile, a linear and a clicky switch;
bluepylons, Open-Switch-Curve-Meter, CC-BY 4.0) are each identified and verified into a library folder:
``index.json``, a browsable ``index.html``, and per key its model file, plot and entry. The library is
then asked which of its keys feels most like a fourth switch's capture (a tactile one), and what a person
would notice between two of its keys (differences in just-noticeable differences, JND).

    python examples/build_library.py [OUT_DIR] [--jobs N]

Writes ``OUT_DIR/library`` (default OUT_DIR: a new temporary folder). Building again into the same
folder skips the captures already built.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import hapticam

SWITCH_CURVES = Path(__file__).resolve().parent.parent / "tests" / "data" / "switch_curves"
CAPTURES = ["Gateron-Brown.csv", "Cherry-MX-Red.csv", "Cherry-MX-Blue-RGB.csv"]
QUERY = "Durock-JWK-Lilac-Tactile.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", help="folder for the library (default: a new temporary one)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (1: build in this process)")
    args = parser.parse_args()
    out_dir = Path(args.out_dir or tempfile.mkdtemp(prefix="hapticam-library-"))
    library = out_dir / "library"

    build = hapticam.build_library([SWITCH_CURVES / name for name in CAPTURES], library, jobs=args.jobs,
                                   quiet=True)
    print(f"library {library}: {build.entries} keys ({build.done} built, {build.skipped} already there, "
          f"{build.failed} failed)")
    for capture, reason in build.failures:
        print(f"  failed: {capture}: {reason}")

    print(f"nearest to {QUERY}:")
    for distance_jnd, entry in hapticam.library_nearest(library, SWITCH_CURVES / QUERY, n=len(CAPTURES)):
        print(f"  {entry['name']:<20} {distance_jnd:6.2f} JND")

    a, b = (library / Path(name).stem for name in CAPTURES[:2])
    comparison = hapticam.library_compare(a, b)
    print(f"{comparison['a']} against {comparison['b']}: {comparison['distance_jnd']:.2f} JND apart")
    for difference in comparison["noticeable"]:
        print(f"  - {difference}")


if __name__ == "__main__":
    try:
        main()
    except hapticam.HapticError as error:                   # bad input: one line, no traceback
        sys.exit(f"build_library: {error}")

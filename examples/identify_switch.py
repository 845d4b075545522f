"""Identify a real keyboard switch from a CSV capture and write its model file.

The capture is one slow press and release of a Gateron Brown (tactile) switch measured by the
Open-Switch-Curve-Meter (bluepylons, CC-BY 4.0; ``tests/data/switch_curves/``): columns ``t_s``, ``x_m``,
``force_N``. The fit is a passive segmented impedance model, F = m a + b v + k x + F0 per segment of travel
and per direction; the motion is quasi-static, so m and b are reported as not identifiable and fixed at 0.

    python examples/identify_switch.py [OUT_DIR] [--capture FILE.csv]

Writes ``OUT_DIR/<capture name>.yaml`` (default OUT_DIR: a new temporary folder) and prints the fit and the
model's force (N) at a few points of travel (mm) pressing and releasing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

import hapticam

SWITCH_CURVES = Path(__file__).resolve().parent.parent / "tests" / "data" / "switch_curves"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", help="folder for the model file (default: a new temporary one)")
    parser.add_argument("--capture", default=str(SWITCH_CURVES / "Gateron-Brown.csv"),
                        help="a capture file (.csv with t_s, x_m, force_N columns, or .npz)")
    args = parser.parse_args()
    out_dir = Path(args.out_dir or tempfile.mkdtemp(prefix="hapticam-identify-"))
    out_dir.mkdir(parents=True, exist_ok=True)

    capture = hapticam.load_capture(args.capture)
    print(f"capture {Path(args.capture).name}: {capture.n} samples at {capture.sample_rate_hz:g} Hz, "
          f"travel {1e3 * capture.x_m.min():.2f} to {1e3 * capture.x_m.max():.2f} mm")

    fit = hapticam.identify_impedance(capture)
    summary = fit.summary
    print(f"fit {summary['fit_percent']:.2f} % (rms {1e3 * summary['rms_N']:.1f} mN), "
          f"segments per direction {summary['segments']}")
    print("identifiable: " + ", ".join(f"{term} {'yes' if ok else 'no'}" for term, ok in fit.identifiable.items()))

    model_path = out_dir / f"{Path(args.capture).stem}.yaml"
    fit.save(model_path)
    model, document = hapticam.load_model(model_path)
    print(f"model file {model_path} ({document.kind}), passive: {hapticam.check_passivity(model).passive}")

    travel_m = np.linspace(0.0, capture.x_m.max(), 6)[1:-1]
    press_N = model.static_force(travel_m, 1)
    release_N = model.static_force(travel_m, -1)
    print("travel (mm)   press (N)   release (N)")
    for x, fp, fr in zip(travel_m, press_N, release_N):
        print(f"{1e3 * x:11.2f}   {fp:9.3f}   {fr:11.3f}")


if __name__ == "__main__":
    try:
        main()
    except hapticam.HapticError as error:                   # bad input: one line, no traceback
        sys.exit(f"identify_switch: {error}")

"""Verify a model against a capture it was not fitted to, and see what a failed verification says.

Probe the simulated tactile switch along a swept sine, identify a model from that capture, then probe a
slow press and release held out from the fit. ``verify`` replays the held-out capture's probe trajectory on
the rendered model and compares forces: the fit (>= 95 % to pass) and every feature a person
feels on a key (preload, bump, drop, bottom-out, hysteresis) against its discrimination threshold.
A bundled linear key's model, verified against the same tactile press, fails and says why.

    python examples/verify_model.py [OUT_DIR]

Writes the model and the captures to OUT_DIR (default: a new temporary folder).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import hapticam


def report(result: hapticam.VerifyResult) -> None:
    """Print a verification's verdict, fit and failures."""
    print(f"{result.model_name} against {result.capture_name}: {'passed' if result.passed else 'FAILED'}, "
          f"fit {result.fit_percent:.2f} %, rms error {1e3 * result.rms_N:.1f} mN")
    for failure in result.failures:
        print(f"  - {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", help="folder for the files written (default: a new temporary one)")
    args = parser.parse_args()
    out_dir = Path(args.out_dir or tempfile.mkdtemp(prefix="hapticam-verify-"))
    out_dir.mkdir(parents=True, exist_ok=True)

    training = hapticam.probe("tactile-switch", "sweep", duration_s=20.0)       # 1-4 Hz swept sine, 4 kHz
    hapticam.save_capture(out_dir / "sweep.npz", training)
    fit = hapticam.identify_impedance(training)
    fit.save(out_dir / "tactile.yaml")
    model, _ = hapticam.load_model(out_dir / "tactile.yaml")

    held_out = hapticam.probe("tactile-switch", "triangle", seed=1)              # one slow press and release
    hapticam.save_capture(out_dir / "press.npz", held_out)
    report(hapticam.verify(model, held_out, model_name="tactile.yaml"))

    linear, _ = hapticam.load_model("example:linear-key")
    report(hapticam.verify(linear, held_out, model_name="example:linear-key"))
    print(f"files in {out_dir}")


if __name__ == "__main__":
    try:
        main()
    except hapticam.HapticError as error:                   # bad input: one line, no traceback
        sys.exit(f"verify_model: {error}")

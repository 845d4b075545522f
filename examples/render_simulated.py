"""Render a model on the simulated device, on the simulated clock, and read back what the hand felt.

The servo loop runs at 1 kHz as it does on hardware, but against the simulated single-axis device with a
scripted user pressing its handle 4 mm and on a simulated clock (as fast as the computer goes, every tick
computed), so the run is short and repeatable. Every tick is recorded to a capture file.

    python examples/render_simulated.py [OUT_DIR] [--model MODEL] [--duration-s S]

MODEL is a model file or ``example:NAME`` (default ``example:tactile-key``; ``hapticam model examples``
lists the bundled ones). Writes ``OUT_DIR/render.csv`` (default OUT_DIR: a new temporary folder).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

import hapticam


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", help="folder for the recording (default: a new temporary one)")
    parser.add_argument("--model", default="example:tactile-key", help="a model file or example:NAME")
    parser.add_argument("--duration-s", type=float, default=2.0, help="simulated time to render (s)")
    args = parser.parse_args()
    out_dir = Path(args.out_dir or tempfile.mkdtemp(prefix="hapticam-render-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    recording = out_dir / "render.csv"

    report = hapticam.render_model(args.model, "sim", duration_s=args.duration_s, realtime=False,
                                   user="press", depth_m=4e-3, record=recording)
    print(report.stats.summary())
    print("events: " + (", ".join(f"{e.name} at tick {e.tick}" for e in report.events) or "none"))

    rendered = hapticam.load_capture(recording)
    pressing = np.gradient(rendered.x_m) > 0
    print(f"recorded {rendered.n} ticks to {recording}: handle travel {1e3 * rendered.x_m.min():.2f} to "
          f"{1e3 * rendered.x_m.max():.2f} mm, largest force pressing {rendered.f_N[pressing].max():.3f} N")


if __name__ == "__main__":
    try:
        main()
    except hapticam.HapticError as error:                   # bad input: one line, no traceback
        sys.exit(f"render_simulated: {error}")

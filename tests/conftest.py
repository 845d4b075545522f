"""Shared test settings: where the real switch captures are.

The twelve captures in ``tests/data/switch_curves`` are bluepylons' Open-Switch-Curve-Meter
measurements (repository bluepylons/Open-Switch-Curve-Meter, CC-BY 4.0; credit: bluepylons), converted
to SI units; see the README there.
"""

from __future__ import annotations

from pathlib import Path

SWITCH_DIR = Path(__file__).resolve().parent / "data" / "switch_curves"
SWITCH_FILES = sorted(SWITCH_DIR.glob("*.csv"))

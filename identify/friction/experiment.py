"""Which friction experiment a capture holds, told from its motion (``hapticam identify friction``).

A spin-down is a launch and a coast: the knob is spun up one way, let go, and its speed then decays to rest
without rising again. Captures at several speeds (presses and releases, turns both ways) reverse. The
capture's other columns do not decide: a spin-down rig may record the drive's torque during the launch, and
the torque column of a released drive reads its offset.

:func:`spin_down_motion` reads the speed through the spin-down fit's own Savitzky-Golay filter
(:func:`~hapticam.identify.friction.spin_down.choose_window`, long enough for the encoder's steps) and says
whether the motion is a spin-down, and why not when it is not; :func:`detect_experiment` names the
experiment of a set of captures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hapticam.capture import Capture
from hapticam.errors import IdentificationError
from hapticam.identify.friction.spin_down import choose_window, derivatives

#: a spin-down never turns back by more than this fraction of its peak speed
REVERSE_FRACTION = 0.05
#: nor speeds up again after its peak by more than this fraction of it
RISE_FRACTION = 0.05
#: and its coast reaches this fraction of its peak speed (rest, for the filter)
REST_FRACTION = 0.1
#: the coast from the peak to rest lasts at least this many filter windows (as the fit needs)
MIN_COAST_WINDOWS = 4

SPIN_DOWN = "spin-down"
SPEEDS = "speeds"


@dataclass
class MotionVerdict:
    """Whether a capture's motion is a spin-down, and the reason (a sentence about the capture)."""

    spin_down: bool
    reason: str


def spin_down_motion(capture: Capture) -> MotionVerdict:
    """Is ``capture``'s motion a launch and a coast (module docstring)? From its position column only."""
    if capture.n < 64:
        return MotionVerdict(False, f"{capture.n} samples are too few to tell a coast")
    window = choose_window(capture.t_s, capture.x_m)
    w, _ = derivatives(capture.t_s, capture.x_m, window)
    w = np.where(capture.valid, w, 0.0)
    peak = int(np.argmax(np.abs(w)))
    top = float(abs(w[peak]))
    if not top > 0.0:
        return MotionVerdict(False, "it does not move")
    speed = w * np.sign(w[peak])
    back = float(-speed.min())
    if back > REVERSE_FRACTION * top:
        return MotionVerdict(False, f"it turns both ways ({back:.3g} against {top:.3g} at the peak)")
    rest = np.flatnonzero(speed[peak:] < REST_FRACTION * top)
    if rest.size == 0:
        return MotionVerdict(False, f"it keeps {speed[-1] / top:.0%} of its peak speed to the end: no coast to rest")
    coast = speed[peak: peak + int(rest[0]) + 1]
    rise = float(np.max(coast - np.minimum.accumulate(coast)))
    if rise > RISE_FRACTION * top:
        return MotionVerdict(False, f"its speed rises again by {rise / top:.0%} of the peak before it comes to rest: "
                                    "driven, not coasting")
    seconds = coast.size * capture.dt_s
    if seconds < MIN_COAST_WINDOWS * window:
        return MotionVerdict(False, f"it stops {seconds * 1e3:.0f} ms after its peak speed: a driven stop, not a coast")
    return MotionVerdict(True, f"one way, its speed falling from {top:.3g} to rest in {seconds:.3g} s without rising "
                               "again")


def detect_experiment(captures: Sequence[Capture], *, inertia_given: bool = False) -> str:
    """``"spin-down"`` or ``"speeds"`` for ``captures``: spin-down when an inertia is given, when a capture holds
    the angle alone, or when every capture's motion is a spin-down (:func:`spin_down_motion`); speeds when
    none is; captures that mix the two are refused."""
    if inertia_given or any(c.metadata.get("force_absent") for c in captures):
        return SPIN_DOWN
    verdicts = [spin_down_motion(c) for c in captures]
    if all(v.spin_down for v in verdicts):
        return SPIN_DOWN
    if not any(v.spin_down for v in verdicts):
        return SPEEDS
    spins = ", ".join(c.name for c, v in zip(captures, verdicts) if v.spin_down)
    other = next((c, v) for c, v in zip(captures, verdicts) if not v.spin_down)
    raise IdentificationError(f"the captures mix experiments: {spins} spin(s) down, {other[0].name} does not "
                              f"({other[1].reason}); fit one experiment at a time (--experiment)")

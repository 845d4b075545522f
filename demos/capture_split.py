"""The demo's hold-out on a real capture: identify from one part of it, verify against the other.

The parts are those ``hapticam identify impedance`` validates its fit on
(:func:`hapticam.identify.alignment.holdout_mask`):

- a capture with two or more press/release cycles holds out its last cycle; the model is identified
  from the cycles before it;
- a single stroke each way holds out every fifth sample; the model is identified from the others. The
  held-out samples are offset from the ones the identification's own check holds out of its training
  part, so that check still has samples to predict.

The held-out part is the whole capture with the training samples marked excluded: the replay runs along
the whole trajectory (the model's direction state is the real stroke's) and the comparison reads only the
held-out samples. A capture whose parts would be too small to read both directions of travel is not
split: the demo then identifies and verifies it whole and calls that a training fit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hapticam.capture import Capture
from hapticam.errors import CaptureError, UsageError
from hapticam.identify.alignment import BLOCK_SAMPLES, holdout_mask
from hapticam.identify.preprocess import prepare

#: fewest valid samples each part needs in each direction of travel (pressing, releasing)
MIN_SAMPLES_PER_DIRECTION = 20
#: which block of every five the demo holds out of a single stroke (the identification's check takes the
#: fifth of every five of its training part)
HELD_BLOCK = 2


@dataclass
class Split:
    """A capture's training part, the part it is verified against and how they were chosen."""

    training: Capture
    held_out: Capture | None   # None: probed apart (a simulated target)
    how: str | None            # e.g. "the last press/release cycle"; None: not split (a training fit)
    reason: str = ""           # why it was not split
    source: Capture | None = None   # the whole capture

    @property
    def is_training_fit(self) -> bool:
        return self.how is None


def check_force_changes(capture: Capture) -> None:
    """Refuse a capture whose force never changes (all zero, or one value): there is nothing to identify."""
    spread = capture.constant_force_spread()
    if spread is not None:
        raise UsageError(f"{capture.name}: the force never changes ({spread:g} N over the capture): there is "
                         "nothing to identify")


def unsplit(capture: Capture, reason: str) -> Split:
    """The whole capture on both sides: a training fit."""
    return Split(capture, capture, None, reason, capture)


def split_capture(capture: Capture) -> Split:
    """The training and held-out parts of ``capture`` (module notes)."""
    prep = prepare(capture)
    held, how = holdout_mask(prep)
    first = int(np.argmax(held))
    last_cycle = bool(held.any() and held[first:].all())
    if last_cycle:
        try:
            training = _head(capture, first)
        except CaptureError as exc:
            return unsplit(capture, f"the cycles before its last are not a capture of their own ({exc})")
    else:
        held = (np.arange(capture.n) // BLOCK_SAMPLES) % 5 == HELD_BLOCK
        how = "every fifth sample of the stroke"
        training = replace(capture, excluded=_union(capture.excluded, held), name=f"{capture.name} (training part)")
    direction = prep.direction.astype(np.int64)
    for part, mask in (("held-out", held), ("training", ~held)):
        counts = [int(np.count_nonzero(mask & capture.valid & (direction == d))) for d in (1, -1)]
        if min(counts) < MIN_SAMPLES_PER_DIRECTION:
            return unsplit(capture, f"its {part} part would have {min(counts)} samples in one direction of "
                                    f"travel, fewer than {MIN_SAMPLES_PER_DIRECTION}")
    held_out = replace(capture, excluded=_union(capture.excluded, ~held), name=f"{capture.name} (held-out part)")
    try:
        check_force_changes(held_out)
    except UsageError:
        return unsplit(capture, "the force of its held-out part never changes")
    return Split(training, held_out, how, source=capture)


def _union(indices: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.union1d(indices, np.flatnonzero(mask)).astype(np.int64)


def _head(capture: Capture, stop: int) -> Capture:
    """The samples before ``stop``, with the dropouts and exclusions among them."""
    def cut(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else a[:stop]

    head = replace(capture, t_s=capture.t_s[:stop], x_m=capture.x_m[:stop], f_N=capture.f_N[:stop],
                   v_mps=cut(capture.v_mps), a_mps2=cut(capture.a_mps2),
                   dropouts=capture.dropouts[capture.dropouts < stop],
                   excluded=capture.excluded[capture.excluded < stop], name=f"{capture.name} (training part)")
    head.validate()
    return head

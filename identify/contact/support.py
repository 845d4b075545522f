"""What a contact capture can and cannot support, said in words (``hapticam identify contact``).

Two things a capture must hold for ``F = k (x - x_c) + b x'`` (seed 004 eq. 2.1) to describe it:

- a free-space baseline: the first samples, with the probe clear of the contact, give the force's zero
  and noise, and so the contact's onset (:func:`free_lead` finds them when the probe touches early). A
  capture that starts pressed has none: its first samples move with the probe, not with the sensor's
  noise (:func:`baseline_refusal`).
- a wall inside the data: the fitted wall position ``x_c`` lies within the travel the capture covered. A
  keyswitch's spring is preloaded: its force steps from 0 to the preload where contact begins and the
  line through it meets zero force far outside the travel (:func:`wall_outside_statement`).

Each estimate's status (:func:`mark_statuses`) is ``"ok"`` only when the wall is inside the data and its
standard errors are finite.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from hapticam.identify.contact.result import EstimateResult

#: the noise-derived threshold above this fraction of the force's rise means the first samples are no baseline
BASELINE_FRACTION = 0.5
#: a wall this fraction of the captured travel beyond its ends is still in the data (noise, a sample step)
WALL_SLACK = 0.01
#: the fewest samples a baseline takes
MIN_BASELINE = 20
#: the force follows the probe over the first samples when their correlation exceeds this
FOLLOWS_PROBE_R = 0.5

FLOOR_HINT = ("for a keyswitch's floor use `hapticam identify impedance --bottom-out` (the capture must reach it), "
              "for its whole force curve `hapticam identify impedance`")


def is_quiet(noise_N: float, span_N: float, n_sigma: float) -> bool:
    """Samples of spread ``noise_N`` can be a baseline for a rise of ``span_N`` (N): ``n_sigma`` deviations
    stay within :data:`BASELINE_FRACTION` of it."""
    return not n_sigma * noise_N > BASELINE_FRACTION * span_N


def free_lead(f_N: np.ndarray, nb: int, n_sigma: float) -> int:
    """How many of the first ``nb`` samples stay at the level of the first :data:`MIN_BASELINE`: the samples
    before the force departs from it by more than ``n_sigma`` of their deviation (or 0.1 % of the rise)."""
    head = f_N[:MIN_BASELINE]
    level = float(np.median(head))
    thr = max(n_sigma * float(np.std(head)), 1e-3 * float(np.max(f_N) - level))
    departs = np.flatnonzero(np.abs(f_N[MIN_BASELINE:nb] - level) > thr)
    return MIN_BASELINE + int(departs[0]) if departs.size else nb


def baseline_refusal(f_N: np.ndarray, nb: int, noise_N: float, span_N: float, n_sigma: float,
                     x_m: np.ndarray | None) -> str | None:
    """Why the first ``nb`` samples of ``f_N`` (N) are no free-space baseline, or None when they are one.

    They are none when they are fewer than :data:`MIN_BASELINE`, when they are not quiet (:func:`is_quiet`),
    or when their force follows the probe's position ``x_m`` (m; correlation above :data:`FOLLOWS_PROBE_R`).
    """
    head = f_N[:nb]
    r = float("nan")
    if x_m is not None and np.ptp(x_m[:nb]) > 0 and np.ptp(head) > 0:
        r = float(np.corrcoef(x_m[:nb], head)[0, 1])
    follows = abs(r) > FOLLOWS_PROBE_R
    if nb >= MIN_BASELINE and is_quiet(noise_N, span_N, n_sigma) and not follows:
        return None
    moved = f"the force goes from {head[0]:.3g} to {head[-1]:.3g} N (sd {noise_N:.3g} N)"
    moved += f", following the probe's position (r = {r:.2f})" if follows else ""
    why = ("the probe presses from the first sample" if follows else
           "the probe presses from the first sample, or the contact is within the sensor's noise")
    return (f"no contact onset in the data: the capture has no free-space baseline. Over its first {nb} samples "
            f"{moved}, against {np.min(f_N):.3g} to {np.max(f_N):.3g} N over the whole capture: {why}. Start the "
            f"capture with the probe clear of the contact; {FLOOR_HINT}")


def wall_outside_statement(x_c_m: float, x_m: np.ndarray, first: int,
                           force_at: Callable[[float], float]) -> str | None:
    """Why a wall fitted at ``x_c_m`` is not in the data (``x_m``: the record's wall-side positions, m; ``first``
    the contact's first sample; ``force_at(x)`` the fitted force, N), or None; the data reach
    :data:`WALL_SLACK` of their travel beyond their ends."""
    lo, hi = float(np.min(x_m)), float(np.max(x_m))
    slack = WALL_SLACK * (hi - lo)
    if lo - slack <= x_c_m <= hi + slack:
        return None
    x_first = float(x_m[first])
    head = float(force_at(x_first))
    why = (f"The fit already gives {head:.3g} N where contact begins (x = {x_first * 1e3:.4g} mm): the force steps "
           "up there (a preloaded spring), it does not rise from zero at a wall" if head > 0 else
           "The force does not rise from zero at a wall anywhere in the captured travel")
    return (f"no wall in the data: the fitted wall x_c = {x_c_m * 1e3:.4g} mm lies outside the captured "
            f"travel {lo * 1e3 + 0.0:.4g} to {hi * 1e3:.4g} mm. {why}; {FLOOR_HINT}")     # + 0.0: no "-0"


def mark_statuses(results: dict[str, EstimateResult], wall_outside: bool, x_c_m: float) -> None:
    """Set each estimate's status: the wall outside the data (at ``x_c_m``, m), the estimator's own when it
    stopped early, or the want of a finite standard error; otherwise it stays ``"ok"``."""
    for r in results.values():
        se = r.se
        if wall_outside:
            r.status = f"wall outside the data (x_c = {x_c_m * 1e3:.4g} mm)"
        elif r.status != "ok":
            continue
        elif se is None:
            r.status = "no standard error (the estimator gives none)"
        elif not np.all(np.isfinite(se[:2])):
            r.status = "standard error not finite"

"""Where contact starts, the probe's backlash, and which samples to hold out.

Contact point
    The first position at which the force rises above the noise and stays there (seed 004's contact
    datum, from the force rather than from a separate sensor): the force before contact is the median of
    the :data:`HEAD_SAMPLES` samples nearest the start, the noise ``sigma`` the robust spread (MAD) of the
    sample-to-sample differences over ``sqrt 2`` (steps and slopes do not inflate it), the threshold
    ``max(6 sigma, 10 % of the median force over the travel)`` above the start (the median, not the range,
    so a bottom-out wall or an end stop does not raise it), and the rise must hold for
    :data:`HOLD_SAMPLES` samples.

Backlash
    A lead-screw probe reverses with lost motion: on the way back the commanded position moves before
    the tip does, so the whole releasing curve is recorded shifted towards smaller x. On a steep part (the
    switch's first rise, its bottom-out wall) the shifted releasing force then reads *above* the pressing
    force, which no passive object does. The shift is the difference of the two directions' contact
    points; :func:`remove_backlash` moves the releasing samples back by it (only when it is positive and
    under :data:`MAX_BACKLASH_FRACTION` of the travel; otherwise nothing is changed and ``0`` returned).
    On the twelve real switch captures a uniform shift of the whole releasing curve removes the apparent
    energy generation at both the first rise and the bottom-out wall.

Alignment on a model
    :func:`align_to_model` puts a capture where a model's positions are, the way ``hapticam verify``
    compares them and ``hapticam plot`` draws them: the backlash removed from the releasing samples, then
    every position shifted by :func:`contact_offset`, which moves the capture's pressing contact point onto
    the model's (a model's ``x = 0`` is usually the key's contact, a capture's the probe's start) and
    refines the shift within :data:`OFFSET_SEARCH_M` to the one whose pressing forces best match the
    model's. Only quasi-static captures are shifted (at speed, damping moves the contact estimate).

Hold-out
    :func:`holdout_mask` picks the samples that validate a fit: the last press/release cycle when the
    capture has two or more, else (one stroke each way, a quasi-static capture) every fifth block of
    :data:`BLOCK_SAMPLES` consecutive samples, so both directions and the whole travel are represented
    on both sides of the split.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hapticam.identify.preprocess import Prepared
from hapticam.models.base import Model
from hapticam.models.kernels import model_force

HOLD_SAMPLES = 3
HEAD_SAMPLES = 5
MAX_BACKLASH_FRACTION = 0.05
BLOCK_SAMPLES = 1
#: captures slower than this (m/s, median) are quasi-static
QUASI_STATIC_MPS = 1e-3
#: the contact-point shift is refined by this much (m) either way around the contact estimate
OFFSET_SEARCH_M = 50e-6
#: points of the model's pressing curve over the captured travel that its contact point is found on
OFFSET_CURVE_POINTS = 2001


def contact_point(x_m: np.ndarray, f_N: np.ndarray) -> float | None:
    """Contact point (m) of one direction's samples (any order), or ``None`` if the force never rises or
    the object is already loaded at the start (the force there is not near zero: no free travel)."""
    order = np.argsort(x_m, kind="stable")
    x, f = np.asarray(x_m)[order], np.asarray(f_N)[order]
    if x.size < 10:
        return None
    base = float(np.median(f[:HEAD_SAMPLES]))                        # the force before contact
    sigma = 1.4826 * float(np.median(np.abs(np.diff(f)))) / np.sqrt(2.0)   # MAD of differences -> noise std
    level = abs(float(np.median(f)) - base)                            # the force over the travel
    if abs(base) > 0.5 * abs(float(np.median(f))) + 6.0 * sigma:
        return None                                                     # in contact from the start
    threshold = base + max(6.0 * sigma, 0.1 * level)
    above = f > threshold
    run = np.convolve(above.astype(np.int64), np.ones(HOLD_SAMPLES, dtype=np.int64), mode="valid")
    hits = np.flatnonzero(run == HOLD_SAMPLES)
    return float(x[hits[0]]) if hits.size else None


def remove_backlash(prep: Prepared) -> float:
    """Estimate the probe's backlash (m) from the two contact points and remove it from the releasing
    samples of ``prep`` in place (module notes). Returns the shift applied (0 when none).

    Only quasi-static captures (median speed under :data:`QUASI_STATIC_MPS`) are corrected: at speed,
    damping alone separates the two directions' threshold crossings."""
    if float(np.median(np.abs(prep.v))) >= QUASI_STATIC_MPS:
        return 0.0
    press, release = prep.group(1), prep.group(-1)
    if press.size < 10 or release.size < 10:
        return 0.0
    cp = contact_point(prep.x[press], prep.f[press])
    cr = contact_point(prep.x[release], prep.f[release])
    if cp is None or cr is None:
        return 0.0
    shift = cp - cr
    travel = float(np.ptp(prep.x[prep.valid]))
    if not (0.0 < shift <= MAX_BACKLASH_FRACTION * travel):
        return 0.0
    prep.x = np.where(prep.direction < 0, prep.x + shift, prep.x)
    return shift


@dataclass(frozen=True)
class Alignment:
    """How a capture was moved onto a model (m): ``backlash_m`` added to the releasing samples, then
    ``offset_m`` added to every position."""

    backlash_m: float
    offset_m: float


def align_to_model(model: Model, prepared: Prepared, x_offset_m: float | None = None) -> Alignment:
    """Remove the backlash from ``prepared`` (in place, :func:`remove_backlash`) and shift all its
    positions onto ``model`` by :func:`contact_offset`, or by ``x_offset_m`` (m) when given."""
    backlash = remove_backlash(prepared)
    offset = contact_offset(model, prepared) if x_offset_m is None else float(x_offset_m)
    prepared.x = prepared.x + offset
    return Alignment(backlash_m=backlash, offset_m=offset)


def contact_offset(model: Model, prepared: Prepared) -> float:
    """Shift (m) that puts the capture's pressing contact point on the model's (0 if either has none, or
    the capture is not quasi-static), refined to the shift within :data:`OFFSET_SEARCH_M` of it whose
    pressing forces best match the model's."""
    press = prepared.group(1)
    if press.size < 10 or float(np.median(np.abs(prepared.v))) >= QUASI_STATIC_MPS:
        return 0.0
    c_cap = contact_point(prepared.x[press], prepared.f[press])
    lo, hi = float(prepared.x.min()), float(prepared.x.max())
    xs = np.linspace(lo, hi, OFFSET_CURVE_POINTS)      # over the captured travel only (end stops lie outside)
    compiled = model.compile()
    c_mod = contact_point(xs, np.array([_pressing_force(compiled, x) for x in xs]))
    if c_cap is None or c_mod is None:
        return 0.0
    coarse = float(c_mod - c_cap)
    xp, fp = prepared.x[press], prepared.f[press]
    best, best_err = coarse, np.inf
    for cand in coarse + np.linspace(-OFFSET_SEARCH_M, OFFSET_SEARCH_M, 21):
        pred = np.array([_pressing_force(compiled, x + cand) for x in xp[::2]])
        err = float(np.sum((pred - fp[::2]) ** 2))
        if err < best_err:
            best, best_err = float(cand), err
    return best


def _pressing_force(compiled: Any, x_m: float) -> float:
    """The model's force (N) at ``x_m`` pressing slowly (1 mm/s) from its reset state."""
    state = compiled.reset_state()
    # Two calls: the first sets any direction state held in the model, the second is the reading.
    model_force(compiled.params, state, float(x_m), 0.1, 0.0, 1e-3)
    return float(model_force(compiled.params, state, float(x_m), 1e-3, 0.0, 1e-3))


def holdout_mask(prep: Prepared) -> tuple[np.ndarray, str]:
    """Boolean mask of the held-out samples and a description (module notes)."""
    n = prep.x.size
    turns = np.flatnonzero(np.diff(prep.direction.astype(np.int64)) > 0)   # releasing -> pressing
    if turns.size >= 1 and turns[-1] > n // 3:
        mask = np.zeros(n, dtype=bool)
        mask[turns[-1] + 1:] = True
        return mask, "the last press/release cycle"
    block = np.arange(n) // BLOCK_SAMPLES
    return block % 5 == 4, f"every fifth block of {BLOCK_SAMPLES} samples"

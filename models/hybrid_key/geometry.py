"""The hybrid key's drive point: where the jack (or, once escaped, the backcheck) holds the hammer.

Two escapements (the model is in :mod:`hapticam.models.hybrid_key.model`; ``x`` key travel (m, down
positive), ``s`` drive point height (m, up), ``r`` lever ratio, ``d_c`` check drop, ``x_l`` let-off,
``x_r`` repetition point):

* closing check (no hammer rail): ``s = r x`` on the jack; once escaped the backcheck
  ``s = r x - d_c clip((x - x_r) / (x_l - x_r), 0, 1)``: as the key comes back from ``x_l`` to ``x_r``
  the repetition spring closes the drop, and the jack is back under the hammer at ``x_r``;
* hammer rail (``hammer_rail``): the hammer rests on a fixed rail at its rest height ``s = 0`` whenever
  the jack (or the backcheck) is below it, as in a grand action. With the jack pickup ``x_j`` (the key
  travel that takes up the lost motion between jack and hammer) the jack is at ``r (x - x_j)`` and the
  backcheck a whole drop below it::

      s = max(r (x - x_j), 0)          on the jack
      s = max(r (x - x_j) - d_c, 0)    escaped

  so on a slow release the key carries the hammer's weight on the backcheck down to
  ``x_j + d_c / r`` and none below it (the hammer on its rail), and the jack slips back under the
  hammer at ``x_r <= x_j``, where both lie at the rail (continuous).

The drive point is piecewise linear in ``x``; :func:`drive_kink` gives the break the rail adds, where
the kernel splits a tick so that the drive point is a quadratic in time on every interval.

A simulated key behind a virtual coupling (:mod:`hapticam.models.hybrid_key.coupling`) strays from the
handle by up to ``r m_h v / sqrt(k_c (m_k + r^2 m_h))`` when the hammer lands (1.7 mm on the hybrid-key
target at 1000 N/m), far more than a key held by a finger. Held past let-off by less than that, a key
that read the closing check at itself would swing back above ``x_l`` into the check, where the lever is
``r - d_c / (x_l - x_r)`` (0.56 instead of 5), and hand the handle 40-70 % too little of the landing.
So on a simulated key with a closing check (:func:`check_held`) the check is read where the user holds
the key:

- handle past let-off (``x_h >= x_l``), escaped: the backcheck a whole drop below the jack,
  ``s = r x_k - d_c``, lever ``r``, however far the key swings (:func:`drive_at`, :func:`lever_at`);
- handle above let-off: the check read at the key, the direct key's geometry and lever;
- the coupling's preload is the check's lever at the handle times ``m_h g``
  (:func:`~hapticam.models.hybrid_key.coupling.coupling_preload`), so the key rests under the handle in
  the check too (with ``r m_h g`` there it rests ``(r - lever) m_h g / k_c``, 0.44 mm, deeper, and the
  jack comes back 0.6 mm of handle travel late);
- the jack comes back under the hammer once key and handle are both above ``x_r``, where the drop is
  closed (continuous).

The key oscillated across let-off, in the check and across ``x_r`` absorbs energy
(tests/test_hybrid_key_rail.py). The rail's kink is at the key itself (a hammer lying on its rail leaves
the key free).
"""

from __future__ import annotations

from typing import Any

from numba import njit

from hapticam.errors import ModelValidationError
from hapticam.models.hybrid_key.events import clamp
from hapticam.models.hybrid_key.layout import (ABSENT_M, KERNEL_JIT, P_BK, P_DC, P_KC, P_R, P_RAIL, P_XJ, P_XL, P_XR,
                                               S_XC)


@njit(**KERNEL_JIT)
def drive_point(p, x, escaped):
    """Drive point height (m) at key position ``x`` (m), on the jack or (``escaped`` != 0) the backcheck."""
    r = p[P_R]
    if p[P_RAIL] != 0.0:
        return max(r * (x - p[P_XJ]) - (p[P_DC] if escaped != 0.0 else 0.0), 0.0)
    if escaped == 0.0:
        return r * x
    f = clamp((x - p[P_XR]) / (p[P_XL] - p[P_XR]), 0.0, 1.0)
    return r * x - p[P_DC] * f


@njit(**KERNEL_JIT)
def drive_slope(p, x, escaped):
    """Lever ratio ds/dx at key position ``x`` (m): the factor on the hammer reaction felt at the key
    (0 while the hammer lies on its rail)."""
    r = p[P_R]
    if p[P_RAIL] != 0.0:
        return r if x > drive_kink(p, escaped) else 0.0
    if escaped != 0.0 and p[P_XR] < x < p[P_XL]:
        return r - p[P_DC] / (p[P_XL] - p[P_XR])
    return r


@njit(**KERNEL_JIT)
def drive_kink(p, escaped):
    """Key position (m) below which the hammer lies on its rail: ``x_j`` on the jack, ``x_j + d_c / r``
    escaped; ``-ABSENT_M`` without a rail."""
    if p[P_RAIL] == 0.0:
        return -ABSENT_M
    return p[P_XJ] + (p[P_DC] / p[P_R] if escaped != 0.0 else 0.0)


@njit(**KERNEL_JIT)
def check_held(p):
    """True for a simulated key (a virtual coupling with the key's damper) with a closing check: the
    check is read where the handle holds the key (module notes)."""
    return p[P_KC] > 0.0 and p[P_BK] > 0.0 and p[P_RAIL] == 0.0


@njit(**KERNEL_JIT)
def held_past_let_off(p, s, escaped):
    """True when a held check (:func:`check_held`) has escaped and the handle ``s[S_XC]`` is past let-off:
    the backcheck then stays a whole drop below the jack (module notes)."""
    return escaped != 0.0 and check_held(p) and s[S_XC] >= p[P_XL]


@njit(**KERNEL_JIT)
def drive_at(p, s, x, escaped):
    """Drive point height (m) with the key at ``x`` (m) in state ``s``: :func:`drive_point`, or held past
    let-off (:func:`held_past_let_off`) the backcheck a whole drop below the jack, ``r x - d_c``."""
    if held_past_let_off(p, s, escaped):
        return p[P_R] * x - p[P_DC]
    return drive_point(p, x, escaped)


@njit(**KERNEL_JIT)
def lever_at(p, s, x, escaped):
    """ds/dx of :func:`drive_at` (the lever ratio, the factor on the hammer's reaction felt at the key)."""
    return p[P_R] if held_past_let_off(p, s, escaped) else drive_slope(p, x, escaped)


def check_escapement(key: Any) -> None:
    """Validate a :class:`~hapticam.models.hybrid_key.model.HybridKey`'s let-off, check, rail and string
    geometry (module docstring); raise :class:`ModelValidationError` naming the field."""
    if key.jack_pickup_m > 0.0 and not key.hammer_rail:
        raise ModelValidationError("jack_pickup_m: lost motion before the jack needs the hammer_rail (the hammer "
                                   "must rest on something while the jack is below it)")
    if key.touch_m is not None and not (key.hammer_rail and key.touch_m <= key.jack_pickup_m):
        raise ModelValidationError(f"touch_m: a key surface needs the hammer_rail and must be <= jack_pickup_m "
                                   f"({key.jack_pickup_m:g} m: the jack cannot lift the hammer before the key is "
                                   f"touched), got {key.touch_m:g}")
    if key.let_off_m is not None:
        if key.keybed_m is not None and not key.let_off_m < key.keybed_m:
            raise ModelValidationError(f"let_off_m: must be < keybed_m ({key.keybed_m:g} m), got {key.let_off_m:g}")
        if not key.jack_pickup_m < key.let_off_m:
            raise ModelValidationError(f"jack_pickup_m: must be < let_off_m ({key.let_off_m:g} m), "
                                       f"got {key.jack_pickup_m:g}")
        if not key.repetition_m < key.let_off_m:
            raise ModelValidationError(f"repetition_m: must be < let_off_m ({key.let_off_m:g} m), "
                                       f"got {key.repetition_m:g}")
        if not key.check_drop_m > 0.0:
            raise ModelValidationError("check_drop_m: must be > 0 with a let-off point (the jack escapes "
                                       "by dropping the hammer onto the backcheck)")
        if key.hammer_rail and key.repetition_m > key.jack_pickup_m:
            raise ModelValidationError(f"repetition_m: with a hammer rail it must be <= jack_pickup_m "
                                       f"({key.jack_pickup_m:g} m: the jack slips under the hammer on its rail), "
                                       f"got {key.repetition_m:g}")
        most = key.lever_ratio * (key.let_off_m - key.repetition_m)
        if not key.hammer_rail and key.check_drop_m > most:
            raise ModelValidationError(f"check_drop_m: must be <= lever_ratio * (let_off_m - repetition_m) "
                                       f"= {most:g} m, got {key.check_drop_m:g}")
    if key.string_height_m is not None:
        if key.let_off_m is None:
            raise ModelValidationError("string_height_m: a string needs a let-off point (let_off_m), "
                                       "or the key would pinch the hammer against it")
        top = key.lever_ratio * key.let_off_m
        if not key.string_height_m > top:
            raise ModelValidationError(f"string_height_m: must be above the let-off drive height "
                                       f"lever_ratio * let_off_m = {top:g} m, got {key.string_height_m:g}")
        if key.keybed_m is not None:
            check_top = key.lever_ratio * key.keybed_m - key.check_drop_m
            if not key.string_height_m > check_top:
                raise ModelValidationError(f"string_height_m: must be above the backcheck at the keybed, "
                                           f"lever_ratio * keybed_m - check_drop_m = {check_top:g} m, "
                                           f"got {key.string_height_m:g}")

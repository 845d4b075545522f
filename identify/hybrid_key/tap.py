"""The contact's stiffness k from a tap: the key held past let-off and rocked by micrometres on the probe's tip.

A landing's spike does not tell k: it lasts under a millisecond at the hammer, and through the probe's resting
tip the key's ringing on it shapes what the force shows (3.2-3.6 ms wide for any k from 3e5 to 5e6 N/m^1.5 on
the simulated piano action). Held still, the hammer rests in its backcheck on the felt's static compression
``delta0 = (m_h g / k)^(1/n)``, where the felt is as stiff as ``n k delta0^(n-1)``: rocking the key by a few
micrometres (:class:`~hapticam.world.key_tap.KeyTap`, 30-600 Hz) moves the hammer on that spring without
lifting it, and the force at the tip carries the hammer's mode coupled to the key ringing on the tip. So the
fit simulates what the probe held: the key a body on the tip's one-sided pad (its stiffness and alpha), driven
by the probe's measured position, with the friction and let-off spring found beside the key acting on the key
itself (:meth:`~hapticam.models.hybrid_key.model.HybridKey.on_pad`), and chooses the k whose force over the
held part of the tap (less its mean, which the preload carries) is nearest the captured one (output error:
Ljung, "System Identification: Theory for the User", 1999, ch. 7), alpha = b / k kept as the bounces gave it.
The standard error is the residual's over the Jacobian, inflated for the residual's correlation in time.

On the simulated piano action (backcheck felt 1e6, knuckle 2e6 N/m^1.5; the model has one felt law for both),
the held force's fit is 55 % at k 3e5, 96 % at 1e6, 97 % at 1.2e6, 86 % at 2e6 and 68 % at 5e6.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.optimize import minimize_scalar

from hapticam.identify.hybrid_key.errors import correlation_inflation
from hapticam.identify.hybrid_key.params import Prepared, to_model
from hapticam.identify.metrics import fit_percent
from hapticam.models.hybrid_key.layout import ABSENT_M
from hapticam.models.hybrid_key.model import HybridKey

#: The held part of a tap: within this distance (m) of its median depth, from ``SETTLE_S`` after the key
#: first got there (the hammer's landings after let-off have died down by then) until ``LEAVE_S`` before it
#: leaves (the release starts slowly).
HELD_BAND_M = 50e-6
SETTLE_S = 0.3
LEAVE_S = 0.1
#: The range searched for k (N/m^n): a grid of ``GRID_PER_DECADE`` points a decade, then the best one's
#: neighbourhood (the fit's peak in k can be narrower than a factor of 1.5 about the truth).
K_RANGE = (1e5, 1e8)
GRID_PER_DECADE = 12
#: A k whose held force the key on the tip reproduces worse than this (%, seed 003 eq. 53; 75 % is an RMS
#: error half the force's spread), or found at the edge of ``K_RANGE``, is not taken.
MIN_FIT_PERCENT = 75.0


def held_samples(prep: Prepared) -> np.ndarray:
    """Indices of a tap's held part (module notes): within ``HELD_BAND_M`` of the median depth of the samples
    beyond half the deepest travel, from ``SETTLE_S`` after the first of them to ``LEAVE_S`` before the key
    leaves the band."""
    x = prep.x_m
    deep = x > 0.5 * float(np.max(x))
    centre = float(np.median(x[deep])) if deep.any() else 0.0
    inside = np.abs(x - centre) < HELD_BAND_M
    if not inside.any():
        return np.zeros(0, dtype=np.int64)
    first = int(np.argmax(inside))
    last = first + int(np.argmin(inside[first:])) if not inside[first:].all() else x.size
    return np.arange(first + int(round(SETTLE_S / prep.dt_s)), last - int(round(LEAVE_S / prep.dt_s)))


def key_on_tip(values: dict[str, float], extra: dict[str, float], tip: tuple[float, float], dt_s: float
               ) -> HybridKey:
    """The hybrid key of ``values`` resting on the probe's tip ``(k N/m, alpha s/m)``, the forces found beside it
    (``extra``: Coulomb friction over the width the key's mass needs at ``dt_s``, the let-off spring) on the
    key itself."""
    friction = extra.get("friction_N", 0.0)
    width = max(friction * dt_s / max(values["key_mass_kg"], 1e-6), 1e-9)
    forces = (friction, width if friction > 0.0 else 1.0, extra.get("bump_k_Npm", 0.0), extra.get("bump_x_m", ABSENT_M))
    return to_model(values).on_pad(tip[0], tip[1], forces)


def contact_stiffness(taps: Sequence[tuple[Prepared, np.ndarray]], values: dict[str, float],
                      extra: dict[str, float], tip: tuple[float, float]) -> tuple[float, float, str]:
    """k (N/m^n), its standard error and a note, from ``taps`` (each prepared with its captured force as
    measured, the friction and let-off spring not taken out); ``values`` give the rest (alpha = b / k kept);
    ``tip``: the probe's resting tip (stiffness N/m, Hunt-Crossley alpha s/m). NaN when no tap has a held part,
    when the best k lies at the edge of ``K_RANGE`` or its fit is below ``MIN_FIT_PERCENT`` (the note says which)."""
    used = [(p, f, idx) for p, f in taps for idx in [held_samples(p)] if idx.size > 100]
    if not used:
        return math.nan, math.nan, "tap: no held part found (the key held within 50 um for more than 0.3 s)"
    alpha = values["contact_b_Nspm"] / values["contact_k_Npm"]

    def residual(k: float) -> np.ndarray:
        v = dict(values, contact_k_Npm=k, contact_b_Nspm=alpha * k)
        out = []
        for p, f, idx in used:
            sim = key_on_tip(v, extra, tip, p.dt_s).simulate(p.x_m, p.dt_s).force_N[idx]
            out.append((sim - sim.mean()) - (f[idx] - f[idx].mean()))
        return np.concatenate(out)

    lo, hi = (math.log10(b) for b in K_RANGE)
    grid = np.linspace(lo, hi, int(round((hi - lo) * GRID_PER_DECADE)) + 1)
    cost = [float(np.sum(residual(10.0 ** z) ** 2)) for z in grid]
    step, at = grid[1] - grid[0], grid[int(np.argmin(cost))]
    best = minimize_scalar(lambda z: float(np.sum(residual(10.0 ** z) ** 2)),
                           bounds=(max(at - step, lo), min(at + step, hi)), method="bounded", options={"xatol": 1e-3})
    k = 10.0 ** float(best.x)
    r0, r1 = residual(k), residual(k * 1.001)
    jac = (r1 - r0) / (0.001 * k)
    s2 = float(r0 @ r0) / max(r0.size - 1, 1) * correlation_inflation(r0)
    se = math.sqrt(s2 / float(jac @ jac)) if float(jac @ jac) > 0.0 else math.inf
    held = np.concatenate([f[idx] - f[idx].mean() for _p, f, idx in used])
    fits = [fit_percent(held, held + r) for r in (r0, residual(values["contact_k_Npm"]))]
    note = (f"contact: k = {k:.4g} +- {se:.2g} N/m^1.5 from {len(used)} tap(s), the key simulated on the "
            f"probe's tip (the held force's fit {fits[0]:.1f} %; {fits[1]:.1f} % at {values['contact_k_Npm']:.3g})")
    if min(abs(best.x - b) for b in (lo, hi)) < 0.01:
        return math.nan, math.nan, (f"{note}: at the edge of the range searched ({K_RANGE[0]:g}-{K_RANGE[1]:g}), "
                                    "not taken")
    if not fits[0] >= MIN_FIT_PERCENT:
        return math.nan, math.nan, f"{note}: below {MIN_FIT_PERCENT:g} %, the tap is not the model's, not taken"
    return k, se, note

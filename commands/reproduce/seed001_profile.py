"""What seed 001's Fig. 3 shows, measured against the device's truth (:mod:`hapticam.commands.reproduce.seed001`).

Two EWLS profiles over the same position-sorted samples, read at the same grid cells: the pipeline's (its
covariance bound, :mod:`hapticam.identify.impedance.ewls`, suspends forgetting wherever ``P`` would grow past it) and
seed 001 Table 1 as printed (no bound). For each: the stiffness error where the estimate has settled, the lag
behind the true stiffness at the hardening springs, the dynamic terms, where the stiffness leaves its first
constant range, and the start of travel. For the segmented model: breakpoints and parameters per segment.

A lag prediction: for a stiffness linear in ``x``, a line fitted to the exponentially weighted window of
sorted samples has the slope of ``k`` at ``mu + mu3 / (2 sigma^2)`` (the window's weighted mean, third
central moment and variance of position), so the profile trails by ``x - mu - mu3 / (2 sigma^2)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hapticam.identify.impedance.ewls import ewls_fit
from hapticam.identify.impedance.result import ImpedanceFit
from hapticam.commands.reproduce.seed001_device import FIG3_CONSTANT_END_M, Seed001Device

TERMS = ("m", "b", "k", "F0")
#: a stiffness estimate leaves its constant range when it differs from it by more than this fraction
DEPARTURE = 0.05
#: a cell has settled when this many EWLS memories (1 / (1 - lam) samples; 95 % of the weight) of sorted
#: samples before it lie in its constant range ...
SETTLED_MEMORIES = 3
#: ... and it lies this far (m) from the ends of travel, where the turnarounds pack thousands of samples into
#: a few micrometres and the window cannot tell k from F0 (the start-up reported separately)
END_MARGIN_M = 0.005


@dataclass
class Profile:
    """An EWLS profile of one direction (seed 001 Fig. 3): ``[m, b, k, F0]`` at the grid's cells (m)."""

    x_m: np.ndarray
    theta: np.ndarray
    windup_steps: int


def sorted_samples(fit: ImpedanceFit, direction: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x m, phi = [a v x 1], F N)`` of one direction's samples in the order EWLS visits them."""
    prep = fit.prepared
    idx = prep.group(direction)
    return prep.x[idx], np.column_stack([prep.a[idx], prep.v[idx], prep.x[idx], np.ones(idx.size)]), prep.f[idx]


def profiles(fit: ImpedanceFit, direction: int, lam: float) -> dict[str, Profile]:
    """``{"pipeline", "table1"}``: the pipeline's bounded profile and Table 1 as printed, with ``lam``."""
    d = fit.directions["press" if direction == 1 else "release"]
    xs, phi, f = sorted_samples(fit, direction)
    free = [j for j, term in enumerate(TERMS) if term not in fit.fixed]
    fixed = np.array([fit.fixed.get(term, 0.0) for term in TERMS])
    plain = ewls_fit(phi[:, free], f - phi @ fixed, lam, p_max=float("inf"))
    theta = np.tile(fixed, (d.profile_x_m.size, 1))
    theta[:, free] = plain.theta_path[np.searchsorted(xs, d.profile_x_m)]
    return {"pipeline": Profile(d.profile_x_m, d.profile_theta, d.windup_steps),
            "table1": Profile(d.profile_x_m, theta, plain.windup_steps)}


def slope_lag_m(x_sorted: np.ndarray, lam: float) -> np.ndarray:
    """How far a slope fitted over the exponential window trails each sorted sample (m; module notes)."""
    from scipy.signal import lfilter

    c = x_sorted - x_sorted.mean()
    m1, m2, m3 = (lfilter([1.0 - lam], [1.0, -lam], c ** p, zi=[lam * c[0] ** p])[0] for p in (1, 2, 3))
    var = np.maximum(m2 - m1 * m1, 1e-30)
    return c - m1 - (m3 - 3.0 * m1 * m2 + 2.0 * m1 ** 3) / (2.0 * var)


def predicted_lag_m(device: Seed001Device, x_sorted: np.ndarray, lam: float) -> float:
    """:func:`slope_lag_m` at the springs' mid-engagement, averaged (m)."""
    centres = [x_i + 0.5 * w_i for _k, x_i, w_i in device.springs]
    return float(np.mean(np.interp(centres, x_sorted, slope_lag_m(x_sorted, lam))))


def crossing_lag_m(device: Seed001Device, x_m: np.ndarray, k_Npm: np.ndarray) -> float:
    """Mean over the hardening springs of where the profile crosses half of each spring's added stiffness,
    minus where the device does (the spring's mid-engagement), in m."""
    lags = []
    for k_i, x_i, w_i in device.springs:
        k_mid = float(device.stiffness(np.array([x_i]))[0]) + 0.5 * k_i
        j = np.flatnonzero((x_m > x_i - w_i) & (k_Npm >= k_mid))
        if j.size and j[0] > 0:
            a, b = j[0] - 1, j[0]
            cross = x_m[a] + (k_mid - k_Npm[a]) * (x_m[b] - x_m[a]) / (k_Npm[b] - k_Npm[a])
            lags.append(cross - (x_i + 0.5 * w_i))
    return float(np.mean(lags)) if lags else float("nan")


def settled_cells(device: Seed001Device, x_m: np.ndarray, x_sorted: np.ndarray, lam: float) -> np.ndarray:
    """Mask of the cells at ``x_m`` whose estimate has settled (:data:`SETTLED_MEMORIES`, :data:`END_MARGIN_M`)."""
    idx = np.searchsorted(x_sorted, x_m)
    memory = int(SETTLED_MEMORIES / (1.0 - lam))
    back = x_sorted[np.maximum(idx - memory, 0)]
    lo, hi = float(x_sorted[0]), float(x_sorted[-1])
    settled = np.zeros(x_m.size, dtype=bool)
    for start, end, _k in device.constant_ranges(lo, hi):
        settled |= (back >= start) & (x_m <= end) & (idx >= memory)
    return settled & (x_m >= lo + END_MARGIN_M) & (x_m <= hi - END_MARGIN_M)


def leaves_first_range_m(x_m: np.ndarray, k_Npm: np.ndarray, first: np.ndarray) -> float:
    """Where (m, interpolated) the stiffness first departs by :data:`DEPARTURE` from its median over the
    settled cells ``first`` of the first constant range, after them."""
    if not first.any():
        return float("nan")
    off = np.abs(k_Npm / np.median(k_Npm[first]) - 1.0) - DEPARTURE
    after = np.flatnonzero((off > 0) & (np.arange(x_m.size) > np.flatnonzero(first)[-1]))
    if not after.size:
        return float("nan")
    j = int(after[0])
    return float(x_m[j - 1] + (x_m[j] - x_m[j - 1]) * -off[j - 1] / (off[j] - off[j - 1]))


def true_leaves_first_range_m(device: Seed001Device) -> float:
    """Where (m) the device's own stiffness leaves its first constant range by :data:`DEPARTURE`."""
    x = np.linspace(0.0, 2.0 * FIG3_CONSTANT_END_M, 24001)
    return leaves_first_range_m(x, device.stiffness(x), x < FIG3_CONSTANT_END_M)


def profile_numbers(device: Seed001Device, prof: Profile, x_sorted: np.ndarray, lam: float) -> dict[str, float]:
    """A profile against the truth: k error (%) on settled cells, lag (m), largest |b| (N s/m) and m range
    (kg) away from the ends of travel, where k leaves its first range (m), k over the first
    :data:`END_MARGIN_M` (N/m) and the share of steps whose forgetting the bound suspended (%)."""
    px, th = prof.x_m, prof.theta
    settled = settled_cells(device, px, x_sorted, lam)
    inner = (px >= x_sorted[0] + END_MARGIN_M) & (px <= x_sorted[-1] - END_MARGIN_M)
    start = px < x_sorted[0] + END_MARGIN_M
    k_true = device.stiffness(px)
    return {"k_error_pct": float(100 * np.max(np.abs(th[settled, 2] / k_true[settled] - 1.0))),
            "lag_m": crossing_lag_m(device, px, th[:, 2]),
            "b_max": float(np.max(np.abs(th[inner, 1]))),
            "m_min": float(th[inner, 0].min()), "m_max": float(th[inner, 0].max()),
            "k_leaves_m": leaves_first_range_m(px, th[:, 2], settled & (px < FIG3_CONSTANT_END_M)),
            "k_start_min": float(th[start, 2].min()), "k_start_max": float(th[start, 2].max()),
            "bounded_pct": 100.0 * prof.windup_steps / x_sorted.size}


def segment_numbers(device: Seed001Device, fit: ImpedanceFit, direction: int) -> dict[str, object]:
    """The segmented model of one direction: breakpoints (m), the largest k error (%) over the segments
    whose middle half lies in a constant range, the ranges of m (kg) and b (N s/m), the first offset (N)."""
    table = fit.model.table(direction)
    bp = table.breakpoints_m[1:-1]               # the model's outer entries hold the ends (k = 0)
    errors = []
    for s in range(bp.size - 1):
        q1, q3 = bp[s] + 0.25 * (bp[s + 1] - bp[s]), bp[s + 1] - 0.25 * (bp[s + 1] - bp[s])
        errors += [100.0 * abs(table.k_Npm[s + 1] / k - 1.0)
                   for lo, hi, k in device.constant_ranges(float(bp[0]), float(bp[-1])) if lo <= q1 and q3 <= hi]
    inner = slice(1, table.m_kg.size - 1)
    return {"breakpoints_m": bp, "k_error_pct": max(errors) if errors else float("nan"),
            "m": (float(table.m_kg[inner].min()), float(table.m_kg[inner].max())),
            "b": (float(table.b_Nspm[inner].min()), float(table.b_Nspm[inner].max())),
            "f0_first_N": float(table.f0_N[1])}

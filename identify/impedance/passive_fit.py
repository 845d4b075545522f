"""Both directions of a segmented impedance fitted jointly, passive by construction.

A segmented impedance (seed 001 eq. 8) is passive where it is defined when, at every position x,

- ``m(x) >= 0`` and ``b(x) >= 0`` in both directions (``m a`` and ``b v`` with negative coefficients
  feed energy in), and
- the releasing static force does not exceed the pressing static force,
  ``k_r(x) x + F0_r(x) <= k_p(x) x + F0_p(x)``: over a quasi-static press/release cycle the probe puts in
  ``W = integral (F_s(x, +1) - F_s(x, -1)) dx`` (seed 001 eq. 1 sign convention), so the hysteresis must
  never be negative (:func:`hapticam.models.passivity.check_passivity` checks exactly this).

Beyond the captured travel the force holds its end value: each table gets a short end segment on each
side with ``k = 0`` and ``F0`` equal to the static force at the data's end (constant interpolation
continues the end segment's parameters, so the force stays flat however far the handle goes), and the
constraints include these held values.

Given each direction's segmentation (:mod:`hapticam.identify.impedance.segmentation`), the segment parameters of
both directions are one least-squares problem with linear inequality constraints, solved exactly by
:func:`hapticam.identify.impedance.constrained.constrained_lsq`. Within a segment the static force is linear in x,
so the hysteresis is piecewise linear between the breakpoints of both tables, and checking it at both
one-sided limits of every breakpoint covers every x.

Parameters are centred on each segment's midpoint ``c`` (``k (x - c) + F0c``) for conditioning and mapped
back (``F0 = F0c - c k``) at the end.

Linear interpolation (:class:`LinearDesign`): the parameters are knot values, linear between knots (hat
functions). ``m, b >= 0`` at the knots holds everywhere between them. The static force ``k(x) x + F0(x)``
is a quadratic in x between the knots of both tables (and in the held end segments, where ``k`` falls
linearly to 0), so the hysteresis ``D = F_s(x, -1) - F_s(x, +1)`` is a quadratic on each cell ``[a, c]``
of the union of the knots; it is ``<= 0`` on the cell when its three Bernstein coefficients are:
``D(a) <= 0``, ``D(c) <= 0`` and ``2 D((a + c) / 2) - (D(a) + D(c)) / 2 <= 0`` (the convex hull
property). These are linear in the parameters: the constraints are exact (sufficient, and tight as the
cells shrink), not a sampled check. The one direction the data leave free, ``k += d, F0_j -= d x_j`` (same
force inside the table), is fixed by holding the mean knot stiffness at the unconstrained fit's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hapticam.errors import IdentificationError
from hapticam.identify.impedance.constrained import constrained_lsq

M, B, K, F0 = range(4)


@dataclass
class DirectionDesign:
    """One direction's segments: samples and free terms (``free``: indices into ``[m, b, k, F0]``)."""

    bp: np.ndarray          # breakpoints (m)
    x: np.ndarray           # sample positions (m)
    phi: np.ndarray         # regressors [a, v, x, 1] of the samples (all four columns)
    y: np.ndarray           # force minus the fixed terms (N)
    free: list[int]
    fixed: np.ndarray       # values of all four terms where fixed

    @property
    def nseg(self) -> int:
        return self.bp.size - 1

    @property
    def centres(self) -> np.ndarray:
        return 0.5 * (self.bp[:-1] + self.bp[1:])

    def segment_of(self, x: np.ndarray, side: int = 1) -> np.ndarray:
        """Segment index of each x (nearest end segment outside); ``side=-1`` takes left limits."""
        pos = np.searchsorted(self.bp, x, side="right" if side > 0 else "left") - 1
        return np.clip(pos, 0, self.nseg - 1)

    def normal_equations(self) -> tuple[np.ndarray, np.ndarray]:
        """``G = X'X`` and ``h = X'y`` over the centred per-segment parameters (block diagonal)."""
        p = len(self.free)
        seg = self.segment_of(self.x)
        reg = self.phi[:, self.free].copy()
        reg[:, self.free.index(K)] = self.x - self.centres[seg]    # k (x - c) + F0c
        G = np.zeros((self.nseg * p, self.nseg * p))
        h = np.zeros(self.nseg * p)
        for s in range(self.nseg):
            sel = seg == s
            sl = slice(s * p, (s + 1) * p)
            G[sl, sl] = reg[sel].T @ reg[sel]
            h[sl] = reg[sel].T @ self.y[sel]
        return G, h

    def static_rows(self, x: np.ndarray, side: int) -> np.ndarray:
        """Rows mapping the parameter vector to the static force at ``x`` (held beyond the data's ends)."""
        p = len(self.free)
        lo, hi = self.bp[0], self.bp[-1]
        xe = np.clip(x, lo, hi)                                    # the force holds its end value
        seg = self.segment_of(xe, side)
        rows = np.zeros((x.size, self.nseg * p))
        i = np.arange(x.size)
        rows[i, seg * p + self.free.index(K)] = xe - self.centres[seg]
        rows[i, seg * p + self.free.index(F0)] = 1.0
        return rows

    def dynamic_bound_rows(self) -> np.ndarray:
        """Rows of ``-m <= 0`` and ``-b <= 0`` for every free m and b."""
        p = len(self.free)
        rows = []
        for term in (M, B):
            if term in self.free:
                for s in range(self.nseg):
                    r = np.zeros(self.nseg * p)
                    r[s * p + self.free.index(term)] = -1.0
                    rows.append(r)
        return np.array(rows).reshape(-1, self.nseg * p)

    def constraint_points(self, hold_m: float) -> np.ndarray:
        """Positions (m) where this table's static force may bend: its breakpoints."""
        return self.bp

    def theta_table(self, vec: np.ndarray) -> np.ndarray:
        """Per-segment ``[m, b, k, F0]`` (uncentred) from the parameter vector."""
        p = len(self.free)
        theta = np.tile(self.fixed, (self.nseg, 1))
        theta[:, self.free] = vec.reshape(self.nseg, p)
        theta[:, F0] -= self.centres * theta[:, K]                 # F0 = F0c - c k
        return theta


@dataclass
class LinearDesign(DirectionDesign):
    """One direction's knots ``bp`` with parameters linear between them (module notes); ``k_gauge_Npm`` is
    the mean knot stiffness (N/m) the free direction is held at, ``hold_m`` the held end segments' width."""

    k_gauge_Npm: float = 0.0
    hold_m: float = 0.0

    @property
    def nseg(self) -> int:                                         # parameter rows: one per knot
        return self.bp.size

    def _hats(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        seg = np.clip(np.searchsorted(self.bp, x, side="right") - 1, 0, self.bp.size - 2)
        w = np.clip((x - self.bp[seg]) / (self.bp[seg + 1] - self.bp[seg]), 0.0, 1.0)
        return seg, w

    def normal_equations(self) -> tuple[np.ndarray, np.ndarray]:
        """``G = X'X`` and ``h = X'y`` of the hat-function regressors, plus the gauge (mean knot k)."""
        p = len(self.free)
        seg, w = self._hats(self.x)
        cols = np.zeros((self.x.size, self.nseg * p))
        rows = np.arange(self.x.size)
        for j, term in enumerate(self.free):
            cols[rows, seg * p + j] = self.phi[:, term] * (1.0 - w)
            cols[rows, (seg + 1) * p + j] = self.phi[:, term] * w
        G = cols.T @ cols
        h = cols.T @ self.y
        gauge = np.zeros(self.nseg * p)
        gauge[self.free.index(K)::p] = 1.0 / self.nseg
        weight = self.nseg ** 2 * float(np.mean(np.diag(G)) or 1.0)
        return G + weight * np.outer(gauge, gauge), h + weight * self.k_gauge_Npm * gauge

    def static_rows(self, x: np.ndarray, side: int = 1) -> np.ndarray:
        """Rows mapping the parameters to the static force at ``x`` of the table :func:`with_held_ends`
        makes: hat functions inside, ``F_s(end) -/+ u (1 - u) hold k_end`` over the held segments (``u``
        the fraction across), ``F_s(end)`` beyond."""
        p, ik, i0 = len(self.free), self.free.index(K), self.free.index(F0)
        x = np.asarray(x, dtype=np.float64)
        lo, hi, hold = self.bp[0], self.bp[-1], self.hold_m
        rows = np.zeros((x.size, self.nseg * p))
        i = np.arange(x.size)
        seg, w = self._hats(x)
        inside = (x >= lo) & (x <= hi)
        for col, weight in ((seg * p, 1.0 - w), ((seg + 1) * p, w)):
            rows[i[inside], col[inside] + ik] = weight[inside] * x[inside]
            rows[i[inside], col[inside] + i0] = weight[inside]
        for mask, knot, end, u, sign in ((x < lo, 0, lo, (x - (lo - hold)) / hold, -1.0),
                                         (x > hi, self.nseg - 1, hi, (x - hi) / hold, 1.0)):
            u = np.clip(u, 0.0, 1.0)
            rows[i[mask], knot * p + ik] = end + sign * (u * (1.0 - u) * hold)[mask]
            rows[i[mask], knot * p + i0] = 1.0
        return rows

    def constraint_points(self, hold_m: float) -> np.ndarray:
        """The knots and the held segments' outer ends (m)."""
        return np.concatenate([[self.bp[0] - hold_m], self.bp, [self.bp[-1] + hold_m]])

    def theta_table(self, vec: np.ndarray) -> np.ndarray:
        """Per-knot ``[m, b, k, F0]`` from the parameter vector."""
        theta = np.tile(self.fixed, (self.nseg, 1))
        theta[:, self.free] = vec.reshape(self.nseg, len(self.free))
        return theta


def _hysteresis(press: DirectionDesign, release: DirectionDesign, hold_m: float
                ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs ``(release rows, press rows)`` whose difference, times the parameters, must be ``<= 0``."""
    pts = np.unique(np.concatenate([press.constraint_points(hold_m), release.constraint_points(hold_m)]))
    if not isinstance(press, LinearDesign):                       # piecewise linear: both one-sided limits
        return [(release.static_rows(pts, side), press.static_rows(pts, side)) for side in (-1, 1)]
    a, c = pts[:-1], pts[1:]                                       # quadratic per cell: Bernstein coefficients
    ends = [(d.static_rows(a), d.static_rows(c), d.static_rows(0.5 * (a + c))) for d in (release, press)]
    middle = [2.0 * mid - 0.5 * (left + right) for left, right, mid in ends]
    return [(release.static_rows(pts), press.static_rows(pts)), (middle[0], middle[1])]


@dataclass
class PassiveFit:
    """Per-direction tables ``theta`` (``[m, b, k, F0]`` per segment) with end segments that hold the
    force, the unconstrained tables, the constraints that bind, and what they cost."""

    breakpoints: dict[str, np.ndarray]
    theta: dict[str, np.ndarray]
    theta_unconstrained: dict[str, np.ndarray]
    active_constraints: int
    rss_increase_N2: float


def fit_passive(designs: dict[str, DirectionDesign], hold_m: float) -> PassiveFit:
    """Fit ``designs`` (``"press"`` and optionally ``"release"``) jointly under the passivity constraints.

    ``hold_m`` is the width (m) of the end segments added on each side to hold the end force."""
    if not hold_m > 0:
        raise IdentificationError(f"hold width must be positive, got {hold_m}")
    names = list(designs)
    sizes = [designs[n].nseg * len(designs[n].free) for n in names]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    total = int(offsets[-1])
    G = np.zeros((total, total))
    h = np.zeros(total)
    bound_rows = []
    for n, o0, o1 in zip(names, offsets[:-1], offsets[1:]):
        Gd, hd = designs[n].normal_equations()
        G[o0:o1, o0:o1] = Gd
        h[o0:o1] = hd
        rows = designs[n].dynamic_bound_rows()
        if rows.size:
            full = np.zeros((rows.shape[0], total))
            full[:, o0:o1] = rows
            bound_rows.append(full)
    C_parts = bound_rows
    if "press" in designs and "release" in designs:
        ip, ir = names.index("press"), names.index("release")
        for r_rows, p_rows in _hysteresis(designs["press"], designs["release"], hold_m):
            rows = np.zeros((r_rows.shape[0], total))
            rows[:, offsets[ir]:offsets[ir + 1]] = r_rows
            rows[:, offsets[ip]:offsets[ip + 1]] -= p_rows
            C_parts = C_parts + [rows]                             # F_s(x, -1) - F_s(x, +1) <= 0
    C = np.vstack(C_parts) if C_parts else np.zeros((0, total))
    sol = constrained_lsq(G, h, C, np.zeros(C.shape[0]))
    out, free_tables, bps = {}, {}, {}
    for n, o0, o1 in zip(names, offsets[:-1], offsets[1:]):
        d = designs[n]
        out[n] = d.theta_table(sol.theta[o0:o1])
        out[n][:, [M, B]] = np.maximum(out[n][:, [M, B]], 0.0)    # bounds that bind hold to rounding: exactly 0
        free_tables[n] = d.theta_table(sol.theta0[o0:o1])
        bps[n] = d.bp
    for n in names:
        bps[n], out[n] = with_held_ends(bps[n], out[n], hold_m)
        _, free_tables[n] = with_held_ends(designs[n].bp, free_tables[n], hold_m)
    return PassiveFit(bps, out, free_tables, int(sol.active.size), sol.cost_increase)


def with_held_ends(bp: np.ndarray, theta: np.ndarray, hold_m: float) -> tuple[np.ndarray, np.ndarray]:
    """Add an end segment of width ``hold_m`` on each side with ``k = 0`` and ``F0`` the static force at
    the data's end (m and b of the end segment kept), so the force holds its end value beyond the data."""
    lo, hi = bp[0], bp[-1]
    first, last = theta[0].copy(), theta[-1].copy()
    first[F0] = first[K] * lo + first[F0]
    first[K] = 0.0
    last[F0] = last[K] * hi + last[F0]
    last[K] = 0.0
    return np.concatenate([[lo - hold_m], bp, [hi + hold_m]]), np.vstack([first, theta, last])

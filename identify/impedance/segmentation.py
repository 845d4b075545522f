"""Optimal segmentation of position-sorted data into constant- or linear-parameter segments.

Seed 001 (section 6) suggests fitting segmented models "to reduce the overall complexity of the
parameter variations". Here the position range of one direction of travel is cut into grid cells
(seed 001 section 5 interpolates at 1 mm); a segment is a run of consecutive cells, and its cost is the
least-squares residual sum of squares of the force model fitted to the raw samples in it:

- ``"constant"``: ``F = phi' theta`` with constant ``theta`` (seed 001 eq. 7) in the segment;
- ``"linear"``: every parameter linear in ``x`` inside the segment. Because ``k(x) x + F0(x)`` with
  both linear spans only ``{1, x, x^2}``, the cost uses the basis ``{phi_j, x phi_j}`` for the terms
  ``m, b`` and ``{1, x, x^2}`` for the static part.

Costs come from per-cell sufficient statistics (``sum psi psi'``, ``sum psi y``, ``sum y^2``) via
prefix sums, with the regressors centred on each segment's midpoint and Jacobi-scaled before a
Cholesky solve, so narrow segments are solved accurately. The optimal partition into exactly ``K``
segments for every ``K <= K_max`` comes from the segment-neighbourhood dynamic programme
(Auger & Lawrence 1989)::

    D[1][j] = C(0, j),     D[K][j] = min_{i < j} D[K-1][i] + C(i, j)

which is exact (globally optimal) in ``O(K_max n^2)`` for ``n`` cells. ``K`` is then the smallest whose
excess error ``sqrt((D[K][n] - RSS_cells) / N)`` over the cell-by-cell fit is within ``tolerance_N``,
or the minimiser of ``D[K][n] + penalty K`` when a penalty is given instead.

References
----------
seed 001: Colton & Hollerbach, sections 5 and 6.
Bellman (1961), "On the approximation of curves by line segments using dynamic programming".
Auger & Lawrence (1989), "Algorithms for the optimal identification of segment neighborhoods".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from hapticam.errors import IdentificationError

MAX_CELLS = 2000
_RIDGE = 1e-12


def design(phi: np.ndarray, x_local: np.ndarray, x_col: int, one_col: int, mode: str
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segment-cost regressors ``psi`` and the centring matrices ``B1, B2`` (``A(c) = I + c B1 + c^2 B2``).

    ``phi`` holds the free regressors (columns ``x_col`` and ``one_col`` are ``x`` and ``1``), ``x_local``
    the positions relative to the grid origin. Centring a segment on ``c`` maps ``psi`` to ``A(c) psi``.
    """
    n, p = phi.shape
    if mode == "constant":
        B1 = np.zeros((p, p))
        B1[x_col, one_col] = -1.0  # x - c = x - c * 1
        return phi, B1, np.zeros((p, p))
    others = [j for j in range(p) if j not in (x_col, one_col)]
    cols = [phi[:, j] for j in others] + [x_local * phi[:, j] for j in others]
    cols += [np.ones(n), x_local, x_local * x_local]
    q = len(cols)
    B1 = np.zeros((q, q))
    B2 = np.zeros((q, q))
    m = len(others)
    for r in range(m):
        B1[m + r, r] = -1.0  # (x - c) phi_j = x phi_j - c phi_j
    i1, ix, ix2 = 2 * m, 2 * m + 1, 2 * m + 2
    B1[ix, i1] = -1.0  # x - c
    B1[ix2, ix] = -2.0  # (x - c)^2 = x^2 - 2 c x + c^2
    B2[ix2, i1] = 1.0
    return np.column_stack(cols), B1, B2


@njit(cache=True, nogil=True)
def _cell_stats(cell, psi, y, ncell, G, h, syy, cnt):
    """Accumulate per-cell sums of psi psi', psi y, y^2 and counts (prefix-sum ready, index + 1)."""
    n, q = psi.shape
    for i in range(n):
        c = cell[i] + 1
        for j in range(q):
            h[c, j] += psi[i, j] * y[i]
            for k in range(q):
                G[c, j, k] += psi[i, j] * psi[i, k]
        syy[c] += y[i] * y[i]
        cnt[c] += 1
    for c in range(1, ncell + 1):
        for j in range(q):
            h[c, j] += h[c - 1, j]
            for k in range(q):
                G[c, j, k] += G[c - 1, j, k]
        syy[c] += syy[c - 1]
        cnt[c] += cnt[c - 1]


@njit(cache=True, nogil=True)
def _solve_centered(G, h, syy, A, theta):
    """Least squares from sums with regressors ``A psi``: writes theta (centred basis), returns RSS."""
    q = G.shape[0]
    Gc = A @ G @ A.T
    hc = A @ h
    d = np.empty(q)
    for j in range(q):
        d[j] = np.sqrt(Gc[j, j]) if Gc[j, j] > 0.0 else 1.0
    M = np.empty((q, q))
    for j in range(q):
        for k in range(q):
            M[j, k] = Gc[j, k] / (d[j] * d[k])
        M[j, j] += _RIDGE
    rhs = hc / d
    # Cholesky M = L L'
    L = np.zeros((q, q))
    for j in range(q):
        s = M[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if s <= 1e-14:
            s = 1e-14
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, q):
            s2 = M[i, j]
            for k in range(j):
                s2 -= L[i, k] * L[j, k]
            L[i, j] = s2 / L[j, j]
    z = np.empty(q)
    for i in range(q):
        s = rhs[i]
        for k in range(i):
            s -= L[i, k] * z[k]
        z[i] = s / L[i, i]
    for i in range(q - 1, -1, -1):
        s = z[i]
        for k in range(i + 1, q):
            s -= L[k, i] * theta[k]
        theta[i] = s / L[i, i]
    for j in range(q):
        theta[j] /= d[j]
    # RSS = syy - 2 theta' h + theta' G theta  (G, h in the centred basis)
    rss = syy
    for j in range(q):
        rss -= 2.0 * theta[j] * hc[j]
        for k in range(q):
            rss += theta[j] * Gc[j, k] * theta[k]
    if rss < 0.0:
        rss = 0.0
    return rss


@njit(cache=True, nogil=True)
def _cost_matrix(G, h, syy, cnt, edges, B1, B2, min_samples, cost):
    """cost[i, j] = RSS of one segment over cells i..j-1 (inf if fewer than min_samples samples)."""
    ncell = edges.shape[0] - 1
    q = G.shape[1]
    theta = np.empty(q)
    eye = np.eye(q)
    for i in range(ncell):
        for j in range(i + 1, ncell + 1):
            n = cnt[j] - cnt[i]
            if n < min_samples:
                cost[i, j] = np.inf
                continue
            c = 0.5 * (edges[i] + edges[j])
            A = eye + c * B1 + c * c * B2
            cost[i, j] = _solve_centered(G[j] - G[i], h[j] - h[i], syy[j] - syy[i], A, theta)


@njit(cache=True, nogil=True)
def _segment_neighbourhood(cost, kmax, D, back):
    """D[K, j]: least total cost of cells 0..j-1 in exactly K segments (K = 1..kmax); back: argmins."""
    n = cost.shape[0] - 1
    for j in range(n + 1):
        D[1, j] = cost[0, j] if j > 0 else np.inf
        back[1, j] = 0
    for K in range(2, kmax + 1):
        for j in range(n + 1):
            best = np.inf
            arg = -1
            for i in range(K - 1, j):
                v = D[K - 1, i] + cost[i, j]
                if v < best:
                    best = v
                    arg = i
            D[K, j] = best
            back[K, j] = arg


@dataclass
class Segmentation:
    """The chosen partition of one direction's grid.

    Attributes
    ----------
    edges_m : numpy.ndarray
        Grid edges (m, absolute).
    cuts : numpy.ndarray
        Cell indices of the segment boundaries, ``0 = cuts[0] < ... < cuts[-1] = n_cells``.
    rss_by_k : numpy.ndarray
        Optimal residual sum of squares (N^2) for ``K = 1..K_max`` segments (index ``K - 1``).
    rss_cells : float
        Residual sum of squares of the cell-by-cell fit (the grid model; N^2).
    n_samples : int
        Samples in this direction.
    tolerance_met : bool
        Whether the excess error of the chosen ``K`` is within the tolerance.
    tolerance_N : float
        The tolerance applied (N; NaN when a penalty chose ``K``).
    """

    edges_m: np.ndarray
    cuts: np.ndarray
    rss_by_k: np.ndarray
    rss_cells: float
    n_samples: int
    tolerance_met: bool
    tolerance_N: float = float("nan")

    @property
    def n_segments(self) -> int:
        return int(self.cuts.size - 1)

    @property
    def breakpoints_m(self) -> np.ndarray:
        """Segment boundaries (m)."""
        return self.edges_m[self.cuts]

    def excess_rms_N(self, k: int | None = None) -> float:
        """RMS force error added by merging the cells into ``k`` (default: the chosen) segments (N)."""
        k = self.n_segments if k is None else k
        return float(np.sqrt(max(self.rss_by_k[k - 1] - self.rss_cells, 0.0) / self.n_samples))


def grid_edges(x_min: float, x_max: float, grid_m: float) -> np.ndarray:
    """Edges ``x_min + i grid`` covering ``[x_min, x_max]`` (at least one cell)."""
    n = max(1, int(np.ceil((x_max - x_min) / grid_m - 1e-9)))
    return x_min + grid_m * np.arange(n + 1)


def segment(x: np.ndarray, phi: np.ndarray, y: np.ndarray, edges_m: np.ndarray, *, x_col: int, one_col: int,
            mode: str = "constant", tolerance_N: float | None = None, penalty: float | None = None,
            max_segments: int = 60, min_samples: int | None = None) -> Segmentation:
    """Optimal partition of the grid cells (module notes).

    Parameters
    ----------
    x : numpy.ndarray
        Positions (m) of the samples of one direction.
    phi : numpy.ndarray
        Free regressors (n x p); columns ``x_col`` and ``one_col`` are ``x`` and ``1``.
    y : numpy.ndarray
        Force minus fixed terms (N).
    edges_m : numpy.ndarray
        Grid edges (m), from :func:`grid_edges`.
    mode : {"constant", "linear"}
        Parameters constant, or linear in ``x``, within each segment.
    tolerance_N : float, optional
        Largest accepted excess RMS error (N) over the cell-by-cell fit; the fewest segments meeting it
        are chosen. Default (and no penalty): :func:`default_tolerance`.
    penalty : float, optional
        Used when no tolerance is given: minimise ``RSS + penalty K`` (N^2 per segment).
    max_segments : int
        Upper bound on ``K``.
    min_samples : int, optional
        Fewest samples a segment may hold (default: regressors + 1).
    """
    if mode not in ("constant", "linear"):
        raise IdentificationError(f"segmentation mode must be 'constant' or 'linear', got {mode!r}")
    if max_segments < 1:
        raise IdentificationError(f"max_segments must be >= 1, got {max_segments}")
    ncell = edges_m.size - 1
    if ncell > MAX_CELLS:
        raise IdentificationError(f"the grid has {ncell} cells over the travel, more than {MAX_CELLS}; "
                                  f"use a coarser grid")
    origin = float(edges_m[0])
    xl = x - origin
    el = edges_m - origin
    psi, B1, B2 = design(phi, xl, x_col, one_col, mode)
    q = psi.shape[1]
    ms = q + 1 if min_samples is None else int(min_samples)
    if x.size < ms:
        raise IdentificationError(f"only {x.size} samples in this direction; at least {ms} are needed")
    cell = np.clip(np.floor(xl / (el[1] - el[0])).astype(np.int64), 0, ncell - 1)
    G = np.zeros((ncell + 1, q, q))
    h = np.zeros((ncell + 1, q))
    syy = np.zeros(ncell + 1)
    cnt = np.zeros(ncell + 1, dtype=np.int64)
    _cell_stats(cell, np.ascontiguousarray(psi), np.ascontiguousarray(y), ncell, G, h, syy, cnt)
    cost = np.empty((ncell + 1, ncell + 1))
    cost.fill(np.inf)
    _cost_matrix(G, h, syy, cnt, el, B1, B2, ms, cost)
    rss_cells = _cells_rss(G, h, syy, cnt, el, B1, B2, ms, q)
    kmax = int(min(max_segments, ncell))
    D = np.full((kmax + 1, ncell + 1), np.inf)
    back = np.zeros((kmax + 1, ncell + 1), dtype=np.int64)
    _segment_neighbourhood(cost, kmax, D, back)
    rss_by_k = D[1:, ncell].copy()
    if not np.isfinite(rss_by_k).any():
        raise IdentificationError("no feasible segmentation (too few samples per segment)")
    n = int(x.size)
    K, met, tolerance_N = _choose_count(rss_by_k, rss_cells, n, y, tolerance_N, penalty)
    cuts = [ncell]
    j = ncell
    for k in range(K, 0, -1):
        j = int(back[k, j])
        cuts.append(j)
    cuts = np.array(cuts[::-1], dtype=np.int64)
    cuts[0] = 0
    return Segmentation(edges_m=edges_m, cuts=cuts, rss_by_k=rss_by_k, rss_cells=float(rss_cells), n_samples=n,
                        tolerance_met=met, tolerance_N=float(tolerance_N) if tolerance_N is not None else float("nan"))


def _cells_rss(G, h, syy, cnt, el, B1, B2, ms, q) -> float:
    """RSS of the cell-by-cell reference fit (cells too sparse to fit alone count as exact)."""
    theta = np.empty(q)
    rss = 0.0
    for i in range(el.size - 1):
        if cnt[i + 1] - cnt[i] >= ms:
            c = 0.5 * (el[i] + el[i + 1])
            rss += _solve_centered(G[i + 1] - G[i], h[i + 1] - h[i], syy[i + 1] - syy[i],
                                   np.eye(q) + c * B1 + c * c * B2, theta)
    return rss


def _choose_count(rss_by_k: np.ndarray, rss_cells: float, n: int, y: np.ndarray, tolerance_N: float | None,
                  penalty: float | None) -> tuple[int, bool, float | None]:
    """The segment count: the fewest within the tolerance (module notes), or the penalised optimum.
    Returns ``(K, tolerance met, tolerance used)``."""
    feasible = np.isfinite(rss_by_k)
    excess = np.sqrt(np.maximum(rss_by_k - rss_cells, 0.0) / n)
    best = int(np.flatnonzero(feasible)[np.argmin(rss_by_k[feasible])]) + 1
    if tolerance_N is None and penalty is not None:
        score = np.where(feasible, rss_by_k + penalty * np.arange(1, rss_by_k.size + 1), np.inf)
        return int(np.argmin(score)) + 1, True, None
    if tolerance_N is None:
        tolerance_N = default_tolerance(rss_cells, n, y)
    ok = np.flatnonzero(feasible & (excess <= tolerance_N))
    return (int(ok[0]) + 1, True, tolerance_N) if ok.size else (best, False, tolerance_N)


def default_tolerance(rss_cells: float, n: int, y: np.ndarray) -> float:
    """``max(0.5 sigma_cells, 0.002 std(y))`` (N): half the grid fit's residual RMS ``sigma_cells``
    (so segmenting raises the RMS error by at most 12 %: sqrt(1 + 0.5^2) = 1.118), but no finer than
    0.2 % of the force's spread, which costs at most 0.0004 % of fit (seed 003 eq. 53)."""
    return float(max(0.5 * np.sqrt(rss_cells / n), 0.002 * float(np.std(y))))

"""Multi-point contact least squares (seed 004 sec. 4.1, eqs. 4.1-4.9).

Every contact ``i`` of a body obeys ``Fn_i = k delta_i + b delta_i'`` (eq. 4.3) and, sliding,
``Ft_i = mu k delta_i`` along ``t_i``, the unit vector opposite the tangential relative velocity (eq. 4.4; the
thesis's footnote 4: the damping term is left out of the friction). Summed over the contacts, the measured
resultant force and moment are linear in ``theta = [k, b, mu k]``::

    F_R = sum_i [delta_i n_i,          delta_i' n_i,          delta_i t_i         ] theta   (eq. 4.5)
    M_R = sum_i [delta_i (r_i x n_i),  delta_i' (r_i x n_i),  delta_i (r_i x t_i) ] theta   (eq. 4.6)

Eq. 4.7 reprints the force regressor as ``[delta n, delta n, delta r]``: a typo (its second column would make k
and b inseparable, its third mixes a position into a force); eq. 4.5 is the one used.

Rows are the three force rows, the three moment rows, or all six (``rows="force" | "moment" | "both"``).
At each instant the rows give a small system solved on its own (the history, NaN where it is singular:
one contact cannot separate k from b in one instant); all instants stacked give the global least squares
estimate ``theta = (Phi Phi')^-1 Phi F`` (eq. 4.9), with ``mu = (mu k)/k``.

The data format (arrays, or files through :mod:`~hapticam.identify.contact.multipoint_io`):

- ``t_s`` (T): instants (s); ``force_N`` (T, 3): resultant force on the body; ``moment_Nm`` (T, 3): resultant
  moment about the body's reference point (optional);
- per contact slot ``c < C``: ``delta_m`` (T, C) interference (m; NaN: no contact in that slot),
  ``delta_dot_mps`` (T, C) its rate (m/s), ``normal`` (T, C, 3) and ``tangent`` (T, C, 3) unit vectors,
  ``r_m`` (T, C, 3) the contact point from the reference point (m; needed for moment rows).

References
----------
seed 004: Agar, sec. 4.1 (eqs. 4.1-4.9), sec. 5.2 (gravity drop, Table 5-2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hapticam.errors import IdentificationError

ROWS = ("force", "moment", "both")


@dataclass
class MultiPointData:
    """Multi-point contact data in the format of the module docstring (SI units)."""

    t_s: np.ndarray
    force_N: np.ndarray
    delta_m: np.ndarray
    delta_dot_mps: np.ndarray
    normal: np.ndarray
    tangent: np.ndarray
    moment_Nm: np.ndarray | None = None
    r_m: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.t_s = np.asarray(self.t_s, dtype=np.float64).reshape(-1)
        T = self.t_s.size
        self.force_N = _shaped("force_N", self.force_N, (T, 3))
        self.delta_m = np.asarray(self.delta_m, dtype=np.float64)
        if self.delta_m.ndim != 2 or self.delta_m.shape[0] != T:
            raise IdentificationError(f"delta_m: expected shape ({T}, C), got {self.delta_m.shape}")
        C = self.delta_m.shape[1]
        self.delta_dot_mps = _shaped("delta_dot_mps", self.delta_dot_mps, (T, C), allow_nan=True)
        self.normal = _shaped("normal", self.normal, (T, C, 3), allow_nan=True)
        self.tangent = _shaped("tangent", self.tangent, (T, C, 3), allow_nan=True)
        if self.moment_Nm is not None:
            self.moment_Nm = _shaped("moment_Nm", self.moment_Nm, (T, 3))
        if self.r_m is not None:
            self.r_m = _shaped("r_m", self.r_m, (T, C, 3), allow_nan=True)
        if T < 1 or not np.all(np.isfinite(self.t_s)) or np.any(np.diff(self.t_s) <= 0):
            raise IdentificationError("t_s: expected finite, strictly increasing instants")
        self._check_contacts()

    def _check_contacts(self) -> None:
        on = self.active
        for name, arr in (("delta_dot_mps", self.delta_dot_mps), ("normal", self.normal), ("tangent", self.tangent)):
            vals = arr[on]
            if not np.all(np.isfinite(vals)):
                raise IdentificationError(f"{name}: NaN or inf at an active contact")
        for name, arr in (("normal", self.normal), ("tangent", self.tangent)):
            norms = np.linalg.norm(arr[on], axis=-1)
            if norms.size and np.max(np.abs(norms - 1.0)) > 1e-6:
                raise IdentificationError(f"{name}: vectors at active contacts must be unit vectors")

    @property
    def active(self) -> np.ndarray:
        """(T, C) mask of slots holding a contact (finite interference)."""
        return np.isfinite(self.delta_m)


def _shaped(name: str, value: Any, shape: tuple[int, ...], allow_nan: bool = False) -> np.ndarray:
    a = np.asarray(value, dtype=np.float64)
    if a.shape != shape:
        raise IdentificationError(f"{name}: expected shape {shape}, got {a.shape}")
    if not allow_nan and not np.all(np.isfinite(a)):
        raise IdentificationError(f"{name}: contains NaN or inf")
    return a


def regressors(data: MultiPointData, rows: str = "force") -> tuple[np.ndarray, np.ndarray]:
    """``(Phi, y)``: per instant the rows of eq. 4.5 / 4.6, shapes (T, R, 3) and (T, R)."""
    if rows not in ROWS:
        raise IdentificationError(f"rows: expected force, moment or both, got {rows!r}")
    on = data.active
    d = np.where(on, data.delta_m, 0.0)[..., None]
    dd = np.where(on, data.delta_dot_mps, 0.0)[..., None]
    n = np.where(on[..., None], data.normal, 0.0)
    t = np.where(on[..., None], data.tangent, 0.0)
    blocks, ys = [], []
    if rows in ("force", "both"):
        blocks.append(np.stack([np.sum(d * n, 1), np.sum(dd * n, 1), np.sum(d * t, 1)], axis=-1))  # eq. 4.5
        ys.append(data.force_N)
    if rows in ("moment", "both"):
        if data.moment_Nm is None or data.r_m is None:
            raise IdentificationError("moment rows need moment_Nm and the contact positions r_m")
        r = np.where(on[..., None], data.r_m, 0.0)
        if not np.all(np.isfinite(r)):
            raise IdentificationError("r_m: NaN or inf at an active contact")
        rn, rt = np.cross(r, n), np.cross(r, t)
        blocks.append(np.stack([np.sum(d * rn, 1), np.sum(dd * rn, 1), np.sum(d * rt, 1)], axis=-1))  # eq. 4.6
        ys.append(data.moment_Nm)
    return np.concatenate(blocks, axis=1), np.concatenate(ys, axis=1)


def per_instant(phi: np.ndarray, y: np.ndarray, scales: np.ndarray, rcond: float = 1e-8) -> np.ndarray:
    """Solve each instant's rows alone (eq. 4.7, corrected): (T, 3), NaN where rank < 3."""
    A = phi / scales
    u, s, vt = np.linalg.svd(A, full_matrices=False)  # batched over instants
    ok = s[:, -1] > rcond * np.maximum(s[:, 0], 1e-300)
    out = np.full((phi.shape[0], 3), np.nan)
    if np.any(ok):
        uy = np.einsum("trk,tr->tk", u[ok], y[ok]) / s[ok]
        out[ok] = np.einsum("tkj,tk->tj", vt[ok], uy) / scales  # theta = V S^-1 U' y
    return out


@dataclass
class MultiPointFit:
    """Global estimate ``k`` (N/m), ``b`` (N s/m), ``mu``; ``cov`` of ``(k, b, mu)``; per-instant history
    ``history`` (T, 3) of ``(k, b, mu)``; ``theta`` = ``(k, b, mu k)``; ``rows`` used; ``residual_rms``."""

    k_Npm: float
    b_Nspm: float
    mu: float
    cov: np.ndarray
    theta: np.ndarray
    history: np.ndarray
    t_s: np.ndarray
    rows: str
    residual_rms: float

    @property
    def se(self) -> np.ndarray:
        """Standard errors of ``(k, b, mu)``."""
        return np.sqrt(np.maximum(np.diag(self.cov), 0.0))


def fit_multipoint(data: MultiPointData, rows: str = "force") -> MultiPointFit:
    """Global least squares (eqs. 4.8-4.9) and the per-instant history for multi-point contact data."""
    phi, y = regressors(data, rows)
    A = phi.reshape(-1, 3)
    b = y.reshape(-1)
    used = np.any(A != 0, axis=1)
    if np.count_nonzero(used) < 3:
        raise IdentificationError("multi-point fit: fewer than 3 rows carry a contact")
    A, b = A[used], b[used]
    s = np.sqrt(np.mean(A * A, axis=0))
    if np.any(s == 0):
        raise IdentificationError("multi-point fit: a parameter has no regressor (no motion or no tangent)")
    theta_s, _, rank, sv = np.linalg.lstsq(A / s, b, rcond=None)
    if rank < 3:
        raise IdentificationError("multi-point fit: k, b and mu k are not separable on these data")
    theta = theta_s / s  # theta = (Phi Phi')^-1 Phi F  (eq. 4.9)
    if theta[0] == 0:
        raise IdentificationError("multi-point fit: the stiffness estimate is 0, so mu = (mu k)/k is undefined")
    res = b - A @ theta
    s2 = float(res @ res) / max(b.size - 3, 1)
    cov_t = s2 * np.linalg.inv((A / s).T @ (A / s)) / np.outer(s, s)
    k, bb, muk = theta
    J = np.array([[1, 0, 0], [0, 1, 0], [-muk / k ** 2, 0, 1 / k]])  # d(k, b, mu)/d(k, b, mu k), mu = mu k / k
    hist = per_instant(phi, y, s)
    hist[:, 2] = hist[:, 2] / hist[:, 0]
    return MultiPointFit(float(k), float(bb), float(muk / k), J @ cov_t @ J.T, theta, hist, data.t_s.copy(), rows,
                         float(np.sqrt(np.mean(res ** 2))))
